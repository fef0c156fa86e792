// Package gputest opens a GPU for the GPU tests of the packages that run on
// one, with one rule for a machine without a GPU: the test is skipped,
// unless GPUPLAN_REQUIRE_GPU is set (every run on a GPU machine sets it,
// see scripts/gpu-check.sh), which makes a missing GPU a failure, so a GPU
// test binary can never report PASS without having run.
package gputest

import (
	"os"
	"testing"

	"github.com/gpuplan/gpuplan/executor"
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
