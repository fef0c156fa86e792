package egraph

import "fmt"

// HybridOptions tunes RebuildHybridWith; the zero value is RebuildHybrid.
type HybridOptions struct {
	// MinMerges is the fewest classes a data-parallel round must unite in
	// its step 1 for another round to run; a round that unites fewer hands
	// the rest of the closure to the worklist. 0 means HybridMinMerges of
	// the e-graph's e-nodes.
	MinMerges int
	// MaxRounds, when positive, caps the data-parallel rounds: the worklist
	// finishes after that many. 0 leaves the cap to MinMerges alone.
	MaxRounds int
}

// HybridMinMerges returns RebuildHybrid's MinMerges for an e-graph of n
// e-nodes: ceil(n/64), and at least 1. Since every class id owns an
// e-node, at most n-1 merges happen in all, so a threshold of n/64 lets at
// most 64 rounds run: the rounds cost at most 64 passes over the e-graph
// whatever its shape. A round that unites fewer than one class per 64
// e-nodes it visits spends most of its pass on e-nodes that did not
// change, where the worklist re-hashes only the parents of the classes
// united.
func HybridMinMerges(n int) int { return max(1, (n+63)/64) }

// RebuildHybrid is RebuildHybridWith with the default options: the
// data-parallel rounds of RebuildRounds while each unites at least
// HybridMinMerges(g.NodeCount()) classes, at most 64 rounds, then the
// worklist of Rebuild.
func RebuildHybrid(g *Graph) (*RebuildResult, error) {
	return RebuildHybridWith(g, HybridOptions{})
}

// RebuildHybridWith restores congruence in the data-parallel rounds of
// RebuildRounds, one after another, until a round whose step 1 united
// fewer than opt.MinMerges classes, or the opt.MaxRounds-th round; it then
// finishes from that round's state with the worklist of Rebuild, which
// re-hashes only the parents of the classes that change. The partition,
// the merge counts and DistinctNodes are those of Rebuild and RebuildRounds.
//
// A round that emits no pair ends the closure, as in RebuildRounds, and
// the worklist is not needed. Otherwise the hand-over keeps the rounds'
// union-find and canonical children: the e-nodes that own a slot of the
// last round's table are the worklist's stored e-nodes and the others are
// matched to them; the pairs the last round emitted are united with the
// parents of every absorbed class queued, and the worklist runs to empty.
//
// DataParallelRounds counts the rounds, WorklistFinished reports the
// hand-over, and Rounds is the rounds plus the worklist's generations
// (each a pass over the e-nodes queued). Errors are those of g.Validate
// and of negative options.
func RebuildHybridWith(g *Graph, opt HybridOptions) (*RebuildResult, error) {
	if err := g.Validate(); err != nil {
		return nil, err
	}
	if opt.MinMerges < 0 || opt.MaxRounds < 0 {
		return nil, fmt.Errorf("hybrid rebuild options: MinMerges %d and MaxRounds %d must not be negative. Fix: pass 0 for the defaults", opt.MinMerges, opt.MaxRounds)
	}
	minMerges := opt.MinMerges
	if minMerges == 0 {
		minMerges = HybridMinMerges(g.NodeCount())
	}
	s := newRoundState(g)
	res := newRebuildResult(g)
	for pending := g.Unions; ; {
		merges, next := s.round(res, pending)
		if len(next) == 0 {
			res.DataParallelRounds = res.Rounds
			res.finishLabels(g.ClassCount, s.uf.find)
			return res, nil
		}
		if merges < minMerges || res.Rounds == opt.MaxRounds {
			finishWithWorklist(s, res, next)
			return res, nil
		}
		pending = next
	}
}

// finishWithWorklist hands the state of the last round and the pairs it
// emitted to the worklist, runs it to empty and fills in res.
func finishWithWorklist(s *roundState, res *RebuildResult, pairs []int32) {
	res.DataParallelRounds = res.Rounds
	res.WorklistFinished = true
	w := worklistFromRounds(s)
	res.CongruenceMerges += w.unitePairs(pairs)
	res.Rounds += w.drain()
	res.CongruenceMerges += w.merges
	res.DistinctNodes = w.memo.count
	res.finishLabels(s.g.ClassCount, w.find)
}

// worklistFromRounds builds the worklist of Rebuild over the state of a
// finished round of s, which it takes over: the union-find (a forest
// whatever the choice of roots), the canonical children and the table.
// Each root's ring and parent count are built from the forest; the
// e-nodes in the table are stored and every other e-node is matched, its
// canonical children equal to those of the e-node that owns its slot.
func worklistFromRounds(s *roundState) *worklist {
	g := s.g
	n := g.NodeCount()
	w := &worklist{g: g, parent: s.uf.parent, ring: make([]int32, g.ClassCount), pcount: make([]int32, g.ClassCount),
		canon: s.canon, state: make([]uint8, n), queued: make([]bool, n), pending: make([]int32, 0, n), memo: s.table, pushing: true}
	w.pstart, w.pnodes = parentLists(g)
	for c := range g.ClassCount {
		w.ring[c] = c
	}
	for c := range g.ClassCount {
		r := w.find(c)
		w.pcount[r] += w.pstart[c+1] - w.pstart[c]
		if r != c {
			w.ring[c], w.ring[r] = w.ring[r], c
		}
	}
	for i := range w.state {
		w.state[i] = nodeMatched
	}
	for _, slot := range s.table.slots {
		if slot != 0 {
			w.state[uint32(slot)-1] = nodeStored
		}
	}
	return w
}
