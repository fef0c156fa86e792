package frontier

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync/atomic"
)

// Unreached is the level of a vertex BFS did not reach.
const Unreached int32 = -1

// RootError reports a BFS root that is not a vertex of the graph.
type RootError struct {
	Root        int64
	NumVertices int
}

func (e *RootError) Error() string {
	return fmt.Sprintf("BFS root %d is out of range 0..%d. Fix: pick a root id below the vertex count", e.Root, e.NumVertices-1)
}

// CheckRoot returns a *RootError when root is not a vertex of g.
func CheckRoot(g *CSR, root int64) error {
	if root < 0 || root >= int64(g.NumVertices()) {
		return &RootError{Root: root, NumVertices: g.NumVertices()}
	}
	return nil
}

// bfsLookahead is how many queued vertices ahead BFS loads a vertex's
// first offset, so that its cache miss overlaps the scans of the rows
// before it: the queue holds vertices in the order they were found,
// scattered over the offsets, whose 8-byte entries put half as many
// vertices on a cache line as 4-byte ones would (16 and 32 measured about
// alike on Kronecker, grid and road graphs; 32 was a little faster).
const bfsLookahead = 32

// bfsTouched receives the sum of the offsets BFS loads ahead, so that the
// compiler keeps the loads; nothing reads it.
var bfsTouched atomic.Uint64

// BFS runs a breadth-first search from root on the CPU and returns the level
// of every vertex: 0 for the root, Unreached (-1) for vertices in other
// components. It is the reference every GPU arm is checked against.
func BFS(g *CSR, root int32) ([]int32, error) {
	if err := CheckRoot(g, int64(root)); err != nil {
		return nil, err
	}
	levels := make([]int32, g.NumVertices())
	for i := range levels {
		levels[i] = Unreached
	}
	levels[root] = 0
	queue := make([]int32, 1, 1024)
	queue[0] = root
	offsets := g.Offsets
	var touched uint64
	for head := 0; head < len(queue); head++ {
		u := queue[head]
		if ahead := head + bfsLookahead; ahead < len(queue) {
			touched += offsets[queue[ahead]]
		}
		next := levels[u] + 1
		for _, w := range g.Targets[offsets[u]:offsets[u+1]] {
			if levels[w] == Unreached {
				levels[w] = next
				queue = append(queue, w)
			}
		}
	}
	bfsTouched.Store(touched)
	return levels, nil
}

// ValidationError reports BFS levels that are not a valid BFS of the graph.
type ValidationError struct {
	// Vertex is the first vertex at which the check failed.
	Vertex int32
	Msg    string
}

func (e *ValidationError) Error() string {
	return fmt.Sprintf("BFS levels invalid at vertex %d: %s. Fix: the traversal that produced them is wrong; compare it with frontier.BFS", e.Vertex, e.Msg)
}

// Validate checks levels against g in the Graph500 way, without trusting the
// traversal that produced them: the root has level 0 and is the only vertex
// at level 0; along every edge both ends are reached or both are not, and
// their levels differ by at most one; and every reached vertex other than
// the root has a neighbour one level closer to the root (its possible
// parent). These rules together make every level the exact BFS distance.
func Validate(g *CSR, root int32, levels []int32) error {
	n := g.NumVertices()
	if err := CheckRoot(g, int64(root)); err != nil {
		return err
	}
	if len(levels) != n {
		return &ValidationError{Vertex: -1, Msg: fmt.Sprintf("%d levels for %d vertices", len(levels), n)}
	}
	if levels[root] != 0 {
		return &ValidationError{Vertex: root, Msg: fmt.Sprintf("the root has level %d, want 0", levels[root])}
	}
	return validateParallel(g, root, levels, runtime.GOMAXPROCS(0))
}

// validateRange runs Validate's per-vertex checks on the vertices lo..hi-1
// and returns the first failure.
func validateRange(g *CSR, root int32, levels []int32, lo, hi int32) error {
	n := g.NumVertices()
	for v := lo; v < hi; v++ {
		lv := levels[v]
		if lv < Unreached || int64(lv) >= int64(n) {
			return &ValidationError{Vertex: v, Msg: fmt.Sprintf("level %d is outside -1..%d", lv, n-1)}
		}
		if lv == 0 && v != root {
			return &ValidationError{Vertex: v, Msg: "a second vertex has level 0"}
		}
		hasParent := lv <= 0
		for _, w := range g.Targets[g.Offsets[v]:g.Offsets[v+1]] {
			lw := levels[w]
			if (lv == Unreached) != (lw == Unreached) {
				return &ValidationError{Vertex: v, Msg: fmt.Sprintf("edge to vertex %d joins a reached and an unreached vertex (levels %d, %d)", w, lv, lw)}
			}
			if lv == Unreached {
				continue
			}
			if d := lv - lw; d > 1 || d < -1 {
				return &ValidationError{Vertex: v, Msg: fmt.Sprintf("edge to vertex %d spans levels %d and %d", w, lv, lw)}
			}
			if lw == lv-1 {
				hasParent = true
			}
		}
		if !hasParent {
			return &ValidationError{Vertex: v, Msg: fmt.Sprintf("level %d but no neighbour at level %d", lv, lv-1)}
		}
	}
	return nil
}

// TraversalStats summarizes one BFS.
type TraversalStats struct {
	// Levels is the number of BFS levels: the largest level + 1.
	Levels int
	// Reached is the number of vertices reached, the root included.
	Reached int
	// Edges is the number of undirected edges in the traversed component
	// (the sum of the reached vertices' degrees / 2): the numerator of TEPS.
	Edges uint64
}

// Stats returns the level count, reached vertices and traversed edges of a
// BFS result, summed on every CPU. On a graph built by BuildUndirected or a
// generator (symmetric, no self loops, no duplicates), Edges is Graph500's
// count: the undirected edges inside the traversed component, each counted
// once, which is the numerator of GTEPS.
func Stats(g *CSR, levels []int32) TraversalStats {
	return statsParallel(g, levels, runtime.GOMAXPROCS(0))
}

// statsRange returns the stats of the vertices lo..hi-1, with Edges still
// the sum of their degrees (not yet halved).
func statsRange(g *CSR, levels []int32, lo, hi int) TraversalStats {
	var s TraversalStats
	for v := lo; v < hi; v++ {
		l := levels[v]
		if l == Unreached {
			continue
		}
		s.Reached++
		s.Levels = max(s.Levels, int(l)+1)
		s.Edges += uint64(g.Offsets[v+1] - g.Offsets[v])
	}
	return s
}

// Checksum returns the 64-bit FNV-1a hash of the levels as little-endian
// int32s: equal levels give equal checksums in the evidence CSVs.
func Checksum(levels []int32) uint64 {
	h := uint64(14695981039346656037)
	for _, l := range levels {
		u := uint32(l)
		for i := 0; i < 4; i++ {
			h ^= uint64(byte(u >> (8 * i)))
			h *= 1099511628211
		}
	}
	return h
}

// NoRootError reports a graph without any vertex of non-zero degree.
type NoRootError struct{ Source string }

func (e *NoRootError) Error() string {
	return fmt.Sprintf("graph %q has no vertex with an edge to use as a BFS root. Fix: supply a graph with edges", e.Source)
}

// Roots picks count BFS roots among the vertices of non-zero degree, as
// Graph500 does, deterministically from seed. Roots are distinct while the
// graph has enough candidates; after that they repeat in order.
func Roots(g *CSR, count int, seed uint64) ([]int32, error) {
	if count < 1 {
		return nil, fmt.Errorf("root count %d is below 1. Fix: ask for at least one root", count)
	}
	n := g.NumVertices()
	if n == 0 {
		return nil, &NoRootError{Source: g.Name}
	}
	r := rand.New(rand.NewPCG(seed, 0x2545f4914f6cdd1d))
	roots := make([]int32, 0, count)
	seen := make(map[int32]bool, min(count, n))
	// Rejection sampling finds roots fast on graphs where most vertices have
	// edges; a bounded number of tries keeps sparse graphs fast too.
	for tries := 0; len(roots) < count && tries < 64*count; tries++ {
		v := int32(r.IntN(n))
		if g.Offsets[v+1] > g.Offsets[v] && !seen[v] {
			seen[v] = true
			roots = append(roots, v)
		}
	}
	if len(roots) < count {
		var candidates []int32
		for v := int32(0); int(v) < n; v++ {
			if g.Offsets[v+1] > g.Offsets[v] && !seen[v] {
				candidates = append(candidates, v)
			}
		}
		r.Shuffle(len(candidates), func(i, j int) { candidates[i], candidates[j] = candidates[j], candidates[i] })
		for _, v := range candidates {
			if len(roots) == count {
				break
			}
			roots = append(roots, v)
		}
		if len(roots) == 0 {
			return nil, &NoRootError{Source: g.Name}
		}
		for i := 0; len(roots) < count; i++ {
			roots = append(roots, roots[i])
		}
	}
	return roots, nil
}
