//go:build cuda

package bfs

import (
	"os"
	"testing"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/frontier"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// openGPU opens device 0. Without a GPU the test is skipped, unless
// GPUPLAN_REQUIRE_GPU is set (every run on a GPU machine sets it), which
// makes a missing GPU a failure.
func openGPU(t *testing.T) *executor.Executor {
	t.Helper()
	x, err := executor.Open(0, executor.Options{})
	if err != nil {
		if os.Getenv("GPUPLAN_REQUIRE_GPU") != "" {
			t.Fatalf("GPUPLAN_REQUIRE_GPU is set but no GPU opened: %v", err)
		}
		t.Skip(err.Error())
	}
	t.Cleanup(func() { require.NoError(t, x.Close()) })
	return x
}

// TestGPUArms runs every BFS arm from several roots on one graph of each
// generator (and a star, whose hub splits into many queue items) and checks
// that the levels equal the CPU reference and that the device counted the
// reference's levels. Small chunks exercise the item splitting; a check
// interval of 3 makes the device loop overshoot the last level. Larger
// graphs pass a megakernel block's keep budget, so items spill to the
// global queue and come back.
func TestGPUArms(t *testing.T) {
	x := openGPU(t)
	var graphs []*frontier.CSR
	for _, build := range []func() (*frontier.CSR, error){
		func() (*frontier.CSR, error) { return frontier.Kronecker(12, 16, 7) },
		func() (*frontier.CSR, error) { return frontier.Grid(40) },
		func() (*frontier.CSR, error) { return frontier.Road(50, 3) },
		func() (*frontier.CSR, error) { return frontier.Grid(300) },
		func() (*frontier.CSR, error) { return frontier.Kronecker(16, 16, 9) },
	} {
		g, err := build()
		require.NoError(t, err)
		graphs = append(graphs, g)
	}
	graphs = append(graphs, star(t, 5000))
	configs := []Config{{CheckEvery: 3}, {Chunk: 5, CheckEvery: 3, MegakernelAhead: 1},
		{CheckEvery: 3, MegakernelBlocksPerSM: 2, MegakernelAhead: 64}, {MegakernelAhead: 1}}
	checkArms(t, x, graphs, configs)
	checkOverflowAndRefusals(t, x, graphs[3])
}

// TestGPUSessionPlan runs a resident session batch per arm on the GPU and
// checks that the session plan's predictions equal the telemetry, and that
// the plans' memory is what the session holds.
func TestGPUSessionPlan(t *testing.T) {
	x := openGPU(t)
	g, err := frontier.Grid(200)
	require.NoError(t, err)
	checkSessionPlans(t, x, g)
}

// TestGPUPlanRefusesOversize checks that a graph over the memory budget is
// refused by the memory plan before anything is allocated.
func TestGPUPlanRefusesOversize(t *testing.T) {
	x := openGPU(t)
	checkOversizeRefused(t, x)
	assert.Zero(t, x.ResidentBytes())
}
