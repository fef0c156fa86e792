package rebuild

import (
	"fmt"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/internal/kernelabi"
	"github.com/gpuplan/gpuplan/workloads/harness"
)

// ProfileArm measures the e-graph as the arm plan needs it and plans the
// arm: one host-loop rebuild (after an untimed one) gives the cost of a
// round, the rounds and the pairs applied, and harness.OverheadLaunches step
// launches that find the rebuild done, each with its 4-byte readback and
// sync, give the launch overhead. On a session opened with
// Config.Incremental the profile is of the incremental rounds, and the
// plan names the incremental arm (Arm.Incremental) of the topology's.
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
		RoundNs: float64(r.WallNs) / float64(max(r.Rounds, 1)), StepCost: harness.StepCost{LaunchOverheadNs: overhead, ReadbackBytes: 4}}
	plan, err := PlanArm(p, graphShape(s.plans.Sizes), s.plans.Memory)
	if err == nil && s.cfg.Incremental {
		plan.Arm = plan.Arm.Incremental()
	}
	return plan, err
}

// launchOverhead times step launches of round `round` after a finished
// rebuild, which find no pending pair and return, with the host loop's
// readback and sync each.
func (s *Session) launchOverhead(round int) (float64, error) {
	return harness.LaunchOverhead(s.x, harness.Probe{Kernel: s.k.step, Config: executor.Linear(1, uint32(s.cfg.Threads)),
		Args: kernelabi.MustArgs(s.stepParams(round, StageUnite.Bit(), 0, allItems)), Buffer: s.buf.ctl,
		Offset: 4 * uint64(CtlCountWord(round)), Into: s.word[:4]})
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
	return harness.Repeat(reps, func() (uint64, error) {
		if err := s.reset(); err != nil {
			return 0, err
		}
		t, err := s.x.Launch(s.k.barrier, cfg, args...)
		return t.DeviceNs, err
	})
}
