package kronbuild

import (
	"testing"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/internal/gputest"
)

// newFakeExecutor opens an executor over the emulated kronbuild kernels on
// an H100 profile with mem bytes of device memory.
func newFakeExecutor(t testing.TB, mem int64, seed uint64) (*executor.Executor, *executor.Fake) {
	t.Helper()
	return gputest.OpenFake(t, "h100", mem, seed, NewFake)
}
