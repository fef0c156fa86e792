//go:build cuda

package cudart

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>

typedef int (*rt_set_device)(int);
typedef int (*rt_malloc)(void **, size_t);
typedef int (*rt_free)(void *);
typedef int (*rt_memcpy)(void *, const void *, size_t, int);
typedef int (*drv_init)(unsigned);
typedef int (*drv_ctx_get_current)(void **);
typedef int (*drv_primary_state)(int, unsigned *, int *);

static void *rt, *drv;
static rt_set_device p_set_device;
static rt_malloc p_malloc;
static rt_free p_free;
static rt_memcpy p_memcpy;
static drv_ctx_get_current p_ctx_current;
static drv_primary_state p_primary_state;

static int gp_cudart_open(void) {
	const char *names[] = {"libcudart.so", "libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0",
		"/usr/local/cuda/lib64/libcudart.so", NULL};
	for (int i = 0; names[i] && !rt; i++) rt = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
	drv = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!rt || !drv) return 1;
	p_set_device = (rt_set_device)dlsym(rt, "cudaSetDevice");
	p_malloc = (rt_malloc)dlsym(rt, "cudaMalloc");
	p_free = (rt_free)dlsym(rt, "cudaFree");
	p_memcpy = (rt_memcpy)dlsym(rt, "cudaMemcpy");
	p_ctx_current = (drv_ctx_get_current)dlsym(drv, "cuCtxGetCurrent");
	p_primary_state = (drv_primary_state)dlsym(drv, "cuDevicePrimaryCtxGetState");
	drv_init init = (drv_init)dlsym(drv, "cuInit");
	if (!p_set_device || !p_malloc || !p_free || !p_memcpy || !p_ctx_current || !p_primary_state || !init) return 2;
	return init(0) ? 3 : 0;
}
static int gp_set_device(int d) { return p_set_device(d); }
static int gp_malloc(uintptr_t *p, size_t n) { void *q = 0; int r = p_malloc(&q, n); *p = (uintptr_t)q; return r; }
static int gp_free(uintptr_t p) { return p_free((void *)p); }
static int gp_memcpy(uintptr_t dst, uintptr_t src, size_t n, int kind) { return p_memcpy((void *)dst, (const void *)src, n, kind); }
static int gp_ctx_current(uintptr_t *c) { void *q = 0; int r = p_ctx_current(&q); *c = (uintptr_t)q; return r; }
static int gp_primary_state(int d, int *active) { unsigned f = 0; return p_primary_state(d, &f, active); }
*/
import "C"

import (
	"fmt"
	"runtime"
	"sync"
	"unsafe"
)

// cudaMemcpy kinds.
const (
	hostToDevice   = 1
	deviceToHost   = 2
	deviceToDevice = 3
)

var open = sync.OnceValue(func() int { return int(C.gp_cudart_open()) })

// Lib is the opened runtime library, used on device Device.
type Lib struct{ Device int }

// Open opens the runtime and driver libraries (once per process).
func Open(device int) (*Lib, error) {
	if r := open(); r != 0 {
		return nil, fmt.Errorf("%w (step %d)", ErrMissing, r)
	}
	return &Lib{Device: device}, nil
}

// call runs f on a locked OS thread after cudaSetDevice, as a runtime
// library does, and names the call that failed.
func (l *Lib) call(name string, f func() C.int) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if r := C.gp_set_device(C.int(l.Device)); r != 0 {
		return fmt.Errorf("cudaSetDevice(%d): error %d", l.Device, int(r))
	}
	if r := f(); r != 0 {
		return fmt.Errorf("%s: error %d", name, int(r))
	}
	return nil
}

// ToHost is cudaMemcpy from device address src into dst.
func (l *Lib) ToHost(dst []byte, src uintptr) error {
	return l.call("cudaMemcpy DtoH", func() C.int {
		return C.gp_memcpy(C.uintptr_t(uintptr(unsafe.Pointer(unsafe.SliceData(dst)))), C.uintptr_t(src), C.size_t(len(dst)), deviceToHost)
	})
}

// ToDevice is cudaMemcpy of src to device address dst.
func (l *Lib) ToDevice(dst uintptr, src []byte) error {
	return l.call("cudaMemcpy HtoD", func() C.int {
		return C.gp_memcpy(C.uintptr_t(dst), C.uintptr_t(uintptr(unsafe.Pointer(unsafe.SliceData(src)))), C.size_t(len(src)), hostToDevice)
	})
}

// Copy is cudaMemcpy of n bytes between device addresses.
func (l *Lib) Copy(dst, src uintptr, n int) error {
	return l.call("cudaMemcpy DtoD", func() C.int {
		return C.gp_memcpy(C.uintptr_t(dst), C.uintptr_t(src), C.size_t(n), deviceToDevice)
	})
}

// Malloc is cudaMalloc.
func (l *Lib) Malloc(n int) (uintptr, error) {
	var p C.uintptr_t
	err := l.call("cudaMalloc", func() C.int { return C.gp_malloc(&p, C.size_t(n)) })
	return uintptr(p), err
}

// Free is cudaFree.
func (l *Lib) Free(p uintptr) error {
	return l.call("cudaFree", func() C.int { return C.gp_free(C.uintptr_t(p)) })
}

// Context returns the context current on the runtime's thread once the
// runtime has initialised it: the device's primary context.
func (l *Lib) Context() (uintptr, error) {
	var c C.uintptr_t
	err := l.call("cuCtxGetCurrent", func() C.int {
		if r := C.gp_free(0); r != 0 { // cudaFree(0) initialises the runtime's context
			return r
		}
		return C.gp_ctx_current(&c)
	})
	return uintptr(c), err
}

// PrimaryActive reports whether the device's primary context is retained
// by anyone in the process.
func (l *Lib) PrimaryActive() (bool, error) {
	var a C.int
	if r := C.gp_primary_state(C.int(l.Device), &a); r != 0 {
		return false, fmt.Errorf("cuDevicePrimaryCtxGetState(%d): error %d", l.Device, int(r))
	}
	return a != 0, nil
}
