package egraph

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hybridVariants returns the options to check RebuildHybridWith under,
// given the rounds RebuildRounds needs: the defaults, a hand-over after
// the first round, and a cap at every round (or at a few, when there are
// many).
func hybridVariants(rounds int) []HybridOptions {
	opts := []HybridOptions{{}, {MinMerges: math.MaxInt}, {MinMerges: 1}}
	caps := []int{1, 2, rounds / 2, rounds - 1, rounds}
	if rounds <= 16 {
		caps = caps[:0]
		for k := 1; k <= rounds; k++ {
			caps = append(caps, k)
		}
	}
	for _, k := range caps {
		if k >= 1 {
			opts = append(opts, HybridOptions{MaxRounds: k})
		}
	}
	return opts
}

// checkHybridAgrees checks RebuildHybridWith under every variant against
// Rebuild (w) and RebuildRounds (r) on g.
func checkHybridAgrees(t *testing.T, g *Graph, w, r *RebuildResult) {
	t.Helper()
	for _, opt := range hybridVariants(r.Rounds) {
		h, err := RebuildHybridWith(g, opt)
		require.NoError(t, err)
		label := fmt.Sprintf("%+v", opt)
		require.Equal(t, w.Labels, h.Labels, label)
		assert.Equal(t, []int{w.UnionMerges, w.ClassesAfterUnions, w.CongruenceMerges, w.Classes, w.DistinctNodes},
			[]int{h.UnionMerges, h.ClassesAfterUnions, h.CongruenceMerges, h.Classes, h.DistinctNodes}, label)
		assert.GreaterOrEqual(t, h.Rounds, h.DataParallelRounds, label)
		assert.GreaterOrEqual(t, h.DataParallelRounds, 1, label)
		if h.WorklistFinished {
			assert.Less(t, h.DataParallelRounds, r.Rounds, "%s: the round handed over found something new", label)
		} else {
			assert.Equal(t, []int{r.Rounds, r.Rounds}, []int{h.DataParallelRounds, h.Rounds}, "%s: the rounds ran to the end", label)
		}
		if opt.MaxRounds > 0 {
			assert.LessOrEqual(t, h.DataParallelRounds, opt.MaxRounds, label)
		}
		if opt == (HybridOptions{}) {
			assert.LessOrEqual(t, h.DataParallelRounds, 64, "the default threshold bounds the rounds")
		}
	}
}

// congruenceTower returns x, y, f^k(x) and f^k(y) for k = 1..depth with
// x ~ y pending: one union that sets off a chain of depth congruences,
// one per level. Class 2k is f^k(x) and 2k+1 is f^k(y); the closure
// has depth+1 classes and depth+2 distinct e-nodes (x and y differ).
func congruenceTower(depth int) *Graph {
	n := 2 * (depth + 1)
	g := &Graph{Ops: []OpDecl{{0, "x"}, {0, "y"}, {1, "f"}}, ClassCount: int32(n), Unions: []int32{0, 1},
		NodeClass: make([]int32, n), NodeOp: make([]int32, n), ChildStart: make([]int32, n+1), Children: make([]int32, 0, n-2)}
	g.NodeOp[1] = 1
	for i := range n {
		g.NodeClass[i] = int32(i)
		if i >= 2 {
			g.NodeOp[i] = 2
			g.Children = append(g.Children, int32(i-2))
		}
		g.ChildStart[i+1] = int32(len(g.Children))
	}
	return g
}

func TestRebuildHybridCases(t *testing.T) {
	sample, _ := readSample(t)
	gen := func(n int, seed uint64, shape GenShape, cycle int) *Graph {
		g, err := Generate(GenConfig{Nodes: n, Seed: seed, Shape: shape, CycleLength: cycle})
		require.NoError(t, err)
		return g
	}
	tests := []struct {
		name       string
		g          *Graph
		handedOver bool
	}{
		{"one e-node", &Graph{Ops: []OpDecl{{0, "x"}}, ClassCount: 1, NodeClass: []int32{0}, NodeOp: []int32{0}, ChildStart: []int32{0, 0}}, false},
		{"self loop with a self union", &Graph{Ops: []OpDecl{{1, "f"}}, ClassCount: 1, NodeClass: []int32{0}, NodeOp: []int32{0},
			ChildStart: []int32{0, 1}, Children: []int32{0}, Unions: []int32{0, 0}}, false},
		{"tower of 3", congruenceTower(3), false},
		{"tower of 200", congruenceTower(200), true},
		{"egg sample", sample, true},
		{"random", gen(4000, 1, ShapeRandom, 0), true},
		{"union chain", gen(4000, 2, ShapeUnionChain, 0), true},
		{"giant", gen(4000, 3, ShapeGiantClass, 0), true},
		{"long cycles", gen(4000, 4, ShapeDeepCycle, 1000), true},
		{"distinct", gen(4000, 5, ShapeAllDistinct, 0), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w, r := checkAllAgree(t, tc.g)
			h, err := RebuildHybrid(tc.g)
			require.NoError(t, err)
			assert.Equal(t, tc.handedOver, h.WorklistFinished)
			t.Logf("rounds %d, worklist %d, hybrid %d (%d data-parallel, handed over %v)", r.Rounds, w.Rounds, h.Rounds, h.DataParallelRounds, h.WorklistFinished)
		})
	}
}

func TestRebuildHybridLongChain(t *testing.T) {
	tests := []struct {
		name  string
		depth int
	}{{"1e3 levels", 1000}, {"1e4 levels", 10_000}, {"1e5 levels", 100_000}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := congruenceTower(tc.depth)
			w, err := Rebuild(g)
			require.NoError(t, err)
			h, err := RebuildHybrid(g)
			require.NoError(t, err)
			require.Equal(t, w.Labels, h.Labels)
			assert.Equal(t, tc.depth+1, h.Classes, "x ~ y and f^k(x) ~ f^k(y) for every k")
			assert.Equal(t, []int{tc.depth, tc.depth + 2}, []int{h.CongruenceMerges, h.DistinctNodes})
			assert.True(t, h.WorklistFinished)
			assert.Equal(t, 1, h.DataParallelRounds, "the first round unites one class, fewer than one per 64 e-nodes")
			assert.Equal(t, tc.depth, h.Rounds, "round 1 finds f(x) ~ f(y), then one generation of the worklist per level above")
			if tc.depth <= 1000 {
				r, err := RebuildRounds(g)
				require.NoError(t, err)
				assert.Equal(t, w.Labels, r.Labels)
				assert.Equal(t, tc.depth+1, r.Rounds, "one round per level and a last that finds nothing")
			}
		})
	}
}

func TestRebuildHybridRandomProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 3))
	for seed := range 800 {
		g := randomGraph(r)
		if seed%4 == 0 {
			g = congruenceTower(seed % 9)
		}
		require.NoError(t, g.Validate())
		checkAllAgree(t, g)
	}
}

func TestRebuildHybridGeneratedSeeds(t *testing.T) {
	for _, shape := range []GenShape{ShapeRandom, ShapeUnionChain, ShapeGiantClass, ShapeDeepCycle, ShapeAllDistinct} {
		for seed := range uint64(20) {
			n := 1 + int(seed*seed*7)%700
			t.Run(fmt.Sprintf("%s/%d/%d", shape, n, seed), func(t *testing.T) {
				g, err := Generate(GenConfig{Nodes: n, Seed: seed, Shape: shape, CycleLength: 2 + int(seed)})
				require.NoError(t, err)
				checkAllAgree(t, g)
			})
		}
	}
}

func TestRebuildHybridErrors(t *testing.T) {
	good := congruenceTower(2)
	tests := []struct {
		name  string
		g     *Graph
		opt   HybridOptions
		field string
		msg   string
	}{
		{"empty e-graph", &Graph{ClassCount: 0, ChildStart: []int32{0}}, HybridOptions{}, "nodes", "the e-graph is empty"},
		{"child out of range", &Graph{Ops: []OpDecl{{1, "f"}}, ClassCount: 1, NodeClass: []int32{0}, NodeOp: []int32{0}, ChildStart: []int32{0, 1}, Children: []int32{3}},
			HybridOptions{}, "nodes[0].children[0]", "outside"},
		{"negative MinMerges", good, HybridOptions{MinMerges: -1}, "", "must not be negative"},
		{"negative MaxRounds", good, HybridOptions{MaxRounds: -2}, "", "MaxRounds -2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := RebuildHybridWith(tc.g, tc.opt)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.msg)
			assert.Contains(t, err.Error(), "Fix:")
			var ge *GraphError
			if tc.field != "" {
				require.ErrorAs(t, err, &ge)
				assert.Equal(t, tc.field, ge.Field)
			} else {
				assert.NotErrorAs(t, err, &ge)
			}
		})
	}
}

func TestHybridMinMerges(t *testing.T) {
	for _, tc := range []struct{ n, want int }{{1, 1}, {63, 1}, {64, 1}, {65, 2}, {6400, 100}, {1_000_000, 15625}} {
		assert.Equal(t, tc.want, HybridMinMerges(tc.n), "n=%d", tc.n)
	}
}

func TestRebuildHybridBoundsRounds(t *testing.T) {
	tests := []struct {
		name string
		cfg  GenConfig
	}{
		{"giant", GenConfig{Nodes: 100_000, Seed: 1, Shape: ShapeGiantClass}},
		{"cycles of 40000", GenConfig{Nodes: 100_001, Seed: 2, Shape: ShapeDeepCycle, CycleLength: 40_000}},
		{"union chain", GenConfig{Nodes: 100_000, Seed: 3, Shape: ShapeUnionChain}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, err := Generate(tc.cfg)
			require.NoError(t, err)
			w, err := Rebuild(g)
			require.NoError(t, err)
			h, err := RebuildHybrid(g)
			require.NoError(t, err)
			require.Equal(t, w.Labels, h.Labels)
			assert.Equal(t, w.DistinctNodes, h.DistinctNodes)
			assert.LessOrEqual(t, h.DataParallelRounds, 64)
			t.Logf("%d data-parallel rounds, %d in all, worklist finished %v", h.DataParallelRounds, h.Rounds, h.WorklistFinished)
		})
	}
}
