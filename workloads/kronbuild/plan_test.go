package kronbuild

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSortShape checks the sort's split: whole tiles a block but for the
// last, at most MaxSortBlocks blocks, every key covered by one block.
func TestSortShape(t *testing.T) {
	for _, count := range []uint64{1, 2, SortTile - 1, SortTile, SortTile + 1, 5 * SortTile, MaxSortBlocks * SortTile,
		MaxSortBlocks*SortTile + 1, 3*MaxSortBlocks*SortTile + 17, 1 << 31, 1<<32 - 1} {
		s := shapeFor(count)
		assert.LessOrEqual(t, s.blocks, uint64(MaxSortBlocks), "count %d", count)
		assert.Zero(t, s.segment%SortTile, "count %d", count)
		assert.GreaterOrEqual(t, s.blocks*s.segment, count, "count %d", count)
		assert.Less(t, (s.blocks-1)*s.segment, count, "count %d: every block has keys", count)
		assert.Equal(t, Digits*s.blocks+1, s.histWords())
	}
}

// TestSplitParts checks the parts planned from bucket counts: runs of
// buckets as long as they fit beside the fixed buffers, empty buckets
// joining any part, and a bucket that does not fit alone refused.
func TestSplitParts(t *testing.T) {
	one, err := sortBytes(100)
	require.NoError(t, err)
	two, err := sortBytes(200)
	require.NoError(t, err)
	cases := []struct {
		name   string
		counts []uint64
		limit  uint64
		parts  [][3]uint64 // first vertex, vertices, entries
		refuse bool
	}{
		{"one part", []uint64{100, 100, 0, 100}, 4 * one, [][3]uint64{{0, 32, 300}}, false},
		{"two a part", []uint64{100, 100, 100, 100}, two, [][3]uint64{{0, 16, 200}, {16, 16, 200}}, false},
		{"one a part, empty buckets joining", []uint64{0, 100, 0, 0, 100, 0}, one, [][3]uint64{{0, 32, 100}, {32, 16, 100}}, false},
		{"all empty", []uint64{0, 0, 0}, 0, [][3]uint64{{0, 24, 0}}, false},
		{"a bucket too large", []uint64{100, 200, 100}, two - 1, nil, true},
	}
	for _, c := range cases {
		p := Plan{Graph: "kron-test", Scale: 7, Buckets: len(c.counts), BucketVertices: 8, FixedBytes: 1000, BudgetBytes: 1000 + c.limit}
		err := p.splitParts(c.counts)
		if c.refuse {
			var e *BudgetError
			require.ErrorAs(t, err, &e, c.name)
			assert.Contains(t, e.What, "bucket 1 (vertices 8 to 15, 200 adjacency entries)", c.name)
			assert.Equal(t, 1000+two, e.NeededBytes, c.name)
			continue
		}
		require.NoError(t, err, c.name)
		var got [][3]uint64
		for _, q := range p.Parts {
			got = append(got, [3]uint64{q.FirstVertex, q.Vertices, q.Entries})
			assert.LessOrEqual(t, q.Bytes, c.limit, c.name)
		}
		assert.Equal(t, c.parts, got, c.name)
	}
	require.Error(t, (&Plan{Buckets: 2}).splitParts([]uint64{1}), "a count per bucket")
}

// TestPlanBytes checks the fixed buffers and the permutation's scratch
// of a scale-20 build against their sizes written out.
func TestPlanBytes(t *testing.T) {
	p, err := newPlan(20, 16, 1<<40, false)
	require.NoError(t, err)
	n := uint64(1) << 20
	assert.Equal(t, 4*n+8*(n+1)+8*MaxBuckets+8*CtlWords, p.FixedBytes)
	assert.Equal(t, 16*(n-1)+8*(Digits*shapeFor(n-1).blocks+1), p.PermutationBytes)
	assert.Equal(t, p.FixedBytes+p.PermutationBytes, p.PeakBytes)
	assert.Equal(t, uint64(1024), p.BucketVertices)
	h, err := newPlan(20, 16, 1<<40, true)
	require.NoError(t, err)
	assert.Zero(t, h.PermutationBytes)
	s, err := newPlan(3, 16, 1<<40, false)
	require.NoError(t, err)
	assert.Equal(t, 8, s.Buckets, "a bucket a vertex below MaxBuckets vertices")
	assert.Equal(t, uint64(1), s.BucketVertices)
}
