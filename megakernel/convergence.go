package megakernel

import "fmt"

// ChangedFlagBytes is the width of the device's "changed" flag: a u32.
const ChangedFlagBytes = 4

// ReadbackPolicy says what the host reads back during a device-side
// fixed-point loop. FinalFlagOnly is the only policy.
type ReadbackPolicy int

// FinalFlagOnly: the host reads the 4-byte changed flag once, after the
// device has finished iterating.
const FinalFlagOnly ReadbackPolicy = 0

// String returns the name of the value.
func (p ReadbackPolicy) String() string {
	if p == FinalFlagOnly {
		return "FinalFlagOnly"
	}
	return fmt.Sprintf("ReadbackPolicy(%d)", int(p))
}

// MarshalText renders the policy name.
func (p ReadbackPolicy) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// ConvergencePlan is a device-side fixed-point loop checked once, at the
// end (vyre's DeviceConvergencePlan). The GPU executor iterates on the
// device up to MaxDeviceIterations times and synchronises with the host
// exactly once to read the changed flag.
type ConvergencePlan struct {
	MaxDeviceIterations      uint32         `json:"max_device_iterations"`
	HostSyncPoints           uint32         `json:"host_sync_points"`
	ChangedFlagReadbackBytes uint32         `json:"changed_flag_readback_bytes"`
	HostIterationPolls       uint32         `json:"host_iteration_polls"`
	ReadbackPolicy           ReadbackPolicy `json:"readback_policy"`
}

// EmptyIterationBudgetError reports max_device_iterations == 0.
type EmptyIterationBudgetError struct{}

// Error describes the failure and ends with a "Fix:" sentence.
func (e *EmptyIterationBudgetError) Error() string {
	return "max_device_iterations is 0: the device loop could never run. Fix: allow at least one device iteration"
}

// InvalidChangedFlagWidthError reports a changed flag that is not 4 bytes.
type InvalidChangedFlagWidthError struct{ Bytes uint32 }

// Error describes the failure and ends with a "Fix:" sentence.
func (e *InvalidChangedFlagWidthError) Error() string {
	return fmt.Sprintf("changed_flag_bytes is %d but the changed flag must be a u32. Fix: use a 4-byte changed flag", e.Bytes)
}

// HostPolledConvergenceError reports a request for per-iteration host polls.
type HostPolledConvergenceError struct{ Polls uint32 }

// Error describes the failure and ends with a "Fix:" sentence.
func (e *HostPolledConvergenceError) Error() string {
	return fmt.Sprintf("host_iteration_polls is %d but the host may never poll per iteration. Fix: request 0 polls and read the changed flag once after the device loop", e.Polls)
}

// PlanDeviceConvergence plans a device-side fixed-point loop (vyre's
// plan_cuda_device_convergence). Errors, in order:
// *EmptyIterationBudgetError, *InvalidChangedFlagWidthError,
// *HostPolledConvergenceError.
func PlanDeviceConvergence(maxDeviceIterations, changedFlagBytes, requestedHostIterationPolls uint32) (ConvergencePlan, error) {
	if maxDeviceIterations == 0 {
		return ConvergencePlan{}, &EmptyIterationBudgetError{}
	}
	if changedFlagBytes != ChangedFlagBytes {
		return ConvergencePlan{}, &InvalidChangedFlagWidthError{Bytes: changedFlagBytes}
	}
	if requestedHostIterationPolls != 0 {
		return ConvergencePlan{}, &HostPolledConvergenceError{Polls: requestedHostIterationPolls}
	}
	return ConvergencePlan{MaxDeviceIterations: maxDeviceIterations, HostSyncPoints: 1,
		ChangedFlagReadbackBytes: ChangedFlagBytes, HostIterationPolls: 0, ReadbackPolicy: FinalFlagOnly}, nil
}
