package executor

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/gpuplan/gpuplan/occupancy"
)

// Pool sizes from vyre's CudaBackend.
const (
	// LaunchResourceCache is the most idle streams (and events) kept.
	LaunchResourceCache = 128
	// PinnedHostPoolBytes bounds the idle pinned staging memory kept.
	PinnedHostPoolBytes = 128 << 20
	// DefaultStagingChunkBytes is the largest single staged copy; longer
	// copies go through the staging buffer in chunks of this size.
	DefaultStagingChunkBytes = 16 << 20
)

// Options configure an Executor.
type Options struct {
	// StagingChunkBytes overrides DefaultStagingChunkBytes (0 = default).
	StagingChunkBytes int
	// DriverPoll (CUDA backend) is how long the driver thread polls for the
	// next call before it parks, trading one busy core for lower per-call
	// latency: 0 means DefaultDriverPoll, negative never polls.
	DriverPoll time.Duration
	// CallerSpin (CUDA backend) is how long a call spins, yielding its
	// processor, for the driver thread to finish it before it blocks: a
	// blocked caller costs a wake-up of tens to hundreds of microseconds
	// when its call ends, so waiting for a kernel spins one more core
	// meanwhile. 0 means DefaultCallerSpin, negative blocks at once.
	CallerSpin time.Duration
	// SkipPTXProbe skips the PTX target probe; PTXTarget then reports the
	// native sm.
	SkipPTXProbe bool
	// ResidentBorrowedFallback runs every dispatch that uses resident
	// buffers through host staging instead (vyre's
	// VYRE_CUDA_RESIDENT_BORROWED_FALLBACK): each buffer is read back,
	// copied to a transient device buffer, the kernel runs on the copies,
	// and they are written back, synchronously; each such dispatch counts
	// in ResidentBorrowedFallbackDispatches. It is for isolating a suspected
	// resident-memory bug, never for speed.
	ResidentBorrowedFallback bool
	// DisableProfilerRanges turns off the NVTX ranges the CUDA build marks
	// around launches and copies.
	DisableProfilerRanges bool
	// PrivateContext (CUDA backend) gives the executor a context of its
	// own instead of the device's primary one. A sticky fault (an illegal
	// address) in the primary context leaves the process without a usable
	// context on that device, private ones included; in a private context
	// it loses that context only, so a process that must outlive a fault in
	// the kernels it runs (a server, a run of user kernels that looks for
	// the faulting one) opens its executors with it. Such an executor does
	// not share memory handles with NCCL or the CUDA runtime.
	PrivateContext bool
}

// Executor runs work on one device through a Backend: modules cached by
// content, resident buffers under the budget rule, staged copies on pooled
// non-blocking streams, checked and event-timed launches, cooperative
// launches sized by the occupancy model, and telemetry. Its methods are safe
// for concurrent use; driver calls are serialised.
type Executor struct {
	mu     sync.Mutex
	b      Backend
	dev    occupancy.Device
	total  uint64
	closed bool
	// pending counts dispatches enqueued and not yet finished by Wait.
	pending int
	opts    Options

	ptxTarget  int
	freeAtOpen uint64
	freeAtEnd  uint64

	// resident store
	nextID   uint64
	buffers  map[uint64]*resident
	resBytes uint64

	// module cache
	modules  map[ModuleKey]*Module
	modOrder []ModuleKey

	// launch resources
	streams      []StreamRef
	events       []EventRef
	staging      map[int][]PinnedMem
	stagingBytes int
	// stagingLimit bounds stagingBytes: PinnedHostPoolBytes
	stagingLimit int
	// ring is the staging ring batches reuse; ringInUse while one holds it
	ring      stagingRing
	ringInUse bool

	// module cache counters (saturating, as vyre's)
	modHits, modMisses uint64

	// pinned caller memory and the asynchronous upload stream
	pins  []*hostPin
	async asyncUploads

	// launch measurements by kernel and launch size
	measured measurements

	// ranges marks profiler ranges (nil: none)
	ranges rangeMarker

	tel Telemetry
}

type resident struct {
	ptr      DevPtr
	len      uint64
	inFlight uint32
}

// New builds an Executor over an opened backend: it probes the device, picks
// the PTX target (vyre's probe: the native sm, then lower ones) and records the free memory at open.
func New(b Backend, opts Options) (*Executor, error) {
	if b == nil {
		return nil, invalidArg("backend", "Fix: pass a backend from Open or NewFake.", "is nil")
	}
	if opts.StagingChunkBytes < 0 {
		return nil, invalidArg("StagingChunkBytes", "Fix: pass 0 for the default or a positive size.", "%d is negative", opts.StagingChunkBytes)
	}
	if opts.StagingChunkBytes == 0 {
		opts.StagingChunkBytes = DefaultStagingChunkBytes
	}
	dev, err := b.Properties()
	if err != nil {
		return nil, err
	}
	free, total, err := b.MemInfo()
	if err != nil {
		return nil, err
	}
	x := &Executor{b: b, dev: dev, total: total, opts: opts, freeAtOpen: free,
		buffers: map[uint64]*resident{}, modules: map[ModuleKey]*Module{}, staging: map[int][]PinnedMem{}, stagingLimit: PinnedHostPoolBytes, nextID: 1}
	if m, ok := b.(rangeMarker); ok && !opts.DisableProfilerRanges && m.rangesAvailable() {
		x.ranges = m
	}
	native := dev.Major*10 + dev.Minor
	x.ptxTarget = native
	if !opts.SkipPTXProbe {
		t, err := SelectPTXTarget(native, func(src string) error {
			m, err := b.LoadModule([]byte(src))
			if err != nil {
				return err
			}
			if _, err := b.Function(m, "gpuplan_ptx_probe"); err != nil {
				_ = b.UnloadModule(m)
				return err
			}
			return b.UnloadModule(m)
		})
		if err != nil {
			return nil, err
		}
		x.ptxTarget = t
	}
	return x, nil
}

// Device returns the probed device capabilities.
func (x *Executor) Device() occupancy.Device { return x.dev }

// PTXTarget returns the sm target the PTX probe selected (for example 90).
func (x *Executor) PTXTarget() int { return x.ptxTarget }

// MemInfo returns the live free and total device memory.
func (x *Executor) MemInfo() (free, total uint64, err error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return 0, 0, ErrClosed
	}
	return x.b.MemInfo()
}

// FreeMemoryAtOpen is the free device memory when the executor opened.
func (x *Executor) FreeMemoryAtOpen() uint64 { return x.freeAtOpen }

// FreeMemoryAtClose is the free device memory measured by Close after it
// released every buffer, module, stream, event and staging buffer, just
// before it released the primary context (whose own lazily made
// allocations, such as kernels' local memory, go only when its last holder
// releases it). Zero before Close.
func (x *Executor) FreeMemoryAtClose() uint64 {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.freeAtEnd
}

// saturatingInc adds one to v unless it is at the largest uint64.
func saturatingInc(v uint64) uint64 {
	if v == ^uint64(0) {
		return v
	}
	return v + 1
}

// Telemetry returns a snapshot of the counters.
func (x *Executor) Telemetry() TelemetrySnapshot { return x.tel.Snapshot() }

// ResetTelemetry zeroes the counters.
func (x *Executor) ResetTelemetry() { x.tel.Reset() }

// Close frees every resident buffer, unloads every module, destroys pooled
// streams and events, frees the staging memory, unpins the caller memory
// still pinned, records the free memory (FreeMemoryAtClose) and closes the
// backend. It refuses while a dispatch or an asynchronous upload is
// pending: InFlightError if it uses a resident buffer, else PendingError.
// Close twice is a no-op.
func (x *Executor) Close() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return nil
	}
	if err := x.busyLocked(); err != nil {
		// Work still in flight is refused, unless the context is lost:
		// then nothing will finish, and the context must be released.
		if _, _, merr := x.b.MemInfo(); !ContextLost(merr) {
			return err
		}
	}
	var errs []error
	for id, r := range x.buffers {
		errs = append(errs, x.b.MemFree(r.ptr))
		delete(x.buffers, id)
	}
	x.resBytes = 0
	for _, k := range x.modOrder {
		if m := x.modules[k]; m != nil {
			errs = append(errs, x.b.UnloadModule(m.ref))
			m.unloaded = true
		}
	}
	x.modules, x.modOrder = map[ModuleKey]*Module{}, nil
	for _, s := range x.streams {
		errs = append(errs, x.b.StreamDestroy(s))
	}
	for _, e := range x.events {
		errs = append(errs, x.b.EventDestroy(e))
	}
	x.streams, x.events = nil, nil
	for _, list := range x.staging {
		for _, p := range list {
			errs = append(errs, x.b.HostFree(p))
		}
	}
	x.staging, x.stagingBytes = map[int][]PinnedMem{}, 0
	errs = append(errs, x.unpinAllLocked())
	if free, _, err := x.b.MemInfo(); err == nil {
		x.freeAtEnd = free
	} else {
		errs = append(errs, err)
	}
	errs = append(errs, x.b.Close())
	x.closed = true
	return errors.Join(errs...)
}

// busyLocked returns the *InFlightError or *PendingError that makes Close
// wait, or nil.
func (x *Executor) busyLocked() error {
	for id, r := range x.buffers {
		if r.inFlight > 0 {
			return &InFlightError{Buffer: id, InFlight: r.inFlight}
		}
	}
	if x.pending > 0 || x.async.queued > 0 {
		return &PendingError{Dispatches: x.pending, Uploads: x.async.queued}
	}
	return nil
}

// ---- modules ----------------------------------------------------------

// Module is a loaded PTX module, cached by the content hash of its PTX.
type Module struct {
	x        *Executor
	key      ModuleKey
	ref      ModuleRef
	access   uint64
	unloaded bool
	kernels  map[string]*Kernel
	// linkLog is the linker's information log (LinkModule).
	linkLog string
}

// Key returns the module's content key.
func (m *Module) Key() ModuleKey { return m.key }

// Kernel is one entry point of a module with its compiled attributes.
type Kernel struct {
	m     *Module
	name  string
	ref   FuncRef
	attrs FuncAttributes
	// optIn is the dynamic shared memory limit this kernel was opted in to.
	optIn int
}

// Name returns the kernel's entry-point name.
func (k *Kernel) Name() string { return k.name }

// Attributes returns the kernel's compiled resource usage.
func (k *Kernel) Attributes() FuncAttributes { return k.attrs }

// LoadModule loads PTX (for example go:embed'ed from kernels/*.ptx) or
// returns the cached module with the same content. At ModuleCacheSoftCap
// modules the cache keeps the ModuleCacheKeepAfter most-used ones and
// unloads the rest (their kernels then fail to launch with an error).
func (x *Executor) LoadModule(ptx []byte) (*Module, error) {
	if len(ptx) == 0 {
		return nil, invalidArg("ptx", "Fix: pass the PTX text of a compiled kernel (see `make ptx`).", "is empty")
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return nil, ErrClosed
	}
	return x.cachedModuleLocked(ModuleKeyFor(x.dev.Major, x.dev.Minor, ptx), func() (ModuleRef, string, error) {
		ref, err := x.b.LoadModule(ptx)
		return ref, "", err
	})
}

// cachedModuleLocked returns the cached module of key, or loads it with
// load (which also returns a link log) and caches it, evicting the least
// used modules at ModuleCacheSoftCap.
func (x *Executor) cachedModuleLocked(key ModuleKey, load func() (ModuleRef, string, error)) (*Module, error) {
	if m, ok := x.modules[key]; ok {
		if m.access < ^uint64(0) {
			m.access++
		}
		x.modHits = saturatingInc(x.modHits)
		return m, nil
	}
	x.modMisses = saturatingInc(x.modMisses)
	if len(x.modOrder) >= ModuleCacheSoftCap {
		x.evictModulesLocked()
	}
	ref, log, err := load()
	if err != nil {
		return nil, err
	}
	m := &Module{x: x, key: key, ref: ref, access: 1, kernels: map[string]*Kernel{}, linkLog: log}
	x.modules[key] = m
	x.modOrder = append(x.modOrder, key)
	return m, nil
}

func (x *Executor) evictModulesLocked() {
	counts := make([]uint64, len(x.modOrder))
	for i, k := range x.modOrder {
		counts[i] = x.modules[k].access
	}
	keep := KeepTopK(counts, ModuleCacheKeepAfter)
	kept := make([]ModuleKey, 0, len(keep))
	ki := 0
	for i, k := range x.modOrder {
		if ki < len(keep) && keep[ki] == i {
			kept = append(kept, k)
			ki++
			continue
		}
		m := x.modules[k]
		_ = x.b.UnloadModule(m.ref)
		m.unloaded = true
		delete(x.modules, k)
	}
	x.modOrder = kept
}

// Kernel returns the named entry point (declare it extern "C" in CUDA C).
func (m *Module) Kernel(name string) (*Kernel, error) {
	x := m.x
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return nil, ErrClosed
	}
	if m.unloaded {
		return nil, invalidArg("module", "Fix: load the module again with LoadModule.", "was evicted or unloaded")
	}
	if k, ok := m.kernels[name]; ok {
		return k, nil
	}
	f, err := x.b.Function(m.ref, name)
	if err != nil {
		return nil, err
	}
	a, err := x.b.FuncAttributes(f)
	if err != nil {
		return nil, err
	}
	k := &Kernel{m: m, name: name, ref: f, attrs: a, optIn: a.MaxDynamicSharedBytes}
	m.kernels[name] = k
	return k, nil
}

// OccupancyKernel describes k for the occupancy model with the given
// dynamic shared memory; OptIn is set when that exceeds the default
// per-block limit.
func (k *Kernel) OccupancyKernel(dynamicSharedBytes int) occupancy.Kernel {
	dev := k.m.x.dev
	return occupancy.Kernel{
		RegistersPerThread: k.attrs.NumRegs,
		StaticSharedBytes:  k.attrs.StaticSharedBytes,
		DynamicSharedBytes: dynamicSharedBytes,
		OptIn:              k.attrs.StaticSharedBytes+dynamicSharedBytes > dev.SharedMemPerBlock,
		MaxThreadsPerBlock: k.attrs.MaxThreadsPerBlock,
	}
}

// DriverMaxActiveBlocksPerSM asks the driver
// (cuOccupancyMaxActiveBlocksPerMultiprocessor) how many blocks of k fit on
// one SM. Dynamic shared memory above the default limit opts k in first.
func (x *Executor) DriverMaxActiveBlocksPerSM(k *Kernel, blockThreads, dynamicSharedBytes int) (int, error) {
	if k == nil {
		return 0, errNilKernel()
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return 0, ErrClosed
	}
	if err := x.optInLocked(k, dynamicSharedBytes); err != nil {
		return 0, err
	}
	return x.b.MaxActiveBlocksPerSM(k.ref, blockThreads, dynamicSharedBytes)
}

// optInLocked raises k's dynamic shared memory limit when dyn needs it.
func (x *Executor) optInLocked(k *Kernel, dyn int) error {
	if dyn < 0 {
		return invalidArg("dynamic shared memory", "Fix: pass a non-negative byte count.", "%d is negative", dyn)
	}
	if dyn <= k.optIn {
		return nil
	}
	max := x.dev.SharedMemPerBlockOptIn - k.attrs.StaticSharedBytes
	if dyn > max {
		return invalidArg("dynamic shared memory", fmt.Sprintf("Fix: use at most %d bytes (the device's opt-in limit %d minus the kernel's %d static bytes).", max, x.dev.SharedMemPerBlockOptIn, k.attrs.StaticSharedBytes),
			"kernel %s asks for %d bytes per block", k.name, dyn)
	}
	if err := x.b.SetMaxDynamicShared(k.ref, dyn); err != nil {
		return err
	}
	k.optIn = dyn
	return nil
}
