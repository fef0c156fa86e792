// Package gputest opens the executors of the workload packages' tests: a
// GPU, with one rule for a machine without a GPU: the test is skipped,
// unless GPUPLAN_REQUIRE_GPU is set (every run on a GPU machine sets it,
// see scripts/gpu-check.sh), which makes a missing GPU a failure, so a GPU
// test binary can never report PASS without having run; or the fake
// backend with a workload's kernels emulated.
package gputest

import (
	"os"
	"testing"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/occupancy"
	"github.com/stretchr/testify/require"
)

// RequireEnv is the environment variable that turns a missing GPU from a
// skip into a failure.
const RequireEnv = "GPUPLAN_REQUIRE_GPU"

// Open opens CUDA device 0 for t and closes it when t ends (a close error
// fails t). Without a GPU it skips t, or fails it when RequireEnv is set.
func Open(t *testing.T) *executor.Executor {
	t.Helper()
	x, err := executor.Open(0, executor.Options{})
	if err != nil {
		Unavailable(t, err)
	}
	t.Cleanup(func() {
		if err := x.Close(); err != nil {
			t.Errorf("closing the executor: %v", err)
		}
	})
	return x
}

// Unavailable skips t because no GPU could be used (err says why), or
// fails it when RequireEnv is set.
func Unavailable(t *testing.T, err error) {
	t.Helper()
	if os.Getenv(RequireEnv) != "" {
		t.Fatalf("%s is set but no GPU is usable: %v", RequireEnv, err)
	}
	t.Skip(err.Error())
}

// OpenFake opens an executor over the fake backend newFake builds (a
// workload's NewFake) for the named device profile with mem bytes of
// device memory and the emulation's seed, and closes it when t ends.
func OpenFake(t testing.TB, profile string, mem int64, seed uint64, newFake func(occupancy.Device, uint64) *executor.Fake) (*executor.Executor, *executor.Fake) {
	t.Helper()
	dev, err := occupancy.Lookup(profile)
	require.NoError(t, err)
	dev.TotalMemoryBytes = mem
	f := newFake(dev, seed)
	x, err := executor.New(f, executor.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = x.Close() })
	return x, f
}
