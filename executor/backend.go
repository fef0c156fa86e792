package executor

import (
	"math/bits"

	"github.com/gpuplan/gpuplan/occupancy"
)

// DevPtr is a device address.
type DevPtr uint64

// ModuleRef, FuncRef, StreamRef and EventRef are opaque driver handles
// issued by a Backend. Zero is never a valid handle.
type (
	ModuleRef uintptr
	FuncRef   uintptr
	StreamRef uintptr
	EventRef  uintptr
	// GraphRef, GraphNodeRef and GraphExecRef are a CUDA graph, one of its
	// nodes and an instantiated graph.
	GraphRef     uintptr
	GraphNodeRef uintptr
	GraphExecRef uintptr
)

// LinkInput is one PTX input of a JIT link: its text and the name the
// link log calls it by.
type LinkInput struct {
	Name string
	PTX  []byte
}

// LinkOptions are the options of one JIT link. MaxRegisters caps the
// registers per thread of every function the link compiles
// (CU_JIT_MAX_REGISTERS): a persistent kernel that calls many functions
// takes the largest one's count, so a cap trades spills for co-resident
// blocks. 0 leaves the choice to the compiler.
type LinkOptions struct {
	MaxRegisters int
}

// GraphEdge is a dependency of a graph node on From. A programmatic edge
// (Hopper's programmatic dependent launch) lets the dependent kernel start
// before From finishes: it must execute griddepcontrol.wait before it
// reads what From writes, and From may trigger its dependents early with
// griddepcontrol.launch_dependents.
type GraphEdge struct {
	From         GraphNodeRef
	Programmatic bool
}

// PinnedMem is page-locked host memory: an allocation from
// Backend.HostAlloc or caller memory registered with Backend.HostRegister.
// Data is the memory (or the part of it a copy uses); ref is the backend's
// handle of the whole allocation or registration.
type PinnedMem struct {
	Data []byte
	ref  uintptr
}

// slice returns the bytes [lo, hi) of m under the same handle.
func (m PinnedMem) slice(lo, hi int) PinnedMem { return PinnedMem{Data: m.Data[lo:hi:hi], ref: m.ref} }

// FuncAttributes are a kernel's compiled resource usage as the driver
// reports it (cuFuncGetAttribute).
type FuncAttributes struct {
	// NumRegs is the registers per thread (CU_FUNC_ATTRIBUTE_NUM_REGS).
	NumRegs int `json:"num_regs"`
	// StaticSharedBytes is the static shared memory per block.
	StaticSharedBytes int `json:"static_shared_bytes"`
	// LocalBytes is the local memory per thread (spills, stack arrays).
	LocalBytes int `json:"local_bytes"`
	// ConstBytes is the user constant memory.
	ConstBytes int `json:"const_bytes"`
	// MaxThreadsPerBlock is the largest block this kernel can launch with.
	MaxThreadsPerBlock int `json:"max_threads_per_block"`
	// MaxDynamicSharedBytes is the current dynamic shared memory limit
	// (raised above 48 KiB by opting in).
	MaxDynamicSharedBytes int `json:"max_dynamic_shared_bytes"`
	// PTXVersion and BinaryVersion are major*10+minor.
	PTXVersion    int `json:"ptx_version"`
	BinaryVersion int `json:"binary_version"`
}

// LaunchConfig is a kernel launch shape.
type LaunchConfig struct {
	Grid  [3]uint32
	Block [3]uint32
	// DynamicSharedBytes is the dynamic shared memory per block. Above the
	// device's default per-block limit (48 KiB) the executor opts the kernel
	// in (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) before launching.
	DynamicSharedBytes uint32
	// Cooperative launches with cuLaunchCooperativeKernel; the grid must be
	// co-resident (the executor checks it first and refuses otherwise).
	Cooperative bool
	// Elements is the number of logical elements the launch covers, for
	// telemetry's utilisation ratios; 0 counts one element per thread.
	Elements uint64
	// FixpointIterations launches the kernel this many times in a row on
	// one stream with the same arguments, as vyre's fixpoint iterations:
	// each launch sees the previous one's writes, and the host waits once
	// for all of them. 0 and 1 both launch once.
	FixpointIterations uint32
}

// iterations returns the launches FixpointIterations asks for (at least 1).
func (c LaunchConfig) iterations() uint32 { return max(1, c.FixpointIterations) }

// elements returns Elements, or the thread count when it is 0 (saturating
// at the largest uint64).
func (c LaunchConfig) elements() uint64 {
	if c.Elements != 0 {
		return c.Elements
	}
	n := uint64(1)
	for _, d := range [6]uint32{c.Grid[0], c.Grid[1], c.Grid[2], c.Block[0], c.Block[1], c.Block[2]} {
		hi, lo := bits.Mul64(n, uint64(d))
		if hi != 0 {
			return ^uint64(0)
		}
		n = lo
	}
	return n
}

// Linear returns a one-dimensional launch shape.
func Linear(gridBlocks, blockThreads uint32) LaunchConfig {
	return LaunchConfig{Grid: [3]uint32{gridBlocks, 1, 1}, Block: [3]uint32{blockThreads, 1, 1}}
}

// Backend is the driver boundary: the smallest set of CUDA driver
// operations the executor needs. The cuda build implements it with
// gorgonia.org/cu and a cgo shim (every call on one locked OS thread); the
// CPU fake (NewFake) implements it in memory for tests without a GPU.
//
// A Backend is used by one Executor at a time; the Executor serialises its
// calls. Every failed call returns an error naming the driver call and a
// fix (a *DriverError for the CUDA backend).
type Backend interface {
	// Properties probes the device's capabilities.
	Properties() (occupancy.Device, error)
	// MemInfo returns the live free and total device memory (cuMemGetInfo).
	MemInfo() (free, total uint64, err error)

	// LoadModule JIT-loads PTX text (cuModuleLoadData).
	LoadModule(ptx []byte) (ModuleRef, error)
	// UnloadModule unloads a module; its functions become invalid.
	UnloadModule(m ModuleRef) error
	// Function looks up an entry point by its unmangled name.
	Function(m ModuleRef, name string) (FuncRef, error)
	// FuncAttributes reads the kernel's compiled resource usage.
	FuncAttributes(f FuncRef) (FuncAttributes, error)
	// SetMaxDynamicShared opts the kernel in to bytes of dynamic shared
	// memory per block (cuFuncSetAttribute).
	SetMaxDynamicShared(f FuncRef, bytes int) error
	// MaxActiveBlocksPerSM is cuOccupancyMaxActiveBlocksPerMultiprocessor.
	MaxActiveBlocksPerSM(f FuncRef, blockThreads, dynamicSharedBytes int) (int, error)

	// MemAlloc and MemFree manage device memory (cuMemAlloc/cuMemFree).
	MemAlloc(n uint64) (DevPtr, error)
	MemFree(p DevPtr) error
	// HostAlloc and HostFree manage pinned host memory
	// (cuMemHostAlloc/cuMemFreeHost).
	HostAlloc(n int) (PinnedMem, error)
	HostFree(m PinnedMem) error

	// StreamCreate creates a CU_STREAM_NON_BLOCKING stream.
	StreamCreate() (StreamRef, error)
	StreamDestroy(s StreamRef) error
	StreamSync(s StreamRef) error
	// EventCreate creates an event; timing=false disables timing.
	EventCreate(timing bool) (EventRef, error)
	EventDestroy(e EventRef) error
	EventRecord(e EventRef, s StreamRef) error
	EventSync(e EventRef) error
	// EventQuery reports whether the event has completed.
	EventQuery(e EventRef) (bool, error)
	// EventElapsedMs is cuEventElapsedTime between two recorded events.
	EventElapsedMs(start, end EventRef) (float64, error)

	// HostRegister page-locks caller memory for asynchronous copies
	// (cuMemHostRegister, portable); the returned PinnedMem's Data is buf.
	// Registering memory that overlaps a registration fails with
	// CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED.
	HostRegister(buf []byte) (PinnedMem, error)
	// HostUnregister undoes HostRegister (cuMemHostUnregister).
	HostUnregister(m PinnedMem) error

	// CopyHtoDAsync copies src.Data[:n] to dst on stream s; src is pinned
	// staging memory (HostAlloc) or a part of registered memory
	// (HostRegister).
	CopyHtoDAsync(dst DevPtr, src PinnedMem, n uint64, s StreamRef) error
	// CopyDtoHAsync copies n bytes from src into dst.Data[:n] on stream s.
	CopyDtoHAsync(dst PinnedMem, src DevPtr, n uint64, s StreamRef) error
	// MemsetD8Async sets n bytes at dst to v on stream s (cuMemsetD8Async).
	MemsetD8Async(dst DevPtr, v byte, n uint64, s StreamRef) error

	// StreamWaitEvent makes work enqueued on s later wait for the work
	// before e's most recent record (cuStreamWaitEvent).
	StreamWaitEvent(s StreamRef, e EventRef) error

	// LinkModule JIT-links relocatable PTX inputs into one image
	// (cuLinkCreate, cuLinkAddData, cuLinkComplete) and loads it
	// (cuModuleLoadData). It returns the linker's information log; a
	// failed link is a *LinkError carrying the error log.
	LinkModule(inputs []LinkInput, opts LinkOptions) (ModuleRef, string, error)

	// GraphCreate creates an empty CUDA graph (cuGraphCreate).
	GraphCreate() (GraphRef, error)
	// GraphAddKernel adds a kernel node after deps (cuGraphAddKernelNode;
	// programmatic edges through cuGraphAddDependencies_v2). Each argument
	// is 8 bytes, as for Launch; cfg.Cooperative is not supported.
	GraphAddKernel(g GraphRef, f FuncRef, cfg LaunchConfig, args []uint64, deps []GraphEdge) (GraphNodeRef, error)
	// GraphInstantiate instantiates a graph for launching
	// (cuGraphInstantiate).
	GraphInstantiate(g GraphRef) (GraphExecRef, error)
	// GraphLaunch enqueues one replay of an instantiated graph on s
	// (cuGraphLaunch).
	GraphLaunch(e GraphExecRef, s StreamRef) error
	// GraphExecDestroy and GraphDestroy release an instantiated graph and
	// a graph.
	GraphExecDestroy(e GraphExecRef) error
	GraphDestroy(g GraphRef) error

	// Launch enqueues a kernel on stream s. Each argument is 8 bytes (a
	// device pointer or an 8-byte scalar). cfg.Cooperative selects
	// cuLaunchCooperativeKernel.
	Launch(f FuncRef, cfg LaunchConfig, args []uint64, s StreamRef) error

	// Close releases the context; every handle becomes invalid.
	Close() error
}
