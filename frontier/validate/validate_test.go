package validate

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/frontier"
)

// graphs are one graph of each generator, and one with isolated vertices
// and several components.
func graphs(t *testing.T) []*frontier.CSR {
	t.Helper()
	var out []*frontier.CSR
	for _, build := range []func() (*frontier.CSR, error){
		func() (*frontier.CSR, error) { return frontier.Kronecker(12, 8, 3) },
		func() (*frontier.CSR, error) { return frontier.Grid(60) },
		func() (*frontier.CSR, error) { return frontier.Grid3D(12) },
		func() (*frontier.CSR, error) { return frontier.Road(40, 5) },
		func() (*frontier.CSR, error) { return frontier.RandomGeometric(5000, 6, 2) },
		func() (*frontier.CSR, error) {
			// Two paths and isolated vertices 7 to 9.
			return frontier.BuildUndirected("pieces", 10, []int32{0, 1, 2, 4, 5}, []int32{1, 2, 3, 5, 6})
		},
	} {
		g, err := build()
		require.NoError(t, err)
		out = append(out, g)
	}
	return out
}

// parentsOf derives a parent tree from correct levels: the smallest
// neighbour one level closer.
func parentsOf(g *frontier.CSR, root int32, levels []int32) []int32 {
	parents := make([]int32, len(levels))
	for v := range parents {
		parents[v] = frontier.Unreached
		if int32(v) == root || levels[v] <= 0 {
			continue
		}
		for _, w := range g.Neighbors(int32(v)) {
			if levels[w] == levels[v]-1 && (parents[v] == frontier.Unreached || w < parents[v]) {
				parents[v] = w
			}
		}
	}
	return parents
}

// Property: the reference BFS's levels and a parent tree derived from them
// pass, from random roots of every generator's graph.
func TestReferenceResultsPass(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, g := range graphs(t) {
		for range 5 {
			root := int32(rng.IntN(g.NumVertices()))
			levels, err := frontier.BFS(g, root)
			require.NoError(t, err)
			require.NoError(t, Levels(g, g, root, levels), "%s from %d", g.Name, root)
			require.NoError(t, Parents(g, root, levels, parentsOf(g, root, levels)), "%s from %d", g.Name, root)
		}
	}
}

// Property: any one wrong level, from random roots and vertices of every
// graph, is caught.
func TestWrongLevelsAreCaught(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, g := range graphs(t) {
		for range 40 {
			root := int32(rng.IntN(g.NumVertices()))
			levels, err := frontier.BFS(g, root)
			require.NoError(t, err)
			v := int32(rng.IntN(g.NumVertices()))
			was := levels[v]
			levels[v] = []int32{frontier.Unreached, was + 1, was - 1, was + 2, 0}[rng.IntN(5)]
			if levels[v] == was || levels[v] < frontier.Unreached {
				continue
			}
			err = Levels(g, g, root, levels)
			var bad *Violation
			require.ErrorAs(t, err, &bad, "%s from %d: vertex %d at %d, not %d", g.Name, root, v, levels[v], was)
			assert.Contains(t, err.Error(), "Fix:")
		}
	}
}

// Each rule is caught where it is broken, and named.
func TestRules(t *testing.T) {
	g, err := frontier.BuildUndirected("path", 6, []int32{0, 1, 2, 3}, []int32{1, 2, 3, 4}) // 0-1-2-3-4, 5 alone
	require.NoError(t, err)
	ok := []int32{0, 1, 2, 3, 4, -1}
	cases := []struct {
		name   string
		levels []int32
		rule   int
		vertex int32
	}{
		{"the root is not 0", []int32{1, 1, 2, 3, 4, -1}, 1, 0},
		{"a second 0", []int32{0, 1, 2, 3, 4, 0}, 1, 5},
		{"below -1", []int32{0, 1, 2, 3, -2, -1}, 1, 4},
		{"a reached vertex's neighbour unreached", []int32{0, 1, 2, -1, -1, -1}, 2, 2},
		{"a jump of two levels", []int32{0, 1, 2, 4, 5, -1}, 2, 2},
		{"a level with no way back", []int32{0, 1, 2, 3, 4, 7}, 3, 5},
		{"levels too high everywhere", []int32{0, 2, 3, 4, 5, -1}, 2, 0},
	}
	require.NoError(t, Levels(g, g, 0, ok))
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var bad *Violation
			require.ErrorAs(t, Levels(g, g, 0, c.levels), &bad)
			assert.Equal(t, c.rule, bad.Rule, bad.Error())
			assert.Equal(t, c.vertex, bad.Vertex, bad.Error())
		})
	}
}

func TestParentRules(t *testing.T) {
	// 0-1, 0-2, 1-3, 2-3, 3-4; 5 alone.
	g, err := frontier.BuildUndirected("diamond", 6, []int32{0, 0, 1, 2, 3}, []int32{1, 2, 3, 3, 4})
	require.NoError(t, err)
	levels := []int32{0, 1, 1, 2, 3, -1}
	require.NoError(t, Levels(g, g, 0, levels))
	cases := []struct {
		name    string
		parents []int32
		vertex  int32 // -1: valid
	}{
		{"valid", []int32{-1, 0, 0, 1, 3, -1}, -1},
		{"the other valid parent", []int32{-1, 0, 0, 2, 3, -1}, -1},
		{"the root has a parent", []int32{1, 0, 0, 1, 3, -1}, 0},
		{"an unreached vertex has one", []int32{-1, 0, 0, 1, 3, 4}, 5},
		{"a parent at the same level", []int32{-1, 2, 0, 1, 3, -1}, 1},
		{"a parent that is no neighbour", []int32{-1, 0, 0, 1, 1, -1}, 4},
		{"no parent", []int32{-1, 0, 0, -1, 3, -1}, 3},
		{"not a vertex", []int32{-1, 0, 0, 1, 60, -1}, 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Parents(g, 0, levels, c.parents)
			if c.vertex < 0 {
				require.NoError(t, err)
				return
			}
			var bad *Violation
			require.ErrorAs(t, err, &bad)
			assert.Equal(t, 4, bad.Rule)
			assert.Equal(t, c.vertex, bad.Vertex, bad.Error())
		})
	}
}

// A directed graph is checked with its out-edges for rule 2 and its
// in-edges for rule 3.
func TestDirected(t *testing.T) {
	// 0 -> 1 -> 2, 2 -> 0, 3 -> 1: from 0, 3 is unreached though it has an
	// edge into the reached set.
	out := &frontier.CSR{Name: "out", Offsets: []uint64{0, 1, 2, 3, 4}, Targets: []int32{1, 2, 0, 1}}
	in := &frontier.CSR{Name: "in", Offsets: []uint64{0, 1, 3, 4, 4}, Targets: []int32{2, 0, 3, 1}}
	require.NoError(t, Levels(out, in, 0, []int32{0, 1, 2, -1}))
	var bad *Violation
	require.ErrorAs(t, Levels(out, in, 0, []int32{0, 1, -1, -1}), &bad)
	assert.Equal(t, 2, bad.Rule)
	require.ErrorAs(t, Levels(out, in, 0, []int32{0, 1, 2, 3}), &bad, "3 has no in-neighbour at level 2")
	assert.Equal(t, 3, bad.Rule)
}

func TestShapesAreRefused(t *testing.T) {
	g, err := frontier.Grid(4)
	require.NoError(t, err)
	small, err := frontier.Grid(3)
	require.NoError(t, err)
	levels, err := frontier.BFS(g, 0)
	require.NoError(t, err)
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"short levels", Levels(g, g, 0, levels[:3]), "3 levels for 16 vertices"},
		{"a root past the graph", Levels(g, g, 16, levels), "root 16 is not a vertex"},
		{"a negative root", Levels(g, g, -1, levels), "root -1 is not a vertex"},
		{"in-edges of another graph", Levels(g, small, 0, levels), "the in-edges have 9 vertices"},
		{"short parents", Parents(g, 0, levels, levels[:2]), "2 parents for 16 vertices"},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.ErrorContains(t, c.err, c.want)
			require.ErrorContains(t, c.err, "Fix:")
		})
	}
}

// The check of a large graph spreads over the workers and still reports
// the lowest vertex's violation.
func TestTheLowestViolationIsReported(t *testing.T) {
	g, err := frontier.Grid(300)
	require.NoError(t, err)
	levels, err := frontier.BFS(g, 0)
	require.NoError(t, err)
	for _, v := range []int{89999, 45000, 70000} {
		levels[v] += 2
	}
	var bad *Violation
	require.ErrorAs(t, Levels(g, g, 0, levels), &bad)
	assert.Less(t, bad.Vertex, int32(45001), fmt.Sprint(bad))
}
