package frontier

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// generatorGraphs returns a graph of every generator, large enough that
// BFS frontiers pass the parallel thresholds, and a few random ones.
func generatorGraphs(t testing.TB) []*CSR {
	t.Helper()
	var graphs []*CSR
	add := func(g *CSR, err error) {
		require.NoError(t, err)
		graphs = append(graphs, g)
	}
	add(Kronecker(14, DefaultEdgeFactor, 3))
	add(Kronecker(10, 4, 5))
	add(Grid(300))
	add(Road(150, 2))
	add(RandomGeometric(30000, 8, 4))
	add(RandomGeometric(20000, 3, 4)) // many components
	for seed := uint64(1); seed <= 3; seed++ {
		r := rand.New(rand.NewPCG(seed, 17))
		n, m := 2000+r.IntN(2000), 3000+r.IntN(8000)
		src, dst := make([]int32, m), make([]int32, m)
		for i := range src {
			src[i], dst[i] = int32(r.IntN(n)), int32(r.IntN(n))
		}
		g, err := BuildUndirected(fmt.Sprintf("random-%d", seed), n, src, dst)
		add(g, err)
	}
	return graphs
}

// TestBFSParallelMatchesBFS checks the parallel BFS against the serial
// oracle on every generator, over worker counts and roots.
func TestBFSParallelMatchesBFS(t *testing.T) {
	for _, g := range generatorGraphs(t) {
		roots, err := Roots(g, 3, 5)
		require.NoError(t, err)
		for _, root := range append(roots, 0) {
			want, err := BFS(g, root)
			require.NoError(t, err)
			for _, workers := range []int{0, 1, 2, 5, 16} {
				got, err := bfsParallel(g, root, workers)
				require.NoError(t, err)
				require.Equal(t, want, got, "%s root %d workers %d", g.Name, root, workers)
			}
			got, err := BFSParallel(g, root)
			require.NoError(t, err)
			require.Equal(t, want, got, "%s root %d", g.Name, root)
			// The CSR's own 64-bit offsets, which a graph past 2^32-1
			// entries is traversed over, give the same levels as the
			// 32-bit copy the others use.
			for _, workers := range []int{1, 2, 5} {
				require.Equal(t, want, topDownBFS(csrAdjacency(g), root, workers), "%s root %d workers %d, 64-bit offsets", g.Name, root, workers)
			}
		}
	}
	g, _ := Grid(3)
	_, err := BFSParallel(g, 9)
	var re *RootError
	require.ErrorAs(t, err, &re)
}

// TestValidateParallelMatchesSerial corrupts levels at random and checks
// that every schedule reports the serial check's first failure.
func TestValidateParallelMatchesSerial(t *testing.T) {
	g, err := Kronecker(14, DefaultEdgeFactor, 3)
	require.NoError(t, err)
	good, err := BFS(g, 7)
	require.NoError(t, err)
	r := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 30; trial++ {
		levels := append([]int32(nil), good...)
		for k := r.IntN(4); k > 0; k-- {
			levels[r.IntN(len(levels))] = int32(r.IntN(6)) - 1
		}
		levels[7] = 0
		want := validateRange(g, 7, levels, 0, int32(g.NumVertices()))
		for _, workers := range []int{1, 2, 3, 16} {
			got := validateParallel(g, 7, levels, workers)
			if want == nil {
				require.NoError(t, got)
			} else {
				require.EqualError(t, got, want.Error(), "trial %d workers %d", trial, workers)
			}
		}
	}
}

// TestStatsCountsGraph500Edges checks that Stats counts the undirected
// edges inside the traversed component once each, on a graph whose edge
// list had duplicates and self loops, and that every schedule agrees.
func TestStatsCountsGraph500Edges(t *testing.T) {
	for _, g := range generatorGraphs(t) {
		roots, err := Roots(g, 2, 1)
		require.NoError(t, err)
		for _, root := range roots {
			levels, err := BFS(g, root)
			require.NoError(t, err)
			var want TraversalStats
			for v := int32(0); int(v) < g.NumVertices(); v++ {
				if levels[v] == Unreached {
					continue
				}
				want.Reached++
				want.Levels = max(want.Levels, int(levels[v])+1)
				for _, w := range g.Neighbors(v) {
					if v < w {
						require.NotEqual(t, Unreached, levels[w])
						want.Edges++
					}
				}
			}
			for _, workers := range []int{1, 3, 16} {
				assert.Equal(t, want, statsParallel(g, levels, workers), "%s root %d workers %d", g.Name, root, workers)
			}
			assert.Equal(t, want, Stats(g, levels))
		}
	}
}

func BenchmarkBFSParallel(b *testing.B) {
	for _, scale := range []int{18, 20} {
		g, err := Kronecker(scale, DefaultEdgeFactor, 1)
		require.NoError(b, err)
		roots, err := Roots(g, 1, 1)
		require.NoError(b, err)
		levels, _ := BFS(g, roots[0])
		edges := Stats(g, levels).Edges
		b.Run(fmt.Sprintf("kron-%d", scale), func(b *testing.B) {
			for b.Loop() {
				if _, err := BFSParallel(g, roots[0]); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(edges)*float64(b.N)/b.Elapsed().Seconds()/1e6, "MTEPS")
		})
	}
}

func ExampleBFSParallel() {
	g, _ := Grid(3)
	levels, _ := BFSParallel(g, 4)
	fmt.Println(levels)
	// Output: [2 1 2 1 0 1 2 1 2]
}
