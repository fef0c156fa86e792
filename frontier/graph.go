package frontier

import (
	"fmt"
	"math"
)

// MaxGraphVertices is the largest vertex count a CSR can hold: vertex ids are
// int32 and the offsets array has one more entry than there are vertices.
const MaxGraphVertices = math.MaxInt32 - 1

// MaxGraphEdgeEntries is the largest number of adjacency entries (directed
// edges) a CSR can hold on the host: 2^34, the entries of a Graph500
// Kronecker graph of scale 29 at edge factor 16 before deduplication.
// Offsets are uint64, so the limit is one of memory (a graph at it takes
// 64 GiB of targets), not of the index types. The GPU kernels take 32-bit
// offsets and hold at most MaxOffsets32Entries (see CSR.Offsets32).
const MaxGraphEdgeEntries = 1 << 34

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
	// entry equals len(Targets). They are 64-bit, so a graph may hold
	// more than 2^32-1 adjacency entries (up to MaxGraphEdgeEntries);
	// Offsets32 narrows them for the GPU kernels.
	Offsets []uint64
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
// on a device: 4 bytes per offset (the GPU kernels' 32-bit offsets) and 4
// bytes per target. The host holds 8 bytes per offset.
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
	if g.Offsets[n] != uint64(len(g.Targets)) {
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
