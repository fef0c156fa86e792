//go:build cuda

package executor

import (
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"time"
	"unsafe"

	"github.com/gpuplan/gpuplan/occupancy"
	"gorgonia.org/cu"
)

// CUDA attribute enums used by the probe (cuda.h, CUDA 11.8).
const (
	attrMaxThreadsPerBlock  = 1
	attrMaxBlockDimX        = 2
	attrMaxGridDimX         = 5
	attrMaxSharedPerBlock   = 8
	attrWarpSize            = 10
	attrMaxRegsPerBlock     = 12
	attrSMCount             = 16
	attrConcurrentKernels   = 31
	attrMemoryClockKHz      = 36
	attrMemoryBusBits       = 37
	attrL2Bytes             = 38
	attrMaxThreadsPerSM     = 39
	attrAsyncEngines        = 40
	attrCCMajor             = 75
	attrCCMinor             = 76
	attrMaxSharedPerSM      = 81
	attrMaxRegsPerSM        = 82
	attrCooperativeLaunch   = 95  // above cu's enum (91): through the shim
	attrMaxSharedOptIn      = 97  // above 91
	attrMaxBlocksPerSM      = 106 // above 91
	attrReservedSharedBlock = 111 // above 91

	funcAttrMaxThreads    = 0
	funcAttrSharedBytes   = 1
	funcAttrConstBytes    = 2
	funcAttrLocalBytes    = 3
	funcAttrNumRegs       = 4
	funcAttrPTXVersion    = 5
	funcAttrBinaryVersion = 6
	funcAttrMaxDynShared  = 8
)

// cudaBackend implements Backend on the CUDA driver: gorgonia.org/cu for
// contexts, modules, memory, streams, events and plain launches, and the
// shim for the rest. Every driver call runs on one goroutine locked to one
// OS thread, where the context is current; the maps below are touched only
// there.
type cudaBackend struct {
	ordinal int
	dev     cu.Device
	// ctx is the device's primary context, retained for the backend's
	// life and current on the driver thread: the context the CUDA
	// runtime, NCCL and other libraries in the process use (or, after a
	// fault lost it, a private one; see attach).
	ctx cu.CUContext
	*driverThread

	next    uintptr
	mods    map[ModuleRef]cu.Module
	funcs   map[FuncRef]cu.Function
	streams map[StreamRef]cu.Stream
	events  map[EventRef]cu.Event
	host    map[uintptr]unsafe.Pointer
	// allocs is the device memory allocated and not yet freed, freed at
	// Close: the primary context outlives the backend when others hold it.
	allocs map[DevPtr]struct{}
	// registered is caller memory registered with HostRegister; its Go
	// memory stays pinned (runtime.Pinner) while the driver may read it.
	registered map[uintptr]*hostReg
	// graphs, nodes and execs are CUDA graphs, their kernel nodes (by
	// graph in graphNodes) and instantiated graphs: driver handles.
	graphs     map[GraphRef]unsafe.Pointer
	nodes      map[GraphNodeRef]unsafe.Pointer
	graphNodes map[GraphRef][]GraphNodeRef
	execs      map[GraphExecRef]unsafe.Pointer
	// nvtx holds the profiler range labels; nil when libnvToolsExt is
	// missing.
	nvtx *nvtxLabels
	// retained is whether the primary context was retained (and so must
	// be released); private whether ctx is a context of the backend's own
	// instead (see attach), destroyed at Close.
	retained, private bool
	closed            bool
}

// hostReg is one registration of caller memory.
type hostReg struct {
	ptr unsafe.Pointer
	pin *runtime.Pinner
}

// cuErr turns an error from gorgonia.org/cu into a *DriverError naming call.
func cuErr(call string, err error, detail string) error {
	if err == nil {
		return nil
	}
	v := reflect.ValueOf(err)
	if v.Kind() == reflect.Int {
		return newDriverError(call, int(v.Int()), detail)
	}
	return &DriverError{Call: call, Code: -1, Name: err.Error(), Detail: detail, Fix: fixFor(call, -1)}
}

// openCUDABackend checks cuInit, starts the driver thread and retains the
// primary context of device ordinal, current on that thread; poll and spin
// are Options.DriverPoll and Options.CallerSpin.
func openCUDABackend(ordinal int, poll, spin time.Duration, private bool) (*cudaBackend, error) {
	if err := unavailableFromInit(initStatus()); err != nil {
		return nil, err
	}
	b := &cudaBackend{ordinal: ordinal, driverThread: startDriverThread(poll, spin),
		mods: map[ModuleRef]cu.Module{}, funcs: map[FuncRef]cu.Function{}, streams: map[StreamRef]cu.Stream{},
		events: map[EventRef]cu.Event{}, host: map[uintptr]unsafe.Pointer{}, allocs: map[DevPtr]struct{}{}, registered: map[uintptr]*hostReg{},
		graphs: map[GraphRef]unsafe.Pointer{}, nodes: map[GraphNodeRef]unsafe.Pointer{}, graphNodes: map[GraphRef][]GraphNodeRef{},
		execs: map[GraphExecRef]unsafe.Pointer{}}
	err := b.do(func() error {
		n, err := cu.NumDevices()
		if err != nil {
			return cuErr("cuDeviceGetCount", err, "")
		}
		if n == 0 {
			return &UnavailableError{Reason: "the NVIDIA driver reports no CUDA devices; check nvidia-smi."}
		}
		if ordinal < 0 || ordinal >= n {
			return invalidArg("device ordinal", fmt.Sprintf("Fix: pass an ordinal from 0 to %d.", n-1), "%d is out of range (%d devices)", ordinal, n)
		}
		d, err := cu.GetDevice(ordinal)
		if err != nil {
			return cuErr("cuDeviceGet", err, fmt.Sprintf("ordinal %d", ordinal))
		}
		b.dev = d
		return b.attach(private)
	})
	if err != nil {
		_ = b.do(b.freeAll) // the open's error is the one to report
		b.shutdown()
		return nil, err
	}
	b.nvtx = loadNVTX()
	return b, nil
}

func (b *cudaBackend) handle() uintptr {
	b.next++
	return b.next
}

func (b *cudaBackend) attr(a int) (int, error) {
	if a > 91 {
		return shimDevAttr(a, b.ordinal)
	}
	v, err := b.dev.Attribute(cu.DeviceAttribute(a))
	return v, cuErr("cuDeviceGetAttribute", err, fmt.Sprintf("attribute %d", a))
}

// Properties probes the device into an occupancy.Device. The driver does
// not report the per-thread register limit, the register allocation unit,
// the sub-partition count, the shared-memory allocation unit or the
// carveouts; those architecture constants are taken from the closest
// built-in profile of the same compute capability.
func (b *cudaBackend) Properties() (occupancy.Device, error) {
	var d occupancy.Device
	err := b.do(func() error {
		name, err := b.dev.Name()
		if err != nil {
			return cuErr("cuDeviceGetName", err, "")
		}
		total, err := b.dev.TotalMem()
		if err != nil {
			return cuErr("cuDeviceTotalMem", err, "")
		}
		d.Name, d.Ordinal, d.TotalMemoryBytes = name, b.ordinal, total
		ints := []struct {
			attr int
			dst  *int
		}{
			{attrCCMajor, &d.Major}, {attrCCMinor, &d.Minor}, {attrSMCount, &d.SMCount}, {attrWarpSize, &d.WarpSize},
			{attrMaxThreadsPerBlock, &d.MaxThreadsPerBlock}, {attrMaxThreadsPerSM, &d.MaxThreadsPerSM},
			{attrMaxBlocksPerSM, &d.MaxBlocksPerSM}, {attrMaxRegsPerSM, &d.RegistersPerSM},
			{attrMaxRegsPerBlock, &d.RegistersPerBlock}, {attrMaxSharedPerSM, &d.SharedMemPerSM},
			{attrMaxSharedPerBlock, &d.SharedMemPerBlock}, {attrMaxSharedOptIn, &d.SharedMemPerBlockOptIn},
			{attrReservedSharedBlock, &d.ReservedSharedMemPerBlk}, {attrMemoryBusBits, &d.MemoryBusBits},
			{attrAsyncEngines, &d.AsyncEngines},
			{attrMaxBlockDimX, &d.MaxBlockDim[0]}, {attrMaxBlockDimX + 1, &d.MaxBlockDim[1]}, {attrMaxBlockDimX + 2, &d.MaxBlockDim[2]},
		}
		for _, f := range ints {
			v, err := b.attr(f.attr)
			if err != nil {
				return err
			}
			*f.dst = v
		}
		for i := range 3 {
			v, err := b.attr(attrMaxGridDimX + i)
			if err != nil {
				return err
			}
			d.MaxGridDim[i] = int64(v)
		}
		for _, f := range []struct {
			attr int
			dst  *int64
		}{{attrL2Bytes, &d.L2Bytes}, {attrMemoryClockKHz, &d.MemoryClockKHz}} {
			v, err := b.attr(f.attr)
			if err != nil {
				return err
			}
			*f.dst = int64(v)
		}
		for _, f := range []struct {
			attr int
			dst  *bool
		}{{attrCooperativeLaunch, &d.CooperativeLaunch}, {attrConcurrentKernels, &d.ConcurrentKernels}} {
			v, err := b.attr(f.attr)
			if err != nil {
				return err
			}
			*f.dst = v != 0
		}
		return nil
	})
	if err != nil {
		return occupancy.Device{}, err
	}
	fillArchConstants(&d)
	return d, nil
}

// fillArchConstants copies the architecture constants the driver does not
// report from the closest built-in profile.
func fillArchConstants(d *occupancy.Device) {
	p := occupancy.Closest(*d).Device
	d.RegistersPerThread = p.RegistersPerThread
	d.RegisterAllocUnit = p.RegisterAllocUnit
	d.SubPartitions = p.SubPartitions
	d.SharedMemAllocUnit = p.SharedMemAllocUnit
	d.SharedMemCarveoutsKiB = append([]int(nil), p.SharedMemCarveoutsKiB...)
}

// MemInfo is cuMemGetInfo.
func (b *cudaBackend) MemInfo() (free, total uint64, err error) {
	err = b.do(func() error {
		var e error
		free, total, e = shimMemInfo()
		return e
	})
	return
}

// LoadModule is cuModuleLoadData.
func (b *cudaBackend) LoadModule(ptx []byte) (ModuleRef, error) {
	var r ModuleRef
	err := b.do(func() error {
		m, err := cu.LoadData(string(ptx))
		if err != nil {
			return cuErr("cuModuleLoadData", err, fmt.Sprintf("%d bytes of PTX", len(ptx)))
		}
		r = ModuleRef(b.handle())
		b.mods[r] = m
		return nil
	})
	return r, err
}

// UnloadModule is cuModuleUnload.
func (b *cudaBackend) UnloadModule(m ModuleRef) error {
	return b.do(func() error {
		mod, ok := b.mods[m]
		if !ok {
			return newDriverError("cuModuleUnload", 400, "unknown module")
		}
		delete(b.mods, m)
		for f := range b.funcs {
			_ = f // functions of the module become invalid; the executor tracks that
		}
		return cuErr("cuModuleUnload", mod.Unload(), "")
	})
}

// Function is cuModuleGetFunction.
func (b *cudaBackend) Function(m ModuleRef, name string) (FuncRef, error) {
	var r FuncRef
	err := b.do(func() error {
		mod, ok := b.mods[m]
		if !ok {
			return newDriverError("cuModuleGetFunction", 400, "unknown module")
		}
		f, err := mod.Function(name)
		if err != nil {
			return cuErr("cuModuleGetFunction", err, fmt.Sprintf("kernel %q", name))
		}
		r = FuncRef(b.handle())
		b.funcs[r] = f
		return nil
	})
	return r, err
}

func funcPtr(f cu.Function) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&f)) }

func (b *cudaBackend) fn(call string, f FuncRef) (cu.Function, error) {
	fn, ok := b.funcs[f]
	if !ok {
		return cu.Function{}, newDriverError(call, 400, "unknown function")
	}
	return fn, nil
}

// FuncAttributes reads cuFuncGetAttribute.
func (b *cudaBackend) FuncAttributes(f FuncRef) (FuncAttributes, error) {
	var a FuncAttributes
	err := b.do(func() error {
		fn, err := b.fn("cuFuncGetAttribute", f)
		if err != nil {
			return err
		}
		p := funcPtr(fn)
		for _, x := range []struct {
			attr int
			dst  *int
		}{
			{funcAttrMaxThreads, &a.MaxThreadsPerBlock}, {funcAttrSharedBytes, &a.StaticSharedBytes},
			{funcAttrConstBytes, &a.ConstBytes}, {funcAttrLocalBytes, &a.LocalBytes}, {funcAttrNumRegs, &a.NumRegs},
			{funcAttrPTXVersion, &a.PTXVersion}, {funcAttrBinaryVersion, &a.BinaryVersion},
			{funcAttrMaxDynShared, &a.MaxDynamicSharedBytes},
		} {
			v, err := shimFuncGetAttr(p, x.attr)
			if err != nil {
				return err
			}
			*x.dst = v
		}
		return nil
	})
	return a, err
}

// SetMaxDynamicShared sets CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES.
func (b *cudaBackend) SetMaxDynamicShared(f FuncRef, bytes int) error {
	return b.do(func() error {
		fn, err := b.fn("cuFuncSetAttribute", f)
		if err != nil {
			return err
		}
		return shimFuncSetAttr(funcPtr(fn), funcAttrMaxDynShared, bytes)
	})
}

// MaxActiveBlocksPerSM is cuOccupancyMaxActiveBlocksPerMultiprocessor
// (through gorgonia.org/cu); the shim's WithFlags variant cross-checks it.
func (b *cudaBackend) MaxActiveBlocksPerSM(f FuncRef, blockThreads, dyn int) (int, error) {
	var n int
	err := b.do(func() error {
		fn, err := b.fn("cuOccupancyMaxActiveBlocksPerMultiprocessor", f)
		if err != nil {
			return err
		}
		n, err = fn.MaxActiveBlocksPerMultiProcessor(blockThreads, int64(dyn))
		if err != nil {
			return cuErr("cuOccupancyMaxActiveBlocksPerMultiprocessor", err, fmt.Sprintf("block %d, %d B dynamic shared memory", blockThreads, dyn))
		}
		m, err := shimOccupancy(funcPtr(fn), blockThreads, dyn)
		if err != nil {
			return err
		}
		if m != n {
			return &DriverError{Call: "cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags", Code: -1, Name: "MISMATCH",
				Detail: fmt.Sprintf("%d blocks vs %d without flags", m, n), Fix: "Fix: report this driver inconsistency; use the smaller value."}
		}
		return nil
	})
	return n, err
}

// MemAlloc is cuMemAlloc.
func (b *cudaBackend) MemAlloc(n uint64) (DevPtr, error) {
	var p DevPtr
	err := b.do(func() error {
		if n > 1<<62 {
			return newDriverError("cuMemAlloc", cuErrOutOfMemory, fmt.Sprintf("%d bytes", n))
		}
		d, err := cu.MemAlloc(int64(n))
		if err != nil {
			return cuErr("cuMemAlloc", err, fmt.Sprintf("%d bytes", n))
		}
		p = DevPtr(d)
		b.allocs[p] = struct{}{}
		return nil
	})
	return p, err
}

// MemFree is cuMemFree.
func (b *cudaBackend) MemFree(p DevPtr) error {
	return b.do(func() error {
		delete(b.allocs, p)
		return cuErr("cuMemFree", cu.MemFree(cu.DevicePtr(p)), "")
	})
}

// HostAlloc is cuMemHostAlloc (pinned, portable flags 0).
func (b *cudaBackend) HostAlloc(n int) (PinnedMem, error) {
	var m PinnedMem
	err := b.do(func() error {
		p, err := shimHostAlloc(n)
		if err != nil {
			return err
		}
		h := b.handle()
		b.host[h] = p
		m = PinnedMem{Data: unsafe.Slice((*byte)(p), n), ref: h}
		return nil
	})
	return m, err
}

// HostFree is cuMemFreeHost.
func (b *cudaBackend) HostFree(m PinnedMem) error {
	return b.do(func() error {
		p, ok := b.host[m.ref]
		if !ok {
			return newDriverError("cuMemFreeHost", cuErrInvalidValue, "not pinned memory from HostAlloc")
		}
		delete(b.host, m.ref)
		return shimHostFree(p)
	})
}

// HostRegister is cuMemHostRegister (portable) of caller memory, which
// stays pinned for the garbage collector until HostUnregister.
func (b *cudaBackend) HostRegister(buf []byte) (PinnedMem, error) {
	var m PinnedMem
	err := b.do(func() error {
		if len(buf) == 0 {
			return newDriverError("cuMemHostRegister", cuErrInvalidValue, "0 bytes")
		}
		p := unsafe.Pointer(unsafe.SliceData(buf))
		pin := new(runtime.Pinner)
		pin.Pin(p)
		if err := shimHostRegister(p, len(buf)); err != nil {
			pin.Unpin()
			return err
		}
		h := b.handle()
		b.registered[h] = &hostReg{ptr: p, pin: pin}
		m = PinnedMem{Data: buf, ref: h}
		return nil
	})
	return m, err
}

// HostUnregister is cuMemHostUnregister.
func (b *cudaBackend) HostUnregister(m PinnedMem) error {
	return b.do(func() error {
		r, ok := b.registered[m.ref]
		if !ok {
			return newDriverError("cuMemHostUnregister", cuErrHostMemoryNotRegistered, "not memory from HostRegister")
		}
		if err := shimHostUnregister(r.ptr); err != nil {
			return err
		}
		delete(b.registered, m.ref)
		r.pin.Unpin()
		return nil
	})
}

// MemsetD8Async is cuMemsetD8Async.
func (b *cudaBackend) MemsetD8Async(dst DevPtr, v byte, n uint64, s StreamRef) error {
	return b.do(func() error {
		st, err := b.stream("cuMemsetD8Async", s)
		if err != nil {
			return err
		}
		return cuErr("cuMemsetD8Async", cu.MemsetD8Async(cu.DevicePtr(dst), v, int64(n), st), fmt.Sprintf("%d bytes at %#x", n, uint64(dst)))
	})
}

// rangesAvailable reports whether libnvToolsExt was loaded.
func (b *cudaBackend) rangesAvailable() bool { return b.nvtx != nil }

// pushRange is nvtxRangePushA of r's label, on the driver thread.
func (b *cudaBackend) pushRange(r ProfilerRange) { b.nvtx.push(r) }

// popRange is nvtxRangePop, on the driver thread.
func (b *cudaBackend) popRange() { b.nvtx.pop() }

// StreamCreate creates a CU_STREAM_NON_BLOCKING stream.
func (b *cudaBackend) StreamCreate() (StreamRef, error) {
	var r StreamRef
	err := b.do(func() error {
		s, err := cu.MakeStream(cu.NonBlocking)
		if err != nil {
			return cuErr("cuStreamCreate", err, "")
		}
		if s.C() == nil {
			return newDriverError("cuStreamCreate", 999, "the driver returned a null stream")
		}
		r = StreamRef(b.handle())
		b.streams[r] = s
		return nil
	})
	return r, err
}

func (b *cudaBackend) stream(call string, s StreamRef) (cu.Stream, error) {
	st, ok := b.streams[s]
	if !ok {
		return cu.Stream{}, newDriverError(call, 400, "unknown stream (the null stream is never used)")
	}
	return st, nil
}

// StreamDestroy is cuStreamDestroy.
func (b *cudaBackend) StreamDestroy(s StreamRef) error {
	return b.do(func() error {
		st, err := b.stream("cuStreamDestroy", s)
		if err != nil {
			return err
		}
		delete(b.streams, s)
		return cuErr("cuStreamDestroy", st.Destroy(), "")
	})
}

// StreamSync is cuStreamSynchronize.
func (b *cudaBackend) StreamSync(s StreamRef) error {
	return b.do(func() error {
		st, err := b.stream("cuStreamSynchronize", s)
		if err != nil {
			return err
		}
		return cuErr("cuStreamSynchronize", st.Synchronize(), "")
	})
}

// EventCreate is cuEventCreate.
func (b *cudaBackend) EventCreate(timing bool) (EventRef, error) {
	var r EventRef
	err := b.do(func() error {
		flags := cu.DefaultEvent
		if !timing {
			flags = cu.DisableTiming
		}
		e, err := cu.MakeEvent(flags)
		if err != nil {
			return cuErr("cuEventCreate", err, "")
		}
		r = EventRef(b.handle())
		b.events[r] = e
		return nil
	})
	return r, err
}

func (b *cudaBackend) event(call string, e EventRef) (cu.Event, error) {
	ev, ok := b.events[e]
	if !ok {
		return cu.Event{}, newDriverError(call, 400, "unknown event")
	}
	return ev, nil
}

// EventDestroy is cuEventDestroy.
func (b *cudaBackend) EventDestroy(e EventRef) error {
	return b.do(func() error {
		ev, err := b.event("cuEventDestroy", e)
		if err != nil {
			return err
		}
		delete(b.events, e)
		return cuErr("cuEventDestroy", cu.DestroyEvent(&ev), "")
	})
}

// EventRecord is cuEventRecord.
func (b *cudaBackend) EventRecord(e EventRef, s StreamRef) error {
	return b.do(func() error {
		ev, err := b.event("cuEventRecord", e)
		if err != nil {
			return err
		}
		st, err := b.stream("cuEventRecord", s)
		if err != nil {
			return err
		}
		return cuErr("cuEventRecord", ev.Record(st), "")
	})
}

// EventSync is cuEventSynchronize.
func (b *cudaBackend) EventSync(e EventRef) error {
	return b.do(func() error {
		ev, err := b.event("cuEventSynchronize", e)
		if err != nil {
			return err
		}
		return cuErr("cuEventSynchronize", ev.Synchronize(), "")
	})
}

// EventQuery is cuEventQuery (CUDA_ERROR_NOT_READY means not yet).
func (b *cudaBackend) EventQuery(e EventRef) (bool, error) {
	ready := false
	err := b.do(func() error {
		ev, err := b.event("cuEventQuery", e)
		if err != nil {
			return err
		}
		qerr := cuErr("cuEventQuery", ev.Query(), "")
		if de, ok := qerr.(*DriverError); ok && de.Code == 600 {
			return nil
		}
		ready = qerr == nil
		return qerr
	})
	return ready, err
}

// EventElapsedMs is cuEventElapsedTime.
func (b *cudaBackend) EventElapsedMs(start, end EventRef) (float64, error) {
	var ms float64
	err := b.do(func() error {
		s, err := b.event("cuEventElapsedTime", start)
		if err != nil {
			return err
		}
		e, err := b.event("cuEventElapsedTime", end)
		if err != nil {
			return err
		}
		ms, err = s.Elapsed(e)
		return cuErr("cuEventElapsedTime", err, "")
	})
	return ms, err
}

// CopyHtoDAsync is cuMemcpyHtoDAsync from pinned memory.
func (b *cudaBackend) CopyHtoDAsync(dst DevPtr, src PinnedMem, n uint64, s StreamRef) error {
	return b.do(func() error {
		st, err := b.stream("cuMemcpyHtoDAsync", s)
		if err != nil {
			return err
		}
		_, staged := b.host[src.ref]
		_, registered := b.registered[src.ref]
		if !(staged || registered) || n > uint64(len(src.Data)) || n == 0 {
			return newDriverError("cuMemcpyHtoDAsync", cuErrInvalidValue, "the source must be pinned staging or registered memory holding the bytes")
		}
		return cuErr("cuMemcpyHtoDAsync", cu.MemcpyHtoDAsync(cu.DevicePtr(dst), unsafe.Pointer(&src.Data[0]), int64(n), st), fmt.Sprintf("%d bytes", n))
	})
}

// CopyDtoHAsync is cuMemcpyDtoHAsync into pinned memory.
func (b *cudaBackend) CopyDtoHAsync(dst PinnedMem, src DevPtr, n uint64, s StreamRef) error {
	return b.do(func() error {
		st, err := b.stream("cuMemcpyDtoHAsync", s)
		if err != nil {
			return err
		}
		if _, ok := b.host[dst.ref]; !ok || n > uint64(len(dst.Data)) || n == 0 {
			return newDriverError("cuMemcpyDtoHAsync", cuErrInvalidValue, "the destination must be pinned staging memory of that size")
		}
		return cuErr("cuMemcpyDtoHAsync", cu.MemcpyDtoHAsync(unsafe.Pointer(&dst.Data[0]), cu.DevicePtr(src), int64(n), st), fmt.Sprintf("%d bytes", n))
	})
}

// Launch launches through the shim (cuLaunchKernel, or
// cuLaunchCooperativeKernel when cfg.Cooperative), which builds the
// parameter array on the C stack from args: no allocation per launch.
func (b *cudaBackend) Launch(f FuncRef, cfg LaunchConfig, args []uint64, s StreamRef) error {
	return b.do(func() error {
		fn, err := b.fn("cuLaunchKernel", f)
		if err != nil {
			return err
		}
		st, err := b.stream("cuLaunchKernel", s)
		if err != nil {
			return err
		}
		return shimLaunch(funcPtr(fn), unsafe.Pointer(st.C()), cfg, args, cfg.Cooperative)
	})
}

// Close frees everything the backend created in the primary context
// (graphs, events, streams, modules, device and pinned memory), releases
// the context and stops the driver thread. The context itself lives on
// while another executor or library in the process holds it.
func (b *cudaBackend) Close() error {
	if b.closed {
		return nil
	}
	err := b.do(b.freeAll)
	b.closed = true
	b.shutdown()
	if b.nvtx != nil {
		b.nvtx.free()
	}
	return err
}

// attach makes the device's primary context current on the driver
// thread, or, with private (Options.PrivateContext), a context of the
// backend's own. When the primary context was lost to a sticky fault and
// cannot be retained usable, it falls back to a private one.
func (b *cudaBackend) attach(private bool) error {
	at := fmt.Sprintf("device %d", b.ordinal)
	if private {
		ctx, err := b.dev.MakeContext(cu.SchedAuto)
		if err != nil {
			return cuErr("cuCtxCreate", err, at)
		}
		b.ctx, b.private = ctx, true
		return nil
	}
	ctx, err := b.dev.RetainPrimaryCtx()
	if err == nil {
		b.ctx, b.retained = ctx, true
		if err = cuErr("cuCtxSetCurrent", cu.SetCurrentContext(ctx), at); err != nil {
			return err
		}
		if _, _, err = cu.MemInfo(); err == nil {
			return nil
		}
		// Retained but lost: give it back, and fall back.
		_ = cu.SetCurrentContext(cu.CUContext{})
		_ = b.dev.ReleasePrimaryCtx()
		b.retained = false
	}
	ctx, cerr := b.dev.MakeContext(cu.SchedAuto)
	if cerr != nil {
		return errors.Join(cuErr("cuDevicePrimaryCtxRetain", err, at), cuErr("cuCtxCreate", cerr, at))
	}
	b.ctx, b.private = ctx, true
	return nil
}

// freeAll waits for the context's work, frees what the backend holds and
// releases the primary context (destroys a private one); it keeps the
// first error and goes on.
func (b *cudaBackend) freeAll() error {
	if !b.retained && !b.private {
		return nil
	}
	first := cuErr("cuCtxSynchronize", cu.Synchronize(), "at close")
	keep := func(err error) {
		if first == nil {
			first = err
		}
	}
	if ContextLost(first) {
		// A lost context frees nothing; resetting (or destroying) it
		// destroys everything in it.
		b.forget()
		b.detach(keep, true)
		return first
	}
	b.freeGraphs(keep)
	for e, ev := range b.events {
		keep(cuErr("cuEventDestroy", cu.DestroyEvent(&ev), "at close"))
		delete(b.events, e)
	}
	for s, st := range b.streams {
		keep(cuErr("cuStreamDestroy", st.Destroy(), "at close"))
		delete(b.streams, s)
	}
	for m, mod := range b.mods {
		keep(cuErr("cuModuleUnload", mod.Unload(), "at close"))
		delete(b.mods, m)
	}
	for p := range b.allocs {
		keep(cuErr("cuMemFree", cu.MemFree(cu.DevicePtr(p)), "at close"))
		delete(b.allocs, p)
	}
	b.freeHost(keep)
	b.detach(keep, false)
	return first
}

// detach releases the primary context (reset first when lost) or
// destroys the private one.
func (b *cudaBackend) detach(keep func(error), lost bool) {
	at := fmt.Sprintf("device %d", b.ordinal)
	if b.private {
		keep(cuErr("cuCtxDestroy", b.ctx.Destroy(), at))
		b.private = false
		return
	}
	if lost {
		keep(cuErr("cuDevicePrimaryCtxReset", b.dev.ResetPrimaryCtx(), at))
	}
	keep(cuErr("cuCtxSetCurrent", cu.SetCurrentContext(cu.CUContext{}), "at close"))
	keep(cuErr("cuDevicePrimaryCtxRelease", b.dev.ReleasePrimaryCtx(), at))
	b.retained = false
}

// forget drops the handles of a lost context, whose reset frees them, and
// unpins the caller memory that was registered in it.
func (b *cudaBackend) forget() {
	clear(b.execs)
	clear(b.graphs)
	clear(b.graphNodes)
	clear(b.nodes)
	clear(b.events)
	clear(b.streams)
	clear(b.mods)
	clear(b.funcs)
	clear(b.allocs)
	clear(b.host)
	for h, r := range b.registered {
		r.pin.Unpin()
		delete(b.registered, h)
	}
}

// freeHost frees the pinned memory and unregisters the caller memory the
// backend still holds.
func (b *cudaBackend) freeHost(keep func(error)) {
	for h, p := range b.host {
		keep(shimHostFree(p))
		delete(b.host, h)
	}
	for h, r := range b.registered {
		keep(shimHostUnregister(r.ptr))
		r.pin.Unpin()
		delete(b.registered, h)
	}
}
