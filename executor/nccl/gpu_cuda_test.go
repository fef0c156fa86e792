//go:build cuda

package nccl

import (
	"errors"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/executor"
)

// openGPUs opens n devices, or skips (fails under GPUPLAN_REQUIRE_GPU when
// not even one GPU opens).
func openGPUs(t *testing.T, n int) []*executor.Executor {
	t.Helper()
	count, err := executor.DeviceCount()
	if err != nil || count == 0 {
		if os.Getenv("GPUPLAN_REQUIRE_GPU") != "" {
			t.Fatalf("GPUPLAN_REQUIRE_GPU is set but no GPU opened: %v", err)
		}
		t.Skip("no GPU")
	}
	if count < n {
		t.Skipf("%d GPUs present, the test needs %d", count, n)
	}
	xs := make([]*executor.Executor, n)
	for i := range xs {
		x, err := executor.Open(i, executor.Options{})
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, x.Close()) })
		xs[i] = x
	}
	return xs
}

// openComm opens NCCL over xs, or skips when NCCL is not installed
// (unless GPUPLAN_REQUIRE_NCCL is set).
func openComm(t *testing.T, xs []*executor.Executor) *Comm {
	t.Helper()
	c, err := Open(xs, Options{})
	if errors.Is(err, ErrUnavailable) && os.Getenv("GPUPLAN_REQUIRE_NCCL") == "" {
		t.Skip(err.Error())
	}
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.Close()) })
	t.Logf("NCCL %s over %d ranks", c.Version(), c.Ranks())
	return c
}

// TestGPUNCCLOneRank runs the binding on one GPU: a one-rank communicator
// still loads NCCL, stages through the primary context and copies.
func TestGPUNCCLOneRank(t *testing.T) {
	xs := openGPUs(t, 1)
	checkCollectives(t, xs, openComm(t, xs))
}

// TestGPUNCCLAllRanks runs the collectives over every GPU present (two or
// more).
func TestGPUNCCLAllRanks(t *testing.T) {
	n, err := executor.DeviceCount()
	if err != nil || n < 2 {
		t.Skip("needs two or more GPUs")
	}
	xs := openGPUs(t, n)
	checkCollectives(t, xs, openComm(t, xs))
}

// TestGPUFakeMatchesOnTheGPU runs the host-staged fake over real
// executors: the same checks hold.
func TestGPUFakeMatchesOnTheGPU(t *testing.T) {
	xs := openGPUs(t, 1)
	c, err := NewFake(xs)
	require.NoError(t, err)
	checkCollectives(t, xs, c)
}

// newUniqueID returns an NCCL unique id, or skips when NCCL is not
// installed (unless GPUPLAN_REQUIRE_NCCL is set).
func newUniqueID(t *testing.T) UniqueID {
	t.Helper()
	id, err := NewUniqueID(Options{})
	if errors.Is(err, ErrUnavailable) && os.Getenv("GPUPLAN_REQUIRE_NCCL") == "" {
		t.Skip(err.Error())
	}
	require.NoError(t, err)
	return id
}

// rankOpener opens ranks with OpenRank.
func rankOpener(opts Options) opener {
	return func(x *executor.Executor, id UniqueID, rank, ranks int) (RankCollectives, error) {
		return OpenRank(x, id, rank, ranks, opts)
	}
}

// TestGPURankCommOneRank runs the communicator of one local rank on one
// GPU, as a world of one process.
func TestGPURankCommOneRank(t *testing.T) {
	xs := openGPUs(t, 1)
	checkRankCollectives(t, xs, newUniqueID(t), rankOpener(Options{}))
}

// TestGPURankCommAllRanks runs one rank per GPU present (two or more),
// each rank on its own goroutine, all with one unique id.
func TestGPURankCommAllRanks(t *testing.T) {
	n, err := executor.DeviceCount()
	if err != nil || n < 2 {
		t.Skip("needs two or more GPUs")
	}
	xs := openGPUs(t, n)
	checkRankCollectives(t, xs, newUniqueID(t), rankOpener(Options{}))
}

// TestGPURankCommInitTimesOut opens rank 0 of two, and rank 1 never
// comes: with a non-blocking NCCL (2.14 and later), OpenRank aborts at
// its timeout.
func TestGPURankCommInitTimesOut(t *testing.T) {
	xs := openGPUs(t, 1)
	id := newUniqueID(t)
	if !nonblockingInit() {
		t.Skip("the loaded NCCL has no ncclCommInitRankConfig (before 2.14): its creation blocks without a timeout")
	}
	t0 := time.Now()
	_, err := OpenRank(xs[0], id, 0, 2, Options{InitTimeout: 2 * time.Second})
	var te *TimeoutError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, "ncclCommInitRank", te.Op)
	assert.Less(t, time.Since(t0), 30*time.Second)
}
