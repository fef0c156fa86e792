package rebuild

import (
	"testing"

	"github.com/gpuplan/gpuplan/egraph"
	"github.com/gpuplan/gpuplan/executor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// withDuplicates returns g with, for every every-th e-node, a copy of it
// (same op and children) in a class of its own, and for every
// (2*every)-th one a second copy in the e-node's own class: structurally
// equal rows across classes and within one.
func withDuplicates(g *egraph.Graph, every int) *egraph.Graph {
	d := &egraph.Graph{Ops: g.Ops, ClassCount: g.ClassCount, NodeClass: append([]int32(nil), g.NodeClass...),
		NodeOp: append([]int32(nil), g.NodeOp...), ChildStart: append([]int32(nil), g.ChildStart...),
		Children: append([]int32(nil), g.Children...), Unions: g.Unions}
	add := func(i, class int) {
		d.NodeClass = append(d.NodeClass, int32(class))
		d.NodeOp = append(d.NodeOp, g.NodeOp[i])
		d.Children = append(d.Children, g.NodeChildren(i)...)
		d.ChildStart = append(d.ChildStart, int32(len(d.Children)))
	}
	for i := 0; i < g.NodeCount(); i += every {
		add(i, int(d.ClassCount))
		d.ClassCount++
		if i%(2*every) == 0 {
			add(i, int(g.NodeClass[i]))
		}
	}
	return d
}

// TestStructuralOnFake runs the structural-equivalence reference path on
// images with duplicate rows and checks it against its CPU reference.
func TestStructuralOnFake(t *testing.T) {
	x, _ := newFakeExecutor(t, 8<<30, 5)
	for _, spec := range []string{"gen:3000:1", "gen:2000:3:giant", "gen:500:2:distinct"} {
		g := withDuplicates(generate(t, spec), 7)
		require.NoError(t, g.Validate())
		s, err := NewSession(x, g, spec, Config{Threads: 64})
		require.NoError(t, err)
		before := x.ResidentBytes()
		c, err := s.StructuralEquivalences()
		require.NoError(t, err, spec)
		assert.True(t, c.Same(), spec)
		assert.Positive(t, c.GPU.ExactPairCount, spec)
		assert.Positive(t, c.GPU.RedundantPairCount, spec)
		assert.Positive(t, c.Waves, spec)
		assert.Equal(t, before, x.ResidentBytes(), "the slab is freed")
		// The session still rebuilds after the reference path ran.
		w, rounds := references(t, g)
		r, err := s.Run(ArmPersistent)
		require.NoError(t, err)
		out, err := s.Output(r)
		require.NoError(t, err)
		require.NoError(t, CheckAgainst(out.Result, w, rounds))
		require.NoError(t, s.Close())
	}
}

// TestHashGroupingMatchesPairwise checks the hash table's grouping against
// the pairwise reference path where both apply: an e-graph of leaves only
// and no unions, whose closure is one round of grouping, gives exactly the
// rewrites union compaction makes of the pairwise equivalences.
func TestHashGroupingMatchesPairwise(t *testing.T) {
	x, _ := newFakeExecutor(t, 8<<30, 6)
	checkHashGroupingMatchesPairwise(t, x)
}

func checkHashGroupingMatchesPairwise(t *testing.T, x *executor.Executor) {
	g := &egraph.Graph{ClassCount: 400}
	for range 20 {
		g.Ops = append(g.Ops, egraph.OpDecl{Arity: 0, Name: "leaf"})
	}
	g.ChildStart = []int32{0}
	for c := range int32(400) {
		for k := range c%3 + 1 {
			g.NodeClass = append(g.NodeClass, c)
			g.NodeOp = append(g.NodeOp, (c*7+k*3)%20)
			g.ChildStart = append(g.ChildStart, 0)
		}
	}
	require.NoError(t, g.Validate())
	s, err := NewSession(x, g, "leaves", Config{})
	require.NoError(t, err)
	defer s.Close()
	c, err := s.StructuralEquivalences()
	require.NoError(t, err)
	require.True(t, c.Same())
	want, err := egraph.PlanUnionCompaction(c.GPU.Equivalences, egraph.DefaultLaunchConfig())
	require.NoError(t, err)
	for _, arm := range FullRoundArms() {
		r, err := s.Run(arm)
		require.NoError(t, err)
		out, err := s.Output(r)
		require.NoError(t, err)
		assert.Equal(t, want.CanonicalRewrites, out.Rewrites, arm)
		assert.Equal(t, 2, r.Rounds, "one round groups, the next finds nothing")
	}
}
