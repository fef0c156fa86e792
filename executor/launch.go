package executor

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/gpuplan/gpuplan/internal/checked"
	"github.com/gpuplan/gpuplan/occupancy"
)

// MaxSplitPhases bounds the phases of one DispatchWithGridSyncSplit.
const MaxSplitPhases = 1 << 20

// MaxKernelArgs bounds the argument list of one launch (4 KiB of 8-byte
// parameters, the classic CUDA parameter limit).
const MaxKernelArgs = 512

type argKind uint8

const (
	argScalar argKind = iota + 1
	argBuffer
	argParams
)

// Arg is one kernel argument. Every argument is 8 bytes on the device: a
// device pointer (Ptr, PtrAt), an 8-byte scalar (U64, I64, F64), or a
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

// U64 passes an unsigned 8-byte scalar.
func U64(v uint64) Arg { return Arg{kind: argScalar, val: v} }

// I64 passes a signed 8-byte scalar.
func I64(v int64) Arg { return Arg{kind: argScalar, val: uint64(v)} }

// F64 passes a double.
func F64(v float64) Arg { return Arg{kind: argScalar, val: math.Float64bits(v)} }

// Params uploads p into a transient device buffer and passes its address:
// the way to hand a kernel a parameter struct (the driver binding copies
// each direct argument as 8 bytes, so structs must go through memory).
func Params(p []byte) Arg { return Arg{kind: argParams, params: append([]byte(nil), p...)} }

// Timing is the measurement of one event-timed dispatch. WallNs spans the
// call from before the enqueue until completion was observed; EnqueueNs is
// the host time to enqueue (events and launch); WaitNs the host time spent
// waiting for completion; DeviceNs the device time between the two timing
// events (cuEventElapsedTime, rounded), valid when HasDeviceTime.
type Timing struct {
	WallNs        uint64 `json:"wall_ns"`
	EnqueueNs     uint64 `json:"enqueue_ns"`
	WaitNs        uint64 `json:"wait_ns"`
	DeviceNs      uint64 `json:"device_ns"`
	HasDeviceTime bool   `json:"has_device_time"`
}

// Pending is an enqueued dispatch. Its resident buffers count as in flight
// (Free refuses them) until Wait returns.
type Pending struct {
	x       *Executor
	s       StreamRef
	start   EventRef
	stop    EventRef
	pinned  []uint64
	params  []DevPtr
	t0      time.Time
	enqueue time.Duration
	done    bool
	synced  bool
	counted bool // counted in Executor.pending until finished
	result  Timing
	err     error
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
// (so the read sees the kernel's writes), with one wait. The Timing's device
// time covers the kernel alone. len(dst) must not exceed the staging chunk
// (Options.StagingChunkBytes); use Launch and DownloadRangeInto for more.
func (x *Executor) LaunchRead(k *Kernel, cfg LaunchConfig, b Buffer, off uint64, dst []byte, args ...Arg) (Timing, error) {
	x.mu.Lock()
	if x.closed {
		x.mu.Unlock()
		return Timing{}, ErrClosed
	}
	_, err := x.lookupRangeLocked(b, off, uint64(len(dst)), "readback")
	if err == nil && len(dst) > x.opts.StagingChunkBytes {
		err = invalidArg("readback", "Fix: read at most StagingChunkBytes with LaunchRead, or use Launch then DownloadRangeInto.", "%d bytes exceed the %d-byte staging chunk", len(dst), x.opts.StagingChunkBytes)
	}
	x.mu.Unlock()
	if err != nil {
		return Timing{}, err
	}
	p, err := x.LaunchAsync(k, cfg, args...)
	if err != nil {
		return Timing{}, err
	}
	if len(dst) > 0 {
		x.mu.Lock()
		r, serr := x.lookupRangeLocked(b, off, uint64(len(dst)), "readback")
		var stage PinnedMem
		if serr == nil {
			stage, serr = x.stagingLocked(len(dst))
		}
		if serr == nil {
			serr = x.onDriver(func() error {
				if err := x.b.CopyDtoHAsync(stage, r.ptr+DevPtr(off), uint64(len(dst)), p.s); err != nil {
					return err
				}
				return x.b.StreamSync(p.s)
			})
			if serr == nil {
				copy(dst, stage.Data[:len(dst)])
				x.tel.add(cSyncPoints, 1)
				x.tel.add(cDeviceReadbackOps, 1)
				x.tel.add(cDeviceToHostBytes, uint64(len(dst)))
				x.tel.add(cReadbackBytes, uint64(len(dst)))
			}
			x.releaseStagingLocked(stage)
		}
		x.mu.Unlock()
		if serr != nil {
			_, _ = p.Wait()
			return Timing{}, serr
		}
	}
	return p.Wait()
}

// LaunchAsync checks and enqueues k on a pooled non-blocking stream between
// two timing events and returns without waiting. Checks: the kernel's
// module is loaded; at most MaxKernelArgs arguments, each buffer live and
// each offset inside it; no zero dimension; the block within the kernel's
// and the device's limits; the grid within the device's limits; dynamic
// shared memory within the opt-in limit (opting in above 48 KiB); for a
// cooperative launch, device support and a co-resident grid
// (*CoResidencyError otherwise; such a grid is never launched).
func (x *Executor) LaunchAsync(k *Kernel, cfg LaunchConfig, args ...Arg) (*Pending, error) {
	return x.enqueue(k, cfg, args, [][]uint64{nil})
}

// enqueue launches k once per tail, in order on one stream, between one pair
// of timing events; each launch's arguments are args followed by its tail
// of 8-byte scalars.
func (x *Executor) enqueue(k *Kernel, cfg LaunchConfig, args []Arg, tails [][]uint64) (*Pending, error) {
	if k == nil {
		return nil, errNilKernel()
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return nil, ErrClosed
	}
	if k.m.unloaded {
		return nil, invalidArg("kernel "+k.name, "Fix: load its module again with LoadModule.", "its module was evicted or unloaded")
	}
	if err := x.checkShapeLocked(k, cfg); err != nil {
		return nil, err
	}
	tailLen := 0
	if len(tails) > 0 {
		tailLen = len(tails[0])
	}
	if len(args)+tailLen > MaxKernelArgs {
		return nil, invalidArg("kernel arguments", fmt.Sprintf("Fix: pass at most %d arguments; put the rest in a Params buffer.", MaxKernelArgs), "%d arguments", len(args)+tailLen)
	}
	vals := make([]uint64, len(args))
	for i, a := range args {
		switch a.kind {
		case argScalar:
			vals[i] = a.val
		case argBuffer:
			r, ok := x.buffers[a.buf.ID]
			if !ok {
				return nil, &UnknownBufferError{Buffer: a.buf.ID}
			}
			if a.off >= r.len {
				return nil, invalidArg(fmt.Sprintf("kernel argument %d", i), "Fix: pass an offset inside the buffer.", "offset %d is outside buffer %d of %d bytes", a.off, a.buf.ID, r.len)
			}
			vals[i] = uint64(r.ptr) + a.off
		case argParams:
			if len(a.params) == 0 {
				return nil, invalidArg(fmt.Sprintf("kernel argument %d", i), "Fix: pass a non-empty parameter buffer.", "parameter buffer is empty")
			}
		default:
			return nil, invalidArg(fmt.Sprintf("kernel argument %d", i), "Fix: build arguments with Ptr, PtrAt, U64, I64, F64 or Params.", "is the zero Arg")
		}
	}
	p := &Pending{x: x}
	ok := false
	defer func() {
		if !ok {
			x.finishLocked(p)
		}
	}()
	var err error
	if p.s, err = x.streamLocked(); err != nil {
		return nil, err
	}
	// Parameter buffers: transient device memory, staged like any upload.
	for i, a := range args {
		if a.kind != argParams {
			continue
		}
		ptr, err := x.b.MemAlloc(uint64(len(a.params)))
		if err != nil {
			return nil, err
		}
		p.params = append(p.params, ptr)
		x.tel.add(cTransientAllocBytes, uint64(len(a.params)))
		stage, err := x.stagingLocked(len(a.params))
		if err != nil {
			return nil, err
		}
		copy(stage.Data, a.params)
		err = x.b.CopyHtoDAsync(ptr, stage, uint64(len(a.params)), p.s)
		if err == nil {
			err = x.b.StreamSync(p.s)
		}
		x.releaseStagingLocked(stage)
		if err != nil {
			return nil, err
		}
		x.tel.add(cParamUploadBytes, uint64(len(a.params)))
		vals[i] = uint64(ptr)
	}
	if p.start, err = x.eventLocked(); err != nil {
		return nil, err
	}
	if p.stop, err = x.eventLocked(); err != nil {
		return nil, err
	}
	for _, a := range args {
		if a.kind == argBuffer {
			x.buffers[a.buf.ID].inFlight++
			p.pinned = append(p.pinned, a.buf.ID)
		}
	}
	p.t0 = time.Now()
	err = x.onDriver(func() error {
		if err := x.b.EventRecord(p.start, p.s); err != nil {
			return err
		}
		for _, tail := range tails {
			if err := x.b.Launch(k.ref, cfg, append(vals[:len(args):len(args)], tail...), p.s); err != nil {
				var de *DriverError
				if errors.As(err, &de) {
					de.Detail = fmt.Sprintf("kernel %s, grid %v, block %v, %d B dynamic shared memory", k.name, cfg.Grid, cfg.Block, cfg.DynamicSharedBytes)
				}
				return err
			}
			x.tel.RecordLaunch(cfg, cfg.elements())
		}
		return x.b.EventRecord(p.stop, p.s)
	})
	if err != nil {
		return nil, err
	}
	p.enqueue = time.Since(p.t0)
	ok = true
	p.counted = true
	x.pending++
	return p, nil
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

// checkShapeLocked validates a launch shape against the kernel and device.
func (x *Executor) checkShapeLocked(k *Kernel, cfg LaunchConfig) error {
	fix := "Fix: use positive grid and block dimensions within the device limits."
	for i := range 3 {
		if cfg.Grid[i] == 0 || cfg.Block[i] == 0 {
			return invalidArg("launch shape", fix, "kernel %s: grid %v and block %v must have no zero dimension", k.name, cfg.Grid, cfg.Block)
		}
		if int64(cfg.Grid[i]) > x.dev.MaxGridDim[i] || int(cfg.Block[i]) > x.dev.MaxBlockDim[i] {
			return invalidArg("launch shape", fix, "kernel %s: grid %v / block %v exceed the device's %v / %v", k.name, cfg.Grid, cfg.Block, x.dev.MaxGridDim, x.dev.MaxBlockDim)
		}
	}
	threads := uint64(cfg.Block[0]) * uint64(cfg.Block[1]) * uint64(cfg.Block[2])
	lim := min(x.dev.MaxThreadsPerBlock, k.attrs.MaxThreadsPerBlock)
	if threads > uint64(lim) {
		return invalidArg("threads per block", fmt.Sprintf("Fix: use at most %d threads per block for kernel %s.", lim, k.name), "%d threads", threads)
	}
	if err := x.optInLocked(k, int(cfg.DynamicSharedBytes)); err != nil {
		return err
	}
	if !cfg.Cooperative {
		return nil
	}
	if !x.dev.CooperativeLaunch {
		return invalidArg("cooperative launch", "Fix: use DispatchWithGridSyncSplit, which splits at grid barriers on devices without cooperative launch.", "device %s does not support cooperative launch", x.dev.Name)
	}
	grid, err := checked.Mul(uint64(cfg.Grid[0])*uint64(cfg.Grid[1]), uint64(cfg.Grid[2]), "grid blocks")
	if err != nil {
		return err
	}
	plan, err := x.coGridLocked(k, int(threads), int(cfg.DynamicSharedBytes))
	if err != nil {
		return err
	}
	if grid > uint64(plan.GridBlocks) {
		return &CoResidencyError{Kernel: k.name, GridBlocks: grid, BlocksPerSM: plan.BlocksPerSM, SMCount: x.dev.SMCount,
			Limit: uint64(plan.GridBlocks), BlockThreads: int(threads), DynamicSmem: int(cfg.DynamicSharedBytes)}
	}
	return nil
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
	x := p.x
	x.mu.Lock()
	defer x.mu.Unlock()
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
		w0 := time.Now()
		err := x.b.EventSync(p.stop)
		end := time.Now()
		p.synced = err == nil // everything was enqueued before the stop event
		t = Timing{WallNs: uint64(end.Sub(p.t0)), EnqueueNs: uint64(p.enqueue), WaitNs: uint64(end.Sub(w0))}
		if err == nil {
			ms, msErr = x.b.EventElapsedMs(p.start, p.stop)
		}
		return err
	})
	if err == nil {
		x.tel.add(cSyncPoints, 1)
		if msErr == nil {
			if ns, e := msToNs(ms); e == nil {
				t.DeviceNs, t.HasDeviceTime = ns, true
			}
		}
		x.tel.RecordTimed(t)
	}
	p.result, p.err = t, err
	x.finishLocked(p)
	return t, err
}

// finishLocked releases a dispatch's resources (also on a failed enqueue).
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
	for _, ptr := range p.params {
		_ = x.b.MemFree(ptr)
	}
	if p.s != 0 {
		if !p.synced { // a failed enqueue may have left work on the stream
			_ = x.b.StreamSync(p.s)
		}
		x.releaseStreamLocked(p.s)
	}
	if p.start != 0 {
		x.releaseEventLocked(p.start)
	}
	if p.stop != 0 {
		x.releaseEventLocked(p.stop)
	}
}

// GridPlan is a co-resident grid for a persistent or cooperative kernel.
type GridPlan struct {
	// BlocksPerSM is the blocks per SM used: the smaller of the model's and
	// the driver's answers.
	BlocksPerSM int `json:"blocks_per_sm"`
	// ModelBlocksPerSM is occupancy.Compute's answer.
	ModelBlocksPerSM int `json:"model_blocks_per_sm"`
	// DriverBlocksPerSM is cuOccupancyMaxActiveBlocksPerMultiprocessor's.
	DriverBlocksPerSM int `json:"driver_blocks_per_sm"`
	// Limit is the occupancy model's binding limit.
	Limit occupancy.Limit `json:"limit"`
	// GridBlocks = BlocksPerSM × SMCount.
	GridBlocks uint32 `json:"grid_blocks"`
	SMCount    int    `json:"sm_count"`
	// BlockThreads and DynamicSharedBytes are the inputs.
	BlockThreads       int `json:"block_threads"`
	DynamicSharedBytes int `json:"dynamic_shared_bytes"`
}

// Agrees reports whether the occupancy model and the driver agree.
func (g GridPlan) Agrees() bool { return g.ModelBlocksPerSM == g.DriverBlocksPerSM }

// Config returns the cooperative launch shape of the plan.
func (g GridPlan) Config() LaunchConfig {
	c := Linear(g.GridBlocks, uint32(g.BlockThreads))
	c.DynamicSharedBytes = uint32(g.DynamicSharedBytes)
	c.Cooperative = true
	return c
}

// CooperativeGrid sizes the largest co-resident grid of k at the given
// block size and dynamic shared memory: the occupancy model's blocks per SM,
// cross-checked against the driver (the smaller is used, and both are
// reported), times the SM count. A kernel that cannot fit one block per SM
// is refused with a *CoResidencyError.
func (x *Executor) CooperativeGrid(k *Kernel, blockThreads, dynamicSharedBytes int) (GridPlan, error) {
	if k == nil {
		return GridPlan{}, errNilKernel()
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return GridPlan{}, ErrClosed
	}
	if err := x.optInLocked(k, dynamicSharedBytes); err != nil {
		return GridPlan{}, err
	}
	return x.coGridLocked(k, blockThreads, dynamicSharedBytes)
}

func (x *Executor) coGridLocked(k *Kernel, blockThreads, dyn int) (GridPlan, error) {
	if blockThreads <= 0 || blockThreads > min(x.dev.MaxThreadsPerBlock, k.attrs.MaxThreadsPerBlock) {
		return GridPlan{}, invalidArg("threads per block", fmt.Sprintf("Fix: use 1 to %d threads per block for kernel %s.", min(x.dev.MaxThreadsPerBlock, k.attrs.MaxThreadsPerBlock), k.name), "%d", blockThreads)
	}
	r, err := occupancy.Compute(x.dev, k.OccupancyKernel(dyn), blockThreads)
	if err != nil {
		return GridPlan{}, err
	}
	drv, err := x.b.MaxActiveBlocksPerSM(k.ref, blockThreads, dyn)
	if err != nil {
		return GridPlan{}, err
	}
	g := GridPlan{ModelBlocksPerSM: r.ActiveBlocksPerSM, DriverBlocksPerSM: drv, Limit: r.Limit,
		BlocksPerSM: min(r.ActiveBlocksPerSM, drv), SMCount: x.dev.SMCount, BlockThreads: blockThreads, DynamicSharedBytes: dyn}
	blocks, err := checked.Mul(uint64(g.BlocksPerSM), uint64(x.dev.SMCount), "co-resident grid blocks")
	if err != nil || blocks > math.MaxUint32 {
		return GridPlan{}, &checked.OverflowError{Field: "co-resident grid blocks"}
	}
	g.GridBlocks = uint32(blocks)
	if g.GridBlocks == 0 {
		return g, &CoResidencyError{Kernel: k.name, GridBlocks: 1, BlocksPerSM: 0, SMCount: x.dev.SMCount, Limit: 0, BlockThreads: blockThreads, DynamicSmem: dyn}
	}
	return g, nil
}

// SplitResult reports how DispatchWithGridSyncSplit ran.
type SplitResult struct {
	// Launches is 1 for a cooperative run, else the number of phases.
	Launches int `json:"launches"`
	// Cooperative is true when one cooperative launch ran every phase.
	Cooperative bool `json:"cooperative"`
	// Timing sums the launches' timings.
	Timing Timing `json:"timing"`
}

// DispatchWithGridSyncSplit runs a phased kernel (vyre's
// dispatch_with_grid_sync_split). The kernel's last two parameters must be
// (unsigned long long phase_begin, unsigned long long phase_end): it runs
// phases [begin, end) with a grid-wide barrier between consecutive phases.
//
// With cfg.Cooperative and a device that supports cooperative launch, it is
// one cooperative launch over [0, phases) (the grid must be co-resident).
// Otherwise the work is split at the grid barriers: one ordinary launch per
// phase p over [p, p+1), enqueued back to back on one stream (so each kernel
// boundary acts as the barrier) and timed as a whole. forceSplit takes the
// split path on any device.
func (x *Executor) DispatchWithGridSyncSplit(k *Kernel, cfg LaunchConfig, phases uint64, forceSplit bool, args ...Arg) (SplitResult, error) {
	if phases == 0 || phases > MaxSplitPhases {
		return SplitResult{}, invalidArg("phases", fmt.Sprintf("Fix: pass 1 to %d phases; loop on the host for more.", MaxSplitPhases), "%d phases", phases)
	}
	coop := cfg.Cooperative && x.dev.CooperativeLaunch && !forceSplit
	if coop {
		all := append(append(make([]Arg, 0, len(args)+2), args...), U64(0), U64(phases))
		t, err := x.Launch(k, cfg, all...)
		return SplitResult{Launches: 1, Cooperative: true, Timing: t}, err
	}
	cfg.Cooperative = false
	tails := make([][]uint64, phases)
	for p := range phases {
		tails[p] = []uint64{p, p + 1}
	}
	pd, err := x.enqueue(k, cfg, args, tails)
	if err != nil {
		return SplitResult{}, err
	}
	t, err := pd.Wait()
	return SplitResult{Launches: int(phases), Timing: t}, err
}
