package executor

import "time"

// Pending is an enqueued dispatch. Its resident buffers count as in flight
// (Free refuses them) until Wait returns.
type Pending struct {
	x        *Executor
	k        *Kernel
	cfg      LaunchConfig
	launches uint64
	s        StreamRef
	start    EventRef
	stop     EventRef
	pinned   []uint64
	params   []DevPtr
	stages   []PinnedMem
	t0       time.Time
	enqueue  time.Duration
	done     bool
	synced   bool
	counted  bool // counted in Executor.pending until finished
	result   Timing
	err      error
}

// Ready reports whether the dispatch has completed, without blocking.
func (p *Pending) Ready() (bool, error) {
	p.x.mu.Lock()
	defer p.x.mu.Unlock()
	if p.done {
		return true, p.err
	}
	if p.x.closed {
		return false, ErrClosed
	}
	return p.x.b.EventQuery(p.stop)
}

// Wait blocks until the dispatch completes, releases its stream, events and
// parameter buffers, clears its in-flight marks and returns its timing.
// Calling Wait again returns the same result.
func (p *Pending) Wait() (Timing, error) {
	p.x.mu.Lock()
	defer p.x.mu.Unlock()
	return p.x.waitLocked(p)
}

// waitLocked waits for p's stop event: one host wait.
func (x *Executor) waitLocked(p *Pending) (Timing, error) {
	if p.done {
		return p.result, p.err
	}
	if x.closed {
		return Timing{}, ErrClosed
	}
	var t Timing
	var ms float64
	var msErr error
	err := x.onDriver(func() error {
		x.rangePush(RangeWait)
		defer x.rangePop()
		w0 := time.Now()
		err := x.b.EventSync(p.stop)
		t = p.timing(w0, time.Now())
		p.synced = err == nil // everything was enqueued before the stop event
		if err == nil {
			ms, msErr = x.b.EventElapsedMs(p.start, p.stop)
		}
		return err
	})
	return x.completeLocked(p, t, ms, msErr, err)
}

// waitReadLocked enqueues the readback of len(dst) bytes at src after p's
// stop event, on p's stream, and waits once for the stream: the dispatch
// and its readback complete together.
func (x *Executor) waitReadLocked(p *Pending, src DevPtr, dst []byte) (Timing, error) {
	var t Timing
	var ms float64
	var msErr error
	var stage PinnedMem
	err := x.onDriver(func() error {
		x.rangePush(RangeWait)
		defer x.rangePop()
		var err error
		if stage, err = x.stagingLocked(len(dst)); err != nil {
			return err
		}
		if err := x.b.CopyDtoHAsync(stage.slice(0, len(dst)), src, uint64(len(dst)), p.s); err != nil {
			p.stages = append(p.stages, stage) // released once the stream is idle
			return err
		}
		w0 := time.Now()
		err = x.b.StreamSync(p.s)
		t = p.timing(w0, time.Now())
		p.synced = err == nil
		if err != nil {
			p.stages = append(p.stages, stage)
			return err
		}
		copy(dst, stage.Data[:len(dst)])
		x.releaseStagingLocked(stage)
		ms, msErr = x.b.EventElapsedMs(p.start, p.stop)
		return nil
	})
	if err == nil {
		x.tel.add(cDeviceReadbackOps, 1)
		x.tel.add(cDeviceToHostBytes, uint64(len(dst)))
		x.tel.add(cReadbackBytes, uint64(len(dst)))
	}
	return x.completeLocked(p, t, ms, msErr, err)
}

// timing is p's Timing for a wait from w0 to end.
func (p *Pending) timing(w0, end time.Time) Timing {
	return Timing{WallNs: uint64(end.Sub(p.t0)), EnqueueNs: uint64(p.enqueue), WaitNs: uint64(end.Sub(w0))}
}

// completeLocked records a finished wait: the sync point, the device time
// and the timed dispatch (and the launch measurement), then releases p.
func (x *Executor) completeLocked(p *Pending, t Timing, ms float64, msErr, err error) (Timing, error) {
	if err == nil {
		x.tel.add(cSyncPoints, 1)
		if msErr == nil {
			if ns, e := msToNs(ms); e == nil {
				t.DeviceNs, t.HasDeviceTime = ns, true
			}
		}
		x.tel.RecordTimed(t)
		if t.HasDeviceTime && p.launches == 1 {
			x.recordLaunchLocked(p.k, p.cfg, t.DeviceNs)
		}
	}
	p.result, p.err = t, err
	x.finishLocked(p)
	return t, err
}

// finishLocked releases a dispatch's resources (also on a failed enqueue).
// A stream that may still have work (a failed enqueue or wait) is
// synchronised first; if that fails too, its stream and staging are
// abandoned rather than reused while a copy may be in flight.
func (x *Executor) finishLocked(p *Pending) {
	if p.done {
		return
	}
	p.done = true
	if p.counted {
		x.pending--
	}
	for _, id := range p.pinned {
		if r, ok := x.buffers[id]; ok && r.inFlight > 0 {
			r.inFlight--
		}
	}
	idle := p.synced || p.s == 0
	if !idle {
		idle = x.b.StreamSync(p.s) == nil
		if idle {
			x.tel.add(cSyncPoints, 1)
		}
	}
	for _, ptr := range p.params {
		_ = x.b.MemFree(ptr)
	}
	if idle {
		for _, st := range p.stages {
			x.releaseStagingLocked(st)
		}
		if p.s != 0 {
			x.releaseStreamLocked(p.s)
		}
	}
	for _, e := range []EventRef{p.start, p.stop} {
		if e != 0 {
			x.releaseEventLocked(e)
		}
	}
}
