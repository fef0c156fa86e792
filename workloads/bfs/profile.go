package bfs

import (
	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/internal/kernelabi"
	"github.com/gpuplan/gpuplan/workloads/harness"
)

// ProfileArm measures the graph as the arm plan needs it and plans the arm:
// one host-loop traversal from root (after an untimed one) gives the cost of
// a level and the levels, the CPU reference's reached count gives the
// frontier density, and harness.OverheadLaunches per-level launches that find an
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
		LevelNs: float64(r.WallNs) / float64(max(r.Levels, 1)), StepCost: harness.StepCost{LaunchOverheadNs: overhead, ReadbackBytes: 4}}
	return PlanArm(p, graphShape(s.g), s.plans.Memory)
}

// launchOverhead times per-level launches at depth, whose queue is empty
// after a finished traversal, with the host loop's readback and sync each.
func (s *Session) launchOverhead(depth uint64) (float64, error) {
	return harness.LaunchOverhead(s.x, harness.Probe{Kernel: s.k.level, Config: executor.Linear(1, uint32(s.cfg.LevelThreads)),
		Args: kernelabi.MustArgs(s.levelArgs(s.levelParams(depth))), Buffer: s.buf.ctl,
		Offset: 4 * uint64(CtlCountWord(int(depth%3))), Into: s.word[:4]})
}
