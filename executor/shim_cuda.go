//go:build cuda

package executor

// #cgo LDFLAGS: -lcuda -ldl -lpthread
// #include <stdlib.h>
// #include "shim_cuda.h"
import "C"

import (
	"fmt"
	"unsafe"
)

// jitCacheInit holds the outcome of the JIT cache configuration that the
// interposed cuInit runs before the driver initialises. These variables
// have no initialisers on purpose: the configuration runs during
// gorgonia.org/cu's package init, before this package's own.
var (
	jitCacheInitDone bool
	jitCacheInitCfg  JITCacheConfig
	jitCacheInitErr  error
)

//export gpuplanJITCacheInit
func gpuplanJITCacheInit() {
	if jitCacheInitDone {
		return
	}
	jitCacheInitDone = true
	jitCacheInitCfg, jitCacheInitErr = ConfigureJITCacheDefault(OSEnvironment{})
}

// JITCacheStatus returns the JIT cache configuration applied before the
// driver initialised, or the error that prevented it.
func JITCacheStatus() (JITCacheConfig, error) {
	gpuplanJITCacheInit()
	return jitCacheInitCfg, jitCacheInitErr
}

// initStatus is the real cuInit's CUresult (-1: libcuda has no cuInit).
func initStatus() int { return int(C.gp_init_status()) }

// unavailableFromInit turns a failed cuInit into one clear sentence.
func unavailableFromInit(code int) error {
	switch code {
	case 0:
		return nil
	case -1:
		return &UnavailableError{Reason: "the NVIDIA driver library (libcuda.so.1) has no cuInit, so no GPU can be used; install the NVIDIA driver or use a build without -tags cuda."}
	case cuErrNoDevice:
		return &UnavailableError{Reason: "no CUDA-capable GPU was found (cuInit: CUDA_ERROR_NO_DEVICE); run on a machine with an NVIDIA GPU, or check nvidia-smi and the device nodes."}
	case cuErrInsufficientDriver:
		return &UnavailableError{Reason: "the installed NVIDIA driver is older than CUDA 11.8 (cuInit: CUDA_ERROR_INSUFFICIENT_DRIVER); update the driver."}
	}
	return &UnavailableError{Reason: fmt.Sprintf("the CUDA driver failed to initialise (cuInit: %s); check nvidia-smi and the driver installation.", CUResultName(code))}
}

func shimDevAttr(attr, dev int) (int, error) {
	var v C.int
	if r := int(C.gp_dev_attr(C.int(attr), C.int(dev), &v)); r != 0 {
		return 0, newDriverError("cuDeviceGetAttribute", r, fmt.Sprintf("attribute %d", attr))
	}
	return int(v), nil
}

func shimMemInfo() (uint64, uint64, error) {
	var f, t C.ulonglong
	if r := int(C.gp_mem_get_info(&f, &t)); r != 0 {
		return 0, 0, newDriverError("cuMemGetInfo", r, "")
	}
	return uint64(f), uint64(t), nil
}

func shimHostAlloc(n int) (unsafe.Pointer, error) {
	var p unsafe.Pointer
	if r := int(C.gp_host_alloc(&p, C.ulonglong(n))); r != 0 {
		return nil, newDriverError("cuMemHostAlloc", r, fmt.Sprintf("%d bytes of pinned host memory", n))
	}
	return p, nil
}

func shimHostFree(p unsafe.Pointer) error {
	return newDriverError("cuMemFreeHost", int(C.gp_host_free(p)), "")
}

func shimHostRegister(p unsafe.Pointer, n int) error {
	return newDriverError("cuMemHostRegister", int(C.gp_host_register(p, C.ulonglong(n))), fmt.Sprintf("%d bytes of host memory at %#x", n, uintptr(p)))
}

func shimHostUnregister(p unsafe.Pointer) error {
	return newDriverError("cuMemHostUnregister", int(C.gp_host_unregister(p)), fmt.Sprintf("host memory at %#x", uintptr(p)))
}

// nvtxLabels are the profiler ranges' labels as C strings, allocated once
// per backend and freed when it closes.
type nvtxLabels [numProfilerRanges]*C.char

// loadNVTX loads libnvToolsExt and returns the labels, or nil when the
// library is missing (the ranges are then off).
func loadNVTX() *nvtxLabels {
	if C.gp_nvtx_load() == 0 {
		return nil
	}
	var l nvtxLabels
	for i, r := range profilerRanges {
		l[i] = C.CString(r.Name)
	}
	return &l
}

func (l *nvtxLabels) push(r ProfilerRange) { C.gp_nvtx_push(l[r]) }

// label returns r's label as the C side holds it.
func (l *nvtxLabels) label(r ProfilerRange) string { return C.GoString(l[r]) }

func (l *nvtxLabels) pop() { C.gp_nvtx_pop() }

func (l *nvtxLabels) free() {
	for i, c := range l {
		C.free(unsafe.Pointer(c))
		l[i] = nil
	}
}

func shimFuncGetAttr(fn unsafe.Pointer, attr int) (int, error) {
	var v C.int
	if r := int(C.gp_func_get_attr(fn, C.int(attr), &v)); r != 0 {
		return 0, newDriverError("cuFuncGetAttribute", r, fmt.Sprintf("attribute %d", attr))
	}
	return int(v), nil
}

func shimFuncSetAttr(fn unsafe.Pointer, attr, value int) error {
	return newDriverError("cuFuncSetAttribute", int(C.gp_func_set_attr(fn, C.int(attr), C.int(value))), fmt.Sprintf("attribute %d = %d", attr, value))
}

func shimOccupancy(fn unsafe.Pointer, block, dyn int) (int, error) {
	var v C.int
	if r := int(C.gp_occupancy(fn, C.int(block), C.ulonglong(dyn), 0, &v)); r != 0 {
		return 0, newDriverError("cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags", r, fmt.Sprintf("block %d, %d B dynamic shared memory", block, dyn))
	}
	return int(v), nil
}

// shimLaunch launches through cuLaunchCooperativeKernel (cooperative) or
// cuLaunchKernel. args is Go memory holding no Go pointers, so cgo lets C
// read it for the duration of the call; the driver copies the parameters
// before it returns.
func shimLaunch(fn, stream unsafe.Pointer, cfg LaunchConfig, args []uint64, cooperative bool) error {
	var vals *C.ulonglong
	if len(args) > 0 {
		vals = (*C.ulonglong)(unsafe.Pointer(&args[0]))
	}
	coop := C.int(0)
	call := "cuLaunchKernel"
	if cooperative {
		coop, call = 1, "cuLaunchCooperativeKernel"
	}
	r := int(C.gp_launch(fn, C.uint(cfg.Grid[0]), C.uint(cfg.Grid[1]), C.uint(cfg.Grid[2]),
		C.uint(cfg.Block[0]), C.uint(cfg.Block[1]), C.uint(cfg.Block[2]), C.uint(cfg.DynamicSharedBytes),
		stream, vals, C.int(len(args)), coop))
	return newDriverError(call, r, "")
}
