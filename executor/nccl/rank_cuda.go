//go:build cuda

package nccl

// #include <stdlib.h>
// #include "nccl_cuda.h"
import "C"

import (
	"runtime"
	"sync"
	"time"
	"unsafe"

	"github.com/gpuplan/gpuplan/executor"
)

// ncclInProgress is the ncclResult_t of an operation a non-blocking
// communicator has not finished yet.
const ncclInProgress = 7

// cudaErrorNotReady is cuStreamQuery's CUresult for a stream still busy.
const cudaErrorNotReady = 600

// NewUniqueID loads NCCL (as Open does) and returns a new ncclUniqueId
// from ncclGetUniqueId. The process that calls it hosts NCCL's bootstrap
// for the communicator, so it must stay up until every rank has opened
// its rank: it is rank 0's.
func NewUniqueID(opts Options) (UniqueID, error) {
	var id UniqueID
	if _, err := DisableNVLS(opts.environment()); err != nil {
		return id, err
	}
	if err := load(opts.library()); err != nil {
		return id, err
	}
	if r := int(C.gp_nccl_get_unique_id(unsafe.Pointer(&id[0]))); r != 0 {
		return id, ncclErr("ncclGetUniqueId", r)
	}
	return id, nil
}

var _ RankCollectives = (*RankComm)(nil)

// RankComm is an NCCL communicator with one local rank, on the device of
// one executor; its other ranks are in other processes (or on other
// machines), and they opened theirs with the same UniqueID. Its methods
// are safe for concurrent use; they run one at a time.
type RankComm struct {
	mu          sync.Mutex
	r           *rank
	slot        *unsafe.Pointer
	self, ranks int
	version     string
	timeout     time.Duration
	closed      bool
	abort       error
}

// OpenRank loads NCCL (as Open does), turns NVLink multicast off unless
// the environment says otherwise, and creates rank of ranks of the
// communicator of id on x's device, in the device's primary context. With
// NCCL 2.14 and later the communicator is created non-blocking
// (ncclCommInitRankConfig with blocking = 0) and OpenRank polls
// ncclCommGetAsyncError until every rank has joined; when
// Options.InitTimeout passes first it calls ncclCommAbort and returns a
// *TimeoutError. An older NCCL is called through the blocking
// ncclCommInitRank, which waits for every rank without a timeout.
func OpenRank(x *executor.Executor, id UniqueID, rank, ranks int, opts Options) (*RankComm, error) {
	if err := checkRankOpen(x, rank, ranks); err != nil {
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
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	rk := newRank(x)
	if r := int(C.gp_nccl_primary(C.int(rk.dev), &rk.ctx, &rk.stream)); r != 0 {
		return nil, cudaErr("cuDevicePrimaryCtxRetain/cuStreamCreate", r, rk.dev)
	}
	c := &RankComm{r: rk, self: rank, ranks: ranks, version: FormatVersion(int(v)), timeout: opts.collectiveTimeout()}
	nonblocking := C.gp_nccl_has_config() != 0
	call := "ncclCommInitRank"
	if nonblocking {
		call = "ncclCommInitRankConfig"
	}
	code := int(C.gp_nccl_comm_init_rank(&c.slot, C.int(ranks), unsafe.Pointer(&id[0]), C.int(rank), boolInt(nonblocking)))
	if code != 0 && code != ncclInProgress {
		err := c.fail(ncclErr(call, code))
		c.release()
		return nil, err
	}
	rk.comm = *c.slot
	if nonblocking {
		if err := c.poll("ncclCommInitRank", time.Now().Add(opts.initTimeout()), opts.initTimeout(), false); err != nil {
			c.release()
			return nil, err
		}
		rk.comm = *c.slot
	}
	return c, nil
}

// nonblockingInit reports whether the loaded NCCL creates communicators
// non-blocking (ncclCommInitRankConfig, NCCL 2.14 and later).
func nonblockingInit() bool { return C.gp_nccl_has_config() != 0 }

// newRank returns the rank of x's device, before its context is retained.
func newRank(x *executor.Executor) *rank { return &rank{x: x, dev: x.Device().Ordinal} }

func boolInt(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

// Version returns the loaded NCCL's version, for example "2.21.5".
func (c *RankComm) Version() string { return c.version }

// Rank returns this rank.
func (c *RankComm) Rank() int { return c.self }

// Ranks returns the number of ranks.
func (c *RankComm) Ranks() int { return c.ranks }

// usable refuses a closed or aborted communicator.
func (c *RankComm) usable() error {
	switch {
	case c.closed:
		return argErr("communicator", "is closed")
	case c.abort != nil:
		return abortedError(c.self, c.abort)
	}
	return nil
}

// poll waits until NCCL has no operation of the communicator in progress
// (ncclCommGetAsyncError), and with stream set until the rank's stream has
// finished too. A failure NCCL reports, or the deadline, aborts the
// communicator.
func (c *RankComm) poll(op string, deadline time.Time, timeout time.Duration, stream bool) error {
	pause := time.Microsecond
	for {
		var state C.int
		if r := int(C.gp_nccl_comm_get_async_error(*c.slot, &state)); r != 0 {
			return c.fail(ncclErr("ncclCommGetAsyncError", r))
		}
		switch s := int(state); {
		case s == ncclInProgress:
		case s != 0:
			return c.fail(ncclErr(op, s))
		case !stream:
			return nil
		default:
			q := int(C.gp_nccl_query(c.r.ctx, c.r.stream))
			if q == 0 {
				return nil
			}
			if q != cudaErrorNotReady {
				return c.fail(cudaErr("cuStreamQuery", q, c.r.dev))
			}
		}
		if time.Now().After(deadline) {
			return c.fail(&TimeoutError{Op: op, Rank: c.self, Ranks: c.ranks, Timeout: timeout})
		}
		time.Sleep(pause)
		pause = min(2*pause, time.Millisecond)
	}
}

// fail aborts the communicator (ncclCommAbort) and returns err, which
// every later call wraps.
func (c *RankComm) fail(err error) error {
	if c.abort == nil {
		if c.slot != nil && *c.slot != nil {
			_ = C.gp_nccl_comm_abort(*c.slot)
		}
		c.abort = err
	}
	return err
}

// groupRank runs enqueue between ncclGroupStart and ncclGroupEnd; a
// non-blocking communicator's ncclInProgress is not a failure (poll waits
// for it).
func (c *RankComm) groupRank(enqueue func() error) error {
	if r := int(C.gp_nccl_group_start()); r != 0 {
		return ncclErr("ncclGroupStart", r)
	}
	err := enqueue()
	if r := int(C.gp_nccl_group_end()); r != 0 && r != ncclInProgress && err == nil {
		err = ncclErr("ncclGroupEnd", r)
	}
	if err != nil {
		return c.fail(err)
	}
	return nil
}

// inProgress reports whether an enqueue's result is success or
// ncclInProgress.
func inProgress(code int) bool { return code == 0 || code == ncclInProgress }

// AllGather stages send, runs ncclAllGather, and copies the gathered bytes
// into recv, within Options.CollectiveTimeout.
func (c *RankComm) AllGather(send, recv Region) (Stats, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.usable(); err != nil {
		return Stats{}, err
	}
	if err := CheckRankAllGather(send, recv, c.r.x, c.ranks); err != nil {
		return Stats{}, err
	}
	n := send.Len
	if n == 0 {
		return Stats{}, nil
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	t0 := time.Now()
	deadline := t0.Add(c.timeout)
	r := c.r
	if err := r.grow(&r.send, n); err != nil {
		return Stats{}, err
	}
	if err := r.grow(&r.recv, recv.Len); err != nil {
		return Stats{}, err
	}
	if err := r.copyIn(r.send, 0, send); err != nil {
		return Stats{}, err
	}
	err := c.groupRank(func() error {
		if code := int(C.gp_nccl_all_gather(r.send.ptr, r.recv.ptr, C.size_t(n), r.comm, r.stream)); !inProgress(code) {
			return ncclErr("ncclAllGather", code)
		}
		return nil
	})
	if err == nil {
		err = c.poll("AllGather", deadline, c.timeout, false)
	}
	if err == nil {
		err = r.copyOut(recv, r.recv, 0)
	}
	if err == nil {
		err = c.poll("AllGather", deadline, c.timeout, true)
	}
	if err != nil {
		return Stats{}, err
	}
	return Stats{Bytes: uint64(c.ranks-1) * n, WallNs: uint64(time.Since(t0))}, nil
}

// SendRecv stages every send to another rank, runs the sends and receives
// as ncclSend/ncclRecv in one group (a send to this rank itself is a copy
// on the device), and copies every received region out, within
// Options.CollectiveTimeout.
func (c *RankComm) SendRecv(sends, recvs []PeerRegion) (Stats, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.usable(); err != nil {
		return Stats{}, err
	}
	if err := CheckRankSendRecv(sends, recvs, c.r.x, c.self, c.ranks); err != nil {
		return Stats{}, err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	t0 := time.Now()
	deadline := t0.Add(c.timeout)
	r := c.r
	sendOff, sendEnd := c.layout(sends)
	recvOff, recvEnd := c.layout(recvs)
	if err := r.grow(&r.send, sendEnd); err != nil {
		return Stats{}, err
	}
	if err := r.grow(&r.recv, recvEnd); err != nil {
		return Stats{}, err
	}
	for i, s := range sends {
		if s.Rank != c.self && s.Region.Len > 0 {
			if err := r.copyIn(r.send, sendOff[i], s.Region); err != nil {
				return Stats{}, err
			}
		}
	}
	selfSends, selfRecvs := selfParts(sends, c.self), selfParts(recvs, c.self)
	for k := range selfSends {
		if err := r.copyLocal(recvs[selfRecvs[k]].Region, sends[selfSends[k]].Region); err != nil {
			return Stats{}, err
		}
	}
	var st Stats
	err := c.groupRank(func() error {
		for i, s := range sends {
			if s.Rank == c.self || s.Region.Len == 0 {
				continue
			}
			if code := int(C.gp_nccl_send(r.send.ptr+C.CUdeviceptr(sendOff[i]), C.size_t(s.Region.Len), C.int(s.Rank), r.comm, r.stream)); !inProgress(code) {
				return ncclErr("ncclSend", code)
			}
		}
		for i, p := range recvs {
			if p.Rank == c.self || p.Region.Len == 0 {
				continue
			}
			if code := int(C.gp_nccl_recv(r.recv.ptr+C.CUdeviceptr(recvOff[i]), C.size_t(p.Region.Len), C.int(p.Rank), r.comm, r.stream)); !inProgress(code) {
				return ncclErr("ncclRecv", code)
			}
			st.Bytes += p.Region.Len
		}
		return nil
	})
	if err == nil {
		err = c.poll("SendRecv", deadline, c.timeout, false)
	}
	for i, p := range recvs {
		if err != nil {
			break
		}
		if p.Rank != c.self && p.Region.Len > 0 {
			err = r.copyOut(p.Region, r.recv, recvOff[i])
		}
	}
	if err == nil {
		err = c.poll("SendRecv", deadline, c.timeout, true)
	}
	if err != nil {
		return Stats{}, err
	}
	st.WallNs = uint64(time.Since(t0))
	return st, nil
}

// layout places every part for another rank in a stage, 256-byte aligned,
// and returns the offsets and the stage's length.
func (c *RankComm) layout(ps []PeerRegion) ([]uint64, uint64) {
	off := make([]uint64, len(ps))
	var end uint64
	for i, p := range ps {
		if p.Rank == c.self || p.Region.Len == 0 {
			continue
		}
		off[i] = end
		end += (p.Region.Len + 255) &^ 255
	}
	return off, end
}

// Close destroys the communicator (unless a timeout aborted it), frees
// the stages and releases the primary context. The executor stays open.
func (c *RankComm) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return c.release()
}

// release is Close's work, also on OpenRank's failures.
func (c *RankComm) release() error {
	c.closed = true
	r := c.r
	var first error
	keep := func(err error) {
		if first == nil {
			first = err
		}
	}
	keep(r.freeStages())
	if c.slot != nil {
		if c.abort == nil && *c.slot != nil {
			if code := int(C.gp_nccl_comm_destroy(*c.slot)); code != 0 && code != ncclInProgress {
				keep(ncclErr("ncclCommDestroy", code))
			}
		}
		C.gp_nccl_slot_free(c.slot)
		c.slot = nil
	}
	keep(r.releaseContext())
	return first
}
