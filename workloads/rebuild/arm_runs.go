package rebuild

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/gpuplan/gpuplan/egraph"
	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/internal/kernelabi"
)

// Positions of the step kernel's round, stage and item-range parameters,
// which the loops rewrite between launches.
var (
	stepRoundArg  = kernelabi.MustIndex(StepParams[executor.Buffer]{}, "Round")
	stepStagesArg = kernelabi.MustIndex(StepParams[executor.Buffer]{}, "Stages")
	stepFirstArg  = kernelabi.MustIndex(StepParams[executor.Buffer]{}, "ItemFirst")
	stepCountArg  = kernelabi.MustIndex(StepParams[executor.Buffer]{}, "ItemCount")
)

// allItems is the item count of a launch that covers a whole pass.
const allItems = math.MaxUint64

// stepLaunch is one launch of the step kernel: its shape, its stages and
// its items.
type stepLaunch struct {
	cfg          executor.LaunchConfig
	stages       uint64
	first, count uint64
}

// strideBlocks is the grid of a launch that strides over items items: one
// item per thread, at most stepGridWaves co-resident grids, at least one
// block.
func (s *Session) strideBlocks(items uint64) uint32 {
	t := uint64(s.cfg.Threads)
	limit := uint64(stepGridWaves) * uint64(max(s.plans.StepGrid.GridBlocks, 1))
	return uint32(max(1, min((items+t-1)/t, limit)))
}

// stageItems is the most items a stage of round round covers: the pending
// pairs (the input's unions in round 0, at most one per e-node later), the
// table's slot pairs, the rows, the child slots or the classes.
func (s *Session) stageItems(st Stage, round int) uint64 {
	z := s.plans.Sizes
	switch st {
	case StageUnite:
		if round == 0 {
			return z.UnionPairs
		}
		return z.Rows
	case StageClear:
		return z.TableSlots / 2
	case StageCanonChildren:
		return z.ChildSlots
	case StageCompactClasses:
		return z.Classes
	case StageCompactNodes:
		return z.TableSlots
	}
	return z.Rows
}

// passLaunches returns the host loop's launches of one stage: the waves of
// its pass in the wave plan (RowScan for the row stages, ChildEdgeScan for
// canon-children, EclassGroupScan for the compaction of classes), or one
// striding launch over its items (pending pairs, table slots).
func (s *Session) passLaunches(st Stage, items uint64) []stepLaunch {
	pass, waved := map[Stage]egraph.Pass{StageCanonClasses: egraph.PassRowScan, StageGroup: egraph.PassRowScan,
		StageCanonChildren: egraph.PassChildEdgeScan, StageCompactClasses: egraph.PassEclassGroupScan}[st]
	if !waved {
		return []stepLaunch{{cfg: executor.Linear(s.strideBlocks(items), uint32(s.cfg.Threads)), stages: st.Bit(), first: 0, count: allItems}}
	}
	var out []stepLaunch
	for _, w := range s.plans.Work.Waves {
		if w.Pass == pass {
			out = append(out, stepLaunch{cfg: executor.Linear(uint32(w.Blocks), w.ThreadsPerBlock), stages: st.Bit(), first: w.FirstItem, count: w.ItemCount})
		}
	}
	return out
}

// groupLaunch is the device loop's launch of one fusion group of round
// round: every item of its stages, on a grid that strides over the largest.
func (s *Session) groupLaunch(mask uint64, round int) stepLaunch {
	var items uint64
	for st := range stageCount {
		if mask&st.Bit() != 0 {
			items = max(items, s.stageItems(st, round))
		}
	}
	return stepLaunch{cfg: executor.Linear(s.strideBlocks(items), uint32(s.cfg.Threads)), stages: mask, first: 0, count: allItems}
}

// launch enqueues one step launch in a host loop.
func launchStep(l *executor.HostLoop, k *executor.Kernel, vals []uint64, round int, sl stepLaunch) error {
	vals[stepRoundArg], vals[stepStagesArg], vals[stepFirstArg], vals[stepCountArg] = uint64(round), sl.stages, sl.first, sl.count
	return l.Launch(k, sl.cfg, vals)
}

// runHostLoop is the host-driven loop as a user writes it by hand: per
// round, every stage as its own launches (the waves of its pass), then a
// 4-byte readback of the pairs the round emitted, a sync and a test on the
// host; once a round emits nothing, the compaction's stages. The whole
// loop runs on the driver thread in one hand-off (executor.RunHostLoop).
func (s *Session) runHostLoop(r *Run) (control, error) {
	return s.stepLoop(r, func(l *executor.HostLoop, vals []uint64, c *control) error {
		err := s.countedRounds(r, l, c, func(round int, pending uint64) error {
			for _, st := range RoundStages() {
				items := s.stageItems(st, round)
				if st == StageUnite {
					items = pending
				}
				for _, sl := range s.passLaunches(st, items) {
					if err := launchStep(l, s.k.step, vals, round, sl); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, st := range CompactStages() {
			for _, sl := range s.passLaunches(st, s.stageItems(st, 0)) {
				c.compactLaunches++
				if err := launchStep(l, s.k.step, vals, 0, sl); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// countedRounds is a host loop's rounds: each enqueued by round (with the
// pairs the round before emitted, the union pairs before the first), then
// a 4-byte readback of the pairs it emitted (a sync) and a test on the
// host, until a round emits nothing.
func (s *Session) countedRounds(r *Run, l *executor.HostLoop, c *control, round func(round int, pending uint64) error) error {
	maxRounds := int(s.plans.Convergence.MaxDeviceIterations)
	pending := s.plans.Sizes.UnionPairs
	for n := 0; ; n++ {
		if n >= maxRounds {
			return notConverged(r.Arm, s.name, uint64(n))
		}
		if err := round(n, pending); err != nil {
			return err
		}
		r.RoundsLaunched++
		c.syncs++
		if err := l.Read(s.buf.ctl, 4*uint64(CtlCountWord(n+1)), s.word[:4]); err != nil {
			return err
		}
		pending = uint64(binary.LittleEndian.Uint32(s.word))
		r.EmittedPairs += pending
		if pending == 0 {
			r.Rounds = n + 1
			return nil
		}
	}
}

// runDeviceLoop enqueues CheckEvery rounds back to back, each as exactly
// the launch fusion plan's groups (no host sync between them), then reads
// the done flag once per batch. Rounds past the end see the flag and
// return at once. Then the compaction, as its fusion plan's groups.
func (s *Session) runDeviceLoop(r *Run) (control, error) {
	return s.stepLoop(r, func(l *executor.HostLoop, vals []uint64, c *control) error {
		err := s.doneBatches(r, l, c, func(round int) error {
			for _, g := range s.plans.Fusion.Groups {
				if err := launchStep(l, s.k.step, vals, round, s.groupLaunch(GroupMask(g), round)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, g := range s.plans.CompactFusion.Groups {
			c.compactLaunches++
			if err := launchStep(l, s.k.step, vals, 0, s.groupLaunch(GroupMask(g), 0)); err != nil {
				return err
			}
		}
		return nil
	})
}

// doneBatches is a device loop's rounds: CheckEvery of them enqueued back
// to back by round, then a read of the done flag (a sync), until the flag
// is set.
func (s *Session) doneBatches(r *Run, l *executor.HostLoop, c *control, round func(round int) error) error {
	k := s.cfg.CheckEvery
	maxRounds := int(s.plans.Convergence.MaxDeviceIterations)
	for base := 0; ; base += k {
		if base >= maxRounds {
			return notConverged(r.Arm, s.name, uint64(base))
		}
		for n := base; n < base+k; n++ {
			if err := round(n); err != nil {
				return err
			}
		}
		r.RoundsLaunched += k
		c.syncs++
		if err := l.Read(s.buf.ctl, 4*uint64(CtlResult+ResultDone), s.word[:4]); err != nil {
			return err
		}
		if binary.LittleEndian.Uint32(s.word) != 0 {
			return nil
		}
	}
}

// stepLoop runs loop on the driver thread in one hand-off
// (executor.RunHostLoop), with the step kernel's launch values resolved,
// and sets the run's device time. loop counts its readbacks (as syncs) and
// its compaction launches into c; RunHostLoop counts each read and its
// final wait as syncs.
func (s *Session) stepLoop(r *Run, loop func(l *executor.HostLoop, vals []uint64, c *control) error) (control, error) {
	var c control
	t, err := s.x.RunHostLoop(func(l *executor.HostLoop) error {
		vals, err := l.Resolve(kernelabi.MustArgs(s.stepParams(0, 0, 0, allItems)))
		if err != nil {
			return err
		}
		return loop(l, vals, &c)
	})
	r.DeviceNs = t.DeviceNs
	c.syncs++
	return c, err
}

// runPersistent runs every round and the compaction in one cooperative
// launch over the co-resident grid, with a grid barrier after each of the
// fusion plan's groups; the host then reads the final changed flag once
// (FinalFlagOnly).
func (s *Session) runPersistent(r *Run) (control, error) {
	t, err := s.x.Launch(s.k.persistent, s.plans.PersistentGrid.Config(), kernelabi.MustArgs(PersistentParams[executor.Buffer]{
		StateParams: s.stepParams(0, 0, 0, 0).StateParams, MaxRounds: uint64(s.plans.Convergence.MaxDeviceIterations),
		PhaseStarts: PhaseStarts(s.plans.Fusion)})...)
	if err != nil {
		return control{}, err
	}
	r.DeviceNs = t.DeviceNs
	if err := s.x.DownloadRangeInto(s.buf.ctl, 4*(CtlResult+ResultChanged), s.word[:4]); err != nil {
		return control{syncs: 1}, err
	}
	if binary.LittleEndian.Uint32(s.word) != 0 {
		return control{syncs: 2}, fmt.Errorf("rebuild persistent of %s did not converge within %d rounds. Fix: raise the convergence plan's round budget", s.name, s.plans.Convergence.MaxDeviceIterations)
	}
	return control{syncs: 2}, nil
}

// incState is the incremental kernels' state parameters.
func (s *Session) incState() IncStateParams[executor.Buffer] {
	return IncStateParams[executor.Buffer]{UseStart: s.inc.useStart, Uses: s.inc.uses, Link: s.inc.link, Slot: s.inc.slot,
		Stamp: s.inc.stamp, Lists: s.inc.lists, IncCtl: s.inc.ctl}
}

// runIncremental runs the incremental rounds and the compaction in one
// cooperative launch of KernelIncremental over its co-resident grid (a
// grid barrier after each of a round's IncPhases phases); the host then
// reads the final changed flag once, as for ArmPersistent.
func (s *Session) runIncremental(r *Run) (control, error) {
	z := s.stepParams(0, 0, 0, 0).StateParams
	t, err := s.x.Launch(s.k.incremental, s.plans.IncrementalGrid.Config(), kernelabi.MustArgs(IncrementalParams[executor.Buffer]{
		StateParams: z, IncStateParams: s.incState(), MaxRounds: uint64(s.plans.Convergence.MaxDeviceIterations)})...)
	if err != nil {
		return control{}, err
	}
	r.DeviceNs = t.DeviceNs
	if err := s.x.DownloadRangeInto(s.buf.ctl, 4*(CtlResult+ResultChanged), s.word[:4]); err != nil {
		return control{syncs: 1}, err
	}
	if binary.LittleEndian.Uint32(s.word) != 0 {
		return control{syncs: 2}, fmt.Errorf("rebuild incremental of %s did not converge within %d rounds. Fix: raise the convergence plan's round budget", s.name, s.plans.Convergence.MaxDeviceIterations)
	}
	return control{syncs: 2}, nil
}

// readIncremental reads the incremental counters after a run (one
// readback): the touches and the full passes.
func (s *Session) readIncremental(r *Run) error {
	w := make([]byte, 4*IncCtlWords)
	if err := s.x.DownloadRangeInto(s.inc.ctl, 0, w); err != nil {
		return err
	}
	r.NodeTouches = binary.LittleEndian.Uint64(w[4*IncTouches:])
	r.FullPasses = int(binary.LittleEndian.Uint32(w[4*IncFullPasses:]))
	return nil
}

// Positions of KernelIncrementalStep's round and phase parameters.
var (
	incRoundArg = kernelabi.MustIndex(IncStepParams[executor.Buffer]{}, "Round")
	incPhaseArg = kernelabi.MustIndex(IncStepParams[executor.Buffer]{}, "Phase")
)

// incPhaseItems is the most items phase of an incremental round strides
// over: the pending pairs (the unions in round 0, at most a pair per row
// later), the losers (at most a class each), the rows, child slots and
// table slot pairs of a full pass, the rows; and the initialisation's
// classes and rows.
func (s *Session) incPhaseItems(phase, round int) uint64 {
	z := s.plans.Sizes
	switch phase {
	case 0:
		return s.stageItems(StageUnite, round)
	case 1:
		return z.Classes
	case 2:
		return max(z.Rows, z.ChildSlots, z.TableSlots/2)
	case IncPhaseInit:
		return max(z.Classes, z.Rows)
	}
	return z.Rows
}

// launchIncStep enqueues one launch of KernelIncrementalStep.
func (s *Session) launchIncStep(l *executor.HostLoop, vals []uint64, round, phase int) error {
	vals[incRoundArg], vals[incPhaseArg] = uint64(round), uint64(phase)
	cfg := executor.Linear(s.strideBlocks(s.incPhaseItems(phase, round)), uint32(s.cfg.Threads))
	return l.Launch(s.k.incStep, cfg, vals)
}

// incRound enqueues the IncPhases launches of one incremental round.
func (s *Session) incRound(l *executor.HostLoop, vals []uint64, round int) error {
	for phase := range IncPhases {
		if err := s.launchIncStep(l, vals, round, phase); err != nil {
			return err
		}
	}
	return nil
}

// incLoop runs loop as stepLoop does, with KernelIncrementalStep's values
// resolved and its initialising launch enqueued first (counted with the
// compaction's, outside the rounds), then the compaction's launches.
func (s *Session) incLoop(r *Run, loop func(l *executor.HostLoop, vals []uint64, c *control) error) (control, error) {
	return s.stepLoop(r, func(l *executor.HostLoop, step []uint64, c *control) error {
		vals, err := l.Resolve(kernelabi.MustArgs(IncStepParams[executor.Buffer]{StateParams: s.stepParams(0, 0, 0, 0).StateParams, IncStateParams: s.incState()}))
		if err != nil {
			return err
		}
		c.compactLaunches++
		if err := s.launchIncStep(l, vals, 0, IncPhaseInit); err != nil {
			return err
		}
		if err := loop(l, vals, c); err != nil {
			return err
		}
		for _, g := range s.plans.CompactFusion.Groups {
			c.compactLaunches++
			if err := launchStep(l, s.k.step, step, 0, s.groupLaunch(GroupMask(g), 0)); err != nil {
				return err
			}
		}
		return nil
	})
}

// runIncHostLoop is the host loop of the incremental rounds: per round,
// its IncPhases launches, then a 4-byte readback of the pairs it emitted
// and a test on the host.
func (s *Session) runIncHostLoop(r *Run) (control, error) {
	return s.incLoop(r, func(l *executor.HostLoop, vals []uint64, c *control) error {
		return s.countedRounds(r, l, c, func(round int, _ uint64) error { return s.incRound(l, vals, round) })
	})
}

// runIncDeviceLoop is the device loop of the incremental rounds:
// CheckEvery rounds of IncPhases launches back to back, then a read of the
// done flag.
func (s *Session) runIncDeviceLoop(r *Run) (control, error) {
	return s.incLoop(r, func(l *executor.HostLoop, vals []uint64, c *control) error {
		return s.doneBatches(r, l, c, func(round int) error { return s.incRound(l, vals, round) })
	})
}
