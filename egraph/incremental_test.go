package egraph

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// collidingHashes are table hashes that make most signatures collide, so
// that stale entries lie on the probe paths of the new forms: the
// incremental rounds must still match only current forms.
var collidingHashes = []struct {
	name string
	hash func(int32, []int32) uint32
}{
	{"constant", func(int32, []int32) uint32 { return 7 }},
	{"op only", func(op int32, _ []int32) uint32 { return uint32(op) }},
	{"child sum", func(op int32, c []int32) uint32 {
		h := uint32(op)
		for _, x := range c {
			h += uint32(x)
		}
		return h & 3
	}},
}

// checkIncrementalResult checks an incremental result against Rebuild (w)
// and RebuildRounds (r): the same partition and the same counts.
func checkIncrementalResult(t *testing.T, g *Graph, w, r, got *RebuildResult, label string) {
	t.Helper()
	require.Equal(t, w.Labels, got.Labels, "%s: partition", label)
	assert.Equal(t, []int{r.Rounds, r.DataParallelRounds, r.UnionMerges, r.ClassesAfterUnions, r.CongruenceMerges, r.Classes, r.DistinctNodes},
		[]int{got.Rounds, got.DataParallelRounds, got.UnionMerges, got.ClassesAfterUnions, got.CongruenceMerges, got.Classes, got.DistinctNodes},
		"%s: rounds, data-parallel rounds, union merges, classes after unions, congruence merges, classes, distinct e-nodes", label)
	assert.Equal(t, []int{r.ClassIDs, r.UnionPairs, r.Nodes}, []int{got.ClassIDs, got.UnionPairs, got.Nodes}, label)
	assert.False(t, got.WorklistFinished, label)
	assert.GreaterOrEqual(t, got.NodeTouches, g.NodeCount(), "%s: round 1 touches every e-node", label)
	assert.LessOrEqual(t, got.NodeTouches, got.Rounds*g.NodeCount(), "%s: no round touches more than every e-node", label)
}

// checkIncrementalAgrees runs RebuildIncremental on g, and on small
// e-graphs also under the colliding hashes, against w and r.
func checkIncrementalAgrees(t *testing.T, g *Graph, w, r *RebuildResult) {
	t.Helper()
	got, err := RebuildIncremental(g)
	require.NoError(t, err)
	checkIncrementalResult(t, g, w, r, got, "signature")
	if g.NodeCount() > 2000 {
		return
	}
	for _, h := range collidingHashes {
		got, err := rebuildIncremental(g, h.hash)
		require.NoError(t, err)
		checkIncrementalResult(t, g, w, r, got, h.name)
	}
}

// genGraph generates an e-graph or fails the test.
func genGraph(t testing.TB, cfg GenConfig) *Graph {
	t.Helper()
	g, err := Generate(cfg)
	require.NoError(t, err)
	return g
}

func TestRebuildIncrementalGeneratedShapes(t *testing.T) {
	sizes := []int{1, 2, 3, 17, 100, 1000, 10_000, 100_000}
	for _, shape := range []GenShape{ShapeRandom, ShapeUnionChain, ShapeGiantClass, ShapeDeepCycle, ShapeAllDistinct} {
		for _, n := range sizes {
			seeds := uint64(4)
			if n >= 10_000 {
				seeds = 1
			}
			for seed := range seeds {
				t.Run(fmt.Sprintf("%s/%d/%d", shape, n, seed), func(t *testing.T) {
					if testing.Short() && n >= 100_000 {
						t.Skip("large e-graph")
					}
					g := genGraph(t, GenConfig{Nodes: n, Seed: seed + 7, Shape: shape})
					w, err := Rebuild(g)
					require.NoError(t, err)
					r, err := RebuildRounds(g)
					require.NoError(t, err)
					checkIncrementalAgrees(t, g, w, r)
				})
			}
		}
	}
}

func TestRebuildIncrementalSeedsProperty(t *testing.T) {
	for _, shape := range []GenShape{ShapeRandom, ShapeUnionChain, ShapeGiantClass, ShapeDeepCycle, ShapeAllDistinct} {
		for seed := range uint64(40) {
			n := 1 + int(seed*seed*13)%1500
			t.Run(fmt.Sprintf("%s/%d/%d", shape, n, seed), func(t *testing.T) {
				g := genGraph(t, GenConfig{Nodes: n, Seed: seed, Shape: shape, CycleLength: 2 + int(seed%9)})
				checkAllAgree(t, g)
			})
		}
	}
}

func TestRebuildIncrementalRandomProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 5))
	for k := range 1500 {
		g := randomGraph(r)
		if k%5 == 0 {
			g = congruenceTower(k % 13)
		}
		require.NoError(t, g.Validate())
		w, err := Rebuild(g)
		require.NoError(t, err)
		rr, err := RebuildRounds(g)
		require.NoError(t, err)
		checkIncrementalAgrees(t, g, w, rr)
	}
}

func TestRebuildIncrementalEggSample(t *testing.T) {
	g, egg := readSample(t)
	_, r := checkAllAgree(t, g)
	got, err := RebuildIncremental(g)
	require.NoError(t, err)
	require.NoError(t, ComparePartitions(egg.Classes, got.NodeClasses(g)))
	t.Logf("%d rounds, %d touches (rounds touch %d)", got.Rounds, got.NodeTouches, r.Rounds*g.NodeCount())
}

// TestRebuildIncrementalTouches checks that the late rounds of the deep
// shapes touch only what changed: far fewer e-nodes than a pass per round.
func TestRebuildIncrementalTouches(t *testing.T) {
	tests := []struct {
		name    string
		g       *Graph
		atMost  float64 // touches over Nodes
		minRnds int
	}{
		{"giant 1e5", genGraph(t, GenConfig{Nodes: 100_000, Seed: 7, Shape: ShapeGiantClass}), 8, 50},
		{"cycles of 2000", genGraph(t, GenConfig{Nodes: 20_000, Seed: 3, Shape: ShapeDeepCycle, CycleLength: 2000}), 4, 1000},
		{"tower of 5000", congruenceTower(5000), 2, 5000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, s, err := runIncremental(tc.g, nil)
			require.NoError(t, err)
			n := tc.g.NodeCount()
			assert.GreaterOrEqual(t, got.Rounds, tc.minRnds)
			assert.LessOrEqual(t, float64(got.NodeTouches), tc.atMost*float64(n), "touches over %d rounds", got.Rounds)
			t.Logf("%d rounds, %d touches (%.2f per e-node; rounds: %d), full passes for dirty %d, for tombstones %d",
				got.Rounds, got.NodeTouches, float64(got.NodeTouches)/float64(n), got.Rounds, s.fullForDirty, s.fullForTombs)
		})
	}
}

// TestRebuildIncrementalFullPasses checks both reasons for a full pass in
// a later round: most e-nodes dirty, and tombstones filling the table.
func TestRebuildIncrementalFullPasses(t *testing.T) {
	dirty, tombs := 0, 0
	for seed := range uint64(30) {
		for _, shape := range []GenShape{ShapeRandom, ShapeUnionChain, ShapeGiantClass, ShapeDeepCycle} {
			g := genGraph(t, GenConfig{Nodes: 3000, Seed: seed, Shape: shape, CycleLength: 300})
			_, s, err := runIncremental(g, nil)
			require.NoError(t, err)
			dirty += s.fullForDirty
			tombs += s.fullForTombs
		}
	}
	assert.Positive(t, dirty, "a later round with more than N/2 dirty e-nodes")
	assert.Positive(t, tombs, "a table rebuilt for its tombstones")
}

func TestRebuildIncrementalErrors(t *testing.T) {
	_, err := RebuildIncremental(&Graph{ChildStart: []int32{0}})
	var ge *GraphError
	require.ErrorAs(t, err, &ge)
	assert.Equal(t, "nodes", ge.Field)
	err = checkIncrementalSizes(1<<30+1, 0)
	var ie *IncrementalError
	require.ErrorAs(t, err, &ie)
	assert.Contains(t, err.Error(), "2^31 slots")
	assert.Contains(t, err.Error(), "Fix:")
	err = checkIncrementalSizes(1<<30, 1<<30)
	require.ErrorAs(t, err, &ie)
	assert.Contains(t, err.Error(), "uses index needs 2147483648 entries")
	assert.Contains(t, err.Error(), "Fix:")
	assert.NoError(t, checkIncrementalSizes(1<<30, 1<<30-1))
}

func TestUsesIndex(t *testing.T) {
	// f(0,0) in class 1, g(1) in class 2, x in class 0, f(2,0) in class 1.
	g := &Graph{Ops: []OpDecl{{0, "x"}, {2, "f"}, {1, "g"}}, ClassCount: 3, NodeClass: []int32{1, 2, 0, 1}, NodeOp: []int32{1, 2, 0, 1},
		ChildStart: []int32{0, 2, 3, 3, 5}, Children: []int32{0, 0, 1, 2, 0}}
	require.NoError(t, g.Validate())
	start, uses, err := UsesIndex(g)
	require.NoError(t, err)
	tests := []struct {
		class int
		want  []int32
	}{{0, []int32{0, 0, 2, 3}}, {1, []int32{0, 1, 3}}, {2, []int32{1, 3}}}
	for _, tc := range tests {
		assert.Equal(t, tc.want, uses[start[tc.class]:start[tc.class+1]], "class %d: its e-nodes and its parents, once per occurrence", tc.class)
	}
	assert.Len(t, uses, g.NodeCount()+len(g.Children))
}
