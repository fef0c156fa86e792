// Package validate checks a BFS result against its graph without running a
// BFS: the Graph500 validation rules, one parallel pass over the edges.
//
// Levels from a root are exactly the BFS levels when
//
//  1. the root's level is 0 and every other level is Unreached (-1) or
//     positive;
//  2. every edge u -> v whose source u is reached has v reached, at a level
//     at most one more than u's (on an undirected graph, so in both
//     directions: a reached vertex's neighbours are reached, within one
//     level of it);
//  3. every reached vertex but the root has an in-neighbour one level closer
//     to the root.
//
// Rule 3 bounds every level from below by the distance (it names a path of
// that length back to the root), rule 2 from above (the levels along a
// shortest path grow by at most one an edge), and rule 2 also keeps the
// reached set closed: so the levels are the distances, and the reached set
// is the root's component. A parent tree is valid when, besides, each
// reached vertex's parent is an in-neighbour one level closer to the root
// and the root and the unreached vertices have none (Unreached): levels
// fall by one along every parent, so the tree has no cycle.
//
// The checks cost one read of the adjacency (and of the in-adjacency for
// rule 3), spread over every CPU, and allocate nothing beyond one result
// per worker: they serve where the CPU reference BFS is too slow to run per
// root, on the largest graphs.
package validate

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/gpuplan/gpuplan/frontier"
)

// Violation is a BFS result that breaks a rule: the vertex (and the
// neighbour, or -1) where the check found it, and the levels involved.
type Violation struct {
	// Rule is the rule broken (1 to 3, or 4 for a parent).
	Rule int
	// Vertex is the vertex checked, Neighbor the neighbour or parent
	// involved (-1 when none is).
	Vertex, Neighbor int32
	// Level and NeighborLevel are their levels.
	Level, NeighborLevel int32
	// Msg says what is wrong.
	Msg string
}

// Error describes the violation and ends with a Fix.
func (v *Violation) Error() string {
	at := fmt.Sprintf("vertex %d (level %d)", v.Vertex, v.Level)
	if v.Neighbor >= 0 {
		at += fmt.Sprintf(", neighbour %d (level %d)", v.Neighbor, v.NeighborLevel)
	}
	return fmt.Sprintf("BFS result breaks rule %d at %s: %s. Fix: the traversal that produced it is wrong; compare it with frontier.BFS on a smaller graph", v.Rule, at, v.Msg)
}

// Levels checks levels from root against the graph whose out-edges are out
// and in-edges in (pass the same CSR twice for an undirected graph). It
// returns nil, a *Violation (the one at the lowest vertex), or an error
// for inputs of the wrong size.
func Levels(out, in *frontier.CSR, root int32, levels []int32) error {
	if err := checkShape(out, in, root, levels, "levels"); err != nil {
		return err
	}
	if levels[root] != 0 {
		return &Violation{Rule: 1, Vertex: root, Neighbor: -1, Level: levels[root], Msg: "the root's level is not 0"}
	}
	return first(out.NumVertices(), func(lo, hi int) *Violation {
		for v := lo; v < hi; v++ {
			if bad := checkVertex(out, in, root, levels, int32(v)); bad != nil {
				return bad
			}
		}
		return nil
	})
}

// Parents checks a parent tree (parents[v] the parent of v) beside levels
// already checked by Levels: every reached vertex but the root has an
// in-neighbour one level closer for its parent, and the root and the
// unreached vertices have none.
func Parents(in *frontier.CSR, root int32, levels, parents []int32) error {
	if err := checkShape(in, in, root, levels, "levels"); err != nil {
		return err
	}
	if len(parents) != len(levels) {
		return fmt.Errorf("validate: %d parents for %d vertices. Fix: pass one parent a vertex", len(parents), len(levels))
	}
	return first(in.NumVertices(), func(lo, hi int) *Violation {
		for v := lo; v < hi; v++ {
			if bad := checkParent(in, root, levels, parents, int32(v)); bad != nil {
				return bad
			}
		}
		return nil
	})
}

// checkShape refuses a graph pair or result of the wrong size.
func checkShape(out, in *frontier.CSR, root int32, levels []int32, field string) error {
	n := out.NumVertices()
	switch {
	case in.NumVertices() != n:
		return fmt.Errorf("validate: the in-edges have %d vertices, the out-edges %d. Fix: pass the transpose of the same graph (or the same CSR twice for an undirected one)", in.NumVertices(), n)
	case len(levels) != n:
		return fmt.Errorf("validate: %d %s for %d vertices. Fix: pass one level a vertex", len(levels), field, n)
	case root < 0 || int(root) >= n:
		return fmt.Errorf("validate: root %d is not a vertex (the graph has %d). Fix: pass the root the BFS ran from", root, n)
	}
	return nil
}

// checkVertex applies rules 1 to 3 to vertex v.
func checkVertex(out, in *frontier.CSR, root int32, levels []int32, v int32) *Violation {
	l := levels[v]
	switch {
	case l < frontier.Unreached || (l == 0 && v != root):
		return &Violation{Rule: 1, Vertex: v, Neighbor: -1, Level: l, Msg: "a level is below -1, or 0 away from the root"}
	case l == frontier.Unreached:
		return nil
	}
	for _, w := range out.Neighbors(v) {
		if lw := levels[w]; lw == frontier.Unreached || lw > l+1 {
			return &Violation{Rule: 2, Vertex: v, Neighbor: w, Level: l, NeighborLevel: lw, Msg: "an edge leads from a reached vertex to one unreached or more than one level further"}
		}
	}
	if v == root {
		return nil
	}
	for _, w := range in.Neighbors(v) {
		if levels[w] == l-1 {
			return nil
		}
	}
	return &Violation{Rule: 3, Vertex: v, Neighbor: -1, Level: l, Msg: "no in-neighbour is one level closer to the root"}
}

// checkParent checks vertex v's parent.
func checkParent(in *frontier.CSR, root int32, levels, parents []int32, v int32) *Violation {
	l, p := levels[v], parents[v]
	if v == root || l == frontier.Unreached {
		if p != frontier.Unreached {
			return &Violation{Rule: 4, Vertex: v, Neighbor: p, Level: l, NeighborLevel: levelOf(levels, p), Msg: "the root or an unreached vertex has a parent"}
		}
		return nil
	}
	if p < 0 || int(p) >= len(levels) || levels[p] != l-1 {
		return &Violation{Rule: 4, Vertex: v, Neighbor: p, Level: l, NeighborLevel: levelOf(levels, p), Msg: "the parent is not a vertex one level closer to the root"}
	}
	for _, w := range in.Neighbors(v) {
		if w == p {
			return nil
		}
	}
	return &Violation{Rule: 4, Vertex: v, Neighbor: p, Level: l, NeighborLevel: levels[p], Msg: "the parent is not an in-neighbour"}
}

// levelOf is v's level, or Unreached when v is not a vertex.
func levelOf(levels []int32, v int32) int32 {
	if v < 0 || int(v) >= len(levels) {
		return frontier.Unreached
	}
	return levels[v]
}

// first runs check over contiguous ranges of [0, n) on every CPU and
// returns the violation of the lowest range that has one.
func first(n int, check func(lo, hi int) *Violation) error {
	workers := max(1, min(runtime.GOMAXPROCS(0), n/4096))
	found := make([]*Violation, workers)
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := w*n/workers, (w+1)*n/workers
		wg.Go(func() { found[w] = check(lo, hi) })
	}
	wg.Wait()
	for _, v := range found {
		if v != nil {
			return v
		}
	}
	return nil
}
