package cudalib

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestLoadFailureMessage(t *testing.T) {
	tests := []struct {
		name string
		err  LoadFailure
		want []string
	}{
		{"default library", LoadFailure{Library: "libcuda.so.1", Reason: "libcuda.so.1: cannot open shared object file: No such file or directory"},
			[]string{"the NVIDIA driver library libcuda.so.1 could not be loaded (libcuda.so.1: cannot open shared object file: No such file or directory)",
				"Fix: install the NVIDIA driver, or set GPUPLAN_LIBCUDA to the path of libcuda.so.1", "planning commands work without it"}},
		{"from the environment", LoadFailure{Library: "/opt/nv/libcuda.so.1", FromEnv: true, Reason: "/opt/nv/libcuda.so.1: cannot open shared object file"},
			[]string{"library /opt/nv/libcuda.so.1 (set by GPUPLAN_LIBCUDA) could not be loaded", "Fix:"}},
		{"not the driver", LoadFailure{Library: "libm.so.6", FromEnv: true, Reason: "it defines no cuInit, so it is not the CUDA driver library"},
			[]string{"(it defines no cuInit, so it is not the CUDA driver library)"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			msg := tc.err.Error()
			for _, w := range tc.want {
				assert.Contains(t, msg, w)
			}
			assert.Equal(t, 1, strings.Count(msg, "Fix:"), msg)
			assert.NotContains(t, msg, "\n")
		})
	}
}

func TestDriverErrorMessage(t *testing.T) {
	tests := []struct {
		name string
		err  DriverError
		want string
	}{
		{"device call", DriverError{Call: "cuDeviceGetPCIBusId", Ordinal: 3, Code: 101, Name: "CUDA_ERROR_INVALID_DEVICE"},
			"cuDeviceGetPCIBusId(device 3): CUDA_ERROR_INVALID_DEVICE (CUresult 101)"},
		{"no device", DriverError{Call: "cuDriverGetVersion", Ordinal: -1, Code: 3, Name: "CUDA_ERROR_NOT_INITIALIZED"},
			"cuDriverGetVersion: CUDA_ERROR_NOT_INITIALIZED (CUresult 3)"},
		{"unnamed code", DriverError{Call: "cuDeviceGetUuid", Ordinal: 0, Code: 3}, "cuDeviceGetUuid(device 0): unknown error (CUresult 3)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.err.Error())
		})
	}
}
