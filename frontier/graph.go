package frontier

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

// MaxGraphVertices is the largest vertex count a CSR can hold: vertex ids are
// int32 and the offsets array has one more entry than there are vertices.
const MaxGraphVertices = math.MaxInt32 - 1

// MaxGraphEdgeEntries is the largest number of adjacency entries (directed
// edges) a CSR can hold: offsets are uint32.
const MaxGraphEdgeEntries = math.MaxUint32

// CSR is a graph in compressed sparse row form, held in flat arrays so that
// it uploads to a GPU as two buffers. The neighbours of vertex v are
// Targets[Offsets[v]:Offsets[v+1]], sorted ascending and free of duplicates
// and self loops when the graph was built by BuildUndirected or a generator.
//
// Graphs built by this package are undirected: every edge u-v is stored as
// the two entries u->v and v->u.
type CSR struct {
	// Name labels the graph in reports, for example "grid-2048".
	Name string
	// Offsets has NumVertices()+1 entries; Offsets[0] is 0 and the last
	// entry equals len(Targets).
	Offsets []uint32
	// Targets holds the adjacency lists back to back.
	Targets []int32
}

// NumVertices returns the number of vertices.
func (g *CSR) NumVertices() int {
	if len(g.Offsets) == 0 {
		return 0
	}
	return len(g.Offsets) - 1
}

// NumEdgeEntries returns the number of adjacency entries (directed edges);
// an undirected graph stores each edge twice.
func (g *CSR) NumEdgeEntries() int { return len(g.Targets) }

// Degree returns the number of neighbours of v. v must be in range.
func (g *CSR) Degree(v int32) int { return int(g.Offsets[v+1] - g.Offsets[v]) }

// Neighbors returns the adjacency list of v (a view, not a copy).
func (g *CSR) Neighbors(v int32) []int32 { return g.Targets[g.Offsets[v]:g.Offsets[v+1]] }

// Bytes returns the size of the two CSR arrays in bytes, as they are laid out
// on a device: 4 bytes per offset and 4 bytes per target.
func (g *CSR) Bytes() uint64 {
	return 4*uint64(len(g.Offsets)) + 4*uint64(len(g.Targets))
}

// Check validates the structure of g: offsets start at 0, never decrease and
// end at len(Targets), and every target is a vertex of g. It returns a
// *StructureError naming the first violation.
func (g *CSR) Check() error {
	n := g.NumVertices()
	if n == 0 {
		return &EmptyGraphError{Source: g.Name, Vertices: 0}
	}
	if n > MaxGraphVertices {
		return &TooLargeError{Source: g.Name, Field: "vertices", Value: uint64(n), Limit: MaxGraphVertices}
	}
	if uint64(len(g.Targets)) > MaxGraphEdgeEntries {
		return &TooLargeError{Source: g.Name, Field: "edge entries", Value: uint64(len(g.Targets)), Limit: MaxGraphEdgeEntries}
	}
	if g.Offsets[0] != 0 {
		return &StructureError{Source: g.Name, Index: 0, Msg: fmt.Sprintf("offsets[0] is %d, want 0", g.Offsets[0])}
	}
	for v := 0; v < n; v++ {
		if g.Offsets[v+1] < g.Offsets[v] {
			return &StructureError{Source: g.Name, Index: v + 1, Msg: fmt.Sprintf("offsets[%d]=%d is below offsets[%d]=%d", v+1, g.Offsets[v+1], v, g.Offsets[v])}
		}
	}
	if int(g.Offsets[n]) != len(g.Targets) {
		return &StructureError{Source: g.Name, Index: n, Msg: fmt.Sprintf("offsets[%d]=%d, want len(targets)=%d", n, g.Offsets[n], len(g.Targets))}
	}
	for i, t := range g.Targets {
		if t < 0 || int(t) >= n {
			return &StructureError{Source: g.Name, Index: i, Msg: fmt.Sprintf("targets[%d]=%d is not a vertex (0..%d)", i, t, n-1)}
		}
	}
	return nil
}

// StructureError reports a malformed CSR: Index is the offending position
// in Offsets or Targets.
type StructureError struct {
	Source string
	Index  int
	Msg    string
}

func (e *StructureError) Error() string {
	return fmt.Sprintf("graph %q: %s. Fix: build the graph with frontier.BuildUndirected or a generator", e.Source, e.Msg)
}

// EmptyGraphError reports a graph with no vertices or no edges; BFS on it
// measures nothing.
type EmptyGraphError struct {
	Source   string
	Vertices int
}

func (e *EmptyGraphError) Error() string {
	return fmt.Sprintf("graph %q is empty (%d vertices, no edges other than self loops). Fix: supply a graph with at least one edge between two distinct vertices", e.Source, e.Vertices)
}

// TooLargeError reports a graph quantity over a limit: the CSR's index
// types, a loader's limit or a device memory budget.
type TooLargeError struct {
	Source string
	// Field names the quantity, for example "vertices", "edge entries" or
	// "device bytes".
	Field string
	Value uint64
	Limit uint64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("graph %q: %s %d exceeds the limit %d. Fix: use a smaller graph or raise the limit", e.Source, e.Field, e.Value, e.Limit)
}

// BuildUndirected builds an undirected CSR over n vertices from the edge
// list (src[i], dst[i]). Each edge is stored in both directions; self loops
// and duplicate edges are dropped, and every adjacency list is sorted. The
// result does not depend on the order of the input edges. It returns
// *EmptyGraphError when no edge remains, *TooLargeError when the graph does
// not fit the CSR's index types, and *VertexRangeError for an endpoint
// outside 0..n-1.
func BuildUndirected(name string, n int, src, dst []int32) (*CSR, error) {
	if len(src) != len(dst) {
		return nil, fmt.Errorf("graph %q: %d sources but %d destinations. Fix: pass edge endpoint slices of equal length", name, len(src), len(dst))
	}
	if n <= 0 {
		return nil, &EmptyGraphError{Source: name, Vertices: 0}
	}
	if n > MaxGraphVertices {
		return nil, &TooLargeError{Source: name, Field: "vertices", Value: uint64(n), Limit: MaxGraphVertices}
	}
	if 2*uint64(len(src)) > MaxGraphEdgeEntries {
		return nil, &TooLargeError{Source: name, Field: "edge entries", Value: 2 * uint64(len(src)), Limit: MaxGraphEdgeEntries}
	}
	for i := range src {
		u, v := src[i], dst[i]
		if u < 0 || int(u) >= n {
			return nil, &VertexRangeError{Source: name, Edge: i, Vertex: int64(u), NumVertices: n}
		}
		if v < 0 || int(v) >= n {
			return nil, &VertexRangeError{Source: name, Edge: i, Vertex: int64(v), NumVertices: n}
		}
	}
	// Count degrees and scatter the entries in parallel with atomic
	// cursors; the order within a row is then arbitrary, and sortDedup's
	// per-row sort makes the result deterministic.
	deg := make([]uint32, n+1)
	parallelRanges(len(src), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			if u, v := src[i], dst[i]; u != v {
				atomic.AddUint32(&deg[u], 1)
				atomic.AddUint32(&deg[v], 1)
			}
		}
	})
	offsets := make([]uint32, n+1)
	var sum uint32
	for v := 0; v < n; v++ {
		offsets[v] = sum
		sum += deg[v]
	}
	offsets[n] = sum
	if sum == 0 {
		return nil, &EmptyGraphError{Source: name, Vertices: n}
	}
	targets := make([]int32, sum)
	cursor := deg[:n]
	copy(cursor, offsets[:n])
	parallelRanges(len(src), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			u, v := src[i], dst[i]
			if u == v {
				continue
			}
			targets[atomic.AddUint32(&cursor[u], 1)-1] = v
			targets[atomic.AddUint32(&cursor[v], 1)-1] = u
		}
	})
	return sortDedup(name, n, offsets, targets), nil
}

// sortDedup sorts every adjacency list, removes duplicates and compacts the
// arrays. Rows are processed in parallel; the result is deterministic.
func sortDedup(name string, n int, offsets []uint32, targets []int32) *CSR {
	newDeg := make([]uint32, n)
	parallelRanges(n, func(lo, hi int) {
		for v := lo; v < hi; v++ {
			row := targets[offsets[v]:offsets[v+1]]
			slices.Sort(row)
			newDeg[v] = uint32(len(slices.Compact(row)))
		}
	})
	out := make([]uint32, n+1)
	var sum uint32
	for v := 0; v < n; v++ {
		out[v] = sum
		sum += newDeg[v]
	}
	out[n] = sum
	if sum == uint32(len(targets)) {
		return &CSR{Name: name, Offsets: out, Targets: targets}
	}
	compact := make([]int32, sum)
	parallelRanges(n, func(lo, hi int) {
		for v := lo; v < hi; v++ {
			copy(compact[out[v]:out[v+1]], targets[offsets[v]:offsets[v]+newDeg[v]])
		}
	})
	return &CSR{Name: name, Offsets: out, Targets: compact}
}

// parallelRanges calls fn over [0,n) split into contiguous ranges, one
// goroutine per range, and waits for all of them.
func parallelRanges(n int, fn func(lo, hi int)) {
	workers := runtime.GOMAXPROCS(0)
	if n < 1<<14 || workers < 2 {
		fn(0, n)
		return
	}
	chunk := (n + workers - 1) / workers
	var wg sync.WaitGroup
	for lo := 0; lo < n; lo += chunk {
		hi := min(lo+chunk, n)
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(lo, hi)
		}()
	}
	wg.Wait()
}
