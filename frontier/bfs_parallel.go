package frontier

import (
	"runtime"
	"sync/atomic"
)

// bfsBlock is the number of frontier vertices a worker takes at a time.
const bfsBlock = 64

// bfsSerialFrontier is the frontier size below which a level runs on one
// goroutine: starting workers would cost more than the level.
const bfsSerialFrontier = 256

// BFSParallel runs the same breadth-first search as BFS on every CPU
// (GOMAXPROCS) and returns the same levels: level-synchronous top-down,
// each level's frontier split into blocks that workers take in turn, a
// vertex claimed by a compare-and-swap on its level. BFS stays the oracle
// it is tested against. On a graph whose offsets fit 32 bits it traverses
// a 32-bit copy of them (one parallel pass to make), which keeps twice as
// many rows' offsets in each cache line as the CSR's own.
func BFSParallel(g *CSR, root int32) ([]int32, error) {
	return bfsParallel(g, root, runtime.GOMAXPROCS(0))
}

// bfsParallel is BFSParallel on the given number of workers.
func bfsParallel(g *CSR, root int32, workers int) ([]int32, error) {
	if err := CheckRoot(g, int64(root)); err != nil {
		return nil, err
	}
	workers = max(1, workers)
	if off := compactOffsets(g, workers); off != nil {
		return topDownBFS(&adjacency[uint32]{off, g.Targets}, root, workers), nil
	}
	return topDownBFS(csrAdjacency(g), root, workers), nil
}

// offsetWord is the type of the row offsets a traversal reads: a CSR's
// own uint64 offsets, or a uint32 copy of them.
type offsetWord interface{ uint32 | uint64 }

// adjacency is a CSR's rows as a traversal reads them: the neighbours of v
// are targets[offsets[v]:offsets[v+1]]. The traversals take it by pointer:
// their workers' closures then read the two slices through it, which
// measured faster than capturing copies of them.
type adjacency[O offsetWord] struct {
	offsets []O
	targets []int32
}

// csrAdjacency returns g's rows with its own offsets.
func csrAdjacency(g *CSR) *adjacency[uint64] { return &adjacency[uint64]{g.Offsets, g.Targets} }

// compactOffsets returns g's offsets narrowed to uint32 in a new slice,
// converted on workers goroutines, or nil when they do not fit 32 bits.
func compactOffsets(g *CSR, workers int) []uint32 {
	if g.CheckOffsets32() != nil {
		return nil
	}
	out := make([]uint32, len(g.Offsets))
	if narrowOffsets(g.Name, out, g.Offsets, 0, min(workers, workersFor(len(out), narrowGrain))) != nil {
		return nil
	}
	return out
}

// topDownBFS is bfsParallel's traversal over a.
func topDownBFS[O offsetWord](a *adjacency[O], root int32, workers int) []int32 {
	levels := newLevels(len(a.offsets)-1, workers)
	levels[root] = 0
	frontier := []int32{root}
	next := make([][]int32, workers)
	for level := int32(1); len(frontier) > 0; level++ {
		frontier = topDownStep(a, levels, frontier, level, workers, next, nil)
	}
	return levels
}

// newLevels returns n levels set to Unreached, filled on workers
// goroutines.
func newLevels(n, workers int) []int32 {
	levels := make([]int32, n)
	splitRun(n, min(workers, workersFor(n, parallelGrain)), func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			levels[i] = Unreached
		}
	})
	return levels
}

// topDownStep expands frontier (the vertices at level-1) over a and
// returns the vertices it reached at level, in no particular order. next
// holds one reusable buffer per worker. When degrees is not nil, each
// worker adds the degrees of the vertices it reached to degrees[w]. The
// degrees are read even when they are not wanted: reading a vertex's
// offsets as it is found brings them into the cache for the next level,
// which expands it.
func topDownStep[O offsetWord](a *adjacency[O], levels, frontier []int32, level int32, workers int, next [][]int32, degrees []uint64) []int32 {
	if len(frontier) < bfsSerialFrontier || workers < 2 {
		out := next[0][:0]
		var deg uint64
		for _, u := range frontier {
			for _, w := range a.targets[a.offsets[u]:a.offsets[u+1]] {
				if levels[w] == Unreached {
					levels[w] = level
					out = append(out, w)
					deg += uint64(a.offsets[w+1] - a.offsets[w])
				}
			}
		}
		next[0] = out
		if degrees != nil {
			degrees[0] += deg
		}
		return append([]int32(nil), out...)
	}
	blocks := (len(frontier) + bfsBlock - 1) / bfsBlock
	used := min(workers, blocks)
	for w := 0; w < used; w++ {
		next[w] = next[w][:0]
	}
	var taken atomic.Int64
	splitRun(used, used, func(w, _, _ int) {
		out := next[w]
		var deg uint64
		for {
			b := int(taken.Add(1) - 1)
			if b >= blocks {
				break
			}
			for _, u := range frontier[b*bfsBlock : min((b+1)*bfsBlock, len(frontier))] {
				for _, v := range a.targets[a.offsets[u]:a.offsets[u+1]] {
					p := &levels[v]
					if atomic.LoadInt32(p) == Unreached && atomic.CompareAndSwapInt32(p, Unreached, level) {
						out = append(out, v)
						deg += uint64(a.offsets[v+1] - a.offsets[v])
					}
				}
			}
		}
		next[w] = out
		if degrees != nil {
			degrees[w] += deg
		}
	})
	return concat(next[:used])
}

// concat joins the parts into one new slice.
func concat(parts [][]int32) []int32 {
	total := 0
	for _, p := range parts {
		total += len(p)
	}
	out := make([]int32, 0, total)
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// validateParallel is Validate's per-vertex check over every CPU: each
// worker checks a contiguous range of vertices, and the first range with a
// failure holds the first failing vertex, so the error is Validate's.
func validateParallel(g *CSR, root int32, levels []int32, workers int) error {
	n := g.NumVertices()
	workers = max(1, min(workers, workersFor(n, parallelGrain)))
	errs := make([]error, workers)
	splitRun(n, workers, func(w, lo, hi int) {
		errs[w] = validateRange(g, root, levels, int32(lo), int32(hi))
	})
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// statsParallel is Stats summed over every CPU.
func statsParallel(g *CSR, levels []int32, workers int) TraversalStats {
	n := len(levels)
	workers = max(1, min(workers, workersFor(n, parallelGrain)))
	parts := make([]TraversalStats, workers)
	splitRun(n, workers, func(w, lo, hi int) {
		parts[w] = statsRange(g, levels, lo, hi)
	})
	var s TraversalStats
	for _, p := range parts {
		s.Levels = max(s.Levels, p.Levels)
		s.Reached += p.Reached
		s.Edges += p.Edges
	}
	s.Edges /= 2
	return s
}
