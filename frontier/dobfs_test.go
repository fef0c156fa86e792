package frontier

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/planners"
)

// TestBFSDirectionOptimizingMatchesBFS checks the direction-optimizing BFS
// against the serial oracle on every generator, over worker counts, with
// the default thresholds and with ones that go bottom-up early and on any
// graph.
func TestBFSDirectionOptimizingMatchesBFS(t *testing.T) {
	eager := planners.DirectionParams{Alpha: 1 << 20, Beta: 2, MinAverageDegree: 0}
	for _, g := range generatorGraphs(t) {
		roots, err := Roots(g, 3, 8)
		require.NoError(t, err)
		for _, root := range append(roots, 1) {
			want, err := BFS(g, root)
			require.NoError(t, err)
			levels := Stats(g, want).Levels
			for _, params := range []planners.DirectionParams{planners.DefaultDirectionParams(), eager} {
				for _, workers := range []int{1, 3, 16} {
					got, err := bfsDirection(g, root, params, workers)
					require.NoError(t, err)
					name := fmt.Sprintf("%s root %d %+v workers %d", g.Name, root, params, workers)
					require.Equal(t, want, got.Levels, name)
					require.Len(t, got.Decisions, levels, name)
					for i, d := range got.Decisions {
						require.EqualValues(t, i+1, d.Level, name)
					}
				}
			}
		}
	}
}

// TestBFSDirectionOptimizingDecisions checks which directions the default
// thresholds pick: bottom-up in the middle of a Kronecker traversal, never
// on a grid.
func TestBFSDirectionOptimizingDecisions(t *testing.T) {
	count := func(r *DirectionBFS) (td, bu int) {
		for _, d := range r.Decisions {
			if d.Direction == planners.DirectionBottomUp {
				bu++
			} else {
				td++
			}
		}
		return td, bu
	}
	k, err := Kronecker(16, DefaultEdgeFactor, 2)
	require.NoError(t, err)
	roots, err := Roots(k, 1, 1)
	require.NoError(t, err)
	r, err := BFSDirectionOptimizing(k, roots[0], planners.DefaultDirectionParams())
	require.NoError(t, err)
	td, bu := count(r)
	assert.Positive(t, bu, "a Kronecker traversal goes bottom-up")
	assert.Positive(t, td)
	assert.Equal(t, planners.DirectionTopDown, r.Decisions[0].Direction, "the root alone is expanded top-down")
	assert.EqualValues(t, k.NumEdgeEntries()-k.Degree(roots[0]), r.Decisions[0].UnexploredEdges)

	g, err := Grid(100)
	require.NoError(t, err)
	r, err = BFSDirectionOptimizing(g, 0, planners.DefaultDirectionParams())
	require.NoError(t, err)
	_, bu = count(r)
	assert.Zero(t, bu, "the degree gate keeps a grid top-down")
	assert.Equal(t, planners.ReasonLowAverageDegree, r.Decisions[5].Reason)

	_, err = BFSDirectionOptimizing(g, -1, planners.DefaultDirectionParams())
	var re *RootError
	require.ErrorAs(t, err, &re)
	_, err = BFSDirectionOptimizing(g, 0, planners.DirectionParams{})
	var de *planners.BFSDirectionError
	require.ErrorAs(t, err, &de)
}

func BenchmarkBFSDirectionOptimizing(b *testing.B) {
	for _, scale := range []int{18, 20} {
		g, err := Kronecker(scale, DefaultEdgeFactor, 1)
		require.NoError(b, err)
		roots, err := Roots(g, 1, 1)
		require.NoError(b, err)
		levels, _ := BFS(g, roots[0])
		edges := Stats(g, levels).Edges
		b.Run(fmt.Sprintf("kron-%d", scale), func(b *testing.B) {
			for b.Loop() {
				if _, err := BFSDirectionOptimizing(g, roots[0], planners.DefaultDirectionParams()); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(edges)*float64(b.N)/b.Elapsed().Seconds()/1e6, "MTEPS")
		})
	}
}

func ExampleBFSDirectionOptimizing() {
	g, _ := Kronecker(12, DefaultEdgeFactor, 1)
	roots, _ := Roots(g, 1, 1)
	r, _ := BFSDirectionOptimizing(g, roots[0], planners.DefaultDirectionParams())
	want, _ := BFS(g, roots[0])
	fmt.Println(Checksum(r.Levels) == Checksum(want))
	for _, d := range r.Decisions {
		fmt.Println(d.Level, d.Direction, d.Reason)
	}
	// Output:
	// true
	// 1 top-down frontier_edges_within_unexplored_over_alpha
	// 2 top-down frontier_edges_within_unexplored_over_alpha
	// 3 bottom-up frontier_edges_above_unexplored_over_alpha
	// 4 bottom-up frontier_growing
	// 5 top-down frontier_shrunk_below_vertices_over_beta
	// 6 bottom-up frontier_edges_above_unexplored_over_alpha
}
