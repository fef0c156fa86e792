package frontier

import (
	"math/bits"
	"runtime"

	"github.com/gpuplan/gpuplan/planners"
)

// DirectionBFS is the result of a direction-optimizing BFS.
type DirectionBFS struct {
	// Levels are the BFS levels, the same as BFS's.
	Levels []int32
	// Decisions holds the planner's decision for every step, in order:
	// step i discovers level i+1 (the last step discovers nothing).
	Decisions []planners.BFSDirectionDecision
}

// BFSDirectionOptimizing runs a breadth-first search from root on every
// CPU, each level top-down (the frontier as a list of vertices, claimed by
// compare-and-swap) or bottom-up (every unvisited vertex looks for a parent
// in the frontier as a bitmap), as planners.PlanBFSDirection decides from
// the frontier's vertices and edges, the unexplored edges and the graph's
// average degree. Its levels are BFS's.
func BFSDirectionOptimizing(g *CSR, root int32, params planners.DirectionParams) (*DirectionBFS, error) {
	return bfsDirection(g, root, params, runtime.GOMAXPROCS(0))
}

// doState is the frontier of a direction-optimizing BFS in whichever form
// the last step left it: a list of vertices or a bitmap.
type doState struct {
	g       *CSR
	levels  []int32
	workers int
	// queue is the frontier as a list when isBitmap is false; front is it
	// as a bitmap (bit v of word v/64) when isBitmap is true.
	queue    []int32
	front    []uint64
	next     []uint64
	isBitmap bool
	// buffers are the top-down step's per-worker outputs; degrees their
	// per-worker degree sums.
	buffers [][]int32
	degrees []uint64
}

// bfsDirection is BFSDirectionOptimizing on the given number of workers.
func bfsDirection(g *CSR, root int32, params planners.DirectionParams, workers int) (*DirectionBFS, error) {
	if err := CheckRoot(g, int64(root)); err != nil {
		return nil, err
	}
	workers = max(1, workers)
	n := g.NumVertices()
	s := &doState{g: g, levels: newLevels(n, workers), workers: workers, queue: []int32{root},
		buffers: make([][]int32, workers), degrees: make([]uint64, workers)}
	s.levels[root] = 0
	profile := planners.BFSGraphProfile{Vertices: uint64(n), EdgeEntries: uint64(len(g.Targets))}
	state := planners.BFSLevelState{FrontierVertices: 1, FrontierEdges: uint64(g.Degree(root))}
	state.UnexploredEdges = profile.EdgeEntries - state.FrontierEdges
	var out DirectionBFS
	for level := int32(1); state.FrontierVertices > 0; level++ {
		state.Level = uint64(level)
		d, err := planners.PlanBFSDirection(profile, state, params)
		if err != nil {
			return nil, err
		}
		out.Decisions = append(out.Decisions, d)
		var found, edges uint64
		if d.Direction == planners.DirectionBottomUp {
			found, edges = s.bottomUp(level)
		} else {
			found, edges = s.topDown(level)
		}
		state.Previous = d.Direction
		state.PreviousFrontierVertices = state.FrontierVertices
		state.FrontierVertices, state.FrontierEdges = found, edges
		state.UnexploredEdges -= edges
	}
	out.Levels = s.levels
	return &out, nil
}

// topDown runs one top-down step from the frontier (at level-1) and
// returns how many vertices it reached and the sum of their degrees.
func (s *doState) topDown(level int32) (found, edges uint64) {
	if s.isBitmap {
		s.queue = s.bitmapToQueue()
		s.isBitmap = false
	}
	clear(s.degrees)
	s.queue = topDownStep(csrAdjacency(s.g), s.levels, s.queue, level, s.workers, s.buffers, s.degrees)
	for _, d := range s.degrees {
		edges += d
	}
	return uint64(len(s.queue)), edges
}

// bottomUp runs one bottom-up step: every unvisited vertex takes level if
// a neighbour is in the frontier. Workers own ranges of whole bitmap words,
// so each writes its own words and levels only.
func (s *doState) bottomUp(level int32) (found, edges uint64) {
	n := s.g.NumVertices()
	words := (n + 63) / 64
	if s.front == nil {
		s.front, s.next = make([]uint64, words), make([]uint64, words)
	}
	if !s.isBitmap {
		s.levelToBitmap(level - 1)
		s.isBitmap = true
	}
	workers := min(s.workers, workersFor(n, parallelGrain))
	counts := make([][2]uint64, workers)
	splitRun(words, workers, func(w, lo, hi int) {
		counts[w][0], counts[w][1] = s.bottomUpWords(level, lo, hi)
	})
	for _, c := range counts[:min(workers, words)] {
		found += c[0]
		edges += c[1]
	}
	s.front, s.next = s.next, s.front
	return found, edges
}

// bottomUpWords runs the bottom-up step on the vertices of bitmap words
// lo..hi-1.
func (s *doState) bottomUpWords(level int32, lo, hi int) (found, edges uint64) {
	g, levels, front := s.g, s.levels, s.front
	n := int32(g.NumVertices())
	for wi := lo; wi < hi; wi++ {
		var word uint64
		for v := int32(wi) * 64; v < min(int32(wi+1)*64, n); v++ {
			if levels[v] != Unreached {
				continue
			}
			for _, u := range g.Targets[g.Offsets[v]:g.Offsets[v+1]] {
				if front[u>>6]&(1<<(u&63)) != 0 {
					levels[v] = level
					word |= 1 << (v & 63)
					found++
					edges += uint64(g.Offsets[v+1] - g.Offsets[v])
					break
				}
			}
		}
		s.next[wi] = word
	}
	return found, edges
}

// levelToBitmap sets front to the vertices at level l.
func (s *doState) levelToBitmap(l int32) {
	n := s.g.NumVertices()
	splitRun(len(s.front), min(s.workers, workersFor(n, parallelGrain)), func(_, lo, hi int) {
		for wi := lo; wi < hi; wi++ {
			var word uint64
			for v := wi * 64; v < min(wi*64+64, n); v++ {
				if s.levels[v] == l {
					word |= 1 << (v & 63)
				}
			}
			s.front[wi] = word
		}
	})
}

// bitmapToQueue lists the vertices of front in ascending order.
func (s *doState) bitmapToQueue() []int32 {
	workers := min(s.workers, workersFor(s.g.NumVertices(), parallelGrain))
	parts := make([][]int32, workers)
	splitRun(len(s.front), workers, func(w, lo, hi int) {
		var out []int32
		for wi := lo; wi < hi; wi++ {
			for word := s.front[wi]; word != 0; word &= word - 1 {
				out = append(out, int32(wi*64+bits.TrailingZeros64(word)))
			}
		}
		parts[w] = out
	})
	return concat(parts)
}
