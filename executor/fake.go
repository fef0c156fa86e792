package executor

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"time"
	"unsafe"

	"github.com/gpuplan/gpuplan/occupancy"
)

// FakeKernel is a kernel of the CPU fake: Run executes one whole launch on
// the host, and Attrs are the attributes the fake reports for it.
type FakeKernel struct {
	Run   func(l *FakeLaunch) error
	Attrs FuncAttributes
	// DeviceNs is the simulated device time of one launch (default 1000).
	DeviceNs uint64
}

// FakeLaunch is what a FakeKernel sees: the launch shape, the 8-byte
// arguments and access to the fake device memory.
type FakeLaunch struct {
	Config LaunchConfig
	Args   []uint64
	f      *Fake
}

// Bytes returns the n bytes of fake device memory at ptr (writable), or an
// error if the range is not inside one allocation.
func (l *FakeLaunch) Bytes(ptr DevPtr, n uint64) ([]byte, error) { return l.f.span(ptr, n) }

// Len returns the bytes of fake device memory from ptr to the end of the
// allocation holding it.
func (l *FakeLaunch) Len(ptr DevPtr) (uint64, error) {
	for base, b := range l.f.mem {
		if ptr >= base && uint64(ptr-base) < uint64(len(b)) {
			return uint64(len(b)) - uint64(ptr-base), nil
		}
	}
	return 0, newDriverError("fake memory access", cuErrIllegalAddress, fmt.Sprintf("%#x is not inside an allocation", uint64(ptr)))
}

// FakeConfig configures NewFake.
type FakeConfig struct {
	// Device is what Properties returns; its TotalMemoryBytes is the fake
	// device memory.
	Device occupancy.Device
	// UsedByOthers is memory counted as used, as if another process held it.
	UsedByOthers uint64
	// Kernels are the entry points a module may name.
	Kernels map[string]FakeKernel
	// MaxPTXVersion is the newest PTX ISA the fake "driver" loads, as
	// major*10+minor (default 80: PTX 8.0).
	MaxPTXVersion int
	// CopyDelay is how long each host-to-device copy takes on the host, to
	// stand in for a transfer's time (default 0).
	CopyDelay time.Duration
	// DeferStreams queues the work of each stream and runs it only when
	// the host waits (a stream or event sync or query), interleaving the
	// streams in a random order (Seed) that respects each stream's order
	// and its event waits, as concurrent streams may run on a GPU. A
	// missing event dependency then shows as a wrong result. Without it,
	// work runs when it is enqueued.
	DeferStreams bool
	// Seed seeds the deferred interleaving and the order in which a graph
	// replay runs its independent nodes.
	Seed uint64
	// FaultsLoseContext makes a kernel's failure sticky, as an illegal
	// address is on a GPU: every later call fails with
	// CUDA_ERROR_ILLEGAL_ADDRESS until Close.
	FaultsLoseContext bool
	// Link, when set, gives the kernels of the entry points of a linked
	// module (LinkModule), by name; entries it leaves out are looked up in
	// Kernels.
	Link func(inputs []LinkInput) (map[string]FakeKernel, error)
}

// Fake is the CPU implementation of Backend: device memory is host memory,
// kernels are Go functions, streams run in order at enqueue time, and event
// times are simulated. Fail injects driver errors. It tracks live
// resources so tests can check that nothing leaks.
type Fake struct {
	mu       sync.Mutex
	cfg      FakeConfig
	mem      map[DevPtr][]byte
	next     DevPtr
	used     uint64
	next2    uintptr
	modules  map[ModuleRef][]string
	funcs    map[FuncRef]*fakeFunc
	streams  map[StreamRef]bool
	events   map[EventRef]uint64
	host     map[uintptr]bool
	clock    uint64
	fail     map[string]int
	closed   bool
	launches []LaunchConfig
	// registered is caller memory registered with HostRegister, by handle.
	registered map[uintptr]fakeRegion
	// calls counts every driver entry point called, failed calls included.
	calls map[string]int
	// ranges records the profiler ranges pushed and popped, in order.
	ranges []string
	// linked holds the kernels of linked modules, by module.
	linked map[ModuleRef]map[string]FakeKernel
	// async is the deferred stream state (FakeConfig.DeferStreams).
	async  fakeAsync
	graphs map[GraphRef]*fakeGraph
	execs  map[GraphExecRef]*fakeGraph
	// lost is set by a sticky fault (FakeConfig.FaultsLoseContext).
	lost bool
}

// fakeRegion is a registered host range [start, start+n).
type fakeRegion struct{ start, n uintptr }

type fakeFunc struct {
	name  string
	k     FakeKernel
	optIn int
}

// FakeStats counts the fake's live resources.
type FakeStats struct {
	DeviceAllocations int
	DeviceBytes       uint64
	Modules           int
	Streams           int
	Events            int
	HostAllocations   int
	// HostRegistrations is the caller memory ranges registered.
	HostRegistrations int
	Launches          int
}

// NewFake returns a CPU fake backend.
func NewFake(cfg FakeConfig) *Fake {
	if cfg.MaxPTXVersion == 0 {
		cfg.MaxPTXVersion = 80
	}
	return &Fake{cfg: cfg, mem: map[DevPtr][]byte{}, next: 0x10000000, modules: map[ModuleRef][]string{},
		funcs: map[FuncRef]*fakeFunc{}, streams: map[StreamRef]bool{}, events: map[EventRef]uint64{},
		host: map[uintptr]bool{}, fail: map[string]int{}, next2: 1, registered: map[uintptr]fakeRegion{}, calls: map[string]int{},
		linked: map[ModuleRef]map[string]FakeKernel{}, async: newFakeAsync(cfg.Seed), graphs: map[GraphRef]*fakeGraph{}, execs: map[GraphExecRef]*fakeGraph{}}
}

// Fail makes every later call of the named driver entry point (for example
// "cuMemAlloc") fail with CUresult code; code 0 clears it.
func (f *Fake) Fail(call string, code int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if code == 0 {
		delete(f.fail, call)
		return
	}
	f.fail[call] = code
}

// Stats returns the live resource counts.
func (f *Fake) Stats() FakeStats {
	f.mu.Lock()
	defer f.mu.Unlock()
	return FakeStats{DeviceAllocations: len(f.mem), DeviceBytes: f.used, Modules: len(f.modules), Streams: len(f.streams),
		Events: len(f.events), HostAllocations: len(f.host), HostRegistrations: len(f.registered), Launches: len(f.launches)}
}

// Calls returns how many times each driver entry point was called (for
// example "cuStreamSynchronize"), failed calls included.
func (f *Fake) Calls() map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return maps.Clone(f.calls)
}

// HostWaits returns the host waits so far: the calls of cuStreamSynchronize
// and cuEventSynchronize.
func (f *Fake) HostWaits() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls["cuStreamSynchronize"] + f.calls["cuEventSynchronize"]
}

// Ranges returns the profiler ranges the executor opened and closed, in
// order: "push NAME" and "pop".
func (f *Fake) Ranges() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.ranges)
}

// rangesAvailable is always true: the fake records every range.
func (f *Fake) rangesAvailable() bool { return true }

// pushRange records a profiler range opening.
func (f *Fake) pushRange(r ProfilerRange) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ranges = append(f.ranges, "push "+r.String())
}

// popRange records a profiler range closing.
func (f *Fake) popRange() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ranges = append(f.ranges, "pop")
}

// Launches returns the shapes of every launch so far.
func (f *Fake) Launches() []LaunchConfig {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]LaunchConfig(nil), f.launches...)
}

func (f *Fake) check(call string) error {
	f.calls[call]++
	if f.closed {
		return newDriverError(call, 201, "context destroyed")
	}
	if f.lost && call != "cuDevicePrimaryCtxRelease" {
		return newDriverError(call, cuErrIllegalAddress, "an earlier kernel fault lost the context")
	}
	if c, ok := f.fail[call]; ok {
		return newDriverError(call, c, "injected by the fake")
	}
	return nil
}

func (f *Fake) handle() uintptr {
	f.next2++
	return f.next2
}

// span resolves [ptr, ptr+n) inside one allocation.
func (f *Fake) span(ptr DevPtr, n uint64) ([]byte, error) {
	for base, b := range f.mem {
		if ptr >= base && uint64(ptr-base)+n <= uint64(len(b)) && uint64(ptr-base) <= uint64(len(b)) {
			off := uint64(ptr - base)
			return b[off : off+n], nil
		}
	}
	return nil, newDriverError("fake memory access", cuErrIllegalAddress, fmt.Sprintf("%d bytes at %#x are not inside one allocation", n, uint64(ptr)))
}

// Properties returns the configured device.
func (f *Fake) Properties() (occupancy.Device, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.check("cuDeviceGetAttribute"); err != nil {
		return occupancy.Device{}, err
	}
	return f.cfg.Device, nil
}

// MemInfo reports total minus allocations and UsedByOthers as free.
func (f *Fake) MemInfo() (uint64, uint64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.check("cuMemGetInfo"); err != nil {
		return 0, 0, err
	}
	total := uint64(f.cfg.Device.TotalMemoryBytes)
	used := f.used + f.cfg.UsedByOthers
	if used > total {
		return 0, total, nil
	}
	return total - used, total, nil
}

var (
	ptxVersionRE = regexp.MustCompile(`(?m)^\s*\.version\s+(\d+)\.(\d+)`)
	ptxEntryRE   = regexp.MustCompile(`\.entry\s+([A-Za-z_$][A-Za-z0-9_$]*)`)
)

// LoadModule accepts PTX with a .version no newer than MaxPTXVersion and
// records its .entry names.
func (f *Fake) LoadModule(ptx []byte) (ModuleRef, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.check("cuModuleLoadData"); err != nil {
		return 0, err
	}
	m := ptxVersionRE.FindSubmatch(ptx)
	if m == nil {
		return 0, newDriverError("cuModuleLoadData", cuErrInvalidPTX, "no .version directive")
	}
	major, _ := strconv.Atoi(string(m[1]))
	minor, _ := strconv.Atoi(string(m[2]))
	if major*10+minor > f.cfg.MaxPTXVersion {
		return 0, newDriverError("cuModuleLoadData", cuErrUnsupportedPTXVersion, fmt.Sprintf("PTX %d.%d is newer than the driver", major, minor))
	}
	var names []string
	for _, e := range ptxEntryRE.FindAllSubmatch(ptx, -1) {
		names = append(names, string(e[1]))
	}
	r := ModuleRef(f.handle())
	f.modules[r] = names
	return r, nil
}

// UnloadModule forgets a module.
func (f *Fake) UnloadModule(m ModuleRef) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.check("cuModuleUnload"); err != nil {
		return err
	}
	if _, ok := f.modules[m]; !ok {
		return newDriverError("cuModuleUnload", 400, "unknown module")
	}
	delete(f.modules, m)
	delete(f.linked, m)
	return nil
}

// Function finds an entry that the module declares and the fake knows.
func (f *Fake) Function(m ModuleRef, name string) (FuncRef, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.check("cuModuleGetFunction"); err != nil {
		return 0, err
	}
	names, ok := f.modules[m]
	if !ok {
		return 0, newDriverError("cuModuleGetFunction", 400, "unknown module")
	}
	found := false
	for _, n := range names {
		found = found || n == name
	}
	k, known := f.linked[m][name]
	if !known {
		k, known = f.cfg.Kernels[name]
	}
	if name == "gpuplan_ptx_probe" && found {
		known = true
		k = FakeKernel{Run: func(*FakeLaunch) error { return nil }, Attrs: FuncAttributes{NumRegs: 8, MaxThreadsPerBlock: 1024}}
	}
	if !found || !known {
		return 0, newDriverError("cuModuleGetFunction", cuErrNotFound, fmt.Sprintf("kernel %q", name))
	}
	if k.Attrs.MaxThreadsPerBlock == 0 {
		k.Attrs.MaxThreadsPerBlock = f.cfg.Device.MaxThreadsPerBlock
	}
	if k.Attrs.MaxDynamicSharedBytes == 0 {
		k.Attrs.MaxDynamicSharedBytes = max(0, f.cfg.Device.SharedMemPerBlock-k.Attrs.StaticSharedBytes)
	}
	r := FuncRef(f.handle())
	f.funcs[r] = &fakeFunc{name: name, k: k, optIn: k.Attrs.MaxDynamicSharedBytes}
	return r, nil
}

// FuncAttributes returns the kernel's configured attributes.
func (f *Fake) FuncAttributes(fn FuncRef) (FuncAttributes, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.check("cuFuncGetAttribute"); err != nil {
		return FuncAttributes{}, err
	}
	ff, ok := f.funcs[fn]
	if !ok {
		return FuncAttributes{}, newDriverError("cuFuncGetAttribute", 400, "unknown function")
	}
	a := ff.k.Attrs
	a.MaxDynamicSharedBytes = ff.optIn
	return a, nil
}

// SetMaxDynamicShared records the opt-in, refusing more than the device's
// opt-in limit.
func (f *Fake) SetMaxDynamicShared(fn FuncRef, bytes int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.check("cuFuncSetAttribute"); err != nil {
		return err
	}
	ff, ok := f.funcs[fn]
	if !ok {
		return newDriverError("cuFuncSetAttribute", 400, "unknown function")
	}
	if bytes+ff.k.Attrs.StaticSharedBytes > f.cfg.Device.SharedMemPerBlockOptIn {
		return newDriverError("cuFuncSetAttribute", cuErrInvalidValue, "above the opt-in limit")
	}
	ff.optIn = bytes
	return nil
}

func (f *Fake) occKernel(ff *fakeFunc, dyn int) occupancy.Kernel {
	return occupancy.Kernel{RegistersPerThread: ff.k.Attrs.NumRegs, StaticSharedBytes: ff.k.Attrs.StaticSharedBytes,
		DynamicSharedBytes: dyn, OptIn: ff.optIn+ff.k.Attrs.StaticSharedBytes > f.cfg.Device.SharedMemPerBlock,
		MaxThreadsPerBlock: ff.k.Attrs.MaxThreadsPerBlock}
}

// MaxActiveBlocksPerSM answers with the exact occupancy model.
func (f *Fake) MaxActiveBlocksPerSM(fn FuncRef, blockThreads, dyn int) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.check("cuOccupancyMaxActiveBlocksPerMultiprocessor"); err != nil {
		return 0, err
	}
	ff, ok := f.funcs[fn]
	if !ok {
		return 0, newDriverError("cuOccupancyMaxActiveBlocksPerMultiprocessor", 400, "unknown function")
	}
	r, err := occupancy.Compute(f.cfg.Device, f.occKernel(ff, dyn), blockThreads)
	if err != nil {
		return 0, newDriverError("cuOccupancyMaxActiveBlocksPerMultiprocessor", cuErrInvalidValue, err.Error())
	}
	return r.ActiveBlocksPerSM, nil
}

// MemAlloc allocates zeroed host memory standing in for device memory.
func (f *Fake) MemAlloc(n uint64) (DevPtr, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.check("cuMemAlloc"); err != nil {
		return 0, err
	}
	total := uint64(f.cfg.Device.TotalMemoryBytes)
	if n == 0 || f.used+f.cfg.UsedByOthers+n > total || n > 1<<40 {
		return 0, newDriverError("cuMemAlloc", cuErrOutOfMemory, fmt.Sprintf("%d bytes", n))
	}
	p := f.next
	f.mem[p] = make([]byte, n)
	f.next += DevPtr((n + 511) &^ 255)
	f.used += n
	return p, nil
}

// MemFree frees a fake allocation.
func (f *Fake) MemFree(p DevPtr) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.check("cuMemFree"); err != nil {
		return err
	}
	b, ok := f.mem[p]
	if !ok {
		return newDriverError("cuMemFree", cuErrInvalidValue, fmt.Sprintf("%#x was not allocated", uint64(p)))
	}
	f.used -= uint64(len(b))
	delete(f.mem, p)
	return nil
}

// HostAlloc returns ordinary memory standing in for pinned memory.
func (f *Fake) HostAlloc(n int) (PinnedMem, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.check("cuMemHostAlloc"); err != nil {
		return PinnedMem{}, err
	}
	h := f.handle()
	f.host[h] = true
	return PinnedMem{Data: make([]byte, n), ref: h}, nil
}

// HostFree releases it.
func (f *Fake) HostFree(m PinnedMem) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.check("cuMemFreeHost"); err != nil {
		return err
	}
	if !f.host[m.ref] {
		return newDriverError("cuMemFreeHost", cuErrInvalidValue, "not allocated")
	}
	delete(f.host, m.ref)
	return nil
}

// HostRegister registers caller memory, refusing memory that overlaps a
// registration as the driver does.
func (f *Fake) HostRegister(buf []byte) (PinnedMem, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.check("cuMemHostRegister"); err != nil {
		return PinnedMem{}, err
	}
	if len(buf) == 0 {
		return PinnedMem{}, newDriverError("cuMemHostRegister", cuErrInvalidValue, "0 bytes")
	}
	r := fakeRegion{start: uintptr(unsafe.Pointer(unsafe.SliceData(buf))), n: uintptr(len(buf))}
	for _, o := range f.registered {
		if r.start < o.start+o.n && o.start < r.start+r.n {
			return PinnedMem{}, newDriverError("cuMemHostRegister", cuErrHostMemoryAlreadyRegistered, fmt.Sprintf("%d bytes at %#x", len(buf), r.start))
		}
	}
	h := f.handle()
	f.registered[h] = r
	return PinnedMem{Data: buf, ref: h}, nil
}

// HostUnregister forgets a registration.
func (f *Fake) HostUnregister(m PinnedMem) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.check("cuMemHostUnregister"); err != nil {
		return err
	}
	if _, ok := f.registered[m.ref]; !ok {
		return newDriverError("cuMemHostUnregister", cuErrHostMemoryNotRegistered, "")
	}
	delete(f.registered, m.ref)
	return nil
}

// pinned reports whether m is staging memory or lies inside its
// registration.
func (f *Fake) pinned(m PinnedMem) bool {
	if f.host[m.ref] {
		return true
	}
	r, ok := f.registered[m.ref]
	start := uintptr(unsafe.Pointer(unsafe.SliceData(m.Data)))
	return ok && start >= r.start && start+uintptr(len(m.Data)) <= r.start+r.n
}

// StreamCreate creates a fake non-blocking stream.
func (f *Fake) StreamCreate() (StreamRef, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.check("cuStreamCreate"); err != nil {
		return 0, err
	}
	s := StreamRef(f.handle())
	f.streams[s] = true
	return s, nil
}

func (f *Fake) stream(call string, s StreamRef) error {
	if err := f.check(call); err != nil {
		return err
	}
	if s == 0 {
		return newDriverError(call, cuErrInvalidValue, "the null stream is never used by the executor")
	}
	if !f.streams[s] {
		return newDriverError(call, 400, "unknown stream")
	}
	return nil
}

// StreamDestroy destroys a stream.
func (f *Fake) StreamDestroy(s StreamRef) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.stream("cuStreamDestroy", s); err != nil {
		return err
	}
	delete(f.streams, s)
	return nil
}

// StreamSync runs the deferred work (DeferStreams) and reports the first
// failure of work enqueued since the last sync; without deferral, work has
// completed at enqueue.
func (f *Fake) StreamSync(s StreamRef) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.stream("cuStreamSynchronize", s); err != nil {
		return err
	}
	return f.drain("cuStreamSynchronize")
}

// EventCreate creates an event.
func (f *Fake) EventCreate(bool) (EventRef, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.check("cuEventCreate"); err != nil {
		return 0, err
	}
	e := EventRef(f.handle())
	f.events[e] = 0
	return e, nil
}

// EventDestroy destroys an event.
func (f *Fake) EventDestroy(e EventRef) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.check("cuEventDestroy"); err != nil {
		return err
	}
	if _, ok := f.events[e]; !ok {
		return newDriverError("cuEventDestroy", 400, "unknown event")
	}
	delete(f.events, e)
	return nil
}

// EventRecord stamps the event with the simulated clock.
func (f *Fake) EventRecord(e EventRef, s StreamRef) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.stream("cuEventRecord", s); err != nil {
		return err
	}
	if _, ok := f.events[e]; !ok {
		return newDriverError("cuEventRecord", 400, "unknown event")
	}
	gen := f.async.record(e)
	return f.run(s, fakeOp{run: func() error {
		f.events[e] = f.clock
		f.async.done[e] = gen
		return nil
	}})
}

// EventSync runs the deferred work, as StreamSync does.
func (f *Fake) EventSync(e EventRef) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.check("cuEventSynchronize"); err != nil {
		return err
	}
	return f.drain("cuEventSynchronize")
}

// EventQuery runs the deferred work and reports completion.
func (f *Fake) EventQuery(e EventRef) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.check("cuEventQuery"); err != nil {
		return false, err
	}
	return true, f.drain("cuEventQuery")
}

// EventElapsedMs is the simulated time between two events.
func (f *Fake) EventElapsedMs(a, b EventRef) (float64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.check("cuEventElapsedTime"); err != nil {
		return 0, err
	}
	return float64(f.events[b]-f.events[a]) / 1e6, nil
}

// CopyHtoDAsync copies into fake device memory.
func (f *Fake) CopyHtoDAsync(dst DevPtr, src PinnedMem, n uint64, s StreamRef) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.stream("cuMemcpyHtoDAsync", s); err != nil {
		return err
	}
	if !f.pinned(src) || n > uint64(len(src.Data)) {
		return newDriverError("cuMemcpyHtoDAsync", cuErrInvalidValue, "source is not pinned memory of that size")
	}
	return f.run(s, fakeOp{run: func() error {
		d, err := f.span(dst, n)
		if err != nil {
			return err
		}
		copy(d, src.Data[:n])
		if f.cfg.CopyDelay > 0 {
			time.Sleep(f.cfg.CopyDelay)
		}
		return nil
	}})
}

// MemsetD8Async sets fake device memory.
func (f *Fake) MemsetD8Async(dst DevPtr, v byte, n uint64, s StreamRef) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.stream("cuMemsetD8Async", s); err != nil {
		return err
	}
	return f.run(s, fakeOp{run: func() error {
		d, err := f.span(dst, n)
		if err != nil {
			return err
		}
		for i := range d {
			d[i] = v
		}
		return nil
	}})
}

// CopyDtoHAsync copies out of fake device memory.
func (f *Fake) CopyDtoHAsync(dst PinnedMem, src DevPtr, n uint64, s StreamRef) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.stream("cuMemcpyDtoHAsync", s); err != nil {
		return err
	}
	if !f.host[dst.ref] || n > uint64(len(dst.Data)) {
		return newDriverError("cuMemcpyDtoHAsync", cuErrInvalidValue, "destination is not pinned staging memory of that size")
	}
	return f.run(s, fakeOp{run: func() error {
		d, err := f.span(src, n)
		if err != nil {
			return err
		}
		copy(dst.Data[:n], d)
		return nil
	}})
}

// Launch runs the kernel's Go function at once. A cooperative launch whose
// grid is not co-resident fails like the driver
// (CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE).
func (f *Fake) Launch(fn FuncRef, cfg LaunchConfig, args []uint64, s StreamRef) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	call := "cuLaunchKernel"
	if cfg.Cooperative {
		call = "cuLaunchCooperativeKernel"
	}
	if err := f.stream(call, s); err != nil {
		return err
	}
	ff, ok := f.funcs[fn]
	if !ok {
		return newDriverError(call, 400, "unknown function")
	}
	threads := int(cfg.Block[0] * cfg.Block[1] * cfg.Block[2])
	if cfg.Cooperative {
		r, err := occupancy.Compute(f.cfg.Device, f.occKernel(ff, int(cfg.DynamicSharedBytes)), threads)
		grid := uint64(cfg.Grid[0]) * uint64(cfg.Grid[1]) * uint64(cfg.Grid[2])
		if err != nil || grid > uint64(r.ActiveBlocksPerSM)*uint64(f.cfg.Device.SMCount) {
			return newDriverError(call, cuErrCooperativeTooLarge, "")
		}
	}
	if int(cfg.DynamicSharedBytes) > ff.optIn {
		return newDriverError(call, cuErrInvalidValue, "dynamic shared memory above the kernel's limit")
	}
	f.launches = append(f.launches, cfg)
	args = append([]uint64(nil), args...)
	return f.run(s, fakeOp{run: func() error { return f.execute(call, ff, cfg, args) }})
}

// execute runs one launch of ff: its simulated time, then its Go
// function; a failure is an illegal address, sticky with
// FaultsLoseContext.
func (f *Fake) execute(call string, ff *fakeFunc, cfg LaunchConfig, args []uint64) error {
	ns := ff.k.DeviceNs
	if ns == 0 {
		ns = 1000
	}
	f.clock += ns
	if ff.k.Run == nil {
		return nil
	}
	l := &FakeLaunch{Config: cfg, Args: args, f: f}
	if err := ff.k.Run(l); err != nil {
		if f.cfg.FaultsLoseContext {
			f.lost = true
		}
		return newDriverError(call, cuErrIllegalAddress, fmt.Sprintf("kernel %s: %v", ff.name, err))
	}
	return nil
}

// Close destroys the fake context.
func (f *Fake) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return newDriverError("cuDevicePrimaryCtxRelease", 201, "already destroyed")
	}
	f.closed = true
	f.mem = map[DevPtr][]byte{}
	f.used = 0
	f.async = newFakeAsync(f.cfg.Seed)
	return nil
}
