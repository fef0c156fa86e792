package bfsquery

import "time"

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

// Costs returns the mean wall times the policy compares, 0 while unknown.
func (p *passPolicy) costs() (one, pass time.Duration) {
	return time.Duration(p.one.mean), time.Duration(p.pass.mean)
}
