package egraph

import (
	"compress/gzip"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// openSample opens a gzipped egg-bench sample from testdata.
func openSample(t testing.TB, name string) io.Reader {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name+".gz"))
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	z, err := gzip.NewReader(f)
	require.NoError(t, err)
	return z
}

// readSample reads the 1e4 dump and egg's partition of it.
func readSample(t testing.TB) (*Graph, *Partition) {
	t.Helper()
	g, err := ReadDump(openSample(t, "math-1e4.pre.txt"))
	require.NoError(t, err)
	p, err := ReadPartition(openSample(t, "math-1e4.post.txt"))
	require.NoError(t, err)
	return g, p
}

// naiveClosure is the oracle: a union-find over class ids with the pending
// unions applied, then full passes that hash-cons every e-node under its
// canonical children and unite the classes of equal e-nodes at once,
// until a pass unites nothing. It returns the labels (smallest id of each
// class), the passes run and the distinct canonical e-nodes of the last.
func naiveClosure(g *Graph) (labels []int32, passes, distinct int) {
	uf := newMinUnionFind(g.ClassCount)
	for k := 0; k < len(g.Unions); k += 2 {
		uf.union(g.Unions[k], g.Unions[k+1])
	}
	for changed := true; changed; {
		passes++
		changed = false
		table := map[string]int32{}
		for i := range g.NodeCount() {
			key := fmt.Sprint(g.NodeOp[i])
			for _, c := range g.NodeChildren(i) {
				key += fmt.Sprintf(",%d", uf.find(c))
			}
			r := uf.find(g.NodeClass[i])
			if o, ok := table[key]; !ok {
				table[key] = r
			} else if uf.union(o, r) {
				changed = true
			}
		}
		distinct = len(table)
	}
	labels = make([]int32, g.ClassCount)
	for c := range labels {
		labels[c] = uf.find(int32(c))
	}
	return labels, passes, distinct
}

// checkCongruence verifies, independently of any rebuild, that labels is
// a congruence containing g's equalities: every pending pair is in one
// class, and equal e-nodes under the labels are in one class.
func checkCongruence(t *testing.T, g *Graph, labels []int32) {
	t.Helper()
	for k := 0; k < len(g.Unions); k += 2 {
		require.Equal(t, labels[g.Unions[k]], labels[g.Unions[k+1]], "union pair %d", k/2)
	}
	owner := map[string]int32{}
	for i := range g.NodeCount() {
		key := fmt.Sprint(g.NodeOp[i])
		for _, c := range g.NodeChildren(i) {
			key += fmt.Sprintf(",%d", labels[c])
		}
		if o, ok := owner[key]; ok {
			require.Equal(t, o, labels[g.NodeClass[i]], "e-node %d is equal to an e-node of another class", i)
		}
		owner[key] = labels[g.NodeClass[i]]
	}
	for c, l := range labels {
		require.LessOrEqual(t, l, int32(c), "the label of class %d is its class's smallest id", c)
		require.Equal(t, l, labels[l], "a label labels itself")
	}
}

// checkAllAgree runs both rebuilds and the oracle on g and checks that
// they agree on everything they all report.
func checkAllAgree(t *testing.T, g *Graph) (*RebuildResult, *RebuildResult) {
	t.Helper()
	w, err := Rebuild(g)
	require.NoError(t, err)
	r, err := RebuildRounds(g)
	require.NoError(t, err)
	labels, _, distinct := naiveClosure(g)
	require.Equal(t, labels, w.Labels, "worklist against the naive closure")
	require.Equal(t, labels, r.Labels, "rounds against the naive closure")
	checkCongruence(t, g, w.Labels)
	for _, res := range []*RebuildResult{w, r} {
		assert.Equal(t, distinct, res.DistinctNodes)
		assert.Equal(t, int(g.ClassCount), res.ClassIDs)
		assert.Equal(t, res.ClassIDs-res.UnionMerges, res.ClassesAfterUnions)
		assert.Equal(t, res.ClassesAfterUnions-res.CongruenceMerges, res.Classes)
		assert.Equal(t, countDistinct(res.Labels), res.Classes)
		assert.GreaterOrEqual(t, res.Rounds, 1)
	}
	assert.Equal(t, w.UnionMerges, r.UnionMerges)
	assert.Equal(t, []any{0, true}, []any{w.DataParallelRounds, w.WorklistFinished}, "the worklist is never data-parallel")
	assert.Equal(t, []any{r.Rounds, false}, []any{r.DataParallelRounds, r.WorklistFinished}, "every round of RebuildRounds is data-parallel")
	checkHybridAgrees(t, g, w, r)
	checkIncrementalAgrees(t, g, w, r)
	return w, r
}

func TestRebuildEggSample(t *testing.T) {
	g, egg := readSample(t)
	w, r := checkAllAgree(t, g)
	for _, res := range []*RebuildResult{w, r} {
		require.NoError(t, ComparePartitions(egg.Classes, res.NodeClasses(g)))
		assert.Equal(t, 8728, res.Nodes)
		assert.Equal(t, 8157, res.ClassIDs)
		assert.Equal(t, 9953, res.UnionPairs)
		assert.Equal(t, 4429, res.UnionMerges, "egg's merging union calls")
		assert.Equal(t, 3728, res.ClassesAfterUnions, "egg's e-classes after the eager unions")
		assert.Equal(t, 153, res.CongruenceMerges, "egg's congruence unions")
		assert.Equal(t, 3575, res.Classes)
		assert.Equal(t, egg.DistinctNodes, res.DistinctNodes)
	}
	assert.Equal(t, 3575, egg.ClassCount)
	_, passes, _ := naiveClosure(g)
	assert.Equal(t, 4, passes, "the naive closure's hash-cons rounds, as egg-bench's checker counts them")
	t.Logf("rounds: worklist %d, data-parallel %d", w.Rounds, r.Rounds)
}

func TestRebuildSmall(t *testing.T) {
	// x=0, y=1, f(x)=2, f(y)=3, g(f(x))=4, g(f(y))=5; union x y.
	g := &Graph{
		Ops:        []OpDecl{{0, "x"}, {0, "y"}, {1, "f"}, {1, "g"}},
		ClassCount: 6,
		NodeClass:  []int32{0, 1, 2, 3, 4, 5},
		NodeOp:     []int32{0, 1, 2, 2, 3, 3},
		ChildStart: []int32{0, 0, 0, 1, 2, 3, 4},
		Children:   []int32{0, 1, 2, 3},
		Unions:     []int32{1, 0},
	}
	w, r := checkAllAgree(t, g)
	want := []int32{0, 0, 2, 2, 4, 4}
	assert.Equal(t, want, w.Labels)
	assert.Equal(t, []int32{0, 0, 2, 2, 4, 4}, w.NodeClasses(g))
	assert.Equal(t, 3, w.Classes)
	assert.Equal(t, 4, w.DistinctNodes, "x, y, f(x) and g(f(x))")
	assert.Equal(t, 2, w.CongruenceMerges)
	assert.Equal(t, 3, r.Rounds, "f merges in round 1, g in round 2, round 3 finds nothing")
}

func TestRebuildCycles(t *testing.T) {
	// The self-loops a=f(a) and b=f(b) stay apart (the smallest congruence
	// does not merge them) until a union joins them; a two-cycle united
	// with a self-loop collapses into one class.
	tests := []struct {
		name    string
		g       *Graph
		classes int
	}{
		{"self loops apart", &Graph{Ops: []OpDecl{{1, "f"}}, ClassCount: 2, NodeClass: []int32{0, 1}, NodeOp: []int32{0, 0},
			ChildStart: []int32{0, 1, 2}, Children: []int32{0, 1}}, 2},
		{"self loops united", &Graph{Ops: []OpDecl{{1, "f"}}, ClassCount: 2, NodeClass: []int32{0, 1}, NodeOp: []int32{0, 0},
			ChildStart: []int32{0, 1, 2}, Children: []int32{0, 1}, Unions: []int32{0, 1}}, 1},
		{"two-cycle and one-cycle", &Graph{Ops: []OpDecl{{1, "f"}}, ClassCount: 3, NodeClass: []int32{0, 1, 2}, NodeOp: []int32{0, 0, 0},
			ChildStart: []int32{0, 1, 2, 3}, Children: []int32{1, 0, 2}, Unions: []int32{0, 2}}, 1},
		{"cycle through a class of two", &Graph{Ops: []OpDecl{{0, "x"}, {2, "g"}}, ClassCount: 2, NodeClass: []int32{0, 1, 1}, NodeOp: []int32{0, 1, 1},
			ChildStart: []int32{0, 0, 2, 4}, Children: []int32{0, 1, 1, 0}}, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w, _ := checkAllAgree(t, tc.g)
			assert.Equal(t, tc.classes, w.Classes)
		})
	}
}

func TestRebuildInvalid(t *testing.T) {
	g := &Graph{Ops: []OpDecl{{1, "f"}}, ClassCount: 1, NodeClass: []int32{0}, NodeOp: []int32{0}, ChildStart: []int32{0, 1}, Children: []int32{3}}
	for _, f := range []func(*Graph) (*RebuildResult, error){Rebuild, RebuildRounds} {
		_, err := f(g)
		var ge *GraphError
		require.ErrorAs(t, err, &ge)
		assert.Equal(t, "nodes[0].children[0]", ge.Field)
		assert.Contains(t, err.Error(), "Fix:")
	}
}

// randomGraph builds a small, fully random e-graph: random classes (some
// shared), random children (self-loops and cycles included), some variadic
// e-nodes, duplicate e-nodes and random unions.
func randomGraph(r *rand.Rand) *Graph {
	n := 1 + r.IntN(60)
	classes := 1 + r.IntN(n)
	g := &Graph{ClassCount: int32(classes), ChildStart: []int32{0}}
	for k := range 2 + r.IntN(4) {
		g.Ops = append(g.Ops, OpDecl{Arity: int32(k % 3), Name: fmt.Sprintf("o%d", k)})
	}
	g.Ops = append(g.Ops, OpDecl{Arity: VariadicArity, Name: "v"})
	for i := range n {
		c := int32(i)
		if i >= classes {
			c = int32(r.IntN(classes))
		}
		op := int32(r.IntN(len(g.Ops)))
		arity := int(g.Ops[op].Arity)
		if arity < 0 {
			arity = r.IntN(4)
		}
		for range arity {
			g.Children = append(g.Children, int32(r.IntN(classes)))
		}
		g.NodeClass, g.NodeOp = append(g.NodeClass, c), append(g.NodeOp, op)
		g.ChildStart = append(g.ChildStart, int32(len(g.Children)))
	}
	for range r.IntN(classes + 1) {
		g.Unions = append(g.Unions, int32(r.IntN(classes)), int32(r.IntN(classes)))
	}
	return g
}

func TestRebuildRandomProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 1))
	for range 600 {
		g := randomGraph(r)
		require.NoError(t, g.Validate())
		checkAllAgree(t, g)
	}
}

// permuteNodes returns g with its e-nodes in the order perm (the class ids
// are untouched, so the labels must not change).
func permuteNodes(g *Graph, perm []int) *Graph {
	p := &Graph{Ops: g.Ops, ClassCount: g.ClassCount, Unions: g.Unions, ChildStart: []int32{0}}
	for _, i := range perm {
		p.NodeClass = append(p.NodeClass, g.NodeClass[i])
		p.NodeOp = append(p.NodeOp, g.NodeOp[i])
		p.Children = append(p.Children, g.NodeChildren(i)...)
		p.ChildStart = append(p.ChildStart, int32(len(p.Children)))
	}
	return p
}

func TestRebuildOrderInvariant(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	g, err := Generate(GenConfig{Nodes: 3000, Seed: 5})
	require.NoError(t, err)
	want, err := RebuildRounds(g)
	require.NoError(t, err)
	for range 3 {
		perm := r.Perm(g.NodeCount())
		p := permuteNodes(g, perm)
		u := slices.Clone(g.Unions)
		r.Shuffle(len(u)/2, func(i, j int) {
			u[2*i], u[2*j] = u[2*j], u[2*i]
			u[2*i+1], u[2*j+1] = u[2*j+1], u[2*i+1]
		})
		p.Unions = u
		for _, f := range []func(*Graph) (*RebuildResult, error){Rebuild, RebuildRounds} {
			got, err := f(p)
			require.NoError(t, err)
			assert.Equal(t, want.Labels, got.Labels)
			assert.Equal(t, want.DistinctNodes, got.DistinctNodes)
		}
	}
}
