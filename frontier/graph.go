package frontier

import (
	"cmp"
	"fmt"
	"math"
	"runtime"
	"slices"
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

// checkGrain is the fewest offsets or targets worth a goroutine of their
// own in Check: the scan is bound by memory bandwidth, and below about a
// million entries a goroutine costs more to start than it saves.
const checkGrain = 1 << 20

// Check validates the structure of g: offsets start at 0, never decrease and
// end at len(Targets), and every target is a vertex of g. It returns an
// *EmptyGraphError for a graph without vertices, a *TooLargeError for one
// past MaxGraphVertices or MaxGraphEdgeEntries, and otherwise a
// *StructureError naming the first violation in index order: the lowest
// offending offsets index, then the lowest offending targets index.
//
// The offsets and the targets are each scanned in contiguous pieces on up
// to GOMAXPROCS goroutines, each piece at least checkGrain (2^20) entries
// long, so that an array shorter than 2^21 entries is scanned on one
// goroutine. The error does not depend on the number of CPUs.
func (g *CSR) Check() error {
	return g.check(runtime.GOMAXPROCS(0), checkGrain)
}

// check is Check on up to workers goroutines, each scanning at least
// grain offsets or targets (the fewer workers where an array is short).
func (g *CSR) check(workers, grain int) error {
	if err := g.checkLimits(); err != nil {
		return err
	}
	if err := g.checkOffsets(workers, grain); err != nil {
		return err
	}
	return g.checkTargets(workers, grain)
}

// checkLimits refuses a graph without vertices or past the CSR's limits.
func (g *CSR) checkLimits() error {
	n := g.NumVertices()
	switch {
	case n == 0:
		return &EmptyGraphError{Source: g.Name, Vertices: 0}
	case n > MaxGraphVertices:
		return &TooLargeError{Source: g.Name, Field: "vertices", Value: uint64(n), Limit: MaxGraphVertices}
	case uint64(len(g.Targets)) > MaxGraphEdgeEntries:
		return &TooLargeError{Source: g.Name, Field: "edge entries", Value: uint64(len(g.Targets)), Limit: MaxGraphEdgeEntries}
	}
	return nil
}

// checkOffsets checks that g's offsets start at 0, never decrease and end
// at len(Targets), naming the lowest offending index.
func (g *CSR) checkOffsets(workers, grain int) error {
	n := g.NumVertices()
	if g.Offsets[0] != 0 {
		return &StructureError{Source: g.Name, Index: 0, Msg: fmt.Sprintf("offsets[0] is %d, want 0", g.Offsets[0])}
	}
	v := firstInPieces(n, capWorkers(n, workers, grain), func(lo, hi int) int {
		return firstDecrease(g.Offsets, lo, hi)
	})
	if v >= 0 {
		return &StructureError{Source: g.Name, Index: v + 1, Msg: fmt.Sprintf("offsets[%d]=%d is below offsets[%d]=%d", v+1, g.Offsets[v+1], v, g.Offsets[v])}
	}
	if g.Offsets[n] != uint64(len(g.Targets)) {
		return &StructureError{Source: g.Name, Index: n, Msg: fmt.Sprintf("offsets[%d]=%d, want len(targets)=%d", n, g.Offsets[n], len(g.Targets))}
	}
	return nil
}

// checkTargets checks that every target of g is a vertex, naming the
// lowest offending index.
func (g *CSR) checkTargets(workers, grain int) error {
	n, m := g.NumVertices(), len(g.Targets)
	i := firstInPieces(m, capWorkers(m, workers, grain), func(lo, hi int) int {
		return firstNonVertex(g.Targets, n, lo, hi)
	})
	if i >= 0 {
		return &StructureError{Source: g.Name, Index: i, Msg: fmt.Sprintf("targets[%d]=%d is not a vertex (0..%d)", i, g.Targets[i], n-1)}
	}
	return nil
}

// firstDecrease returns the first v in [lo, hi) with offsets[v+1] below
// offsets[v], or -1.
func firstDecrease(offsets []uint64, lo, hi int) int {
	prev := offsets[lo]
	for i, o := range offsets[lo+1 : hi+1] {
		if o < prev {
			return lo + i
		}
		prev = o
	}
	return -1
}

// targetBlock is the number of targets firstNonVertex takes the largest
// of at a time (16 KiB of them), before it looks for the offending one in
// a block whose largest is not a vertex.
const targetBlock = 4096

// firstNonVertex returns the first i in [lo, hi) whose targets[i] is not
// one of n vertices (0..n-1), or -1. n fits an int32, so one unsigned
// comparison refuses both negative and too large targets; it is made once
// a block, on the block's largest target, so that the scan of a well-formed
// graph runs without a branch per target.
func firstNonVertex(targets []int32, n, lo, hi int) int {
	s := targets[lo:hi]
	for at := 0; at < len(s); at += targetBlock {
		block := s[at:min(at+targetBlock, len(s))]
		if largestUnsigned(block) >= uint32(n) {
			return lo + at + slices.IndexFunc(block, func(t int32) bool { return uint32(t) >= uint32(n) })
		}
	}
	return -1
}

// largestUnsigned returns the largest of block's values read as uint32 (a
// negative one as 2^31 or more), or 0 for an empty block. It keeps four
// running maxima, of every fourth value, so that they overlap rather than
// wait on one another.
func largestUnsigned(block []int32) uint32 {
	var m0, m1, m2, m3 uint32
	i := 0
	for ; i+4 <= len(block); i += 4 {
		q := block[i : i+4 : i+4]
		m0 = max(m0, uint32(q[0]))
		m1 = max(m1, uint32(q[1]))
		m2 = max(m2, uint32(q[2]))
		m3 = max(m3, uint32(q[3]))
	}
	for _, t := range block[i:] {
		m0 = max(m0, uint32(t))
	}
	return max(m0, m1, m2, m3)
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
	// Fix, when not empty, is the error's fix, for example the largest
	// valid parameter of a generator; when empty the fix is a smaller
	// graph or a higher limit.
	Fix string
}

func (e *TooLargeError) Error() string {
	fix := cmp.Or(e.Fix, "use a smaller graph or raise the limit")
	return fmt.Sprintf("graph %q: %s %d exceeds the limit %d. Fix: %s", e.Source, e.Field, e.Value, e.Limit, fix)
}
