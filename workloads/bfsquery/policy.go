package bfsquery

import (
	"time"

	"github.com/gpuplan/gpuplan/workloads/bfs"
)

// costWindow is how many recent runs a running cost averages over (an
// exponentially weighted mean whose weight settles at 1/costWindow).
const costWindow = 16

// runCost is a running mean of one kind of GPU run's wall time. Its first
// run is a warm-up (the first launches of a kernel load it) and is not
// counted.
type runCost struct {
	mean   float64
	warmed bool
	n      int
}

// add counts one run of d.
func (c *runCost) add(d time.Duration) {
	if !c.warmed {
		c.warmed = true
		return
	}
	c.n++
	c.mean += (float64(d) - c.mean) / float64(min(c.n, costWindow))
}

// known reports whether a run was counted.
func (c *runCost) known() bool { return c.n > 0 }

// passPolicy chooses how a chunk of distinct roots of an undirected graph
// runs on the GPU: one multi-source pass (which always runs BatchWidth
// roots, a short chunk padded, so its cost does not depend on the chunk)
// or a single-root traversal per root. It compares the wall times measured
// on this graph: a single-root run (its traversal, setup and the reads of
// its answers) and a pass (the same for all its roots). Until both are
// known, a chunk of more than one root runs as a pass. Its methods run
// under the graph's lock.
type passPolicy struct {
	one, pass runCost
}

// singly reports whether k roots run one at a time: one root always, more
// when k single-root runs cost less than a pass.
func (p *passPolicy) singly(k int) bool {
	if k <= 1 {
		return true
	}
	if !p.one.known() || !p.pass.known() {
		return false
	}
	return float64(k)*p.one.mean < p.pass.mean
}

// armTrials is how many counted runs (after its warm-up) each arm gets
// before an automatic arm policy keeps the cheapest.
const armTrials = 3

// armPolicy picks the arm of a graph's single-root runs: a fixed one, or,
// when none is configured, the cheapest of bfs.DefaultArms measured on the
// graph's own queries (each arm's first armTrials+1 runs, its warm-up
// included, are its trials, taken in turn; then the arm with the lowest
// running mean runs, its mean still following its runs). The cost compared
// is a run's wall time per level: queries start from different roots, and
// on a graph of high diameter a root's eccentricity, not the arm, would
// otherwise decide which arm looks cheapest in so few trials. Its methods
// run under the graph's lock.
type armPolicy struct {
	arms  []bfs.Arm
	costs []runCost
}

// newArmPolicy returns the policy of a fixed arm, or the automatic one
// over bfs.DefaultArms when arm is "".
func newArmPolicy(arm bfs.Arm) armPolicy {
	arms := []bfs.Arm{arm}
	if arm == "" {
		arms = bfs.DefaultArms()
	}
	return armPolicy{arms: arms, costs: make([]runCost, len(arms))}
}

// fitArms keeps the graph's arm policy to the arms its session runs: a
// configured arm the session lacks is refused, the automatic policy
// drops them.
func (g *Graph) fitArms() error {
	if g.opts.Arm != "" {
		return g.gpu.ArmFits(g.opts.Arm)
	}
	var arms []bfs.Arm
	for _, arm := range g.arms.arms {
		if g.gpu.ArmFits(arm) == nil {
			arms = append(arms, arm)
		}
	}
	g.arms = armPolicy{arms: arms, costs: make([]runCost, len(arms))}
	return nil
}

// pick returns the index of the arm to run next.
func (p *armPolicy) pick() int {
	best := 0
	for i, c := range p.costs {
		if !c.warmed || c.n < armTrials {
			return i
		}
		if c.mean < p.costs[best].mean {
			best = i
		}
	}
	return best
}

// arm returns the arm to run next.
func (p *armPolicy) arm() bfs.Arm { return p.arms[p.pick()] }

// add counts one run of arm i that took d over levels levels.
func (p *armPolicy) add(i int, d time.Duration, levels int) {
	p.costs[i].add(d / time.Duration(max(1, levels)))
}
