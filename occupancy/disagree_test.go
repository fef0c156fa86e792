package occupancy

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The documented disagreements between vyre's estimate and the exact model.
func TestEstimateAndExactDisagree(t *testing.T) {
	h100 := mustLookup(t, "h100-sxm")
	// Register granularity: 100 registers at 128 threads.
	e := EstimateOccupancy(h100, KernelResourceUsage{RegsPerThread: 100}, 128)
	r, err := Compute(h100, Kernel{RegistersPerThread: 100}, 128)
	require.NoError(t, err)
	assert.Equal(t, uint32(5), e.BlocksPerSM)
	assert.Equal(t, 4, r.ActiveBlocksPerSM)
	assert.Equal(t, LimitRegisters, r.Limit)

	// Block cap: 32-thread blocks on vyre's RTX 5090.
	bw := Blackwell5090Default()
	e = EstimateOccupancy(bw, KernelResourceUsage{RegsPerThread: 16}, 32)
	r, err = Compute(bw, Kernel{RegistersPerThread: 16}, 32)
	require.NoError(t, err)
	assert.Equal(t, OccupancyEstimate{BlocksPerSM: 64, WarpsPerSM: 64, OccupancyBPS: 10000}, e)
	assert.Equal(t, 24, r.ActiveBlocksPerSM)
	assert.Equal(t, LimitBlocks, r.Limit)

	// Cooperative residency: vyre ignores registers.
	assert.Equal(t, uint64(1360), CooperativeThreadResidencyBlockLimit(bw, 256))
	g, err := CoResidentGrid(bw, Kernel{RegistersPerThread: 255}, 256)
	require.NoError(t, err)
	assert.Equal(t, 170, g)
}
