package bfsquery

import (
	"math"
	"slices"
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

// armWindow is how many of an arm's latest counted runs its cost is the
// median of.
const armWindow = 7

// armRetryEvery is how many runs of the kept arm an automatic arm policy
// makes between two re-measurements of the other arms.
const armRetryEvery = 64

// armCost is the cost of one arm: the median of the wall times per level
// of its latest armWindow runs (the lower of the middle two of an even
// count: noise only ever adds time). Its first run is a warm-up (the first
// launches of a kernel load it) and is not counted. A median, not a mean:
// a bad run (a root in a small component, a hiccup of the clock), or up to
// armWindow/2 of them in the window, leaves it at a good run's time, where
// one bad trial in a mean of an arm's few trials made the cheapest arm look
// dearest; and a lasting change of cost shows once it fills more than half
// the window (armWindow/2+1 runs).
type armCost struct {
	warmed bool
	n      int
	// last holds the latest min(n, armWindow) runs, the one of run k at
	// last[k%armWindow].
	last [armWindow]time.Duration
}

// add counts one run of d per level.
func (c *armCost) add(d time.Duration) {
	if !c.warmed {
		c.warmed = true
		return
	}
	c.last[c.n%armWindow] = d
	c.n++
}

// trying reports whether the arm is still in its trials.
func (c *armCost) trying() bool { return !c.warmed || c.n < armTrials }

// cost returns the median of the latest runs (0 before any).
func (c *armCost) cost() time.Duration {
	s := c.last
	runs := s[:min(c.n, armWindow)]
	if len(runs) == 0 {
		return 0
	}
	slices.Sort(runs)
	return runs[(len(runs)-1)/2]
}

// armPolicy picks the arm of a graph's single-root runs: a fixed one, or,
// when none is configured, the cheapest of bfs.DefaultArms measured on the
// graph's own queries. Each arm's first armTrials+1 runs, its warm-up
// included, are its trials, taken in turn; then the arm of the lowest cost
// (armCost: a median of its latest runs) is kept. Only an arm that runs
// measures, so a loser's cost would stay what its trials measured, however
// wrong that was or however its cost has changed since: after every
// armRetryEvery runs of the kept arm, each other arm runs once, in turn,
// to measure it again. That costs len(arms)-1 runs in every
// armRetryEvery+len(arms)-1 (2 in 66, 3%, with the three default arms),
// one of each other arm; a lasting fall of a loser's cost shows within
// armWindow/2+1 such rounds, and bad runs leave its window within
// armWindow. The cost compared is a run's wall time per level: queries
// start from different roots, and on a graph of high diameter a root's
// eccentricity, not the arm, would otherwise decide which arm looks
// cheapest. Its methods run under the graph's lock.
type armPolicy struct {
	arms  []bfs.Arm
	costs []armCost
	// runs counts the runs since every arm had its trials; it places the
	// next run in a cycle of armRetryEvery runs of the kept arm and one of
	// each other.
	runs int
}

// newArmPolicy returns the policy of a fixed arm, or the automatic one
// over bfs.DefaultArms when arm is "".
func newArmPolicy(arm bfs.Arm) armPolicy {
	arms := []bfs.Arm{arm}
	if arm == "" {
		arms = bfs.DefaultArms()
	}
	return armPolicy{arms: arms, costs: make([]armCost, len(arms))}
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
	g.arms = armPolicy{arms: arms, costs: make([]armCost, len(arms))}
	return nil
}

// trying returns the index of the first arm still in its trials, or -1.
func (p *armPolicy) trying() int {
	for i := range p.costs {
		if p.costs[i].trying() {
			return i
		}
	}
	return -1
}

// pick returns the index of the arm to run next: an arm still in its
// trials, else the kept arm (the lowest cost, the first of a tie), but for
// the last len(arms)-1 runs of each cycle, which run the other arms in
// index order.
func (p *armPolicy) pick() int {
	if i := p.trying(); i >= 0 {
		return i
	}
	best, least := 0, time.Duration(math.MaxInt64)
	for i := range p.costs {
		if c := p.costs[i].cost(); c < least {
			best, least = i, c
		}
	}
	j := p.runs%(armRetryEvery+len(p.arms)-1) - armRetryEvery
	if j < 0 {
		return best
	}
	if j >= best {
		j++ // the j-th arm other than the kept one
	}
	return j
}

// arm returns the arm to run next.
func (p *armPolicy) arm() bfs.Arm { return p.arms[p.pick()] }

// add counts one run of arm i that took d over levels levels.
func (p *armPolicy) add(i int, d time.Duration, levels int) {
	if p.trying() < 0 {
		p.runs++
	}
	p.costs[i].add(d / time.Duration(max(1, levels)))
}
