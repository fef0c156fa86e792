package bfs

import (
	"fmt"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/internal/kernelabi"
)

// overheadLaunches is how many empty launches measure the launch overhead.
const overheadLaunches = 64

// ProfileArm measures the graph as the arm plan needs it and plans the arm:
// one host-loop traversal from root (after an untimed one) gives the cost of
// a level and the levels, the CPU reference's reached count gives the
// frontier density, and overheadLaunches per-level launches that find an
// empty queue, each with its 4-byte readback and sync, give the launch
// overhead.
func (s *Session) ProfileArm(root int32, reached int) (ArmPlan, error) {
	if _, err := s.Run(ArmHostLoop, root); err != nil {
		return ArmPlan{}, err
	}
	r, err := s.Run(ArmHostLoop, root)
	if err != nil {
		return ArmPlan{}, err
	}
	overhead, err := s.launchOverhead(uint64(r.Levels))
	if err != nil {
		return ArmPlan{}, err
	}
	p := Profile{Levels: r.Levels, Reached: reached, Vertices: s.g.NumVertices(),
		LevelNs: float64(r.WallNs) / float64(max(r.Levels, 1)), LaunchOverheadNs: overhead, ReadbackBytes: 4}
	return PlanArm(p, graphShape(s.g), s.plans.Memory)
}

// launchOverhead times per-level launches at depth, whose queue is empty
// after a finished traversal, with the host loop's readback and sync each.
func (s *Session) launchOverhead(depth uint64) (float64, error) {
	args := kernelabi.MustArgs(s.levelParams(depth))
	cfg := executor.Linear(1, uint32(s.cfg.LevelThreads))
	t, err := s.x.RunHostLoop(func(l *executor.HostLoop) error {
		vals, err := l.Resolve(args)
		if err != nil {
			return err
		}
		for range overheadLaunches {
			if err := l.Launch(s.k.level, cfg, vals); err != nil {
				return err
			}
			if err := l.Read(s.buf.ctl, 4*uint64(CtlCountWord(int(depth%3))), s.word[:4]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("measuring the launch overhead: %w", err)
	}
	return float64(t.WallNs) / overheadLaunches, nil
}
