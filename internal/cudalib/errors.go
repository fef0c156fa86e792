package cudalib

import "fmt"

// DefaultLibrary is the driver library opened when EnvVar is unset.
const DefaultLibrary = "libcuda.so.1"

// EnvVar names the environment variable that overrides the driver library
// opened at run time: a file name the dynamic loader searches for, or a
// path.
const EnvVar = "GPUPLAN_LIBCUDA"

// LoadFailure says why the driver library could not be opened at run time.
type LoadFailure struct {
	// Library is the name or path that was opened.
	Library string
	// FromEnv is true when Library came from EnvVar.
	FromEnv bool
	// Reason is the dynamic loader's message (dlerror).
	Reason string
}

// Error is one sentence naming the library, the loader's message and the
// fix.
func (e *LoadFailure) Error() string {
	lib := e.Library
	if e.FromEnv {
		lib = fmt.Sprintf("%s (set by %s)", e.Library, EnvVar)
	}
	return fmt.Sprintf("the NVIDIA driver library %s could not be loaded (%s), so no GPU can be used. "+
		"Fix: install the NVIDIA driver, or set %s to the path of %s; planning commands work without it",
		lib, e.Reason, EnvVar, DefaultLibrary)
}

// DriverError is a driver call that returned an error code.
type DriverError struct {
	// Call is the driver function, for example cuDeviceGetPCIBusId.
	Call string
	// Ordinal is the device the call was about; -1 when none.
	Ordinal int
	// Code is the CUresult and Name its name (CUDA_ERROR_...), when the
	// driver knows it.
	Code int
	Name string
}

// Error names the call, the device and the error code.
func (e *DriverError) Error() string {
	name := e.Name
	if name == "" {
		name = "unknown error"
	}
	if e.Ordinal < 0 {
		return fmt.Sprintf("%s: %s (CUresult %d)", e.Call, name, e.Code)
	}
	return fmt.Sprintf("%s(device %d): %s (CUresult %d)", e.Call, e.Ordinal, name, e.Code)
}
