//go:build cuda && !cudalib_direct

package cudalib

import (
	"errors"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// childEnv marks a run of this test binary started by TestLoadFailureAtStart.
const childEnv = "GPUPLAN_CUDALIB_TEST_CHILD"

func TestTrampolinesCoverTheDriverCalls(t *testing.T) {
	assert.True(t, Lazy)
	fns := Functions()
	assert.NotContains(t, fns, "cuInit", "the executor's shim defines cuInit")
	for _, f := range []string{"cuDriverGetVersion", "cuDeviceGetUuid", "cuDeviceGetPCIBusId", "cuGetErrorName", "cuLaunchKernel", "cuMemAlloc_v2"} {
		assert.Contains(t, fns, f)
	}
}

// With the driver library installed, it is opened at start, and the queries
// that need no initialised driver answer through the trampolines.
func TestLoadsTheInstalledDriver(t *testing.T) {
	if os.Getenv(EnvVar) == "" {
		assert.Equal(t, DefaultLibrary, Library())
	}
	if err := LoadError(); err != nil {
		t.Skipf("no NVIDIA driver library here: %v", err)
	}
	assert.Empty(t, MissingFunctions(), "the installed driver defines every function the build calls")
	v, err := DriverVersion()
	require.NoError(t, err)
	assert.GreaterOrEqual(t, v, 11080, "the build needs a driver for CUDA 11.8 or later")
}

// A library that cannot be opened leaves every trampoline returning
// CUDA_ERROR_NOT_INITIALIZED and LoadError saying why. The constructor runs
// at start, so the check runs in a child process with GPUPLAN_LIBCUDA set.
func TestLoadFailureAtStart(t *testing.T) {
	if os.Getenv(childEnv) == "1" {
		checkLoadFailure(t)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestLoadFailureAtStart$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"=1", EnvVar+"=/nonexistent/libcuda.so.1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "PASS")
}

func checkLoadFailure(t *testing.T) {
	err := LoadError()
	var lf *LoadFailure
	require.True(t, errors.As(err, &lf), "%v", err)
	assert.Equal(t, "/nonexistent/libcuda.so.1", lf.Library)
	assert.True(t, lf.FromEnv)
	assert.Contains(t, lf.Reason, "/nonexistent/libcuda.so.1")
	assert.Nil(t, MissingFunctions())
	_, err = DriverVersion()
	var de *DriverError
	require.True(t, errors.As(err, &de), "%v", err)
	assert.Equal(t, 3, de.Code, "an unloaded trampoline returns CUDA_ERROR_NOT_INITIALIZED")
	_, err = DevicePCIBusID(0)
	require.True(t, errors.As(err, &de), "%v", err)
	assert.Equal(t, 3, de.Code)
}
