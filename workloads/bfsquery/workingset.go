package bfsquery

import (
	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/internal/checked"
)

// CPUBatch is a batch of queries on a graph answered on the CPU, as
// CPUWorkingSet sizes it.
type CPUBatch struct {
	// Vertices and Entries are the graph's vertices and adjacency entries
	// (frontier.CSR's NumVertices and NumEdgeEntries).
	Vertices, Entries uint64
	// Directed is Options.Directed: the graph is opened with its
	// transpose, and its roots run one at a time.
	Directed bool
	// Roots is the batch's distinct roots and Queries its queries.
	Roots, Queries uint64
	// Reads is, summed over the queries that name targets, what each
	// reads: its targets and, with parents, each target's in-neighbours,
	// repeats included (CPUBatchOf counts them).
	Reads uint64
}

// Bytes of the CPU query path's working set, per vertex unless named
// otherwise, as OpenCPU and Graph.Batch allocate them:
const (
	// levelBytes is a root's levels (int32 a vertex), kept as its view
	// until the batch's answers are built: frontier.BFSParallel's and
	// frontier.MultiSourceBFS's result.
	levelBytes = 4
	// offsets32Bytes is the uint32 copy of the offsets BFSParallel
	// traverses.
	offsets32Bytes = 4
	// frontierBytes bounds BFSParallel's frontier lists: the level being
	// expanded and the one it reaches (at most every vertex between the
	// two, 4 bytes each) and the workers' buffers of the level reached,
	// which grow by appending to at most twice their length (8 bytes).
	frontierBytes = 12
	// passBytes is one multi-source pass of frontier.MultiSourceBFS: three
	// words of 64 root bits (seen, current, next: 24 bytes) and its
	// frontier lists, active, reached, and the workers' parts of the
	// reached with room to grow (16 bytes).
	passBytes = 40
	// readBytes is one vertex id a root's queries read (the need list),
	// with room for it to grow and the copy made as it grows.
	readBytes = 12
	// rootBytes and queryBytes are the bookkeeping of each distinct root
	// (its entries in the root list, the seen and index maps, its view)
	// and of each query (its Answer in the batch's result).
	rootBytes  = 128
	queryBytes = 80
	// transposeOffsetBytes and transposeEntryBytes are a directed graph's
	// in-neighbour lists (Transpose): uint64 offsets, int32 targets.
	transposeOffsetBytes = 8
	transposeEntryBytes  = 4
)

// CPUWorkingSet estimates the host memory, in bytes, that answering the
// batch b on the CPU holds at its peak besides the graph itself and the
// answers' Levels and Parents: a directed graph's transpose (OpenCPU),
// each root's levels, the traversal's scratch (the 32-bit offsets and
// frontier lists of frontier.BFSParallel for one root or a directed
// graph's, or one multi-source pass of frontier.MultiSourceBFS), what the
// queries with targets read, and the batch's bookkeeping. The
// frontier lists are counted at their bound, every vertex in them, and
// the 32-bit offsets even for a graph of more than
// frontier.MaxOffsets32Entries entries, which traverses its own, so that
// the estimate grows with the vertices and the entries. An estimate that
// does not fit 64 bits is a *checked.OverflowError.
func CPUWorkingSet(b CPUBatch) (uint64, error) {
	n := b.Vertices
	perVertex, err := checked.Mul(b.Roots, levelBytes, "level bytes per vertex")
	if err != nil {
		return 0, err
	}
	terms := []workingTerm{{"level bytes", n, perVertex}, {"read bytes", b.Reads, readBytes},
		{"root bytes", b.Roots, rootBytes}, {"query bytes", b.Queries, queryBytes}}
	if b.Directed {
		terms = append(terms, workingTerm{"transpose offset bytes", n + 1, transposeOffsetBytes},
			workingTerm{"transpose target bytes", b.Entries, transposeEntryBytes})
	}
	if !b.Directed && b.Roots > 1 {
		terms = append(terms, workingTerm{"multi-source pass bytes", n, passBytes})
	} else {
		terms = append(terms, workingTerm{"32-bit offset bytes", n + 1, offsets32Bytes}, workingTerm{"frontier bytes", n, frontierBytes})
	}
	sizes := make([]uint64, len(terms))
	for i, t := range terms {
		if sizes[i], err = checked.Mul(t.count, t.bytes, t.field); err != nil {
			return 0, err
		}
	}
	return checked.Sum("CPU working set bytes", sizes...)
}

// workingTerm is one part of the working set: count things of bytes each,
// named by field in an overflow.
type workingTerm struct {
	field        string
	count, bytes uint64
}

// CPUBatchOf returns the CPUBatch of qs on g, a graph opened with
// Options{Directed: directed}: its distinct roots and queries, and what
// the queries with targets read (on a directed graph, a target's
// in-neighbours are counted in one pass over g's edges).
func CPUBatchOf(g *frontier.CSR, directed bool, qs []Query) CPUBatch {
	b := CPUBatch{Vertices: uint64(g.NumVertices()), Entries: uint64(g.NumEdgeEntries()), Directed: directed,
		Roots: uint64(len(distinctRoots(qs))), Queries: uint64(len(qs))}
	parents := map[int32]uint64{}
	for _, q := range qs {
		b.Reads += uint64(len(q.Targets))
		if q.Parents {
			for _, t := range q.Targets {
				parents[t]++
			}
		}
	}
	b.Reads += inNeighbours(g, directed, parents)
	return b
}

// inNeighbours sums, over the vertices of times, their in-neighbours in g
// times as many times each: their degree in an undirected graph, the
// edges into them in a directed one.
func inNeighbours(g *frontier.CSR, directed bool, times map[int32]uint64) uint64 {
	var sum uint64
	if !directed {
		for v, k := range times {
			sum += k * uint64(g.Degree(v))
		}
		return sum
	}
	if len(times) == 0 {
		return 0
	}
	for _, v := range g.Targets {
		sum += times[v]
	}
	return sum
}
