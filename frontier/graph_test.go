package frontier

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBuildUndirected(t *testing.T) {
	tests := []struct {
		name     string
		n        int
		src, dst []int32
		offsets  []uint64
		targets  []int32
	}{
		{"path", 3, []int32{0, 1}, []int32{1, 2}, []uint64{0, 1, 3, 4}, []int32{1, 0, 2, 1}},
		{"duplicates and loops", 3, []int32{0, 1, 1, 2, 2}, []int32{1, 0, 1, 2, 1}, []uint64{0, 1, 3, 4}, []int32{1, 0, 2, 1}},
		{"isolated vertex", 4, []int32{3}, []int32{0}, []uint64{0, 1, 1, 1, 2}, []int32{3, 0}},
		{"star sorted", 4, []int32{0, 0, 0}, []int32{3, 1, 2}, []uint64{0, 3, 4, 5, 6}, []int32{1, 2, 3, 0, 0, 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, err := BuildUndirected(tc.name, tc.n, tc.src, tc.dst)
			require.NoError(t, err)
			assert.Equal(t, tc.offsets, g.Offsets)
			assert.Equal(t, tc.targets, g.Targets)
			require.NoError(t, g.Check())
		})
	}
}

func TestBuildUndirectedErrors(t *testing.T) {
	var empty *EmptyGraphError
	_, err := BuildUndirected("loops", 3, []int32{1, 2}, []int32{1, 2})
	require.ErrorAs(t, err, &empty)
	assert.Contains(t, err.Error(), "Fix:")
	_, err = BuildUndirected("none", 0, nil, nil)
	require.ErrorAs(t, err, &empty)
	var vr *VertexRangeError
	_, err = BuildUndirected("range", 3, []int32{0, 1}, []int32{1, 3})
	require.ErrorAs(t, err, &vr)
	assert.Equal(t, 1, vr.Edge)
	assert.EqualValues(t, 3, vr.Vertex)
	_, err = BuildUndirected("neg", 3, []int32{-1}, []int32{1})
	require.ErrorAs(t, err, &vr)
	_, err = BuildUndirected("len", 3, []int32{0}, nil)
	require.Error(t, err)
	var tl *TooLargeError
	_, err = BuildUndirected("big", MaxGraphVertices+1, nil, nil)
	require.ErrorAs(t, err, &tl)
}

// TestBuildUndirectedProperties checks, over random edge lists, that the CSR
// is symmetric, sorted, loop-free and independent of the input order.
func TestBuildUndirectedProperties(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		r := rand.New(rand.NewPCG(seed, 7))
		n := 1 + r.IntN(50)
		m := r.IntN(200) + 1
		src, dst := make([]int32, m), make([]int32, m)
		want := map[[2]int32]bool{}
		for i := range src {
			src[i], dst[i] = int32(r.IntN(n)), int32(r.IntN(n))
			if src[i] != dst[i] {
				want[[2]int32{src[i], dst[i]}] = true
				want[[2]int32{dst[i], src[i]}] = true
			}
		}
		g, err := BuildUndirected("p", n, src, dst)
		if len(want) == 0 {
			var empty *EmptyGraphError
			require.ErrorAs(t, err, &empty)
			continue
		}
		require.NoError(t, err)
		require.NoError(t, g.Check())
		got := map[[2]int32]bool{}
		for v := int32(0); int(v) < n; v++ {
			nb := g.Neighbors(v)
			for i, w := range nb {
				require.NotEqual(t, v, w)
				if i > 0 {
					require.Less(t, nb[i-1], w)
				}
				got[[2]int32{v, w}] = true
			}
		}
		assert.Equal(t, want, got)
		r.Shuffle(m, func(i, j int) { src[i], src[j] = src[j], src[i]; dst[i], dst[j] = dst[j], dst[i] })
		g2, err := BuildUndirected("p", n, src, dst)
		require.NoError(t, err)
		assert.Equal(t, g.Offsets, g2.Offsets)
		assert.Equal(t, g.Targets, g2.Targets)
	}
}

func TestCheck(t *testing.T) {
	good := &CSR{Name: "g", Offsets: []uint64{0, 1, 2}, Targets: []int32{1, 0}}
	require.NoError(t, good.Check())
	assert.EqualValues(t, 20, good.Bytes())
	var se *StructureError
	for _, g := range []*CSR{
		{Offsets: []uint64{1, 1, 2}, Targets: []int32{1, 0}},
		{Offsets: []uint64{0, 2, 1}, Targets: []int32{1, 0}},
		{Offsets: []uint64{0, 1, 3}, Targets: []int32{1, 0}},
		{Offsets: []uint64{0, 1, 2}, Targets: []int32{2, 0}},
	} {
		require.ErrorAs(t, g.Check(), &se)
		assert.Contains(t, se.Error(), "Fix:")
	}
	var empty *EmptyGraphError
	require.ErrorAs(t, (&CSR{}).Check(), &empty)
}
