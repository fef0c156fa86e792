package rebuild

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/gpuplan/gpuplan/egraph"
	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/internal/kernelabi"
	"github.com/gpuplan/gpuplan/workloads/harness"
)

// Arm names one way of driving the rounds of a rebuild from the host.
type Arm string

// The rebuild's execution arms. All of them produce identical partitions.
const (
	// ArmHostLoop launches one stage at a time (each wave of its pass),
	// reads the round's 4-byte changed flag back and synchronises once per
	// round: what a user writes by hand with the driver API
	// (executor.RunHostLoop).
	ArmHostLoop Arm = "host-loop"
	// ArmDeviceLoop enqueues Config.CheckEvery rounds of the launch fusion
	// plan's groups back to back, with no host sync per round, and reads
	// the done flag once per batch.
	ArmDeviceLoop Arm = "device-loop"
	// ArmPersistent runs every round in one cooperative launch with grid
	// barriers between the fusion plan's groups and reads the final changed
	// flag once.
	ArmPersistent Arm = "persistent"
	// ArmHostLoopIncremental, ArmDeviceLoopIncremental and
	// ArmPersistentIncremental drive the incremental rounds
	// (egraph.RebuildIncremental, Config.Incremental) as ArmHostLoop,
	// ArmDeviceLoop and ArmPersistent drive the full rounds: a launch of
	// KernelIncrementalStep per phase with the changed flag read every
	// round, CheckEvery rounds of those launches back to back, or one
	// cooperative launch of KernelIncremental. They run only on a session
	// opened with Config.Incremental.
	ArmHostLoopIncremental   Arm = "host-loop-incremental"
	ArmDeviceLoopIncremental Arm = "device-loop-incremental"
	ArmPersistentIncremental Arm = "persistent-incremental"
)

// Arms lists every arm in a fixed order: the full rounds' (FullRoundArms),
// then the incremental rounds' (IncrementalArms).
func Arms() []Arm { return append(FullRoundArms(), IncrementalArms()...) }

// FullRoundArms lists the arms of the full rounds, which every session
// runs (a session opened with Config.Incremental runs the incremental
// rounds under these names too).
func FullRoundArms() []Arm { return []Arm{ArmHostLoop, ArmDeviceLoop, ArmPersistent} }

// IncrementalArms lists the arms of the incremental rounds, in the order
// of FullRoundArms.
func IncrementalArms() []Arm {
	return []Arm{ArmHostLoopIncremental, ArmDeviceLoopIncremental, ArmPersistentIncremental}
}

// ParseArm returns the arm named s.
func ParseArm(s string) (Arm, error) { return harness.ParseArm("rebuild", Arms(), s) }

// IsIncremental reports whether a is one of IncrementalArms.
func (a Arm) IsIncremental() bool { return slices.Contains(IncrementalArms(), a) }

// Driver returns the full-round arm that drives the rounds as a does: a
// itself for a full-round arm, ArmPersistent for ArmPersistentIncremental.
func (a Arm) Driver() Arm {
	if i := slices.Index(IncrementalArms(), a); i >= 0 {
		return FullRoundArms()[i]
	}
	return a
}

// Incremental returns the incremental arm that drives the rounds as a
// does: ArmPersistentIncremental for ArmPersistent, a itself for an
// incremental arm.
func (a Arm) Incremental() Arm {
	if i := slices.Index(FullRoundArms(), a); i >= 0 {
		return IncrementalArms()[i]
	}
	return a
}

// Run is the measurement of one rebuild with one arm.
type Run struct {
	Arm Arm `json:"arm"`
	// Rounds is the rounds the rebuild took, the last of which emitted
	// nothing, as the device counted them.
	Rounds int `json:"rounds"`
	// RoundsLaunched is the rounds whose launches were enqueued: the device
	// loop's last batch runs past the end (its launches return at once).
	RoundsLaunched int `json:"rounds_launched"`
	// Barriers is the persistent kernel's grid barriers; 0 for the others.
	Barriers int `json:"barriers,omitempty"`
	// UnionMerges and CongruenceMerges count the links of round 0 and of
	// the later rounds.
	UnionMerges      int `json:"union_merges"`
	CongruenceMerges int `json:"congruence_merges"`
	// EmittedPairs is the pairs the rounds emitted, as the host loop read
	// them (0 for the other arms, which do not read them).
	EmittedPairs uint64 `json:"emitted_pairs,omitempty"`
	// The rebuild's accounting (wall time and launches of its timed
	// region, the reset before it and the read of its result words after
	// outside; the pollution inside it; the whole run's host syncs and
	// readbacks, the partition and the e-node table read separately), its
	// device time, the sum over its dispatches, and its rounds' launches
	// (without the compaction).
	harness.Accounting
	DeviceNs      uint64 `json:"device_ns"`
	RoundLaunches uint64 `json:"round_launches"`
	// Incremental reports the incremental rounds (Config.Incremental);
	// NodeTouches is then the rows they canonicalised
	// (egraph.RebuildResult.NodeTouches) and FullPasses the rounds after
	// the first that ran as full passes.
	Incremental bool   `json:"incremental,omitempty"`
	NodeTouches uint64 `json:"node_touches,omitempty"`
	FullPasses  int    `json:"full_passes,omitempty"`
}

// LaunchesPerRound is the round launches over the rounds launched.
func (r Run) LaunchesPerRound() float64 {
	if r.RoundsLaunched == 0 {
		return 0
	}
	return float64(r.RoundLaunches) / float64(r.RoundsLaunched)
}

// control is what an arm's rebuild expects of itself: the host syncs its
// own control flow takes and the launches it made outside its rounds.
type control struct {
	syncs           uint64
	compactLaunches uint64
}

// Run resets the rebuild state, then runs and times one rebuild with arm,
// then reads and checks the result words. The output stays on the device:
// Output reads it.
func (s *Session) Run(arm Arm) (Run, error) {
	if _, err := ParseArm(string(arm)); err != nil {
		return Run{}, err
	}
	if arm.IsIncremental() && !s.cfg.Incremental {
		return Run{}, fmt.Errorf("rebuild %s of %s: the arm runs the incremental rounds, and the session was opened without them. Fix: open the session with Config.Incremental, or run %s", arm, s.name, arm.Driver())
	}
	m := harness.NewMeter(s.x)
	if err := s.reset(); err != nil {
		return Run{}, err
	}
	r := Run{Arm: arm}
	var c control
	err := m.Time(func() (uint64, error) {
		var err error
		c, err = s.rebuild(&r)
		return c.syncs, err
	})
	if err != nil {
		r.WallNs = m.WallNs
		return r, err
	}
	err = s.checkControl(&r)
	r.Accounting = m.Finish()
	r.RoundLaunches = r.Launches - min(r.Launches, c.compactLaunches)
	return r, err
}

// rebuild runs the arm's rounds and the compaction.
func (s *Session) rebuild(r *Run) (control, error) {
	if s.cfg.Incremental {
		r.Incremental = true
		switch r.Arm.Driver() {
		case ArmHostLoop:
			return s.runIncHostLoop(r)
		case ArmDeviceLoop:
			return s.runIncDeviceLoop(r)
		}
		return s.runIncremental(r)
	}
	switch r.Arm {
	case ArmHostLoop:
		return s.runHostLoop(r)
	case ArmDeviceLoop:
		return s.runDeviceLoop(r)
	default:
		return s.runPersistent(r)
	}
}

// reset runs KernelReset (outside any timed region).
func (s *Session) reset() error {
	c := s.plans.Sizes.Classes
	blocks := uint32(min(max((c+255)/256, 1), uint64(s.plans.StepGrid.GridBlocks)))
	_, err := s.x.Launch(s.k.reset, executor.Linear(max(blocks, 1), 256), kernelabi.MustArgs(ResetParams[executor.Buffer]{
		Parent: s.buf.parent, Ctl: s.buf.ctl, Out: s.buf.out, Classes: c})...)
	return err
}

// stepParams are the step kernel's parameters for a round's stages over
// the items first..+count.
func (s *Session) stepParams(round int, stages, first, count uint64) StepParams[executor.Buffer] {
	z := s.plans.Sizes
	return StepParams[executor.Buffer]{StateParams: StateParams[executor.Buffer]{Image: s.buf.image, Unions: s.buf.unions,
		Parent: s.buf.parent, Cls: s.buf.cls, Canon: s.buf.canon, Table: s.buf.table, Pairs: s.buf.pairs, Ctl: s.buf.ctl,
		Out: s.buf.out, SecClass: s.section(egraph.SecRowEclassIDs), SecOp: s.section(egraph.SecRowLanguageOpIDs),
		SecOffset: s.section(egraph.SecRowChildrenOffsets), SecLen: s.section(egraph.SecRowChildrenLens),
		SecChildren: s.section(egraph.SecChildren), SecGroups: s.section(egraph.SecGroupEclassIDs),
		Rows: z.Rows, ChildSlots: z.ChildSlots, Classes: z.Classes, UnionPairs: z.UnionPairs, TableSlots: z.TableSlots},
		Round: uint64(round), Stages: stages, ItemFirst: first, ItemCount: count}
}

// resultWords reads the result words after a run (one readback).
func (s *Session) resultWords() ([]uint32, error) {
	w := s.word[:4*ResultWords]
	if err := s.x.DownloadRangeInto(s.buf.ctl, 4*CtlResult, w); err != nil {
		return nil, err
	}
	out := make([]uint32, ResultWords)
	for i := range out {
		out[i] = binary.LittleEndian.Uint32(w[4*i:])
	}
	return out, nil
}

// checkControl reads the result words after a run: the rounds (for the
// arms that count them on the device), the merges and the persistent
// kernel's barriers, and the overflow, misuse and changed flags that must
// stay 0.
func (s *Session) checkControl(r *Run) error {
	w, err := s.resultWords()
	if err != nil {
		return err
	}
	if r.Arm.Driver() != ArmHostLoop {
		r.Rounds = int(w[ResultRounds])
	}
	if r.Arm.Driver() == ArmPersistent {
		r.Barriers = int(w[ResultBarriers])
		r.RoundsLaunched = r.Rounds
	}
	if s.cfg.Incremental {
		if err := s.readIncremental(r); err != nil {
			return err
		}
	}
	r.UnionMerges, r.CongruenceMerges = int(w[ResultUnionMerges]), int(w[ResultCongruenceMerges])
	switch {
	case w[ResultMisuse] == MisuseGrid:
		return fmt.Errorf("rebuild %s of %s: the persistent kernel was launched with more than %d blocks and did nothing. Fix: launch it through a Session, which caps its grid", r.Arm, s.name, MaxPersistentBlocks)
	case w[ResultMisuse] != 0:
		return fmt.Errorf("rebuild %s of %s: a launch fused stages that need a grid barrier between them and did nothing. Fix: launch the fusion plan's groups", r.Arm, s.name)
	case w[ResultOverflow] != 0:
		return fmt.Errorf("rebuild %s of %s: a hash table probe passed all %d slots. Fix: this is a sizing bug in the table plan; report it", r.Arm, s.name, s.plans.Sizes.TableSlots)
	case r.Arm.Driver() == ArmPersistent && w[ResultChanged] != 0:
		return notConverged(r.Arm, s.name, uint64(r.Rounds))
	}
	return nil
}

// notConverged is the error of an arm that ran out of its round budget.
func notConverged(arm Arm, name string, rounds uint64) error {
	return fmt.Errorf("rebuild %s of %s ran %d rounds without converging. Fix: the e-graph or the kernels are inconsistent; validate the e-graph and compare with the CPU reference", arm, name, rounds)
}
