// Command runahead models the megakernel's run-ahead steps on the CPU, to
// compare keep policies by the grid barriers and lowered labels they cost
// without a GPU: every step, each block expands the vertices it kept and
// its share of the global queue, then runs up to -d levels ahead on what it
// keeps (within the keep budget), the rest going to the global queue for
// the next step. Blocks run level by level in turn or, with -seq, one
// after another (the two ends of how far apart the GPU's blocks drift).
// With -fresh a kept vertex is expanded with its current level instead of
// the label it was kept with, as the kernel's freshness check does.
//
// It also estimates the time a traversal takes: a block's level costs a
// fixed latency (-first for the step's first level, which also takes the
// global queue, -level for the others) plus -round for every further round
// of -threads edges, a step costs its slowest block plus -barrier, and the
// estimate is printed per level.
//
// With -async it models a traversal without grid barriers instead
// (traverseAsync): blocks take work as it appears, within -window labels
// of the lowest label pending anywhere, and what one block pushes reaches
// the others -publish microseconds after its level ends.
//
//	go run ./workloads/bfs/internal/runahead -graph rgg:2000000:8 -d 4 -fresh
//	go run ./workloads/bfs/internal/runahead -graph rgg:2000000:8 -async -window 2 -take 32
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"

	"github.com/gpuplan/gpuplan/frontier"
)

// unreached is a vertex's label before any claim.
const unreached = int32(1 << 30)

// entry is a queued vertex and the label it was queued with.
type entry struct{ v, lab int32 }

// model is one traversal's state and the policy it runs.
type model struct {
	g             *frontier.CSR
	blocks        int
	depth         int
	budget, items int
	fresh, seq    bool
	cost          cost
	async         bool    // no grid barriers (traverseAsync)
	window, take  int     // async: labels past the lowest pending; global entries per level
	publish       float64 // async: us from a level's end until its pushes are visible
	label         []int32
	relabels      int
	rng           *rand.Rand
}

// cost is the time model, in microseconds: what a block's level costs
// (first for a step's first level, level for later ones, round for every
// round of threads edges past the first) and what a step adds to its
// slowest block (barrier). rng draws the tail, apart from the model's own
// order of blocks, so that estimating time leaves the traversal as it is.
type cost struct {
	first, level, round, barrier, tail float64
	threads                            int
	rng                                *rand.Rand
}

// levelTime is the time of a block's level over edges edges: tail is the
// mean of an exponential part of first and level, drawn for every block
// and level (a block's level waits for its slowest warp's chain of memory
// round trips).
func (c cost) levelTime(first bool, edges int) float64 {
	t := c.level
	if first {
		t = c.first
	}
	if c.tail > 0 {
		t += (c.rng.ExpFloat64() - 1) * c.tail
	}
	if rounds := (edges + c.threads - 1) / max(c.threads, 1); rounds > 1 {
		t += float64(rounds-1) * c.round
	}
	return t
}

// result is what a traversal cost.
type result struct {
	levels, steps, relabels, reached int
	time                             float64
	stalled                          bool // async: pending work no block could take
}

// expand runs one level of a block over cur and returns what it kept
// (nothing unless keep) and whether it turned a candidate away; the rest
// goes to global.
func (m *model) expand(cur []entry, global *[]entry, keep bool) (kept []entry, full bool) {
	edges := 0
	for _, e := range cur {
		lab := e.lab
		if m.fresh {
			lab = m.label[e.v]
		}
		for _, w := range m.g.Targets[m.g.Offsets[e.v]:m.g.Offsets[e.v+1]] {
			nl := lab + 1
			if nl >= m.label[w] {
				continue
			}
			if m.label[w] != unreached {
				m.relabels++
			}
			m.label[w] = nl
			deg := int(m.g.Offsets[w+1] - m.g.Offsets[w])
			if keep && !full && len(kept) < m.items && edges+deg <= m.budget {
				kept, edges = append(kept, entry{w, nl}), edges+deg
				continue
			}
			full = true
			*global = append(*global, entry{w, nl})
		}
	}
	return kept, full
}

// step runs one step between grid barriers and returns the next step's
// kept vertices per block and global queue, and the step's modelled time.
func (m *model) step(kept [][]entry, global []entry) ([][]entry, []entry, float64) {
	cur := make([][]entry, m.blocks)
	for b := range cur {
		cur[b] = kept[b]
	}
	for i, e := range global {
		cur[i%m.blocks] = append(cur[i%m.blocks], e)
	}
	var next []entry
	full := make([]bool, m.blocks)
	busy := make([]float64, m.blocks)
	run := func(b int) {
		if len(cur[b]) > 0 && !full[b] {
			busy[b] += m.cost.levelTime(busy[b] == 0, m.edges(cur[b]))
			cur[b], full[b] = m.expand(cur[b], &next, true)
		}
	}
	if m.seq {
		for _, b := range m.rng.Perm(m.blocks) {
			for j := 0; j < m.depth; j++ {
				run(b)
			}
		}
	} else {
		for j := 0; j < m.depth; j++ {
			for _, b := range m.rng.Perm(m.blocks) {
				run(b)
			}
		}
	}
	slowest := 0.0
	for b := range cur {
		if full[b] && len(cur[b]) > 16 { // a full block sheds all but KEEP_LOW
			next = append(next, cur[b][16:]...)
			cur[b] = cur[b][:16]
		}
		slowest = max(slowest, busy[b])
	}
	return cur, next, slowest + m.cost.barrier
}

// edges is how many adjacency entries the vertices of q have.
func (m *model) edges(q []entry) int {
	n := 0
	for _, e := range q {
		n += int(m.g.Offsets[e.v+1] - m.g.Offsets[e.v])
	}
	return n
}

// traverse runs a traversal from root to convergence.
func (m *model) traverse(root int32) result {
	m.start(root)
	kept, global := make([][]entry, m.blocks), []entry{{root, 0}}
	r := result{}
	for pending(kept, global) {
		var t float64
		kept, global, t = m.step(kept, global)
		r.steps++
		r.time += t
	}
	m.finish(&r)
	return r
}

// start labels every vertex unreached but root, at 0, and clears the
// lowered-label count.
func (m *model) start(root int32) {
	m.label = make([]int32, m.g.NumVertices())
	for i := range m.label {
		m.label[i] = unreached
	}
	m.label[root], m.relabels = 0, 0
}

// finish fills in r's lowered labels, reached vertices and levels.
func (m *model) finish(r *result) {
	r.relabels = m.relabels
	for _, l := range m.label {
		if l != unreached {
			r.reached++
			r.levels = max(r.levels, int(l)+1)
		}
	}
}

// pending reports whether any block kept work or the global queue holds any.
func pending(kept [][]entry, global []entry) bool {
	for _, k := range kept {
		if len(k) > 0 {
			return true
		}
	}
	return len(global) > 0
}

func main() {
	spec := flag.String("graph", "rgg:2000000:8", "graph spec")
	m := &model{}
	flag.IntVar(&m.blocks, "blocks", 132, "blocks of the grid")
	flag.IntVar(&m.depth, "d", 2, "run-ahead depth: levels a block expands per step")
	flag.IntVar(&m.budget, "budget", 512, "keep budget in edges (a quarter as many vertices)")
	flag.BoolVar(&m.fresh, "fresh", false, "expand kept vertices with their current level")
	flag.BoolVar(&m.seq, "seq", false, "blocks run one after another instead of level by level")
	flag.Float64Var(&m.cost.first, "first", 2.05, "us: a block's first level of a step (kept edges and global queue)")
	flag.Float64Var(&m.cost.level, "level", 1.7, "us: a block's later level of a step")
	flag.Float64Var(&m.cost.round, "round", 0.3, "us: each further round of -threads edges in a level")
	flag.Float64Var(&m.cost.barrier, "barrier", 1.16, "us: a step's publishing, barrier and counts, past its slowest block")
	flag.IntVar(&m.cost.threads, "threads", 512, "threads of a block: edges expanded per round")
	flag.Float64Var(&m.cost.tail, "tail", 0.3, "us: the exponential part's mean within -first and -level")
	flag.BoolVar(&m.async, "async", false, "no grid barriers: blocks take work as it appears (-window, -take, -publish)")
	flag.IntVar(&m.window, "window", 1, "async: how many labels past the lowest pending label a block may expand")
	flag.IntVar(&m.take, "take", 128, "async: most global entries a block takes into one level")
	flag.Float64Var(&m.publish, "publish", 1.0, "async: us from a level's end until what it pushed is visible to other blocks")
	roots := flag.Int("roots", 2, "traversals from random roots")
	seed := flag.Uint64("seed", 1, "seed of the graph generator")
	flag.Parse()
	if err := run(m, *spec, *seed, *roots); err != nil {
		fmt.Fprintln(os.Stderr, "runahead:", err)
		os.Exit(1)
	}
}

// run builds the graph and prints the model's cost over roots traversals.
func run(m *model, spec string, seed uint64, roots int) error {
	s, err := frontier.ParseSpec(spec)
	if err != nil {
		return err
	}
	if m.g, err = s.Build(seed, frontier.DefaultLimits()); err != nil {
		return err
	}
	if m.g.NumEdgeEntries() == 0 {
		return fmt.Errorf("graph %s has no edges. Fix: pass a graph with edges", m.g.Name)
	}
	m.items = m.budget / 4
	m.rng = rand.New(rand.NewPCG(7, 9))
	m.cost.rng = rand.New(rand.NewPCG(5, 3))
	picks := rand.New(rand.NewPCG(11, 13))
	var sum result
	for range roots {
		root := int32(picks.IntN(m.g.NumVertices()))
		for m.g.Offsets[root+1] == m.g.Offsets[root] {
			root = int32(picks.IntN(m.g.NumVertices()))
		}
		traverse := m.traverse
		if m.async {
			traverse = m.traverseAsync
		}
		r := traverse(root)
		if r.stalled {
			return fmt.Errorf("root %d: the traversal stalled with work pending (a window of %d)", root, m.window)
		}
		sum.levels, sum.steps, sum.relabels, sum.reached = sum.levels+r.levels, sum.steps+r.steps, sum.relabels+r.relabels, sum.reached+r.reached
		sum.time += r.time
	}
	lowered, perLevel := float64(sum.relabels)/float64(max(sum.reached, 1)), sum.time/float64(max(sum.levels, 1))
	if m.async {
		fmt.Printf("%s async window %d take %d publish %.2f us: %d levels, %d block levels, %.3f labels lowered per vertex, %.2f us per level modelled\n",
			m.g.Name, m.window, m.take, m.publish, sum.levels, sum.steps, lowered, perLevel)
		return nil
	}
	fmt.Printf("%s depth %d fresh %v seq %v: %d levels in %d steps (%.2f per barrier), %.3f labels lowered per vertex, %.2f us per level modelled\n",
		m.g.Name, m.depth, m.fresh, m.seq, sum.levels, sum.steps, float64(sum.levels)/float64(max(sum.steps, 1)), lowered, perLevel)
	return nil
}
