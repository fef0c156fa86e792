package frontier

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRandomGeometricBruteForce compares the cell-grid build with every
// pair of points checked directly.
func TestRandomGeometricBruteForce(t *testing.T) {
	for _, tc := range []struct{ n, degree int }{{3, 1}, {50, 4}, {1000, 8}, {3000, 16}, {2000, 1}} {
		t.Run(fmt.Sprintf("n=%d,d=%d", tc.n, tc.degree), func(t *testing.T) {
			pts := rggPoints(tc.n, 11)
			r := rggRadius(tc.n, tc.degree)
			g, order, err := pts.graph(r)
			if err != nil {
				var empty *EmptyGraphError
				require.ErrorAs(t, err, &empty)
				return
			}
			require.NoError(t, g.Check())
			id := make([]int32, tc.n)
			for v, i := range order {
				id[i] = int32(v)
			}
			want := make([][]int32, tc.n)
			for i := 0; i < tc.n; i++ {
				for j := 0; j < tc.n; j++ {
					dx, dy := pts.x[i]-pts.x[j], pts.y[i]-pts.y[j]
					if i != j && float64(dx*dx)+float64(dy*dy) < r*r {
						want[id[i]] = append(want[id[i]], id[j])
					}
				}
			}
			for v := range want {
				slices.Sort(want[v])
				got := g.Neighbors(int32(v))
				if len(want[v]) == 0 {
					assert.Empty(t, got, "vertex %d", v)
				} else {
					assert.Equal(t, want[v], got, "vertex %d", v)
				}
			}
		})
	}
}

// TestRandomGeometricStatistics checks the degree, its spread, the
// components and the numbering of large graphs.
func TestRandomGeometricStatistics(t *testing.T) {
	for _, tc := range []struct {
		n, degree int
		giant     [2]float64 // bounds on the largest component's share
	}{
		{100000, 8, [2]float64{0.99, 1}},
		{100000, 16, [2]float64{0.9999, 1}},
		{100000, 2, [2]float64{0, 0.02}}, // below the percolation threshold (about 4.5)
	} {
		t.Run(fmt.Sprintf("n=%d,d=%d", tc.n, tc.degree), func(t *testing.T) {
			g, err := RandomGeometric(tc.n, tc.degree, 3)
			require.NoError(t, err)
			require.NoError(t, g.Check())
			assert.Equal(t, fmt.Sprintf("rgg-%d-%d", tc.n, tc.degree), g.Name)
			requireSymmetric(t, g)
			mean := float64(g.NumEdgeEntries()) / float64(tc.n)
			assert.InEpsilon(t, float64(tc.degree), mean, 0.01, "average degree")
			var sq float64
			for v := int32(0); int(v) < tc.n; v++ {
				d := float64(g.Degree(v)) - mean
				sq += d * d
			}
			// Degrees are binomial (near Poisson): the variance is close
			// to the mean, a little above it because border points have
			// fewer neighbours.
			assert.InDelta(t, 1.05, sq/float64(tc.n)/mean, 0.1, "degree variance / mean")
			share := float64(largestComponent(g)) / float64(tc.n)
			assert.GreaterOrEqual(t, share, tc.giant[0], "largest component")
			assert.LessOrEqual(t, share, tc.giant[1], "largest component")
			var gap float64
			for v := int32(0); int(v) < tc.n; v++ {
				for _, w := range g.Neighbors(v) {
					gap += math.Abs(float64(w - v))
				}
			}
			assert.Less(t, gap/float64(g.NumEdgeEntries()), float64(tc.n)/100, "neighbours have close ids")
		})
	}
}

func TestRandomGeometricDeterministic(t *testing.T) {
	a, err := RandomGeometric(50000, 8, 5)
	require.NoError(t, err)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	b, err := RandomGeometric(50000, 8, 5)
	require.NoError(t, err)
	assert.Equal(t, a.Offsets, b.Offsets, "the CPU count changes nothing")
	assert.Equal(t, a.Targets, b.Targets)
	runtime.GOMAXPROCS(7)
	c, err := RandomGeometric(50000, 8, 6)
	require.NoError(t, err)
	assert.NotEqual(t, a.Targets, c.Targets, "another seed, another graph")
}

func TestRandomGeometricErrors(t *testing.T) {
	tests := []struct {
		n, degree int
		field     string
	}{
		{1, 1, "n"}, {0, 8, "n"}, {100, 0, "degree"}, {100, 50, "degree"}, {10000, MaxRGGDegree + 1, "degree"},
	}
	for _, tc := range tests {
		_, err := RandomGeometric(tc.n, tc.degree, 1)
		var ge *GeneratorError
		require.ErrorAs(t, err, &ge, "%+v", tc)
		assert.Equal(t, tc.field, ge.Field)
		assert.Contains(t, err.Error(), "Fix:")
	}
	var tl *TooLargeError
	_, err := RandomGeometric(MaxGraphVertices+1, 8, 1)
	require.ErrorAs(t, err, &tl)
	_, err = RandomGeometric(1<<30, 17, 1)
	require.ErrorAs(t, err, &tl, "2^30 x 17 expected edges pass MaxGraphEdgeEntries/2")
	assert.Equal(t, &TooLargeError{Source: "rgg-1073741824-17", Field: "expected edge entries", Value: 17 << 30, Limit: MaxGraphEdgeEntries / 2}, tl)
}

func TestRGGRadius(t *testing.T) {
	for _, tc := range []struct{ n, degree int }{{3, 1}, {1000, 8}, {2000000, 8}, {1 << 26, 1024}} {
		r := rggRadius(tc.n, tc.degree)
		assert.InEpsilon(t, float64(tc.degree), float64(tc.n-1)*rggArea(r), 1e-9)
		k := rggCells(tc.n, r)
		assert.GreaterOrEqual(t, 1/float64(k), r, "cells are at least r wide")
		assert.LessOrEqual(t, k*k, tc.n)
	}
	// Far from the border, the area is the disc's.
	assert.InEpsilon(t, math.Pi*1e-6, rggArea(1e-3), 1e-3)
}

// TestCountingOrder compares the parallel stable counting sort with a
// stable sort, over worker counts.
func TestCountingOrder(t *testing.T) {
	for seed := uint64(1); seed <= 30; seed++ {
		r := rand.New(rand.NewPCG(seed, 3))
		n, nkeys := 1+r.IntN(5000), 1+r.IntN(300)
		keys := make([]uint32, n)
		for i := range keys {
			keys[i] = uint32(r.IntN(nkeys))
		}
		want := make([]int32, n)
		for i := range want {
			want[i] = int32(i)
		}
		slices.SortStableFunc(want, func(a, b int32) int { return int(keys[a]) - int(keys[b]) })
		for _, workers := range []int{1, 2, 3, 16} {
			order, start := countingOrder(keys, nkeys, workers)
			require.Equal(t, want, order, "seed %d workers %d", seed, workers)
			require.Len(t, start, nkeys+1)
			for c := 0; c < nkeys; c++ {
				for _, i := range order[start[c]:start[c+1]] {
					require.EqualValues(t, c, keys[i])
				}
			}
			require.EqualValues(t, n, start[nkeys])
		}
	}
}

func BenchmarkRandomGeometric(b *testing.B) {
	for _, n := range []int{1 << 20, 2000000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := RandomGeometric(n, DefaultRGGDegree, 1); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func ExampleRandomGeometric() {
	g, _ := RandomGeometric(100000, 8, 1)
	fmt.Println(g.Name, g.NumVertices(), math.Round(float64(g.NumEdgeEntries())/float64(g.NumVertices())))
	// Output: rgg-100000-8 100000 8
}

// requireSymmetric fails unless every entry u->v has its v->u.
func requireSymmetric(t *testing.T, g *CSR) {
	t.Helper()
	for v := int32(0); int(v) < g.NumVertices(); v++ {
		for _, w := range g.Neighbors(v) {
			_, found := slices.BinarySearch(g.Neighbors(w), v)
			require.True(t, found, "edge %d->%d has no reverse", v, w)
		}
	}
}

// largestComponent returns the vertex count of g's largest component.
func largestComponent(g *CSR) int {
	seen := make([]bool, g.NumVertices())
	best := 0
	var queue []int32
	for s := range seen {
		if seen[s] {
			continue
		}
		seen[s] = true
		queue = append(queue[:0], int32(s))
		for head := 0; head < len(queue); head++ {
			for _, w := range g.Neighbors(queue[head]) {
				if !seen[w] {
					seen[w] = true
					queue = append(queue, w)
				}
			}
		}
		best = max(best, len(queue))
	}
	return best
}
