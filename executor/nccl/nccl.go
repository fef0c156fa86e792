// Package nccl moves data between GPUs with NVIDIA's NCCL, through a
// small binding of our own that loads libnccl.so.2 at run time (dlopen, as
// go-nvml loads NVML): neither NCCL's header nor its library is needed to
// build, and a machine without NCCL fails with an error naming the library
// and how to install it.
//
// The collectives work on resident buffers of executors (one executor per
// device, in the device's primary context): AllGather gathers every rank's region
// into every rank's receive region, SendRecv runs grouped point-to-point
// transfers (an all-to-all when every pair sends). Open (CUDA build) is the
// NCCL communicator over several devices of one process; NewFake runs the
// same collectives through host copies with the executors' own uploads and
// downloads, so code above it is tested without NCCL or a GPU.
//
// # One process per GPU
//
// When every GPU has a process of its own (on one machine or several),
// each process holds one rank. Rank 0 makes the communicator's id with
// NewUniqueID (ncclGetUniqueId); package rendezvous hands that UniqueID to
// every other process over TCP; and every process opens its rank with
// OpenRank (ncclCommInitRank). A RankComm's collectives (RankCollectives)
// take the regions of its own executor and address peers by rank. Nothing
// waits forever: with NCCL 2.14 and later the communicator is created
// non-blocking (ncclCommInitRankConfig, blocking = 0) and OpenRank polls
// ncclCommGetAsyncError until every rank has joined or
// Options.InitTimeout passes; every collective polls the same and its
// stream until it completes or Options.CollectiveTimeout passes. At a
// timeout the communicator is aborted (ncclCommAbort) and the call returns
// a *TimeoutError. OpenFakeRank gives the same collectives to ranks that
// are goroutines of one process, meeting in a registry keyed by the id.
//
// NCCL and the executors share each device's primary context. The CUDA
// communicators still stage every transfer through buffers of their own
// with a copy on the same device (cuMemcpyPeerAsync), then run the
// collective on those.
//
// NVLink multicast (NVLS) stays off: before a communicator is created (or
// an id made), NCCL_NVLS_ENABLE is set to 0 unless the environment
// already sets it.
package nccl

import (
	"errors"
	"fmt"

	"github.com/gpuplan/gpuplan/executor"
)

// Library is the shared library loaded at run time.
const Library = "libnccl.so.2"

// LibraryEnv names the environment variable that overrides the library's
// path.
const LibraryEnv = "GPUPLAN_NCCL_LIBRARY"

// Region is a byte range of a resident buffer on one rank's executor.
type Region struct {
	X   *executor.Executor
	Buf executor.Buffer
	Off uint64
	Len uint64
}

// Transfer sends Src, on rank From, to Dst, on rank To (the same length).
type Transfer struct {
	From, To int
	Src, Dst Region
}

// Stats measure one collective: Bytes moved between distinct ranks
// (a rank's copy to itself is not counted) and the wall time from the
// first enqueue until every rank finished.
type Stats struct {
	Bytes  uint64 `json:"bytes"`
	WallNs uint64 `json:"wall_ns"`
}

// Collectives are the operations a multi-device workload exchanges data
// with. Every call returns once the data has arrived on every rank.
type Collectives interface {
	// Ranks returns the number of ranks (devices).
	Ranks() int
	// AllGather copies every rank r's send[r] into every rank's recv at
	// offset r x send[r].Len; every send region has the same length and
	// every recv region is Ranks() times as long.
	AllGather(send, recv []Region) (Stats, error)
	// SendRecv runs the transfers as one group; a transfer to the same
	// rank is a local copy.
	SendRecv(ts []Transfer) (Stats, error)
	// Close releases the communicator and its buffers.
	Close() error
}

// ArgumentError is a collective called against its contract.
type ArgumentError struct {
	Field string
	Msg   string
}

// Error names the field and ends with a "Fix:" sentence.
func (e *ArgumentError) Error() string {
	return fmt.Sprintf("nccl: %s %s. Fix: pass regions inside resident buffers of the communicator's executors, as the collective's contract says", e.Field, e.Msg)
}

func argErr(field, format string, a ...any) error {
	return &ArgumentError{Field: field, Msg: fmt.Sprintf(format, a...)}
}

// checkRegion checks that r lies inside its buffer and on rank's executor.
func checkRegion(field string, r Region, xs []*executor.Executor, rank int) error {
	switch {
	case r.X == nil || r.X != xs[rank]:
		return argErr(field, "is not on the executor of rank %d", rank)
	case r.Off > r.Buf.Len || r.Len > r.Buf.Len-r.Off:
		return argErr(field, "is %d bytes at offset %d of a %d-byte buffer", r.Len, r.Off, r.Buf.Len)
	}
	return nil
}

// CheckAllGather checks AllGather's arguments for the executors of the
// ranks, in rank order.
func CheckAllGather(send, recv []Region, xs []*executor.Executor) error {
	if len(send) != len(xs) || len(recv) != len(xs) {
		return argErr("send and recv", "hold %d and %d regions for %d ranks", len(send), len(recv), len(xs))
	}
	for r := range xs {
		if err := checkRegion(fmt.Sprintf("send[%d]", r), send[r], xs, r); err != nil {
			return err
		}
		if err := checkRegion(fmt.Sprintf("recv[%d]", r), recv[r], xs, r); err != nil {
			return err
		}
		if send[r].Len != send[0].Len {
			return argErr(fmt.Sprintf("send[%d]", r), "is %d bytes, send[0] %d (every rank sends the same length)", send[r].Len, send[0].Len)
		}
		if recv[r].Len/uint64(len(xs)) != send[0].Len || recv[r].Len%uint64(len(xs)) != 0 {
			return argErr(fmt.Sprintf("recv[%d]", r), "is %d bytes, not %d ranks x %d", recv[r].Len, len(xs), send[0].Len)
		}
	}
	return nil
}

// CheckSendRecv checks SendRecv's transfers for the executors of the
// ranks, in rank order.
func CheckSendRecv(ts []Transfer, xs []*executor.Executor) error {
	for i, t := range ts {
		f := fmt.Sprintf("transfers[%d]", i)
		if t.From < 0 || t.From >= len(xs) || t.To < 0 || t.To >= len(xs) {
			return argErr(f, "goes from rank %d to rank %d of %d", t.From, t.To, len(xs))
		}
		if t.Src.Len != t.Dst.Len {
			return argErr(f, "sends %d bytes into %d", t.Src.Len, t.Dst.Len)
		}
		if err := checkRegion(f+".src", t.Src, xs, t.From); err != nil {
			return err
		}
		if err := checkRegion(f+".dst", t.Dst, xs, t.To); err != nil {
			return err
		}
	}
	return nil
}

// checkExecutors refuses an empty or nil list of executors.
func checkExecutors(xs []*executor.Executor) error {
	if len(xs) == 0 {
		return argErr("executors", "is empty")
	}
	for i, x := range xs {
		if x == nil {
			return argErr(fmt.Sprintf("executors[%d]", i), "is nil")
		}
	}
	return nil
}

// MissingError says that NCCL could not be loaded.
type MissingError struct {
	// Library is the path or name that was tried; Reason is the loader's
	// message.
	Library string
	Reason  string
}

// Error names the library and how to provide it.
func (e *MissingError) Error() string {
	return fmt.Sprintf("NCCL is not available: %s could not be loaded (%s). Fix: install NCCL 2 (Debian/Ubuntu: apt-get install libnccl2 from NVIDIA's CUDA repository; "+
		"or pip install nvidia-nccl-cu12 and put its nvidia/nccl/lib directory on LD_LIBRARY_PATH), or point %s at the library file", e.Library, e.Reason, LibraryEnv)
}

// ErrUnavailable is wrapped by every error that says NCCL cannot be used
// in this process: a build without CUDA or a missing library.
var ErrUnavailable = errors.New("nccl unavailable")

// Is makes errors.Is(err, ErrUnavailable) true.
func (e *MissingError) Is(target error) bool { return target == ErrUnavailable }

// Error is a failed NCCL call: Code is its ncclResult_t, Detail NCCL's own
// message.
type Error struct {
	Call   string
	Code   int
	Detail string
}

// resultNames are the ncclResult_t values of NCCL 2.
var resultNames = [...]string{"ncclSuccess", "ncclUnhandledCudaError", "ncclSystemError", "ncclInternalError",
	"ncclInvalidArgument", "ncclInvalidUsage", "ncclRemoteError", "ncclInProgress"}

// ResultName returns the name of an ncclResult_t value.
func ResultName(code int) string {
	if code >= 0 && code < len(resultNames) {
		return resultNames[code]
	}
	return fmt.Sprintf("ncclResult(%d)", code)
}

// resultFixes are what to do about each failure.
var resultFixes = map[int]string{
	1: "a CUDA call inside NCCL failed; check the devices with nvidia-smi and run with NCCL_DEBUG=WARN for the call",
	2: "a system call failed (shared memory, sockets or /dev/shm too small); run with NCCL_DEBUG=WARN to see which",
	3: "NCCL hit an internal error; run with NCCL_DEBUG=INFO and report it with NCCL's version",
	4: "an argument was invalid; this is a bug in the caller, report it",
	5: "NCCL was used against its rules (for example two ranks on one GPU); use one rank per device",
	6: "a peer failed; check every device with nvidia-smi",
}

// Error names the call and its result and ends with a "Fix:" sentence.
func (e *Error) Error() string {
	fix, ok := resultFixes[e.Code]
	if !ok {
		fix = "run with NCCL_DEBUG=WARN for NCCL's own account of the failure"
	}
	detail := ""
	if e.Detail != "" {
		detail = " (" + e.Detail + ")"
	}
	return fmt.Sprintf("nccl: %s failed: %s%s. Fix: %s", e.Call, ResultName(e.Code), detail, fix)
}

// Environment is the process environment NCCL reads.
type Environment interface {
	Lookup(key string) (string, bool)
	Set(key, value string) error
}

// NVLSEnv is the variable that turns NVLink multicast off.
const NVLSEnv = "NCCL_NVLS_ENABLE"

// DisableNVLS sets NCCL_NVLS_ENABLE=0 unless the environment sets it
// already, and returns the value NCCL will see.
func DisableNVLS(env Environment) (string, error) {
	if v, ok := env.Lookup(NVLSEnv); ok {
		return v, nil
	}
	if err := env.Set(NVLSEnv, "0"); err != nil {
		return "", fmt.Errorf("nccl: setting %s=0: %w. Fix: set %s=0 in the environment before starting", NVLSEnv, err, NVLSEnv)
	}
	return "0", nil
}

// FormatVersion turns ncclGetVersion's integer into "2.21.5" (NCCL 2.9 and
// later encode major*10000 + minor*100 + patch, older ones major*1000 +
// minor*100 + patch).
func FormatVersion(code int) string {
	if code >= 10000 {
		return fmt.Sprintf("%d.%d.%d", code/10000, code%10000/100, code%100)
	}
	return fmt.Sprintf("%d.%d.%d", code/1000, code%1000/100, code%100)
}
