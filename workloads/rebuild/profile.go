package rebuild

import (
	"fmt"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/internal/kernelabi"
)

// overheadLaunches is how many empty launches measure the launch overhead.
const overheadLaunches = 64

// ProfileArm measures the e-graph as the arm plan needs it and plans the
// arm: one host-loop rebuild (after an untimed one) gives the cost of a
// round, the rounds and the pairs applied, and overheadLaunches step
// launches that find the rebuild done, each with its 4-byte readback and
// sync, give the launch overhead.
func (s *Session) ProfileArm() (ArmPlan, error) {
	if _, err := s.Run(ArmHostLoop); err != nil {
		return ArmPlan{}, err
	}
	r, err := s.Run(ArmHostLoop)
	if err != nil {
		return ArmPlan{}, err
	}
	overhead, err := s.launchOverhead(r.Rounds)
	if err != nil {
		return ArmPlan{}, err
	}
	p := Profile{Rounds: r.Rounds, Rows: int(s.plans.Sizes.Rows), PendingPairs: s.plans.Sizes.UnionPairs + r.EmittedPairs,
		RoundNs: float64(r.WallNs) / float64(max(r.Rounds, 1)), LaunchOverheadNs: overhead, ReadbackBytes: 4}
	return PlanArm(p, graphShape(s.plans.Sizes), s.plans.Memory)
}

// launchOverhead times step launches of round `round` after a finished
// rebuild, which find no pending pair and return, with the host loop's
// readback and sync each.
func (s *Session) launchOverhead(round int) (float64, error) {
	args := kernelabi.MustArgs(s.stepParams(round, StageUnite.Bit(), 0, allItems))
	cfg := executor.Linear(1, uint32(s.cfg.Threads))
	t, err := s.x.RunHostLoop(func(l *executor.HostLoop) error {
		vals, err := l.Resolve(args)
		if err != nil {
			return err
		}
		for range overheadLaunches {
			if err := l.Launch(s.k.step, cfg, vals); err != nil {
				return err
			}
			if err := l.Read(s.buf.ctl, 4*uint64(CtlCountWord(round)), s.word[:4]); err != nil {
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

// RoundFloor measures the persistent kernel's synchronisation alone: reps
// cooperative launches, on its grid, that each cross the barriers of
// rounds rounds (one per fusion group of a round) and do nothing else
// (after one untimed warm-up launch). It returns each launch's device time
// in ns (the per-round floor is that over rounds).
func (s *Session) RoundFloor(rounds, reps int) ([]uint64, error) {
	if rounds < 1 || reps < 1 {
		return nil, fmt.Errorf("round floor of %d rounds, %d launches: cross at least one round at least once. Fix: pass positive counts", rounds, reps)
	}
	cfg := s.plans.PersistentGrid.Config()
	args := kernelabi.MustArgs(BarrierParams[executor.Buffer]{Ctl: s.buf.ctl, Rounds: uint64(rounds), Phases: uint64(s.plans.Fusion.LaunchCount)})
	out := make([]uint64, 0, reps)
	for i := -1; i < reps; i++ {
		if err := s.reset(); err != nil {
			return nil, err
		}
		t, err := s.x.Launch(s.k.barrier, cfg, args...)
		if err != nil {
			return nil, err
		}
		if i >= 0 {
			out = append(out, t.DeviceNs)
		}
	}
	return out, nil
}
