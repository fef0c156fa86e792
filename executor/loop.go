package executor

import (
	"fmt"
	"time"
)

// MaxLoopRead is the most bytes one HostLoop.Read copies back.
const MaxLoopRead = 256

// HostLoop is a host-driven loop of launches and small readbacks: the way a
// program drives a GPU by hand with the driver API (launch a kernel, copy a
// few bytes back, synchronise, decide on the host, launch again). Its
// methods are valid only inside the body given to RunHostLoop, which runs
// on the driver thread with the executor locked: the body must not call
// other Executor methods.
type HostLoop struct {
	x      *Executor
	s      StreamRef
	pin    PinnedMem
	pinned []uint64
	reads  uint64
	bytes  uint64
	// ended is set when the loop's final wait was made, idle when it saw
	// the stream drain.
	ended, idle bool
	// Bound calls of a backend that offers them (boundCalls): the same
	// driver calls without a lookup per call.
	bound    boundCalls
	launches map[*Kernel]func(LaunchConfig, []uint64) error
	read     func(PinnedMem, DevPtr, uint64) error
	sync     func() error
}

// boundCalls is implemented by backends whose driver calls can be bound
// once to a function and a stream and then made without a lookup or an
// allocation: the hot path of a host loop. The bound calls must be made on
// the driver thread, inside the loop's body.
type boundCalls interface {
	bindLaunch(f FuncRef, s StreamRef) (func(LaunchConfig, []uint64) error, error)
	bindRead(s StreamRef) (func(PinnedMem, DevPtr, uint64) error, error)
	bindSync(s StreamRef) (func() error, error)
}

// RunHostLoop runs body as one host-driven loop: on one pooled non-blocking
// stream, in one hand-off to the driver thread, with one pinned staging
// buffer for its readbacks, so a step of the loop costs its driver calls
// and nothing else (no allocation, no event, no goroutine switch). Two
// events around the whole loop give its device time. Launches are counted
// in the telemetry as they happen; every Read counts as a readback and a
// sync point. Buffers resolved with Resolve stay in flight (Free refuses
// them) until the loop returns.
func (x *Executor) RunHostLoop(body func(l *HostLoop) error) (Timing, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return Timing{}, ErrClosed
	}
	l := &HostLoop{x: x}
	defer l.release()
	var err error
	if l.s, err = x.streamLocked(); err != nil {
		return Timing{}, err
	}
	if l.pin, err = x.stagingLocked(MaxLoopRead); err != nil {
		return Timing{}, err
	}
	ev0, err := x.eventLocked()
	if err != nil {
		return Timing{}, err
	}
	defer x.releaseEventLocked(ev0)
	ev1, err := x.eventLocked()
	if err != nil {
		return Timing{}, err
	}
	defer x.releaseEventLocked(ev1)
	var t Timing
	t0 := time.Now()
	err = x.onDriver(func() error {
		x.rangePush(RangeHostLoop)
		defer x.rangePop()
		if err := x.b.EventRecord(ev0, l.s); err != nil {
			return err
		}
		if err := l.bind(); err != nil {
			return err
		}
		if err := body(l); err != nil {
			return err
		}
		if err := x.b.EventRecord(ev1, l.s); err != nil {
			return err
		}
		l.ended = true
		if err := x.b.EventSync(ev1); err != nil {
			return err
		}
		l.idle = true
		ms, err := x.b.EventElapsedMs(ev0, ev1)
		if err == nil {
			if ns, err := msToNs(ms); err == nil {
				t.DeviceNs, t.HasDeviceTime = ns, true
			}
		}
		return nil
	})
	t.WallNs = uint64(time.Since(t0))
	x.tel.add(cSyncPoints, l.reads)
	if l.ended {
		x.tel.add(cSyncPoints, 1)
	}
	x.tel.add(cDeviceReadbackOps, l.reads)
	x.tel.add(cDeviceToHostBytes, l.bytes)
	x.tel.add(cReadbackBytes, l.bytes)
	if err == nil {
		x.tel.RecordTimed(t)
	}
	return t, err
}

// bind binds the readback and the sync to the loop's stream when the
// backend offers bound calls.
func (l *HostLoop) bind() error {
	b, ok := l.x.b.(boundCalls)
	if !ok {
		return nil
	}
	var err error
	if l.read, err = b.bindRead(l.s); err != nil {
		return err
	}
	if l.sync, err = b.bindSync(l.s); err != nil {
		return err
	}
	l.bound, l.launches = b, map[*Kernel]func(LaunchConfig, []uint64) error{}
	return nil
}

// release drops the loop's in-flight marks and returns its stream and
// staging buffer to the pools. A stream that may still have work after a
// failure is synchronised first (a counted wait); if that fails too, the
// stream and the staging buffer are abandoned rather than reused.
func (l *HostLoop) release() {
	x := l.x
	for _, id := range l.pinned {
		if r, ok := x.buffers[id]; ok && r.inFlight > 0 {
			r.inFlight--
		}
	}
	if l.s != 0 && !l.idle {
		if x.b.StreamSync(l.s) != nil {
			return
		}
		x.tel.add(cSyncPoints, 1)
	}
	if l.pin.Data != nil {
		x.releaseStagingLocked(l.pin)
	}
	if l.s != 0 {
		x.releaseStreamLocked(l.s)
	}
}

// Resolve turns arguments into the 8-byte values a launch passes: buffers
// become device addresses and stay in flight until the loop returns. A
// parameter buffer (Params) is refused: a loop passes only direct
// arguments. The caller may overwrite scalar values between launches.
func (l *HostLoop) Resolve(args []Arg) ([]uint64, error) {
	if len(args) > MaxKernelArgs {
		return nil, invalidArg("kernel arguments", fmt.Sprintf("Fix: pass at most %d arguments.", MaxKernelArgs), "%d arguments", len(args))
	}
	vals := make([]uint64, len(args))
	for i, a := range args {
		switch a.kind {
		case argScalar:
			vals[i] = a.val
		case argBuffer:
			ptr, err := l.x.argBufferLocked(a, i)
			if err != nil {
				return nil, err
			}
			l.x.buffers[a.buf.ID].inFlight++
			l.pinned = append(l.pinned, a.buf.ID)
			vals[i] = uint64(ptr)
		default:
			return nil, invalidArg(fmt.Sprintf("kernel argument %d", i), "Fix: pass buffers (Ptr, PtrAt) and scalars (U64, I64, F64) to a host loop; zero an Out buffer with a Launch before the loop.", "is not a direct argument")
		}
	}
	return vals, nil
}

// Launch enqueues k on the loop's stream with values from Resolve, after
// the same shape checks as Executor.Launch (a cooperative launch is
// refused: use Executor.Launch for those), cfg.FixpointIterations times.
func (l *HostLoop) Launch(k *Kernel, cfg LaunchConfig, vals []uint64) error {
	x := l.x
	if k == nil {
		return errNilKernel()
	}
	if k.m.unloaded {
		return invalidArg("kernel "+k.name, "Fix: load its module again with LoadModule.", "its module was evicted or unloaded")
	}
	if cfg.Cooperative {
		return invalidArg("host loop launch", "Fix: launch cooperative kernels with Executor.Launch.", "kernel %s is cooperative", k.name)
	}
	if err := x.checkShapeLocked(k, cfg); err != nil {
		return err
	}
	for range cfg.iterations() {
		if err := l.launch(k, cfg, vals); err != nil {
			return err
		}
		x.tel.RecordLaunch(cfg, cfg.elements())
	}
	return nil
}

// Read copies len(dst) bytes (at most MaxLoopRead) of b from byte offset
// off into dst once the work enqueued before it is done: an asynchronous
// copy into pinned memory and a stream synchronisation.
func (l *HostLoop) Read(b Buffer, off uint64, dst []byte) error {
	x := l.x
	if len(dst) == 0 || len(dst) > MaxLoopRead {
		return invalidArg("host loop read", fmt.Sprintf("Fix: read 1 to %d bytes per step.", MaxLoopRead), "%d bytes", len(dst))
	}
	src, err := x.rangeLocked(b, off, uint64(len(dst)), opReadback)
	if err != nil {
		return err
	}
	if err := l.copyBack(src, uint64(len(dst))); err != nil {
		return err
	}
	copy(dst, l.pin.Data[:len(dst)])
	l.reads++
	l.bytes += uint64(len(dst))
	return nil
}

// launch launches through the kernel's bound call, binding it on first
// use, or through the backend.
func (l *HostLoop) launch(k *Kernel, cfg LaunchConfig, vals []uint64) error {
	if l.bound == nil {
		return l.x.b.Launch(k.ref, cfg, vals, l.s)
	}
	f, ok := l.launches[k]
	if !ok {
		var err error
		if f, err = l.bound.bindLaunch(k.ref, l.s); err != nil {
			return err
		}
		l.launches[k] = f
	}
	return f(cfg, vals)
}

// copyBack copies n bytes at src into the loop's pinned buffer and waits.
func (l *HostLoop) copyBack(src DevPtr, n uint64) error {
	if l.bound == nil {
		if err := l.x.b.CopyDtoHAsync(l.pin, src, n, l.s); err != nil {
			return err
		}
		return l.x.b.StreamSync(l.s)
	}
	if err := l.read(l.pin, src, n); err != nil {
		return err
	}
	return l.sync()
}
