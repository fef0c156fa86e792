package bfsquery

import (
	"fmt"

	"github.com/gpuplan/gpuplan/frontier"
)

// Unreached is the level (and parent) of a vertex a query does not reach,
// or reaches beyond its depth limit.
const Unreached = frontier.Unreached

// NoDepthLimit is a query's MaxDepth for no limit.
const NoDepthLimit int32 = -1

// MaxTargets bounds a query's targets.
const MaxTargets = 1 << 24

// Query is one BFS query: the levels from Root of Targets (every vertex
// when nil), Unreached beyond MaxDepth (NoDepthLimit: none), and each
// target's parent in a BFS tree when Parents is set.
type Query struct {
	Root     int32
	Targets  []int32
	MaxDepth int32
	Parents  bool
}

// Answer is a query's answer: one level per target (per vertex without
// targets), Unreached where the target is not reached within the depth
// limit; with parents, each target's parent in one BFS tree from Root (the
// smallest in-neighbour one level closer), Unreached for the root and for
// unreached targets. Reached counts the vertices within the depth limit and
// Depth is the largest level among them.
type Answer struct {
	Root    int32   `json:"root"`
	Levels  []int32 `json:"levels"`
	Parents []int32 `json:"parents,omitempty"`
	Reached int     `json:"reached"`
	Depth   int32   `json:"depth"`
}

// QueryError is a query the graph refuses: Field names it (for example
// "root" or "targets[3]"), Msg says why and Fix what to do.
type QueryError struct {
	Index int
	Field string
	Msg   string
	Fix   string
}

// Error names the field and ends with a "Fix:" sentence.
func (e *QueryError) Error() string {
	return fmt.Sprintf("%s: %s. Fix: %s", e.Field, e.Msg, e.Fix)
}

// check refuses a query outside a graph of n vertices.
func (q *Query) check(n, index int) error {
	switch {
	case q.Root < 0 || int(q.Root) >= n:
		return &QueryError{Index: index, Field: "root", Msg: fmt.Sprintf("vertex %d is not in the graph of %d vertices", q.Root, n), Fix: fmt.Sprintf("give a root from 0 to %d", n-1)}
	case q.MaxDepth < NoDepthLimit:
		return &QueryError{Index: index, Field: "max_depth", Msg: fmt.Sprintf("depth %d is negative", q.MaxDepth), Fix: "give a depth of 0 or more, or -1 for no limit"}
	case len(q.Targets) > MaxTargets:
		return &QueryError{Index: index, Field: "targets", Msg: fmt.Sprintf("%d targets", len(q.Targets)), Fix: fmt.Sprintf("ask for at most %d targets, or for every vertex (no targets)", MaxTargets)}
	}
	for i, t := range q.Targets {
		if t < 0 || int(t) >= n {
			return &QueryError{Index: index, Field: fmt.Sprintf("targets[%d]", i), Msg: fmt.Sprintf("vertex %d is not in the graph of %d vertices", t, n), Fix: fmt.Sprintf("give targets from 0 to %d", n-1)}
		}
	}
	return nil
}

// answer builds q's answer from its root's levels.
func (g *Graph) answer(q Query, w *levelView) Answer {
	a := Answer{Root: q.Root}
	a.Reached, a.Depth = w.reach(q.MaxDepth)
	within := func(l int32) bool { return l != Unreached && (q.MaxDepth == NoDepthLimit || l <= q.MaxDepth) }
	pick := func(v int32) int32 {
		if l := w.level(v); within(l) {
			return l
		}
		return Unreached
	}
	parent := func(v int32) int32 {
		if l := pick(v); l > 0 {
			return w.parent(g.in, v)
		}
		return Unreached
	}
	// A query over every vertex answers vertex i at i, without a list of
	// every vertex.
	count, target := len(q.Targets), func(i int) int32 { return q.Targets[i] }
	if q.Targets == nil {
		count, target = len(w.full), func(i int) int32 { return int32(i) }
	}
	a.Levels = make([]int32, count)
	for i := range a.Levels {
		a.Levels[i] = pick(target(i))
	}
	if q.Parents {
		a.Parents = make([]int32, count)
		for i := range a.Parents {
			a.Parents[i] = parent(target(i))
		}
	}
	return a
}

// Parent returns v's parent in a BFS tree given by levels: the smallest
// in-neighbour (in lists each vertex's in-neighbours) one level closer to
// the root, or Unreached for the root and unreached vertices.
func Parent(in *frontier.CSR, levels []int32, v int32) int32 {
	l := levels[v]
	if l <= 0 {
		return Unreached
	}
	best := Unreached
	for _, u := range in.Neighbors(v) {
		if levels[u] == l-1 && (best == Unreached || u < best) {
			best = u
		}
	}
	return best
}

// Transpose returns g's reverse: an edge v->u for every edge u->v, each
// list sorted.
func Transpose(g *frontier.CSR) *frontier.CSR {
	n := g.NumVertices()
	off := make([]uint64, n+1)
	for _, t := range g.Targets {
		off[t+1]++
	}
	for v := 1; v <= n; v++ {
		off[v] += off[v-1]
	}
	tgt := make([]int32, len(g.Targets))
	cur := append([]uint64(nil), off[:n]...)
	for u := range n {
		for _, t := range g.Neighbors(int32(u)) {
			tgt[cur[t]] = int32(u)
			cur[t]++
		}
	}
	return &frontier.CSR{Name: g.Name + "-reversed", Offsets: off, Targets: tgt}
}
