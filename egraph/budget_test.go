package egraph

import (
	"testing"

	"github.com/gpuplan/gpuplan/internal/memcheck"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// identicalLeaves is n identical leaf rows in distinct e-classes: one
// bucket of n(n-1)/2 candidate pairs.
func identicalLeaves(n int) *Snapshot {
	s := &Snapshot{OpArities: []uint32{0}, Rows: make([]Row, n)}
	for i := range s.Rows {
		s.Rows[i] = Row{EclassID: uint32(i)}
	}
	return s
}

func TestCheckPairBudget(t *testing.T) {
	// The repro: 10,000 identical leaf rows make 49,995,000 pairs.
	var bp SignatureBucketPlan
	var err error
	alloc := memcheck.Allocated(func() { _, bp = bucketsFor(t, identicalLeaves(10000), DefaultLaunchConfig()) })
	assert.Less(t, alloc, uint64(8<<20), "planning the buckets stays linear in the rows")
	require.Equal(t, uint64(49_995_000), bp.CandidatePairCount)
	err = bp.CheckPairBudget(DefaultCandidatePairBudgetBytes)
	var be *CandidatePairBudgetError
	require.ErrorAs(t, err, &be)
	assert.Equal(t, CandidatePairBudgetError{Pairs: 49_995_000, Buckets: 1, LargestRows: 10000, NeedBytes: 399_960_000, BudgetBytes: DefaultCandidatePairBudgetBytes}, *be)
	assert.Contains(t, err.Error(), "49995000 candidate pairs")
	assert.Contains(t, err.Error(), "Fix: raise memory_budget_bytes")

	// The bound is inclusive: exactly the pairs' bytes fit.
	require.NoError(t, bp.CheckPairBudget(399_960_000))
	require.Error(t, bp.CheckPairBudget(399_959_999))

	// An overflowing need is over any budget.
	huge := SignatureBucketPlan{CandidatePairCount: 1 << 62, Buckets: []SignatureBucket{{RowCount: 7}}}
	require.ErrorAs(t, huge.CheckPairBudget(1<<63), &be)
	assert.Equal(t, ^uint64(0), be.NeedBytes)
}

func TestTinyLaunchConfigIsRefusedBeforeAllocating(t *testing.T) {
	tiny := LaunchConfig{ThreadsPerBlock: 1, MaxBlocksPerLaunch: 1}
	s := identicalLeaves(MaxWavesPerPlan + 1)
	img, err := PackDeviceImage(s)
	require.NoError(t, err)
	up, err := PlanDeviceUploadFromImage(img)
	require.NoError(t, err)
	view, err := NewKernelView(0, up)
	require.NoError(t, err)
	_, err = PlanKernelWork(view, tiny)
	var we *TooManyWavesError
	require.ErrorAs(t, err, &we)
	assert.Equal(t, PassRowScan, we.Pass)
	assert.Equal(t, uint64(MaxWavesPerPlan+1), we.Waves)
	assert.Contains(t, err.Error(), "Fix: raise launch.threads_per_block")

	// Under 1 x 1 every pair is a wave: 100 identical leaves make 4,950,
	// within the limit; 400 make 79,800, above it.
	_, bp := bucketsFor(t, identicalLeaves(100), tiny)
	assert.Len(t, bp.PairWaves, 4950)
	img, err = PackDeviceImage(identicalLeaves(400))
	require.NoError(t, err)
	up, err = PlanDeviceUploadFromImage(img)
	require.NoError(t, err)
	view, err = NewKernelView(0, up)
	require.NoError(t, err)
	_, err = PlanSignatureBuckets(img, view, tiny)
	require.ErrorAs(t, err, &we)
	assert.Equal(t, PassSignaturePairs, we.Pass)

	pairs := make([]EclassPair, MaxWavesPerPlan+1)
	for i := range pairs {
		pairs[i] = EclassPair{A: 0, B: uint32(i + 1)}
	}
	_, err = PlanUnionCompaction(pairs, tiny)
	require.ErrorAs(t, err, &we)
	assert.Equal(t, PassUnionPairs, we.Pass)
}
