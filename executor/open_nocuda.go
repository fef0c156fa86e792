//go:build !cuda

package executor

// CUDAEnabled reports whether this binary was built with -tags cuda.
const CUDAEnabled = false

// Open opens CUDA device ordinal. This binary was built without -tags cuda,
// so it always returns an *UnavailableError (errors.Is(err, ErrUnavailable)).
func Open(ordinal int, opts Options) (*Executor, error) {
	return nil, &UnavailableError{Reason: "gpuplan was built without CUDA support, so no GPU can be opened; rebuild with `make build-cuda` (go build -tags cuda) on a machine with the NVIDIA driver."}
}

// DeviceCount returns the number of CUDA devices; without -tags cuda it is
// always an *UnavailableError.
func DeviceCount() (int, error) {
	_, err := Open(0, Options{})
	return 0, err
}

// DriverVersion returns the CUDA driver API version; a build without CUDA
// has none and returns "".
func DriverVersion() string { return "" }
