package executor

import (
	"errors"
	"fmt"
)

// ErrUnavailable is matched (errors.Is) by every error that means "there is
// no usable CUDA device here": a build without -tags cuda, a missing driver,
// or a driver that reports no device.
var ErrUnavailable = errors.New("no CUDA device available")

// UnavailableError says in one sentence why no device could be opened.
type UnavailableError struct {
	// Reason is the one-sentence explanation, including the remedy.
	Reason string
}

func (e *UnavailableError) Error() string { return e.Reason }

// Is makes errors.Is(err, ErrUnavailable) true.
func (e *UnavailableError) Is(target error) bool { return target == ErrUnavailable }

// DriverError is a failed CUDA driver call. Call names the driver entry point
// (for example "cuMemAlloc"), Code is the CUresult value and Name its
// symbolic name.
type DriverError struct {
	Call string
	Code int
	Name string
	// Detail adds context from the executor (sizes, kernel names).
	Detail string
	// Fix is the remediation sentence, starting with "Fix:".
	Fix string
}

func (e *DriverError) Error() string {
	msg := fmt.Sprintf("%s failed: %s (CUresult %d)", e.Call, e.Name, e.Code)
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	return msg + ". " + e.Fix
}

// Is makes errors.Is(err, ErrUnavailable) true for the "no device" and
// "no driver" codes.
func (e *DriverError) Is(target error) bool {
	return target == ErrUnavailable && (e.Code == cuErrNoDevice || e.Code == cuErrInsufficientDriver || e.Code == cuErrNotInitialized)
}

// CUresult codes the executor treats specially. The values are CUDA's.
const (
	cuErrInvalidValue          = 1
	cuErrOutOfMemory           = 2
	cuErrNotInitialized        = 3
	cuErrNoDevice              = 100
	cuErrInvalidDevice         = 101
	cuErrInvalidImage          = 200
	cuErrInvalidPTX            = 218
	cuErrUnsupportedPTXVersion = 222
	cuErrNotFound              = 500
	cuErrLaunchOutOfResources  = 701
	cuErrLaunchTimeout         = 702
	cuErrCooperativeTooLarge   = 720
	cuErrInsufficientDriver    = 35
	cuErrIllegalAddress        = 700
	cuErrNotSupported          = 801

	cuErrHostMemoryAlreadyRegistered = 712
	cuErrHostMemoryNotRegistered     = 713
)

// cuResultNames maps the CUresult codes the executor is likely to see to
// their names in cuda.h.
var cuResultNames = map[int]string{
	0:                                "CUDA_SUCCESS",
	cuErrInvalidValue:                "CUDA_ERROR_INVALID_VALUE",
	cuErrOutOfMemory:                 "CUDA_ERROR_OUT_OF_MEMORY",
	cuErrNotInitialized:              "CUDA_ERROR_NOT_INITIALIZED",
	4:                                "CUDA_ERROR_DEINITIALIZED",
	cuErrInsufficientDriver:          "CUDA_ERROR_INSUFFICIENT_DRIVER",
	cuErrNoDevice:                    "CUDA_ERROR_NO_DEVICE",
	cuErrInvalidDevice:               "CUDA_ERROR_INVALID_DEVICE",
	cuErrInvalidImage:                "CUDA_ERROR_INVALID_IMAGE",
	201:                              "CUDA_ERROR_INVALID_CONTEXT",
	209:                              "CUDA_ERROR_NO_BINARY_FOR_GPU",
	cuErrInvalidPTX:                  "CUDA_ERROR_INVALID_PTX",
	cuErrUnsupportedPTXVersion:       "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
	400:                              "CUDA_ERROR_INVALID_HANDLE",
	cuErrNotFound:                    "CUDA_ERROR_NOT_FOUND",
	600:                              "CUDA_ERROR_NOT_READY",
	cuErrIllegalAddress:              "CUDA_ERROR_ILLEGAL_ADDRESS",
	cuErrLaunchOutOfResources:        "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
	cuErrLaunchTimeout:               "CUDA_ERROR_LAUNCH_TIMEOUT",
	cuErrCooperativeTooLarge:         "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE",
	cuErrNotSupported:                "CUDA_ERROR_NOT_SUPPORTED",
	cuErrHostMemoryAlreadyRegistered: "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED",
	cuErrHostMemoryNotRegistered:     "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED",
	714:                              "CUDA_ERROR_HARDWARE_STACK_ERROR",
	715:                              "CUDA_ERROR_ILLEGAL_INSTRUCTION",
	716:                              "CUDA_ERROR_MISALIGNED_ADDRESS",
	717:                              "CUDA_ERROR_INVALID_ADDRESS_SPACE",
	718:                              "CUDA_ERROR_INVALID_PC",
	719:                              "CUDA_ERROR_LAUNCH_FAILED",
	999:                              "CUDA_ERROR_UNKNOWN",
}

// CUResultName returns the cuda.h name of a CUresult code, or
// "CUresult(<code>)" for codes it does not know.
func CUResultName(code int) string {
	if n, ok := cuResultNames[code]; ok {
		return n
	}
	return fmt.Sprintf("CUresult(%d)", code)
}

// fixFor returns the remediation sentence for a failed call.
func fixFor(call string, code int) string {
	switch code {
	case cuErrOutOfMemory:
		return "Fix: free resident buffers or lower the working-set size; other processes may hold device memory (check nvidia-smi)."
	case cuErrNoDevice, cuErrInvalidDevice:
		return "Fix: run on a machine with an NVIDIA GPU, check nvidia-smi, and pass an ordinal below the device count."
	case cuErrInsufficientDriver:
		return "Fix: install an NVIDIA driver at least as new as CUDA 11.8."
	case cuErrNotInitialized:
		return "Fix: the driver did not initialise; check nvidia-smi and the driver installation."
	case cuErrInvalidPTX, cuErrInvalidImage, cuErrUnsupportedPTXVersion:
		return "Fix: regenerate the PTX with `make ptx` for a target the driver supports (the PTX ISA version must not exceed the driver's)."
	case cuErrNotFound:
		return "Fix: declare the kernel `extern \"C\" __global__` so its name is not mangled, and check the spelling."
	case cuErrLaunchOutOfResources:
		return "Fix: lower the block size or the dynamic shared memory; the kernel's registers or shared memory do not fit."
	case cuErrCooperativeTooLarge:
		return "Fix: size the grid with CooperativeGrid so every block is co-resident."
	case cuErrIllegalAddress:
		return "Fix: the kernel accessed memory out of bounds; check buffer sizes and offsets (compute-sanitizer helps); the process cannot use the device again (every new context fails the same way): restart it."
	case cuErrLaunchTimeout:
		return "Fix: the kernel ran too long (a watchdog or a deadlock); check grid barriers and co-residency."
	case cuErrNotSupported:
		return "Fix: the device or driver does not support this operation; use the fallback path."
	case cuErrHostMemoryAlreadyRegistered:
		return "Fix: pin each host range once; unpin it (UnpinHostBuffer) before pinning memory that overlaps it."
	case cuErrHostMemoryNotRegistered:
		return "Fix: unpin only memory pinned with PinHostBuffer, passing the same slice."
	}
	if stickyCode(code) {
		return "Fix: a kernel faulted (compute-sanitizer names the access); the process cannot use the device again (every new context fails the same way): restart it."
	}
	return fmt.Sprintf("Fix: check the arguments passed to %s and the device state (nvidia-smi).", call)
}

// newDriverError builds the error for a failed call; code 0 returns nil.
func newDriverError(call string, code int, detail string) error {
	if code == 0 {
		return nil
	}
	return &DriverError{Call: call, Code: code, Name: CUResultName(code), Detail: detail, Fix: fixFor(call, code)}
}

// BudgetError is an allocation refused by the resident budget rule.
type BudgetError struct {
	// Required is the resident total the allocation would reach.
	Required uint64
	// Budget is the live-device resident budget at the time.
	Budget uint64
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("resident allocation would require %d bytes but the live-device resident budget is %d bytes. Fix: free resident buffers or split the working set; the budget is 90%% of total and of free device memory.", e.Required, e.Budget)
}

// InvalidArgumentError is a bad argument to an executor call.
type InvalidArgumentError struct {
	// Field names the offending argument.
	Field string
	Msg   string
	Fix   string
}

func (e *InvalidArgumentError) Error() string {
	return fmt.Sprintf("%s: %s. %s", e.Field, e.Msg, e.Fix)
}

func invalidArg(field, fix, format string, args ...any) error {
	return &InvalidArgumentError{Field: field, Msg: fmt.Sprintf(format, args...), Fix: fix}
}

// InFlightError refuses to free a buffer (or close the executor while a
// buffer is) bound to a pending dispatch or a queued asynchronous upload.
type InFlightError struct {
	Buffer   uint64
	InFlight uint32
}

func (e *InFlightError) Error() string {
	return fmt.Sprintf("CUDA resident buffer handle %d is bound to %d in-flight dispatch(es). Fix: wait for the pending dispatch before freeing it (Pending.Wait; SynchronizeUploads for asynchronous uploads).", e.Buffer, e.InFlight)
}

// errNilKernel is the error for a nil *Kernel argument.
func errNilKernel() error {
	return invalidArg("kernel", "Fix: get a kernel from Module.Kernel.", "is nil")
}

// PendingError is a Close while dispatches or asynchronous uploads are
// still pending: closing then would leave them unfinished and their Wait
// with no driver to ask.
type PendingError struct {
	Dispatches int
	// Uploads is the asynchronous uploads queued since the last
	// SynchronizeUploads.
	Uploads int
}

func (e *PendingError) Error() string {
	return fmt.Sprintf("%d dispatches and %d asynchronous uploads are still pending. Fix: call Wait on every Pending and SynchronizeUploads before Close.", e.Dispatches, e.Uploads)
}

// UnknownBufferError is a handle that was never allocated or is already
// freed (vyre: "is not owned by this backend"). Op, Offset and Len name the
// operation that used it.
type UnknownBufferError struct {
	Buffer uint64
	// Op is the operation ("upload", "ranged batch download", "kernel
	// argument", "free", ...); empty when unknown.
	Op string
	// Offset and Len are the range the operation asked for.
	Offset, Len uint64
}

func (e *UnknownBufferError) Error() string {
	use := ""
	if e.Op != "" {
		use = fmt.Sprintf(" (%s of %d bytes at offset %d)", e.Op, e.Len, e.Offset)
	}
	return fmt.Sprintf("CUDA resident buffer handle %d is not owned by this backend: unknown or already freed%s. Fix: use a handle returned by Alloc that has not been freed.", e.Buffer, use)
}

// CoResidencyError refuses a cooperative or persistent grid whose blocks
// cannot all be resident at once; such a grid would deadlock at its first
// grid barrier, so it is never launched.
type CoResidencyError struct {
	Kernel       string
	GridBlocks   uint64
	BlocksPerSM  int
	SMCount      int
	Limit        uint64
	BlockThreads int
	DynamicSmem  int
}

func (e *CoResidencyError) Error() string {
	return fmt.Sprintf("kernel %s: a grid of %d blocks cannot be co-resident (at %d threads and %d B dynamic shared memory per block, %d blocks/SM x %d SMs = %d). Fix: use at most %d blocks (CooperativeGrid sizes it), or lower the block's registers or shared memory.",
		e.Kernel, e.GridBlocks, e.BlockThreads, e.DynamicSmem, e.BlocksPerSM, e.SMCount, e.Limit, e.Limit)
}

// ClosedError is a call on a closed executor.
var ErrClosed = errors.New("executor is closed. Fix: open a new executor")

// ContextLost reports whether err is a driver error that leaves the
// context unusable (a sticky fault: an illegal address, a hardware stack
// error, an illegal or misaligned instruction or address, an invalid PC, or
// a failed launch). Every later call in the context fails the same way;
// Close still frees the executor and resets the device's primary context,
// so that the next Open starts on a fresh one.
func ContextLost(err error) bool {
	var de *DriverError
	return errors.As(err, &de) && stickyCode(de.Code)
}

// stickyCode is the CUresult codes of ContextLost.
func stickyCode(code int) bool { return code == 700 || (code >= 714 && code <= 719) }
