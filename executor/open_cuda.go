//go:build cuda

package executor

import (
	"fmt"

	"gorgonia.org/cu"
)

// CUDAEnabled reports whether this binary was built with -tags cuda.
const CUDAEnabled = true

// Open opens CUDA device ordinal. vyre's JIT cache rules were applied to
// the process environment (ConfigureJITCacheDefault) just before the driver
// initialised, during gorgonia.org/cu's package init; Open returns their
// error if they failed. It checks that the driver
// initialised (a missing GPU or driver is an *UnavailableError with one
// clear sentence), retains the device's primary context on a dedicated
// driver thread (the context the CUDA runtime and NCCL use), probes
// the capabilities and the PTX target, and returns the Executor.
func Open(ordinal int, opts Options) (*Executor, error) {
	if err := unavailableFromInit(initStatus()); err != nil {
		return nil, err
	}
	if _, err := JITCacheStatus(); err != nil {
		return nil, err
	}
	b, err := openCUDABackend(ordinal, opts.DriverPoll, opts.CallerSpin, opts.PrivateContext)
	if err != nil {
		return nil, err
	}
	x, err := New(b, opts)
	if err != nil {
		_ = b.Close()
		return nil, err
	}
	return x, nil
}

// DeviceCount returns the number of CUDA devices, or an *UnavailableError
// when the driver did not initialise.
func DeviceCount() (int, error) {
	if err := unavailableFromInit(initStatus()); err != nil {
		return 0, err
	}
	n, err := cu.NumDevices()
	return n, cuErr("cuDeviceGetCount", err, "")
}

// DriverVersion returns the CUDA driver API version as "cuda-MAJOR.MINOR"
// (cuDriverGetVersion).
func DriverVersion() string {
	v := cu.Version()
	return fmt.Sprintf("cuda-%d.%d", v/1000, (v%1000)/10)
}
