//go:build cuda

package partbfs

import (
	"errors"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/executor/nccl"
	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/internal/gputest"
	"github.com/gpuplan/gpuplan/partition"
)

// gpuGraphs are larger than the fake tests' graphs: several blocks of
// every kernel's grid, hubs, long thin levels and empty parts.
func gpuGraphs(t *testing.T) []*frontier.CSR {
	return buildGraphs(t, testGraphs(t),
		func() (*frontier.CSR, error) { return frontier.Kronecker(15, 16, 5) },
		func() (*frontier.CSR, error) { return frontier.Grid(150) },
		func() (*frontier.CSR, error) { return frontier.RandomGeometric(40000, 12, 6) })
}

// TestGPUSimulatedPartitions runs P = 1..4 parts on the one GPU, each
// with its own buffers and kernels on their own streams, exchanging with
// the copy kernel: the levels equal the CPU reference, the decisions the
// direction-optimizing BFS's, and every step's exchange the planner's
// prediction. Nothing stays allocated.
func TestGPUSimulatedPartitions(t *testing.T) {
	x := gputest.Open(t)
	for _, p := range []int{1, 2, 3, 4} {
		devs, err := SimulatedDevices(x, p, executor.DriverVersion(), false)
		require.NoError(t, err)
		for gi, g := range gpuGraphs(t) {
			checkSession(t, devs, g, Config{Strategy: partition.Strategy(1 + (p+gi)%2)}, 3, uint64(p))
		}
		require.NoError(t, devs.Close())
	}
	assert.Zero(t, x.ResidentBytes())
}

// TestGPUBothDirectionsAndForms forces every level bottom-up, then every
// level top-down, on the GPU.
func TestGPUBothDirectionsAndForms(t *testing.T) {
	x := gputest.Open(t)
	g, err := frontier.Kronecker(14, 16, 9)
	require.NoError(t, err)
	devs, err := SimulatedDevices(x, 3, "", false)
	require.NoError(t, err)
	defer devs.Close()
	roots, err := frontier.Roots(g, 3, 5)
	require.NoError(t, err)
	eachForcedRun(t, func() *Devices { return devs }, g, roots, func(Run) {})
}

// TestGPUDeviceCopyExchange checks the simulation's collectives byte for
// byte on the GPU.
func TestGPUDeviceCopyExchange(t *testing.T) {
	checkDeviceCopy(t, gputest.Open(t))
}

// TestGPUTooFewDevices asks for one device more than the machine has.
func TestGPUTooFewDevices(t *testing.T) {
	gputest.Open(t)
	n, err := executor.DeviceCount()
	require.NoError(t, err)
	_, err = DefaultOpener().OpenDevices(n + 1)
	var tf *TooFewDevicesError
	require.ErrorAs(t, err, &tf)
	assert.Equal(t, TooFewDevicesError{Asked: n + 1, Present: n}, *tf)
}

// TestGPUMultiDevice runs the partitioned BFS over NCCL on 2 devices and on
// every device present (up to 4). It needs two GPUs and NCCL; without
// NCCL it is skipped unless GPUPLAN_REQUIRE_NCCL is set.
func TestGPUMultiDevice(t *testing.T) {
	gputest.Open(t)
	n, err := executor.DeviceCount()
	require.NoError(t, err)
	if n < 2 {
		t.Skipf("%d GPU present; the multi-device test needs 2 or more", n)
	}
	for _, p := range []int{2, min(n, 4)} {
		devs, err := DefaultOpener().OpenDevices(p)
		if errors.Is(err, nccl.ErrUnavailable) && os.Getenv("GPUPLAN_REQUIRE_NCCL") == "" {
			t.Skip(err.Error())
		}
		require.NoError(t, err)
		for _, g := range gpuGraphs(t) {
			checkSession(t, devs, g, Config{}, 3, uint64(p))
		}
		require.NoError(t, devs.Close())
	}
}

// TestGPURankSessionsOneDevice runs P ranks (goroutines on the fake
// communicator, which exchanges through host copies) on the one GPU, each
// with its own part, kernels and buffers: the levels gathered on rank 0,
// every step and every step's bytes summed over the ranks equal the
// one-process session's (simulated on the same GPU) and the prediction.
func TestGPURankSessionsOneDevice(t *testing.T) {
	x := gputest.Open(t)
	for _, p := range []int{2, 3} {
		for gi, g := range gpuGraphs(t) {
			cfg := Config{Strategy: partition.Strategy(1 + (p+gi)%2), MaxResidentBytes: rankBudget}
			roots := rankRoots(t, g, uint64(p))
			xs := make([]*executor.Executor, p)
			for i := range xs {
				xs[i] = x
			}
			plans, runs := runRanksOf(t, xs, fakeRanks(nccl.Options{}), nccl.NewFakeUniqueID(), g, cfg, roots)
			devs, err := SimulatedDevices(x, p, "", false)
			require.NoError(t, err)
			checkRanksAgainstSession(t, devs, g, cfg, roots, plans, runs)
			require.NoError(t, devs.Close())
		}
	}
	assert.Zero(t, x.ResidentBytes())
}

// TestGPURankSessionsOverNCCL runs one rank per GPU present (two to
// four), each a goroutine with its own executor and NCCL communicator
// (nccl.OpenRank), against the one-process session simulated on the first
// GPU. It needs two GPUs and NCCL; without NCCL it is skipped unless
// GPUPLAN_REQUIRE_NCCL is set.
func TestGPURankSessionsOverNCCL(t *testing.T) {
	gputest.Open(t)
	n, err := executor.DeviceCount()
	require.NoError(t, err)
	if n < 2 {
		t.Skipf("%d GPU present; the rank test over NCCL needs 2 or more", n)
	}
	p := min(n, 4)
	xs := make([]*executor.Executor, p)
	for i := range xs {
		xs[i], err = executor.Open(i, executor.Options{})
		require.NoError(t, err)
		defer xs[i].Close()
	}
	open := func(x *executor.Executor, id nccl.UniqueID, rank, ranks int) (nccl.RankCollectives, error) {
		c, err := nccl.OpenRank(x, id, rank, ranks, nccl.Options{})
		if err != nil {
			return nil, err
		}
		return c, nil
	}
	for gi, g := range gpuGraphs(t) {
		id, err := nccl.NewUniqueID(nccl.Options{})
		if errors.Is(err, nccl.ErrUnavailable) && os.Getenv("GPUPLAN_REQUIRE_NCCL") == "" {
			t.Skip(err.Error())
		}
		require.NoError(t, err)
		cfg := Config{Strategy: partition.Strategy(1 + gi%2), MaxResidentBytes: rankBudget}
		roots := rankRoots(t, g, uint64(gi))
		plans, runs := runRanksOf(t, xs, open, id, g, cfg, roots)
		devs, err := SimulatedDevices(xs[0], p, "", false)
		require.NoError(t, err)
		checkRanksAgainstSession(t, devs, g, cfg, roots, plans, runs)
		require.NoError(t, devs.Close())
	}
}
