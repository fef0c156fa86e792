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
//	go run ./workloads/bfs/internal/runahead -graph rgg:2000000:8 -d 4 -fresh
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
	label         []int32
	relabels      int
	rng           *rand.Rand
}

// result is what a traversal cost.
type result struct{ levels, steps, relabels, reached int }

// expand runs one level of a block over cur and returns what it kept and
// whether it turned a candidate away; the rest goes to global.
func (m *model) expand(cur []entry, global *[]entry) (kept []entry, full bool) {
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
			if !full && len(kept) < m.items && edges+deg <= m.budget {
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
// kept vertices per block and global queue.
func (m *model) step(kept [][]entry, global []entry) ([][]entry, []entry) {
	cur := make([][]entry, m.blocks)
	for b := range cur {
		cur[b] = kept[b]
	}
	for i, e := range global {
		cur[i%m.blocks] = append(cur[i%m.blocks], e)
	}
	var next []entry
	full := make([]bool, m.blocks)
	run := func(b int) {
		if len(cur[b]) > 0 && !full[b] {
			cur[b], full[b] = m.expand(cur[b], &next)
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
	for b := range cur {
		if full[b] && len(cur[b]) > 16 { // a full block sheds all but KEEP_LOW
			next = append(next, cur[b][16:]...)
			cur[b] = cur[b][:16]
		}
	}
	return cur, next
}

// traverse runs a traversal from root to convergence.
func (m *model) traverse(root int32) result {
	m.label = make([]int32, m.g.NumVertices())
	for i := range m.label {
		m.label[i] = unreached
	}
	m.label[root], m.relabels = 0, 0
	kept, global := make([][]entry, m.blocks), []entry{{root, 0}}
	steps := 0
	for pending(kept, global) {
		kept, global = m.step(kept, global)
		steps++
	}
	r := result{steps: steps, relabels: m.relabels}
	for _, l := range m.label {
		if l != unreached {
			r.reached++
			r.levels = max(r.levels, int(l)+1)
		}
	}
	return r
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
	picks := rand.New(rand.NewPCG(11, 13))
	var sum result
	for range roots {
		root := int32(picks.IntN(m.g.NumVertices()))
		for m.g.Offsets[root+1] == m.g.Offsets[root] {
			root = int32(picks.IntN(m.g.NumVertices()))
		}
		r := m.traverse(root)
		sum.levels, sum.steps, sum.relabels, sum.reached = sum.levels+r.levels, sum.steps+r.steps, sum.relabels+r.relabels, sum.reached+r.reached
	}
	fmt.Printf("%s depth %d fresh %v seq %v: %d levels in %d steps (%.2f per barrier), %.3f labels lowered per vertex\n",
		m.g.Name, m.depth, m.fresh, m.seq, sum.levels, sum.steps, float64(sum.levels)/float64(max(sum.steps, 1)),
		float64(sum.relabels)/float64(max(sum.reached, 1)))
	return nil
}
