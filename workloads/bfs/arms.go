package bfs

import (
	"encoding/binary"
	"fmt"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/internal/kernelabi"
	"github.com/gpuplan/gpuplan/planners"
	"github.com/gpuplan/gpuplan/workloads/harness"
)

// Arm names one way of driving the BFS levels from the host.
type Arm string

// The BFS execution arms. All of them produce identical levels.
const (
	// ArmHostLoop launches one frontier-queue level at a time, reads the
	// 4-byte next-frontier count back and synchronises: what a user writes
	// by hand with the driver API (executor.RunHostLoop: the whole loop on
	// the driver thread, no event or allocation per level).
	ArmHostLoop Arm = "host-loop"
	// ArmDeviceLoop enqueues Config.CheckEvery levels back to back on one
	// stream without any host sync and reads the count once per batch.
	ArmDeviceLoop Arm = "device-loop"
	// ArmMegakernel runs every level in one cooperative launch with grid
	// barriers and reads the final changed flag once.
	ArmMegakernel Arm = "megakernel"
	// ArmHostLoopScan is the host loop over the plain scan wave (one thread
	// per vertex, every vertex visited every level).
	ArmHostLoopScan Arm = "host-loop-scan"
)

// Arms lists every arm in a fixed order.
func Arms() []Arm { return []Arm{ArmHostLoop, ArmDeviceLoop, ArmMegakernel, ArmHostLoopScan} }

// ParseArm returns the arm named s.
func ParseArm(s string) (Arm, error) { return harness.ParseArm("BFS", Arms(), s) }

// Run is the measurement of one BFS from one root with one arm.
type Run struct {
	Arm  Arm   `json:"arm"`
	Root int32 `json:"root"`
	// Levels is the number of levels (the largest level + 1), as the
	// device counted them.
	Levels int `json:"levels"`
	// Barriers is the megakernel's grid barriers (its steps; fewer than
	// Levels when its blocks run ahead); 0 for the other arms.
	Barriers int `json:"barriers,omitempty"`
	// Relabels is the megakernel's claims that lowered a label a block
	// running ahead had set (0 when level-synchronous).
	Relabels uint64 `json:"relabels,omitempty"`
	// Reruns is 1 when the megakernel's run-ahead overflowed a frontier
	// queue and the traversal ran again level-synchronously (its time
	// includes both).
	Reruns int `json:"reruns,omitempty"`
	// Decisions are the direction of every level of a direction-optimizing
	// traversal, with the counts each was decided from (step i discovers
	// level i+1): the planner's on the host loop, the device rule's on the
	// device loop and the megakernel, checked against the planner's
	// decision for the same counts. Empty when every level is top-down by
	// configuration or by the degree gate.
	Decisions []planners.BFSDirectionDecision `json:"decisions,omitempty"`
	// MaxAhead is the deepest run-ahead the megakernel took in a step (its
	// depth adapts step by step), 0 for the other arms and for the
	// asynchronous traversal, which takes no steps and logs none.
	MaxAhead int `json:"max_ahead,omitempty"`
	// The traversal's accounting (wall time and launches of its timed
	// region, which the per-root reset and the final check of the result
	// words are outside; the pollution inside it; the whole run's host
	// syncs and readbacks, the levels read separately) and its device time,
	// the sum over its dispatches.
	harness.Accounting
	DeviceNs uint64 `json:"device_ns"`
}

// control is what an arm's traversal expects of itself: the host syncs its
// own control flow takes.
type control struct{ syncs uint64 }

// Run resets the BFS state for root, then runs and times one traversal with
// arm, then reads and checks the result words. The levels stay on the
// device: Levels downloads them.
func (s *Session) Run(arm Arm, root int32) (Run, error) {
	if err := s.checkRun(arm, root); err != nil {
		return Run{}, err
	}
	r, m, err := s.timedRun(arm, root)
	if err != nil {
		return r, err
	}
	err = s.checkControl(&r)
	if err == nil {
		err = s.readSteps(&r, nil)
	}
	r.Accounting = m.Finish()
	return r, err
}

// checkRun refuses an unknown arm, a root that is not a vertex, and an arm
// the session's plans cannot run, before anything runs.
func (s *Session) checkRun(arm Arm, root int32) error {
	if _, err := ParseArm(string(arm)); err != nil {
		return err
	}
	if err := frontier.CheckRoot(s.g, int64(root)); err != nil {
		return err
	}
	return s.ArmFits(arm)
}

// timedRun resets the state for root and runs the timed traversal: the
// result words are still to read. On a failed traversal the Run carries its
// wall time so far.
func (s *Session) timedRun(arm Arm, root int32) (Run, *harness.Meter, error) {
	m := harness.NewMeter(s.x)
	if err := s.reset(root); err != nil {
		return Run{}, m, err
	}
	r := Run{Arm: arm, Root: root}
	if err := m.Time(func() (uint64, error) { c, err := s.traverse(&r); return c.syncs, err }); err != nil {
		r.WallNs = m.WallNs
		return r, m, err
	}
	return r, m, nil
}

// traverse runs the arm's traversal.
func (s *Session) traverse(r *Run) (control, error) {
	switch r.Arm {
	case ArmHostLoop:
		return s.runHostLoop(r)
	case ArmDeviceLoop:
		return s.runDeviceLoop(r)
	case ArmMegakernel:
		return s.runMegakernel(r)
	default:
		return s.runScanLoop(r)
	}
}

// reset runs KernelInit for root (outside any timed region).
func (s *Session) reset(root int32) error {
	n := uint64(s.g.NumVertices())
	blocks := uint32(min((n+255)/256, uint64(s.x.Device().SMCount)*8))
	_, err := s.x.Launch(s.k.init, executor.Linear(max(blocks, 1), 256), kernelabi.MustArgs(s.initArgs(InitParams[executor.Buffer]{
		Offsets: s.buf.offsets, Level: s.buf.level, Q0: s.buf.q0, Vis: s.buf.vis0, Ctl: s.buf.ctl,
		N: n, Root: uint64(root), Chunk: uint64(s.cfg.Chunk), QCap: s.qcap()}))...)
	s.ran = s.ran || err == nil
	return err
}

// readSteps reads what the device logged of a traversal after it ran: the
// decisions of a direction-optimizing device loop or megakernel, checked
// against the planner, and the megakernel's deepest run-ahead.
func (s *Session) readSteps(r *Run, pre []byte) error {
	steps := r.Levels
	switch {
	case r.Arm == ArmMegakernel && s.async() && r.Reruns == 0:
		// The asynchronous traversal logs no steps: the log holds an
		// earlier run's.
		return nil
	case r.Arm == ArmMegakernel:
		steps = r.Barriers
	case r.Arm != ArmDeviceLoop || !s.optimizing:
		return nil
	}
	entries, first, err := s.readLogFrom(steps, pre)
	if err != nil {
		return err
	}
	if r.Arm == ArmMegakernel {
		for _, e := range entries {
			r.MaxAhead = max(r.MaxAhead, int(e.depth))
		}
	}
	if !s.ArmOptimizing(r.Arm) {
		return nil
	}
	if steps != r.Levels {
		return fmt.Errorf("BFS %s from root %d: %d steps for %d levels of a direction-optimizing traversal, which is level-synchronous. Fix: this is a kernel bug, report it", r.Arm, r.Root, steps, r.Levels)
	}
	r.Decisions, err = s.deviceDecisions(entries, first)
	if err != nil {
		return fmt.Errorf("BFS %s from root %d: %w", r.Arm, r.Root, err)
	}
	return nil
}

// readWord reads one 4-byte control word (a readback and a sync).
//
//lint:ignore U1000 unused since RunAnswer reads the result words in its answer dispatch; it goes with the next change that records the BFS evidence again (the evidence fingerprint hashes the code's tokens).
func (s *Session) readWord(word int) (uint32, error) {
	if err := s.x.DownloadRangeInto(s.buf.ctl, 4*uint64(word), s.word[:4]); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(s.word), nil
}

// checkControl reads the result words after a run and checks them
// (checkResult).
func (s *Session) checkControl(r *Run) error {
	w := s.word[:4*ResultWords]
	if err := s.x.DownloadRangeInto(s.buf.ctl, 4*CtlResult, w); err != nil {
		return err
	}
	return s.checkResult(r, w)
}

// checkResult reads the result words w (ResultWords of them) of a run: the
// device's level count (and the megakernel's barriers and relabels), and
// the overflow and misuse flags that must stay 0.
func (s *Session) checkResult(r *Run, w []byte) error {
	at := func(i int) uint32 { return binary.LittleEndian.Uint32(w[4*i:]) }
	if r.Arm != ArmHostLoopScan {
		// A root without edges gives the queue arms no level to run, so
		// the device counts none; its traversal still has one level, the
		// root's (as the scan wave and the CPU reference count it).
		r.Levels = max(int(at(ResultLevels)), 1)
		s.deepest = max(s.deepest, r.Levels)
	}
	if r.Arm == ArmMegakernel {
		r.Barriers = int(at(ResultBarriers))
		r.Relabels = binary.LittleEndian.Uint64(w[4*ResultRelabels:])
	}
	if at(ResultOverflow) != 0 {
		return fmt.Errorf("BFS %s from root %d: a frontier queue overflowed its %d items. Fix: this is a sizing bug in the queue plan; report it", r.Arm, r.Root, s.qcap())
	}
	if l := at(ResultDirMismatch); l != 0 {
		return fmt.Errorf("BFS %s from root %d: at level %d the device's direction rule disagreed with the planner. Fix: the kernels' rule and planners.PlanBFSDirection differ; this is a bug, report it", r.Arm, r.Root, l)
	}
	switch at(ResultMisuse) {
	case 0:
		return nil
	case MisuseGrid:
		return fmt.Errorf("BFS %s from root %d: the megakernel was launched with more than %d blocks and did nothing. Fix: launch it through a Session, which caps its grid", r.Arm, r.Root, MaxMegakernelBlocks)
	case MisuseAsync:
		return fmt.Errorf("BFS %s from root %d: a megakernel entry point other than %s was given the asynchronous direction and did nothing. Fix: launch the asynchronous traversal through a Session with Config.MegakernelAsync", r.Arm, r.Root, KernelMegakernelAsync)
	default:
		return fmt.Errorf("BFS %s from root %d: a per-level launch was given several phases. Fix: launch %s with one phase per launch", r.Arm, r.Root, KernelQueueLevel)
	}
}

// doLevelParams are the direction-optimizing level kernel's parameters for
// levels counted from depthBase, in direction dir (0: the device decides).
func (s *Session) doLevelParams(depthBase, dir uint64) DoLevelParams[executor.Buffer] {
	return DoLevelParams[executor.Buffer]{TraversalParams: TraversalParams[executor.Buffer]{Offsets: s.buf.offsets,
		Targets: s.buf.targets, Level: s.buf.level, Q0: s.buf.q0, Q1: s.buf.q1, Vis0: s.buf.vis0, Vis1: s.buf.vis1,
		Ctl: s.buf.ctl, Log: s.buf.log, N: uint64(s.g.NumVertices()), Chunk: uint64(s.cfg.Chunk), QCap: s.qcap(),
		LowDegree: b2u(s.lowDeg)}, LogCap: s.logEntries(), Direction: dir, DepthBase: depthBase, PhaseBegin: 0, PhaseEnd: 1}
}

// levelParams are the per-level kernel's parameters for levels counted
// from depthBase.
func (s *Session) levelParams(depthBase uint64) QueueLevelParams[executor.Buffer] {
	return QueueLevelParams[executor.Buffer]{Offsets: s.buf.offsets, Targets: s.buf.targets, Level: s.buf.level,
		Q0: s.buf.q0, Q1: s.buf.q1, Ctl: s.buf.ctl, Chunk: uint64(s.cfg.Chunk), QCap: s.qcap(),
		LowDegree: b2u(s.lowDeg), DepthBase: depthBase, PhaseBegin: 0, PhaseEnd: 1}
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// notConverged is the error of an arm that ran out of its level budget.
func notConverged(arm Arm, root int32, levels uint64) error {
	return fmt.Errorf("BFS %s from root %d ran %d levels without converging. Fix: the graph or the kernels are inconsistent; validate the graph", arm, root, levels)
}
