package executor

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// MaxSplitPhases bounds the phases of one DispatchWithGridSyncSplit.
const MaxSplitPhases = 1 << 20

// MaxLaunchesPerDispatch bounds the kernel launches one dispatch enqueues:
// its phases (DispatchWithGridSyncSplit) times its fixpoint iterations
// (LaunchConfig.FixpointIterations).
const MaxLaunchesPerDispatch = 1 << 20

// MaxKernelArgs bounds the argument list of one launch (4 KiB of 8-byte
// parameters, the classic CUDA parameter limit).
const MaxKernelArgs = 512

type argKind uint8

const (
	argScalar argKind = iota + 1
	argBuffer
	argParams
	argOut
)

// Arg is one kernel argument. Every argument is 8 bytes on the device: a
// device pointer (Ptr, PtrAt, Out), an 8-byte scalar (U64, I64, F64), or a
// pointer to a device parameter buffer (Params) that the executor uploads
// before the launch and frees after it. Declare the kernel's parameters as
// pointers, unsigned long long, long long or double accordingly.
type Arg struct {
	kind   argKind
	buf    Buffer
	off    uint64
	val    uint64
	params []byte
}

// Ptr passes the device address of b.
func Ptr(b Buffer) Arg { return Arg{kind: argBuffer, buf: b} }

// PtrAt passes the device address of b plus off bytes (off < b.Len).
func PtrAt(b Buffer, off uint64) Arg { return Arg{kind: argBuffer, buf: b, off: off} }

// Out passes the device address of b as an output-only buffer: the
// executor zeroes the whole of b on the launch's stream just before the
// launch, as vyre clears the output-only bindings of a dispatch, so the
// kernel never sees what an earlier dispatch left there.
func Out(b Buffer) Arg { return Arg{kind: argOut, buf: b} }

// U64 passes an unsigned 8-byte scalar.
func U64(v uint64) Arg { return Arg{kind: argScalar, val: v} }

// I64 passes a signed 8-byte scalar.
func I64(v int64) Arg { return Arg{kind: argScalar, val: uint64(v)} }

// F64 passes a double.
func F64(v float64) Arg { return Arg{kind: argScalar, val: math.Float64bits(v)} }

// Params uploads p into a transient device buffer and passes its address:
// the way to hand a kernel a parameter struct (the driver binding copies
// each direct argument as 8 bytes, so structs must go through memory). The
// upload is asynchronous on the launch's stream, with no wait of its own,
// and counts as a host upload (vyre's parameter upload).
func Params(p []byte) Arg { return Arg{kind: argParams, params: append([]byte(nil), p...)} }

// Timing is the measurement of one event-timed dispatch. WallNs spans the
// call from its start (before the dispatch's own uploads) until completion
// was observed, as vyre's wall time does; EnqueueNs is the host time to
// enqueue (parameter uploads, output clears, events and launches); WaitNs
// the host time spent waiting for completion; DeviceNs the device time
// between the two timing events around the launches (cuEventElapsedTime,
// rounded), valid when HasDeviceTime.
type Timing struct {
	WallNs        uint64 `json:"wall_ns"`
	EnqueueNs     uint64 `json:"enqueue_ns"`
	WaitNs        uint64 `json:"wait_ns"`
	DeviceNs      uint64 `json:"device_ns"`
	HasDeviceTime bool   `json:"has_device_time"`
}

// Launch runs k once with an event-timed, checked dispatch and waits for it.
func (x *Executor) Launch(k *Kernel, cfg LaunchConfig, args ...Arg) (Timing, error) {
	p, err := x.LaunchAsync(k, cfg, args...)
	if err != nil {
		return Timing{}, err
	}
	return p.Wait()
}

// LaunchRead is one host-driven wave step: it launches k like Launch, then
// reads len(dst) bytes of b from byte offset off into dst on the same stream
// (so the read sees the kernel's writes), with one host wait for both, as
// vyre's resident dispatch waits once after its launch and readback. The
// Timing's device time covers the kernel alone. len(dst) must not exceed
// the staging chunk (Options.StagingChunkBytes); use Launch and
// DownloadRangeInto for more.
func (x *Executor) LaunchRead(k *Kernel, cfg LaunchConfig, b Buffer, off uint64, dst []byte, args ...Arg) (Timing, error) {
	t0 := time.Now()
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return Timing{}, ErrClosed
	}
	src, err := x.rangeLocked(b, off, uint64(len(dst)), opReadback)
	if err != nil {
		return Timing{}, err
	}
	if len(dst) > x.opts.StagingChunkBytes {
		return Timing{}, invalidArg("readback", "Fix: read at most StagingChunkBytes with LaunchRead, or use Launch then DownloadRangeInto.", "%d bytes exceed the %d-byte staging chunk", len(dst), x.opts.StagingChunkBytes)
	}
	p, err := x.enqueueLocked(t0, k, cfg, args, noTails)
	if err != nil {
		return Timing{}, err
	}
	if len(dst) == 0 {
		return x.waitLocked(p)
	}
	if p.done { // the borrowed fallback ran the dispatch to completion
		return p.result, x.downloadLocked([]ReadRequest{{Buffer: b, Offset: off, Len: uint64(len(dst))}}, [][]byte{dst})
	}
	return x.waitReadLocked(p, src, dst)
}

// LaunchAsync checks and enqueues k on a pooled non-blocking stream between
// two timing events and returns without waiting. Checks: the kernel's
// module is loaded; at most MaxKernelArgs arguments, each buffer live and
// each offset inside it; no zero dimension; the block within the kernel's
// and the device's limits; the grid within the device's limits; dynamic
// shared memory within the opt-in limit (opting in above 48 KiB); for a
// cooperative launch, device support and a co-resident grid
// (*CoResidencyError otherwise; such a grid is never launched); at most
// MaxLaunchesPerDispatch launches. Before the launches it uploads the
// Params arguments and zeroes the Out buffers on the same stream, without
// waiting.
func (x *Executor) LaunchAsync(k *Kernel, cfg LaunchConfig, args ...Arg) (*Pending, error) {
	t0 := time.Now()
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.enqueueLocked(t0, k, cfg, args, noTails)
}

// noTails is a dispatch of one launch with no per-launch arguments.
var noTails = [][]uint64{nil}

// launchArgs are a dispatch's arguments resolved for the driver: one value
// per argument (Params values are filled in when they are uploaded), the
// Params arguments' indices, the Out buffers to zero and every buffer used.
type launchArgs struct {
	vals   []uint64
	params []int
	clears []clearSpan
	used   []uint64
}

// clearSpan is an output-only buffer to zero before a launch.
type clearSpan struct {
	id  uint64
	ptr DevPtr
	n   uint64
}

// resolveArgsLocked resolves args (plus extra per-launch scalars, counted
// against MaxKernelArgs).
func (x *Executor) resolveArgsLocked(args []Arg, extra int) (launchArgs, error) {
	if len(args)+extra > MaxKernelArgs {
		return launchArgs{}, invalidArg("kernel arguments", fmt.Sprintf("Fix: pass at most %d arguments; put the rest in a Params buffer.", MaxKernelArgs), "%d arguments", len(args)+extra)
	}
	la := launchArgs{vals: make([]uint64, len(args))}
	for i, a := range args {
		switch a.kind {
		case argScalar:
			la.vals[i] = a.val
		case argBuffer, argOut:
			ptr, err := x.argBufferLocked(a, i)
			if err != nil {
				return launchArgs{}, err
			}
			la.vals[i] = uint64(ptr)
			la.used = append(la.used, a.buf.ID)
			if a.kind == argOut && !la.clearing(a.buf.ID) {
				la.clears = append(la.clears, clearSpan{id: a.buf.ID, ptr: ptr, n: a.buf.Len})
			}
		case argParams:
			if len(a.params) == 0 {
				return launchArgs{}, invalidArg(argField(i), "Fix: pass a non-empty parameter buffer.", "parameter buffer is empty")
			}
			la.params = append(la.params, i)
		default:
			return launchArgs{}, invalidArg(argField(i), "Fix: build arguments with Ptr, PtrAt, Out, U64, I64, F64 or Params.", "is the zero Arg")
		}
	}
	return la, nil
}

// clearing reports whether buffer id is already to be zeroed.
func (la launchArgs) clearing(id uint64) bool {
	for _, c := range la.clears {
		if c.id == id {
			return true
		}
	}
	return false
}

// argBufferLocked resolves buffer argument i to its device address.
func (x *Executor) argBufferLocked(a Arg, i int) (DevPtr, error) {
	r, err := x.residentLocked(a.buf, opKernelArgument, a.off, a.buf.Len)
	if err != nil {
		return 0, err
	}
	if a.off >= r.len {
		return 0, invalidArg(argField(i), "Fix: pass an offset inside the buffer.", "offset %d is outside buffer %d of %d bytes", a.off, a.buf.ID, r.len)
	}
	return r.ptr + DevPtr(a.off), nil
}

// argField names kernel argument i in an error.
func argField(i int) string { return fmt.Sprintf("kernel argument %d", i) }

// launchCount returns the launches of a dispatch: its tails times its
// fixpoint iterations, at most MaxLaunchesPerDispatch.
func launchCount(cfg LaunchConfig, tails int) (uint64, error) {
	n := uint64(cfg.iterations()) * uint64(tails)
	if n > MaxLaunchesPerDispatch {
		return 0, invalidArg("fixpoint iterations", fmt.Sprintf("Fix: enqueue at most %d launches per dispatch (phases times iterations); loop on the host for more.", MaxLaunchesPerDispatch), "%d iterations of %d launches", cfg.iterations(), tails)
	}
	return n, nil
}

// enqueueLocked checks and enqueues a dispatch: k launched once per tail
// (each launch's arguments are args followed by its tail of 8-byte
// scalars), the whole sequence FixpointIterations times, in order on one
// stream between one pair of timing events. With the borrowed fallback on
// (Options.ResidentBorrowedFallback) it runs the dispatch to completion
// through host staging instead and returns it finished.
func (x *Executor) enqueueLocked(t0 time.Time, k *Kernel, cfg LaunchConfig, args []Arg, tails [][]uint64) (*Pending, error) {
	if k == nil {
		return nil, errNilKernel()
	}
	if x.closed {
		return nil, ErrClosed
	}
	if k.m.unloaded {
		return nil, invalidArg("kernel "+k.name, "Fix: load its module again with LoadModule.", "its module was evicted or unloaded")
	}
	if err := x.checkShapeLocked(k, cfg); err != nil {
		return nil, err
	}
	launches, err := launchCount(cfg, len(tails))
	if err != nil {
		return nil, err
	}
	la, err := x.resolveArgsLocked(args, len(tails[0]))
	if err != nil {
		return nil, err
	}
	if x.opts.ResidentBorrowedFallback && len(la.used) > 0 {
		return x.borrowedLocked(t0, k, cfg, args, la, tails)
	}
	p := &Pending{x: x, k: k, cfg: cfg, t0: t0, launches: launches, pinned: la.used}
	for _, id := range la.used {
		x.buffers[id].inFlight++
	}
	if err := x.onDriver(func() error { return x.enqueueDriverLocked(p, k, cfg, args, la, tails) }); err != nil {
		x.finishLocked(p)
		return nil, err
	}
	p.enqueue = time.Since(t0)
	p.counted = true
	x.pending++
	return p, nil
}

// enqueueDriverLocked makes a dispatch's driver calls, on the driver
// thread: stream, parameter uploads, output clears, start event, launches,
// stop event.
func (x *Executor) enqueueDriverLocked(p *Pending, k *Kernel, cfg LaunchConfig, args []Arg, la launchArgs, tails [][]uint64) error {
	x.rangePush(RangeLaunch)
	defer x.rangePop()
	var err error
	if p.s, err = x.streamLocked(); err != nil {
		return err
	}
	for _, i := range la.params {
		ptr, err := x.stageParamsLocked(p, args[i].params)
		if err != nil {
			return err
		}
		la.vals[i] = uint64(ptr)
	}
	if err := x.clearLocked(la.clears, p.s); err != nil {
		return err
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
	if err := x.launchTailsLocked(k, cfg, la.vals, tails, p.s); err != nil {
		return err
	}
	return x.b.EventRecord(p.stop, p.s)
}

// launchTailsLocked launches k once per tail, FixpointIterations times
// over, on stream s, counting each launch.
func (x *Executor) launchTailsLocked(k *Kernel, cfg LaunchConfig, vals []uint64, tails [][]uint64, s StreamRef) error {
	n := len(vals)
	for range cfg.iterations() {
		for _, tail := range tails {
			all := vals
			if len(tail) > 0 {
				all = append(vals[:n:n], tail...)
			}
			if err := x.b.Launch(k.ref, cfg, all, s); err != nil {
				var de *DriverError
				if errors.As(err, &de) {
					detail := fmt.Sprintf("kernel %s, grid %v, block %v, %d B dynamic shared memory", k.name, cfg.Grid, cfg.Block, cfg.DynamicSharedBytes)
					if de.Detail != "" {
						detail += ": " + de.Detail
					}
					de.Detail = detail
				}
				return err
			}
			x.tel.RecordLaunch(cfg, cfg.elements())
		}
	}
	return nil
}

// stageParamsLocked uploads a parameter buffer on p's stream without
// waiting: transient device memory and pinned staging, both kept until the
// dispatch finishes. It counts as a transient allocation, a host upload and
// parameter bytes (vyre's prepare_resident_param_upload).
func (x *Executor) stageParamsLocked(p *Pending, params []byte) (DevPtr, error) {
	n := uint64(len(params))
	ptr, err := x.b.MemAlloc(n)
	if err != nil {
		return 0, err
	}
	p.params = append(p.params, ptr)
	x.tel.add(cTransientAllocBytes, n)
	stage, err := x.stagingLocked(len(params))
	if err != nil {
		return 0, err
	}
	p.stages = append(p.stages, stage)
	copy(stage.Data, params)
	if err := x.b.CopyHtoDAsync(ptr, stage.slice(0, len(params)), n, p.s); err != nil {
		return 0, err
	}
	x.tel.add(cHostUploadOps, 1)
	x.tel.add(cHostToDeviceBytes, n)
	x.tel.add(cParamUploadBytes, n)
	return ptr, nil
}

// clearLocked zeroes output-only buffers on stream s.
func (x *Executor) clearLocked(clears []clearSpan, s StreamRef) error {
	for _, c := range clears {
		if err := x.b.MemsetD8Async(c.ptr, 0, c.n, s); err != nil {
			return err
		}
	}
	return nil
}

// driverSequencer is implemented by backends that run driver calls on a
// dedicated thread: it runs a sequence of calls in one round trip.
type driverSequencer interface {
	runOnDriver(func() error) error
}

// onDriver runs f, in one round trip to the driver thread when the backend
// has one.
func (x *Executor) onDriver(f func() error) error {
	if s, ok := x.b.(driverSequencer); ok {
		return s.runOnDriver(f)
	}
	return f()
}
