package frontier

import (
	"fmt"
	"math/bits"
	"runtime"
	"sync/atomic"
)

// MaxMultiSourceRoots is the most roots one multi-source pass takes: one
// bit each of a 64-bit word per vertex.
const MaxMultiSourceRoots = 64

// msPullDivisor: a multi-source level pulls (scans every vertex not yet
// seen by all roots) when its frontier's edges exceed the graph's entries /
// msPullDivisor, and pushes from its frontier otherwise.
const msPullDivisor = 16

// MultiSourceRootError reports a multi-source root that is not a vertex,
// naming its position in the root list.
type MultiSourceRootError struct {
	// Index is the root's position in the list.
	Index int
	RootError
}

// Error names the root's position and value and the vertex range, and ends
// with a "Fix:".
func (e *MultiSourceRootError) Error() string {
	return fmt.Sprintf("roots[%d]: %s", e.Index, e.RootError.Error())
}

// Unwrap returns the *RootError.
func (e *MultiSourceRootError) Unwrap() error { return &e.RootError }

// MultiSourceCountError reports a root list that is empty or longer than
// one pass takes.
type MultiSourceCountError struct{ Count int }

// Error names the root count and the range allowed, and ends with a
// "Fix:".
func (e *MultiSourceCountError) Error() string {
	return fmt.Sprintf("multi-source BFS: %d roots, want 1..%d. Fix: split the roots into passes of at most %d (planners.PlanMultiSourceBFS)",
		e.Count, MaxMultiSourceRoots, MaxMultiSourceRoots)
}

// MultiSourceBFS runs a breadth-first search from every root at once (at
// most 64, repeats allowed) on every CPU and returns levels[i], the levels
// of a BFS from roots[i]: the same as BFS(g, roots[i]). Each vertex keeps
// three words with one bit per root, the roots that have seen it, that
// have it in their frontier and that reach it next, so one scan of an
// edge serves every root whose frontier holds its source. Sparse levels
// push from the frontier (atomic OR into the next words); dense levels pull
// (each vertex ORs its neighbours' frontier words, stopping once every
// root has seen it).
func MultiSourceBFS(g *CSR, roots []int32) ([][]int32, error) {
	return multiSourceBFS(g, roots, runtime.GOMAXPROCS(0))
}

// msState is a multi-source traversal in progress.
type msState struct {
	g       *CSR
	levels  [][]int32
	workers int
	// seen, cur and next hold one bit per root for every vertex; active
	// lists the vertices whose cur word is not zero.
	seen, cur, next []uint64
	active          []int32
	// full has the bit of every root set.
	full uint64
}

// multiSourceBFS is MultiSourceBFS on the given number of workers.
func multiSourceBFS(g *CSR, roots []int32, workers int) ([][]int32, error) {
	if len(roots) == 0 || len(roots) > MaxMultiSourceRoots {
		return nil, &MultiSourceCountError{Count: len(roots)}
	}
	n := g.NumVertices()
	for i, r := range roots {
		if r < 0 || int(r) >= n {
			return nil, &MultiSourceRootError{Index: i, RootError: RootError{Root: int64(r), NumVertices: n}}
		}
	}
	s := &msState{g: g, workers: max(1, workers), seen: make([]uint64, n), cur: make([]uint64, n), next: make([]uint64, n)}
	s.full = ^uint64(0) >> (64 - len(roots))
	s.levels = make([][]int32, len(roots))
	for i, r := range roots {
		s.levels[i] = newLevels(n, s.workers)
		s.levels[i][r] = 0
		if s.cur[r] == 0 {
			s.active = append(s.active, r)
		}
		s.seen[r] |= 1 << i
		s.cur[r] |= 1 << i
	}
	for level := int32(1); len(s.active) > 0; level++ {
		var edges uint64
		for _, v := range s.active {
			edges += uint64(g.Degree(v))
		}
		var reached []int32
		if edges > uint64(len(g.Targets))/msPullDivisor {
			reached = s.pull(level)
		} else {
			reached = s.push(level)
		}
		for _, v := range s.active {
			s.cur[v] = 0
		}
		s.cur, s.next = s.next, s.cur
		s.active = reached
	}
	return s.levels, nil
}

// record marks the new bits of w seen and gives w this level for each of
// their roots.
func (s *msState) record(w int32, fresh uint64, level int32) {
	s.seen[w] |= fresh
	for b := fresh; b != 0; b &= b - 1 {
		s.levels[bits.TrailingZeros64(b)][w] = level
	}
}

// push ORs every active vertex's frontier bits, less the bits a neighbour
// has seen, into the neighbour's next word; the vertices whose next word
// became non-zero are the next frontier.
func (s *msState) push(level int32) []int32 {
	g := s.g
	blocks := (len(s.active) + bfsBlock - 1) / bfsBlock
	workers := min(s.workers, blocks)
	if len(s.active) < bfsSerialFrontier {
		workers = 1
	}
	parts := make([][]int32, workers)
	var taken atomic.Int64
	splitRun(workers, workers, func(w, _, _ int) {
		var out []int32
		for {
			b := int(taken.Add(1) - 1)
			if b >= blocks {
				break
			}
			for _, v := range s.active[b*bfsBlock : min((b+1)*bfsBlock, len(s.active))] {
				f := s.cur[v]
				for _, u := range g.Targets[g.Offsets[v]:g.Offsets[v+1]] {
					// seen changes only after the push, so reading it
					// here races with nothing.
					if fresh := f &^ s.seen[u]; fresh != 0 && atomic.OrUint64(&s.next[u], fresh) == 0 {
						out = append(out, u)
					}
				}
			}
		}
		parts[w] = out
	})
	reached := concat(parts)
	splitRun(len(reached), min(s.workers, workersFor(len(reached), bfsSerialFrontier)), func(_, lo, hi int) {
		for _, u := range reached[lo:hi] {
			s.record(u, s.next[u], level)
		}
	})
	return reached
}

// pull has every vertex not yet seen by all roots OR its neighbours'
// frontier words; workers own ranges of vertices, so nothing is shared.
func (s *msState) pull(level int32) []int32 {
	g := s.g
	n := g.NumVertices()
	workers := min(s.workers, workersFor(n, parallelGrain))
	parts := make([][]int32, workers)
	splitRun(n, workers, func(w, lo, hi int) {
		var out []int32
		for u := int32(lo); u < int32(hi); u++ {
			missing := s.full &^ s.seen[u]
			if missing == 0 {
				continue
			}
			var fresh uint64
			for _, v := range g.Targets[g.Offsets[u]:g.Offsets[u+1]] {
				if fresh |= s.cur[v] & missing; fresh == missing {
					break
				}
			}
			if fresh != 0 {
				s.next[u] = fresh
				s.record(u, fresh, level)
				out = append(out, u)
			}
		}
		parts[w] = out
	})
	return concat(parts)
}
