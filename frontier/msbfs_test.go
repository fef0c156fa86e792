package frontier

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMultiSourceBFSMatchesBFS checks every root's levels against the
// single-root oracle on every generator, over root counts (with a repeated
// root) and worker counts.
func TestMultiSourceBFSMatchesBFS(t *testing.T) {
	for _, g := range generatorGraphs(t) {
		for _, k := range []int{1, 5, 33, 64} {
			roots, err := Roots(g, k, uint64(k))
			require.NoError(t, err)
			if k > 1 {
				roots[k-1] = roots[0]
			}
			want := make([][]int32, k)
			for i, r := range roots {
				want[i], err = BFS(g, r)
				require.NoError(t, err)
			}
			for _, workers := range []int{1, 3, 16} {
				got, err := multiSourceBFS(g, roots, workers)
				require.NoError(t, err)
				require.Len(t, got, k)
				for i := range roots {
					require.Equal(t, want[i], got[i], "%s root %d (roots[%d]) of %d, workers %d", g.Name, roots[i], i, k, workers)
				}
			}
		}
	}
}

func TestMultiSourceBFSErrors(t *testing.T) {
	g, err := Grid(4)
	require.NoError(t, err)
	var ce *MultiSourceCountError
	_, err = MultiSourceBFS(g, nil)
	require.ErrorAs(t, err, &ce)
	_, err = MultiSourceBFS(g, make([]int32, 65))
	require.ErrorAs(t, err, &ce)
	assert.Contains(t, err.Error(), "65 roots, want 1..64. Fix:")
	_, err = MultiSourceBFS(g, []int32{0, 3, 16, 2})
	var re *MultiSourceRootError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, 2, re.Index)
	var root *RootError
	require.ErrorAs(t, err, &root, "it is also a RootError")
	assert.EqualValues(t, 16, root.Root)
	assert.Equal(t, "roots[2]: BFS root 16 is out of range 0..15. Fix: pick a root id below the vertex count", err.Error())
	_, err = MultiSourceBFS(g, []int32{-1})
	require.ErrorAs(t, err, &re)
}

// BenchmarkMultiSourceBFS compares 64 roots in one multi-source pass with
// 64 single-root parallel traversals.
func BenchmarkMultiSourceBFS(b *testing.B) {
	g, err := Kronecker(18, DefaultEdgeFactor, 1)
	require.NoError(b, err)
	roots, err := Roots(g, 64, 1)
	require.NoError(b, err)
	b.Run("kron-18/64-roots-one-pass", func(b *testing.B) {
		for b.Loop() {
			if _, err := MultiSourceBFS(g, roots); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("kron-18/64-single-root-traversals", func(b *testing.B) {
		for b.Loop() {
			for _, r := range roots {
				if _, err := BFSParallel(g, r); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

func ExampleMultiSourceBFS() {
	g, _ := Grid(3)
	levels, _ := MultiSourceBFS(g, []int32{0, 4, 8})
	for _, l := range levels {
		fmt.Println(l)
	}
	// Output:
	// [0 1 2 1 2 3 2 3 4]
	// [2 1 2 1 0 1 2 1 2]
	// [4 3 2 3 2 1 2 1 0]
}
