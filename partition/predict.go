package partition

import (
	"fmt"
	"github.com/gpuplan/gpuplan/planners"
	"math"
)

// Traversal is one BFS over a partitioned graph, as the CPU
// reference computed it: the graph's CSR and the level of every vertex
// from Root (-1 for vertices it does not reach).
type Traversal struct {
	Offsets []uint64
	Targets []int32
	Levels  []int32
	Root    int32
	// Params are the direction planner's thresholds the traversal runs by.
	Params planners.DirectionParams
}

// ExchangePrediction is the exchange of every level step of one
// traversal, in step order (step i discovers level i+1; the last step
// discovers nothing and ends the traversal).
type ExchangePrediction struct {
	Root   int32           `json:"root"`
	Levels []LevelExchange `json:"levels"`
	// TotalBytes sums the steps' bytes.
	TotalBytes uint64 `json:"total_bytes"`
}

// PredictExchange predicts the bytes every level step of a
// traversal exchanges under the plan. It replays the steps the
// partitioned BFS takes: each step's direction from planners.PlanBFSDirection on
// the global frontier (as the direction-optimizing BFS decides it), a
// bottom-up step's all-gather of the frontier slices, and a top-down
// step's counts and per-pair queues or bitmap slices, the counts being the
// distinct vertices of each device that another device's frontier
// reaches, whether or not they are already visited (the expanding device
// cannot know).
func PredictExchange(p Plan, t Traversal) (ExchangePrediction, error) {
	byLevel, err := checkTraversal(p, t)
	if err != nil {
		return ExchangePrediction{}, err
	}
	out := ExchangePrediction{Root: t.Root}
	c := newExchangeCounter(p, t)
	profile := planners.BFSGraphProfile{Vertices: p.Vertices, EdgeEntries: p.EdgeEntries}
	state := planners.BFSLevelState{FrontierVertices: 1, FrontierEdges: c.degree(t.Root)}
	state.UnexploredEdges = profile.EdgeEntries - state.FrontierEdges
	for level := 1; state.FrontierVertices > 0; level++ {
		state.Level = uint64(level)
		d, err := planners.PlanBFSDirection(profile, state, t.Params)
		if err != nil {
			return out, err
		}
		var counts [][]uint64
		if d.Direction == planners.DirectionTopDown {
			counts = c.topDownCounts(byLevel[level-1])
		}
		x, err := p.LevelExchange(d, counts)
		if err != nil {
			return out, err
		}
		out.Levels = append(out.Levels, x)
		out.TotalBytes += x.Bytes
		var found []int32
		if level < len(byLevel) {
			found = byLevel[level]
		}
		state.Previous, state.PreviousFrontierVertices = d.Direction, state.FrontierVertices
		state.FrontierVertices, state.FrontierEdges = uint64(len(found)), c.degrees(found)
		state.UnexploredEdges -= state.FrontierEdges
	}
	return out, nil
}

// checkTraversal checks the traversal against the plan and groups its
// vertices by level.
func checkTraversal(p Plan, t Traversal) ([][]int32, error) {
	n := p.Vertices
	switch {
	case uint64(len(t.Offsets)) != n+1 || t.Offsets[n] != p.EdgeEntries:
		return nil, fmt.Errorf("traversal offsets describe %d vertices, the plan %d vertices and %d edge entries. Fix: predict with the graph the plan was made for", len(t.Offsets)-1, n, p.EdgeEntries)
	case uint64(len(t.Targets)) != p.EdgeEntries:
		return nil, fmt.Errorf("traversal has %d targets for %d edge entries. Fix: pass the graph's targets", len(t.Targets), p.EdgeEntries)
	case uint64(len(t.Levels)) != n:
		return nil, fmt.Errorf("traversal has %d levels for %d vertices. Fix: pass the level of every vertex", len(t.Levels), n)
	case t.Root < 0 || uint64(t.Root) >= n || t.Levels[t.Root] != 0:
		return nil, fmt.Errorf("traversal root %d is not a vertex at level 0. Fix: pass the root the levels were computed from", t.Root)
	}
	var count []int
	for v, l := range t.Levels {
		switch {
		case l < -1 || int64(l) >= int64(n):
			return nil, fmt.Errorf("traversal levels[%d] is %d, not -1 or a level below the %d vertices. Fix: use -1 for unreached vertices and BFS levels otherwise", v, l, n)
		case l >= 0:
			for int(l) >= len(count) {
				count = append(count, 0)
			}
			count[l]++
		}
	}
	byLevel := make([][]int32, len(count))
	for l, c := range count {
		if c == 0 {
			return nil, fmt.Errorf("traversal has no vertex at level %d but vertices above it. Fix: pass BFS levels", l)
		}
		byLevel[l] = make([]int32, 0, c)
	}
	for v, l := range t.Levels {
		if l >= 0 {
			byLevel[l] = append(byLevel[l], int32(v))
		}
	}
	return byLevel, nil
}

// exchangeCounter counts, for a top-down step, the distinct vertices of
// each device that each device's frontier reaches.
type exchangeCounter struct {
	p       Plan
	offsets []uint64
	targets []int32
	owner   []uint8
	// stamp marks a vertex counted for the current (step, device); tick
	// is the current mark.
	stamp []uint32
	tick  uint32
}

func newExchangeCounter(p Plan, t Traversal) *exchangeCounter {
	c := &exchangeCounter{p: p, offsets: t.Offsets, targets: t.Targets, owner: make([]uint8, p.Vertices), stamp: make([]uint32, p.Vertices)}
	for d, part := range p.Parts {
		for v := part.First; v < part.End; v++ {
			c.owner[v] = uint8(d)
		}
	}
	return c
}

func (c *exchangeCounter) degree(v int32) uint64 { return c.offsets[v+1] - c.offsets[v] }

func (c *exchangeCounter) degrees(vs []int32) uint64 {
	var s uint64
	for _, v := range vs {
		s += c.degree(v)
	}
	return s
}

// topDownCounts returns counts[d][e] for a frontier (its vertices in
// ascending order, so each device's come together).
func (c *exchangeCounter) topDownCounts(frontier []int32) [][]uint64 {
	parts := len(c.p.Parts)
	counts := make([][]uint64, parts)
	for d := range counts {
		counts[d] = make([]uint64, parts)
	}
	for i := 0; i < len(frontier); {
		d := c.owner[frontier[i]]
		c.nextTick()
		for ; i < len(frontier) && c.owner[frontier[i]] == d; i++ {
			u := frontier[i]
			for _, v := range c.targets[c.offsets[u]:c.offsets[u+1]] {
				if e := c.owner[v]; e != d && c.stamp[v] != c.tick {
					c.stamp[v] = c.tick
					counts[d][e]++
				}
			}
		}
	}
	return counts
}

// nextTick starts a new mark, clearing the stamps when the marks run out.
func (c *exchangeCounter) nextTick() {
	if c.tick == math.MaxUint32 {
		clear(c.stamp)
		c.tick = 0
	}
	c.tick++
}
