package main

import "math"

// pollCost is the time, in microseconds, an idle block takes to look for
// work again: one read of shared state.
const pollCost = 0.3

// stallPolls is how many polls in a row each block may find nothing to do
// while work is pending before the traversal counts as stalled.
const stallPolls = 1 << 12

// queued is a global queue entry and when it becomes visible to the grid.
type queued struct {
	entry
	at float64
}

// asyncRun is the state of a traversal without grid barriers: each block's
// clock and kept vertices, and the global queue.
type asyncRun struct {
	m       *model
	t       []float64
	kept    [][]entry
	global  []queued
	lo      int32 // the lowest pending label, while loValid
	loValid bool
}

// traverseAsync runs a traversal from root without grid barriers: whenever
// a block is free it expands, as one level, its kept vertices and up to
// -take visible global entries, as long as their labels are within -window
// of the lowest label pending anywhere (kept or queued); what it does not
// keep becomes visible to the other blocks -publish microseconds after its
// level ends. An idle block looks again after pollCost. Blocks act in the
// order of their clocks, and a level's claims take effect when it starts.
// The result's time is the last block's clock; steps counts block levels;
// stalled is set if pending work could no longer be taken by anyone.
func (m *model) traverseAsync(root int32) result {
	m.start(root)
	a := &asyncRun{m: m, t: make([]float64, m.blocks), kept: make([][]entry, m.blocks)}
	a.global = []queued{{entry{root, 0}, 0}}
	r := result{}
	idle := 0
	for a.pending() {
		b := a.next()
		if !a.act(b) {
			a.idle(b)
			if idle++; idle > stallPolls*m.blocks {
				r.stalled = true
				break
			}
			continue
		}
		idle = 0
		r.steps++
	}
	for _, t := range a.t {
		r.time = max(r.time, t)
	}
	m.finish(&r)
	return r
}

// pending reports whether any block kept work or the queue holds any.
func (a *asyncRun) pending() bool {
	return pending(a.kept, nil) || len(a.global) > 0
}

// next returns the block whose clock is earliest.
func (a *asyncRun) next() int {
	b := 0
	for i, t := range a.t {
		if t < a.t[b] {
			b = i
		}
	}
	return b
}

// low returns the lowest label pending anywhere.
func (a *asyncRun) low() int32 {
	if a.loValid {
		return a.lo
	}
	lo := int32(math.MaxInt32)
	for _, k := range a.kept {
		for _, e := range k {
			lo = min(lo, e.lab)
		}
	}
	for _, q := range a.global {
		lo = min(lo, q.lab)
	}
	a.lo, a.loValid = lo, true
	return lo
}

// act runs block b's next level if it has work within the window, and
// reports whether it did. It takes the queue's leading entries that are
// visible and within the window (never one behind an entry that is not),
// and expands the kept vertices within the window, publishing the rest of
// its kept vertices with what it pushes; when none of its kept vertices is
// within the window it expands the taken entries alone and keeps none of
// what they find. So nothing past the window is ever expanded, every label
// pending is at most the window plus one past the lowest, and the queue's
// head can never hold back an entry of the lowest label: the traversal
// cannot stall.
func (a *asyncRun) act(b int) bool {
	m, now := a.m, a.t[b]
	limit := a.low() + int32(m.window)
	mayKeep := len(a.kept[b]) == 0 || minLabel(a.kept[b]) <= limit
	keptOK := len(a.kept[b]) > 0 && mayKeep
	took := 0
	for took < min(m.take, len(a.global)) && a.global[took].at <= now && a.global[took].lab <= limit {
		took++
	}
	if !keptOK && took == 0 {
		return false
	}
	cur := make([]entry, 0, len(a.kept[b])+took)
	var deferred []entry // kept vertices past the window, published instead
	if keptOK {
		for _, e := range a.kept[b] {
			if e.lab <= limit {
				cur = append(cur, e)
			} else {
				deferred = append(deferred, e)
			}
		}
		a.kept[b] = nil
	}
	for _, q := range a.global[:took] {
		cur = append(cur, q.entry)
	}
	a.global = a.global[took:]
	a.loValid = false
	cost := m.cost.levelTime(took > 0, m.edges(cur))
	pushed := deferred
	// A level beside kept work past the window keeps nothing.
	kept, full := m.expand(cur, &pushed, mayKeep)
	if full && len(kept) > 16 { // a full block sheds all but KEEP_LOW
		pushed = append(pushed, kept[16:]...)
		kept = kept[:16]
	}
	a.kept[b] = append(a.kept[b], kept...)
	a.t[b] = now + cost
	for _, e := range pushed {
		a.global = append(a.global, queued{e, a.t[b] + m.publish})
	}
	return true
}

// idle moves block b's clock to when it may next find work: a poll later,
// or when the next queued entry becomes visible, whichever is later.
func (a *asyncRun) idle(b int) {
	next := math.Inf(1)
	for _, q := range a.global {
		if q.at > a.t[b] {
			next = min(next, q.at)
		}
	}
	a.t[b] += pollCost
	if !math.IsInf(next, 1) {
		a.t[b] = max(a.t[b], next)
	}
}

// minLabel returns the lowest label in q (not empty).
func minLabel(q []entry) int32 {
	lo := q[0].lab
	for _, e := range q[1:] {
		lo = min(lo, e.lab)
	}
	return lo
}
