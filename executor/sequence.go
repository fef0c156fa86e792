package executor

import (
	"fmt"
	"time"
)

// Step is one dispatch of a resident sequence: a kernel, its launch shape
// (FixpointIterations included) and its arguments.
type Step struct {
	Kernel *Kernel
	Config LaunchConfig
	Args   []Arg
}

// Sequence is a repeated resident dispatch sequence with read ranges
// (vyre's dispatch_resident_repeated_sequence_read_ranges_into): the Prefix
// steps once, then the Repeated steps Repeat times over, then the Reads,
// all in order on one stream with one host wait at the end.
type Sequence struct {
	Prefix   []Step
	Repeated []Step
	Repeat   uint32
	Reads    []ReadRequest
}

// seqStep is a checked step with its resolved arguments.
type seqStep struct {
	Step
	la launchArgs
}

// RunSequence runs s and copies Reads[i] into outs[i]: the counts must match
// and each slot must have its range's length. Everything is checked first
// (kernels, shapes, arguments, ranges; vyre's messages for the reads), so a
// refused sequence launches and copies nothing. The steps' Params are
// uploaded once per distinct content, without waiting; Out buffers are
// zeroed before each launch of their step; the reads are fused as
// DownloadMany fuses them. The host waits once (more only when the reads
// are larger than the staging ring). An empty sequence with no reads does
// nothing. The Timing's device time spans the launches.
func (x *Executor) RunSequence(s Sequence, outs [][]byte) (Timing, error) {
	t0 := time.Now()
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return Timing{}, ErrClosed
	}
	countOp := opSequenceRanged
	if len(s.Repeated) > 0 {
		countOp = opRepeatedRanged
	}
	if err := x.checkReadsLocked(s.Reads, outs, opSequenceRead, countOp); err != nil {
		return Timing{}, err
	}
	prefix, repeated, launches, err := x.resolveSequenceLocked(s)
	if err != nil {
		return Timing{}, err
	}
	if launches == 0 && len(s.Reads) == 0 {
		return Timing{}, nil
	}
	if x.opts.ResidentBorrowedFallback {
		return x.sequenceBorrowedLocked(t0, s, prefix, repeated, outs)
	}
	return x.sequenceLocked(t0, s, prefix, repeated, launches, outs)
}

// resolveSequenceLocked checks and resolves every step and counts the
// launches (at most MaxLaunchesPerDispatch).
func (x *Executor) resolveSequenceLocked(s Sequence) (prefix, repeated []seqStep, launches uint64, err error) {
	resolve := func(steps []Step, times uint64, field string) ([]seqStep, error) {
		out := make([]seqStep, len(steps))
		for i, st := range steps {
			la, n, err := x.checkStepLocked(st)
			if err != nil {
				return nil, fmt.Errorf("sequence %s step %d: %w", field, i, err)
			}
			out[i] = seqStep{Step: st, la: la}
			launches += n * times
			if launches > MaxLaunchesPerDispatch {
				return nil, invalidArg("sequence", fmt.Sprintf("Fix: run at most %d launches per sequence; split it.", MaxLaunchesPerDispatch), "more than %d launches", MaxLaunchesPerDispatch)
			}
		}
		return out, nil
	}
	if prefix, err = resolve(s.Prefix, 1, "prefix"); err != nil {
		return nil, nil, 0, err
	}
	repeated, err = resolve(s.Repeated, uint64(s.Repeat), "repeated")
	return prefix, repeated, launches, err
}

// checkStepLocked checks a step as a launch is checked and resolves its
// arguments; it returns the step's launches.
func (x *Executor) checkStepLocked(st Step) (launchArgs, uint64, error) {
	k := st.Kernel
	if k == nil {
		return launchArgs{}, 0, errNilKernel()
	}
	if k.m.unloaded {
		return launchArgs{}, 0, invalidArg("kernel "+k.name, "Fix: load its module again with LoadModule.", "its module was evicted or unloaded")
	}
	if err := x.checkShapeLocked(k, st.Config); err != nil {
		return launchArgs{}, 0, err
	}
	n, err := launchCount(st.Config, 1)
	if err != nil {
		return launchArgs{}, 0, err
	}
	la, err := x.resolveArgsLocked(st.Args, 0)
	return la, n, err
}

// sequenceLocked runs a checked sequence on one stream with one wait.
func (x *Executor) sequenceLocked(t0 time.Time, s Sequence, prefix, repeated []seqStep, launches uint64, outs [][]byte) (Timing, error) {
	plan, err := x.planReadsLocked(s.Reads, outs)
	if err != nil {
		return Timing{}, err
	}
	p := &Pending{x: x, t0: t0, launches: launches}
	var t Timing
	var waits uint64
	var ms float64
	var msErr error
	err = x.onDriver(func() error {
		x.rangePush(RangeSequence)
		defer x.rangePop()
		if err := x.enqueueSequenceLocked(p, prefix, repeated, s.Repeat); err != nil {
			return err
		}
		p.enqueue = time.Since(t0)
		w0 := time.Now()
		w, err := x.readAndWaitLocked(p, plan)
		waits, p.synced = w, err == nil
		t = p.timing(w0, time.Now())
		if err == nil {
			ms, msErr = x.b.EventElapsedMs(p.start, p.stop)
		}
		return err
	})
	x.tel.add(cSyncPoints, waits)
	if err == nil {
		plan.deliver(outs)
		plan.count(&x.tel)
		if ns, e := msToNs(ms); msErr == nil && e == nil {
			t.DeviceNs, t.HasDeviceTime = ns, true
		}
		x.tel.RecordTimed(t)
	}
	x.finishLocked(p)
	return t, err
}

// enqueueSequenceLocked enqueues the steps between p's timing events: the
// parameter uploads first (one per distinct content), then each step's
// clears and launches.
func (x *Executor) enqueueSequenceLocked(p *Pending, prefix, repeated []seqStep, repeat uint32) error {
	var err error
	if p.s, err = x.streamLocked(); err != nil {
		return err
	}
	cache := map[string]DevPtr{}
	for _, steps := range [][]seqStep{prefix, repeated} {
		for i := range steps {
			if err := x.stageStepParamsLocked(p, &steps[i], cache); err != nil {
				return err
			}
		}
	}
	if p.start, err = x.eventLocked(); err != nil {
		return err
	}
	if p.stop, err = x.eventLocked(); err != nil {
		return err
	}
	if err := x.b.EventRecord(p.start, p.s); err != nil {
		return err
	}
	if err := x.launchStepsLocked(prefix, p.s); err != nil {
		return err
	}
	for range repeat {
		if err := x.launchStepsLocked(repeated, p.s); err != nil {
			return err
		}
	}
	return x.b.EventRecord(p.stop, p.s)
}

// stageStepParamsLocked uploads a step's Params, reusing the upload of
// identical bytes earlier in the sequence (vyre caches a sequence's
// parameter words the same way).
func (x *Executor) stageStepParamsLocked(p *Pending, st *seqStep, cache map[string]DevPtr) error {
	for _, i := range st.la.params {
		key := string(st.Args[i].params)
		ptr, ok := cache[key]
		if !ok {
			var err error
			if ptr, err = x.stageParamsLocked(p, st.Args[i].params); err != nil {
				return err
			}
			cache[key] = ptr
		}
		st.la.vals[i] = uint64(ptr)
	}
	return nil
}

// launchStepsLocked clears and launches each step on stream s.
func (x *Executor) launchStepsLocked(steps []seqStep, s StreamRef) error {
	for _, st := range steps {
		if err := x.clearLocked(st.la.clears, s); err != nil {
			return err
		}
		if err := x.launchTailsLocked(st.Kernel, st.Config, st.la.vals, noTails, s); err != nil {
			return err
		}
	}
	return nil
}

// readAndWaitLocked enqueues the plan's copies on p's stream and waits once
// for the stream (the launches before them included), returning the waits.
// After a failure the ring's staging is left to p, released once
// finishLocked has settled the stream.
func (x *Executor) readAndWaitLocked(p *Pending, plan readPlan) (uint64, error) {
	if len(plan.copies) == 0 {
		return 1, x.b.StreamSync(p.s)
	}
	r, err := x.newRingLocked(p.s, plan.bytes)
	if err != nil {
		return 0, err
	}
	for _, c := range plan.copies {
		if err = r.get(c.src, c.dst); err != nil {
			break
		}
	}
	if err == nil {
		err = r.finish()
	}
	waits := r.waits
	if err != nil {
		p.stages = append(p.stages, r.buf...)
		r.abandon()
		return waits, err
	}
	r.release()
	return waits, nil
}

// sequenceBorrowedLocked runs the sequence step by step, each step with
// resident buffers through the borrowed fallback (counted per step, as
// vyre's sequence fallback dispatches each step), then the reads.
func (x *Executor) sequenceBorrowedLocked(t0 time.Time, s Sequence, prefix, repeated []seqStep, outs [][]byte) (Timing, error) {
	var sum Timing
	run := func(st seqStep) error {
		p, err := x.enqueueLocked(time.Now(), st.Kernel, st.Config, st.Args, noTails)
		if err != nil {
			return err
		}
		t, err := x.waitLocked(p)
		sum.DeviceNs += t.DeviceNs
		sum.HasDeviceTime = t.HasDeviceTime
		return err
	}
	for _, st := range prefix {
		if err := run(st); err != nil {
			return sum, err
		}
	}
	for range s.Repeat {
		for _, st := range repeated {
			if err := run(st); err != nil {
				return sum, err
			}
		}
	}
	err := x.downloadLocked(s.Reads, outs)
	sum.WallNs = uint64(time.Since(t0))
	return sum, err
}
