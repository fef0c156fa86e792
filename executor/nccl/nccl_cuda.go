//go:build cuda

package nccl

// #cgo LDFLAGS: -lcuda -ldl
// #include <stdlib.h>
// #include "nccl_cuda.h"
import "C"

import (
	"fmt"
	"os"
	"runtime"
	"sync"
	"time"
	"unsafe"

	"github.com/gpuplan/gpuplan/executor"
)

// Available reports whether this build can open an NCCL communicator (the
// CUDA build).
const Available = true

// stage is a staging buffer in a device's primary context.
type stage struct {
	ptr C.CUdeviceptr
	n   uint64
}

// rank is one device of the communicator.
type rank struct {
	x          *executor.Executor
	dev        int
	ctx        C.CUcontext
	stream     C.CUstream
	comm       unsafe.Pointer
	send, recv stage
}

// Comm is an NCCL communicator over one executor per device, created with
// ncclCommInitAll in this process. Its methods are safe for concurrent
// use; they run one at a time.
type Comm struct {
	mu      sync.Mutex
	ranks   []*rank
	xs      []*executor.Executor
	version string
	closed  bool
}

// Open loads NCCL (Options.Library, else $GPUPLAN_NCCL_LIBRARY, else
// libnccl.so.2), turns NVLink multicast off unless the environment says
// otherwise, and creates one communicator per executor's device with
// ncclCommInitAll. The executors must be on distinct devices.
func Open(xs []*executor.Executor, opts Options) (*Comm, error) {
	devs, err := rankDevices(xs)
	if err != nil {
		return nil, err
	}
	if _, err := DisableNVLS(opts.environment()); err != nil {
		return nil, err
	}
	if err := load(opts.library()); err != nil {
		return nil, err
	}
	var v C.int
	if r := int(C.gp_nccl_version(&v)); r != 0 {
		return nil, ncclErr("ncclGetVersion", r)
	}
	c := &Comm{xs: append([]*executor.Executor(nil), xs...), version: FormatVersion(int(v))}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	comms := make([]unsafe.Pointer, len(devs))
	cdevs := make([]C.int, len(devs))
	for i, d := range devs {
		cdevs[i] = C.int(d)
	}
	if r := int(C.gp_nccl_comm_init_all((*unsafe.Pointer)(unsafe.Pointer(&comms[0])), C.int(len(devs)), &cdevs[0])); r != 0 {
		return nil, ncclErr("ncclCommInitAll", r)
	}
	for i, d := range devs {
		c.ranks = append(c.ranks, &rank{x: xs[i], dev: d, comm: comms[i]})
	}
	for _, rk := range c.ranks {
		if r := int(C.gp_nccl_primary(C.int(rk.dev), &rk.ctx, &rk.stream)); r != 0 {
			_ = c.closeLocked()
			return nil, cudaErr("cuDevicePrimaryCtxRetain/cuStreamCreate", r, rk.dev)
		}
	}
	return c, nil
}

// load opens the library once.
func load(path string) error {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	buf := make([]byte, 512)
	if C.gp_nccl_load(cpath, (*C.char)(unsafe.Pointer(&buf[0])), C.int(len(buf))) != 0 {
		return &MissingError{Library: path, Reason: C.GoString((*C.char)(unsafe.Pointer(&buf[0])))}
	}
	return nil
}

// library returns the library path to load.
func (o Options) library() string {
	if o.Library != "" {
		return o.Library
	}
	if p := os.Getenv(LibraryEnv); p != "" {
		return p
	}
	return Library
}

func ncclErr(call string, code int) error {
	return &Error{Call: call, Code: code, Detail: C.GoString(C.gp_nccl_error_string(C.int(code)))}
}

func cudaErr(call string, code, dev int) error {
	return fmt.Errorf("nccl: %s on device %d failed with CUresult %d (%s). Fix: check the device with nvidia-smi", call, dev, code, executor.CUResultName(code))
}

// Version returns the loaded NCCL's version, for example "2.21.5".
func (c *Comm) Version() string { return c.version }

// Ranks returns the number of ranks.
func (c *Comm) Ranks() int { return len(c.ranks) }

// Reserve allocates staging buffers of at least bytes per rank for sending
// and for receiving, so that later collectives allocate nothing.
func (c *Comm) Reserve(bytes uint64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for _, r := range c.ranks {
		if err := r.grow(&r.send, bytes); err != nil {
			return err
		}
		if err := r.grow(&r.recv, bytes); err != nil {
			return err
		}
	}
	return nil
}

// grow makes s hold at least n bytes.
func (r *rank) grow(s *stage, n uint64) error {
	if s.n >= n {
		return nil
	}
	if s.n > 0 {
		if code := int(C.gp_nccl_free(r.ctx, s.ptr)); code != 0 {
			return cudaErr("cuMemFree", code, r.dev)
		}
		*s = stage{}
	}
	if code := int(C.gp_nccl_alloc(r.ctx, &s.ptr, C.size_t(n))); code != 0 {
		return cudaErr("cuMemAlloc", code, r.dev)
	}
	s.n = n
	return nil
}

// addr returns a region's device address and its context.
func addr(reg Region) (C.CUdeviceptr, C.CUcontext, error) {
	p, err := reg.X.DevicePtr(reg.Buf)
	if err != nil {
		return 0, nil, err
	}
	ptr := C.CUdeviceptr(uint64(p) + reg.Off)
	var ctx C.CUcontext
	if code := int(C.gp_nccl_ptr_ctx(ptr, &ctx)); code != 0 {
		return 0, nil, fmt.Errorf("nccl: cuPointerGetAttribute(CONTEXT) failed with CUresult %d (%s). Fix: pass regions of resident executor buffers", code, executor.CUResultName(code))
	}
	return ptr, ctx, nil
}

// freeStages frees r's staging buffers and returns the first error.
func (r *rank) freeStages() error {
	var first error
	for _, s := range []*stage{&r.send, &r.recv} {
		if s.n == 0 {
			continue
		}
		if code := int(C.gp_nccl_free(r.ctx, s.ptr)); code != 0 && first == nil {
			first = cudaErr("cuMemFree", code, r.dev)
		}
	}
	return first
}

// copyLocal copies src into dst (the same length) on r's stream.
func (r *rank) copyLocal(dst, src Region) error {
	if src.Len == 0 {
		return nil
	}
	s, sctx, err := addr(src)
	if err != nil {
		return err
	}
	d, dctx, err := addr(dst)
	if err != nil {
		return err
	}
	if code := int(C.gp_nccl_copy(r.ctx, d, dctx, s, sctx, C.size_t(src.Len), r.stream)); code != 0 {
		return cudaErr("cuMemcpyPeerAsync", code, r.dev)
	}
	return nil
}

// releaseContext releases the primary context r retained, with its stream.
func (r *rank) releaseContext() error {
	if code := int(C.gp_nccl_release(C.int(r.dev), r.ctx, r.stream)); code != 0 {
		return cudaErr("cuDevicePrimaryCtxRelease", code, r.dev)
	}
	return nil
}

// copyIn copies reg into r's stage at off, on r's stream.
func (r *rank) copyIn(s stage, off uint64, reg Region) error {
	src, sctx, err := addr(reg)
	if err != nil {
		return err
	}
	if code := int(C.gp_nccl_copy(r.ctx, s.ptr+C.CUdeviceptr(off), r.ctx, src, sctx, C.size_t(reg.Len), r.stream)); code != 0 {
		return cudaErr("cuMemcpyPeerAsync", code, r.dev)
	}
	return nil
}

// copyOut copies n bytes of r's stage at off into reg.
func (r *rank) copyOut(reg Region, s stage, off uint64) error {
	dst, dctx, err := addr(reg)
	if err != nil {
		return err
	}
	if code := int(C.gp_nccl_copy(r.ctx, dst, dctx, s.ptr+C.CUdeviceptr(off), r.ctx, C.size_t(reg.Len), r.stream)); code != 0 {
		return cudaErr("cuMemcpyPeerAsync", code, r.dev)
	}
	return nil
}

// syncAll waits for every rank's stream.
func (c *Comm) syncAll() error {
	for _, r := range c.ranks {
		if code := int(C.gp_nccl_sync(r.ctx, r.stream)); code != 0 {
			return cudaErr("cuStreamSynchronize", code, r.dev)
		}
	}
	return nil
}

// group runs enqueue between ncclGroupStart and ncclGroupEnd.
func group(enqueue func() error) error {
	if r := int(C.gp_nccl_group_start()); r != 0 {
		return ncclErr("ncclGroupStart", r)
	}
	err := enqueue()
	if r := int(C.gp_nccl_group_end()); r != 0 && err == nil {
		err = ncclErr("ncclGroupEnd", r)
	}
	return err
}

// AllGather stages every send region, runs ncclAllGather on every rank as
// one group, and copies the gathered bytes into every recv region.
func (c *Comm) AllGather(send, recv []Region) (Stats, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return Stats{}, argErr("communicator", "is closed")
	}
	if err := CheckAllGather(send, recv, c.xs); err != nil {
		return Stats{}, err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	t0 := time.Now()
	n := send[0].Len
	for i, r := range c.ranks {
		if err := r.grow(&r.send, n); err != nil {
			return Stats{}, err
		}
		if err := r.grow(&r.recv, recv[i].Len); err != nil {
			return Stats{}, err
		}
		if err := r.copyIn(r.send, 0, send[i]); err != nil {
			return Stats{}, err
		}
	}
	err := group(func() error {
		for _, r := range c.ranks {
			if code := int(C.gp_nccl_all_gather(r.send.ptr, r.recv.ptr, C.size_t(n), r.comm, r.stream)); code != 0 {
				return ncclErr("ncclAllGather", code)
			}
		}
		return nil
	})
	if err != nil {
		return Stats{}, err
	}
	for i, r := range c.ranks {
		if err := r.copyOut(recv[i], r.recv, 0); err != nil {
			return Stats{}, err
		}
	}
	if err := c.syncAll(); err != nil {
		return Stats{}, err
	}
	p := uint64(len(c.ranks))
	return Stats{Bytes: p * (p - 1) * n, WallNs: uint64(time.Since(t0))}, nil
}

// SendRecv stages every source, runs the transfers between distinct ranks
// as ncclSend/ncclRecv pairs in one group (a transfer to the same rank is
// a copy on the device), and copies every received region out.
func (c *Comm) SendRecv(ts []Transfer) (Stats, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return Stats{}, argErr("communicator", "is closed")
	}
	if err := CheckSendRecv(ts, c.xs); err != nil {
		return Stats{}, err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	t0 := time.Now()
	sendOff, recvOff, err := c.stageLayout(ts)
	if err != nil {
		return Stats{}, err
	}
	var st Stats
	if err := c.stageSources(ts, sendOff); err != nil {
		return st, err
	}
	err = group(func() error {
		for i, t := range ts {
			if t.From == t.To || t.Src.Len == 0 {
				continue
			}
			from, to := c.ranks[t.From], c.ranks[t.To]
			if code := int(C.gp_nccl_send(from.send.ptr+C.CUdeviceptr(sendOff[i]), C.size_t(t.Src.Len), C.int(t.To), from.comm, from.stream)); code != 0 {
				return ncclErr("ncclSend", code)
			}
			if code := int(C.gp_nccl_recv(to.recv.ptr+C.CUdeviceptr(recvOff[i]), C.size_t(t.Src.Len), C.int(t.From), to.comm, to.stream)); code != 0 {
				return ncclErr("ncclRecv", code)
			}
			st.Bytes += t.Src.Len
		}
		return nil
	})
	if err != nil {
		return Stats{}, err
	}
	for i, t := range ts {
		if t.From == t.To || t.Src.Len == 0 {
			continue
		}
		to := c.ranks[t.To]
		if err := to.copyOut(t.Dst, to.recv, recvOff[i]); err != nil {
			return Stats{}, err
		}
	}
	if err := c.syncAll(); err != nil {
		return Stats{}, err
	}
	st.WallNs = uint64(time.Since(t0))
	return st, nil
}

// stageLayout places every transfer in its sender's send stage and its
// receiver's recv stage (256-byte aligned), growing the stages.
func (c *Comm) stageLayout(ts []Transfer) (sendOff, recvOff []uint64, err error) {
	sendEnd, recvEnd := make([]uint64, len(c.ranks)), make([]uint64, len(c.ranks))
	sendOff, recvOff = make([]uint64, len(ts)), make([]uint64, len(ts))
	for i, t := range ts {
		if t.From == t.To {
			continue
		}
		sendOff[i], recvOff[i] = sendEnd[t.From], recvEnd[t.To]
		sendEnd[t.From] += (t.Src.Len + 255) &^ 255
		recvEnd[t.To] += (t.Src.Len + 255) &^ 255
	}
	for i, r := range c.ranks {
		if err := r.grow(&r.send, sendEnd[i]); err != nil {
			return nil, nil, err
		}
		if err := r.grow(&r.recv, recvEnd[i]); err != nil {
			return nil, nil, err
		}
	}
	return sendOff, recvOff, nil
}

// stageSources copies every source into its sender's stage, and runs the
// transfers to the same rank as direct copies.
func (c *Comm) stageSources(ts []Transfer, sendOff []uint64) error {
	for i, t := range ts {
		if t.Src.Len == 0 {
			continue
		}
		r := c.ranks[t.From]
		if t.From != t.To {
			if err := r.copyIn(r.send, sendOff[i], t.Src); err != nil {
				return err
			}
			continue
		}
		if err := r.copyLocal(t.Dst, t.Src); err != nil {
			return err
		}
	}
	return nil
}

// Close destroys the communicators, frees the stages and releases the
// primary contexts. The executors stay open.
func (c *Comm) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return c.closeLocked()
}

func (c *Comm) closeLocked() error {
	c.closed = true
	var first error
	keep := func(err error) {
		if first == nil {
			first = err
		}
	}
	for _, r := range c.ranks {
		keep(r.freeStages())
		if code := int(C.gp_nccl_comm_destroy(r.comm)); code != 0 {
			keep(ncclErr("ncclCommDestroy", code))
		}
		if r.ctx != nil {
			keep(r.releaseContext())
		}
	}
	return first
}
