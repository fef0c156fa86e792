package bfsquery

import (
	"slices"

	"github.com/gpuplan/gpuplan/frontier"
)

// levelView is one root's levels as its queries need them: every vertex's
// (full), or, on a GPU, only those of the vertices the queries read (their
// targets, and a parent query's targets' in-neighbours) with the count of
// vertices at each level, so that the answers never read the whole level
// array back.
type levelView struct {
	full   []int32
	sparse map[int32]int32
	// counts[l] is the vertices at level l (sparse views).
	counts []uint64
}

// fullView views every vertex's levels.
func fullView(levels []int32) *levelView { return &levelView{full: levels} }

// sparseView views the levels of vertices (levels[i] is vertices[i]'s)
// with the per-level counts.
func sparseView(vertices, levels []int32, counts []uint64) *levelView {
	m := make(map[int32]int32, len(vertices))
	for i, v := range vertices {
		m[v] = levels[i]
	}
	return &levelView{sparse: m, counts: counts}
}

// level returns v's level (Unreached when v was not read).
func (w *levelView) level(v int32) int32 {
	if w.full != nil {
		return w.full[v]
	}
	if l, ok := w.sparse[v]; ok {
		return l
	}
	return Unreached
}

// reach returns the vertices within maxDepth and the largest level among
// them.
func (w *levelView) reach(maxDepth int32) (reached int, depth int32) {
	within := func(l int32) bool { return l != Unreached && (maxDepth == NoDepthLimit || l <= maxDepth) }
	if w.full != nil {
		for _, l := range w.full {
			if within(l) {
				reached++
				depth = max(depth, l)
			}
		}
		return reached, depth
	}
	for l, c := range w.counts {
		if c > 0 && within(int32(l)) {
			reached += int(c)
			depth = max(depth, int32(l))
		}
	}
	return reached, depth
}

// parent returns v's parent in the BFS tree w gives: the smallest
// in-neighbour one level closer, or Unreached for the root and unreached
// vertices (as Parent does on full levels).
func (w *levelView) parent(in *frontier.CSR, v int32) int32 {
	l := w.level(v)
	if l <= 0 {
		return Unreached
	}
	best := Unreached
	for _, u := range in.Neighbors(v) {
		if w.level(u) == l-1 && (best == Unreached || u < best) {
			best = u
		}
	}
	return best
}

// need is what a root's queries read: every vertex (full), or the sorted
// distinct vertices.
type need struct {
	full     bool
	vertices []int32
}

// needs returns, for each root of qs, the vertices its queries read: their
// targets and, for a query with parents, its targets' in-neighbours in in;
// a query with no targets reads every vertex.
func needs(in *frontier.CSR, qs []Query) map[int32]*need {
	out := map[int32]*need{}
	for _, q := range qs {
		n := out[q.Root]
		if n == nil {
			n = &need{}
			out[q.Root] = n
		}
		if n.full {
			continue
		}
		if q.Targets == nil {
			n.full, n.vertices = true, nil
			continue
		}
		n.vertices = append(n.vertices, q.Targets...)
		if q.Parents {
			for _, t := range q.Targets {
				n.vertices = append(n.vertices, in.Neighbors(t)...)
			}
		}
	}
	for _, n := range out {
		slices.Sort(n.vertices)
		n.vertices = slices.Compact(n.vertices)
	}
	return out
}
