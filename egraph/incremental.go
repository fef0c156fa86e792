package egraph

import (
	"fmt"
	"math"
)

// RebuildIncremental restores congruence in the rounds of RebuildRounds,
// with the same union-find, the same pairs and therefore the same
// partition after every round, but a round after the first canonicalises
// and re-inserts only the e-nodes that the round's unions changed: it is
// the specification of the GPU's incremental rounds. Labels, Rounds,
// DataParallelRounds, UnionMerges, ClassesAfterUnions, CongruenceMerges,
// Classes and DistinctNodes equal RebuildRounds'; NodeTouches counts the
// e-nodes canonicalised, summed over the rounds (RebuildRounds touches
// every e-node in every round).
//
// State, besides that of RebuildRounds (parent, cls, canon, the table of
// T slots and the pairs), all int32: the uses index (class id c → the
// e-nodes whose class or a child is c, once per occurrence, in CSR form:
// useStart[C+1], uses[N+M]); the link tree of the union-find (head[c],
// next[c]: the roots linked under c, as a list pushed when they are
// linked; path halving does not change it); slot[N], the table slot an
// e-node owns or -1; a round stamp per class id and per e-node; and the
// dirty list.
//
// Round 1 is RebuildRounds' round 1 (every e-node is inserted, each owner
// records its slot). A later round is:
//
//  1. Apply the pending pairs as in RebuildRounds; every union that joins
//     two classes records its loser (the larger root, linked under the
//     smaller) and pushes it on the winner's list in the link tree.
//  2. Find the dirty e-nodes: the class ids whose root changed are the
//     losers and every class id below a loser in the link tree; the dirty
//     e-nodes are their uses, each listed once (by its stamp).
//  3. Canonicalise the dirty e-nodes (cls and canon as in RebuildRounds).
//     A dirty e-node whose canonical children changed is key-dirty; if it
//     owns a slot, the slot becomes a tombstone (low word 0xFFFFFFFF):
//     still full for probing, never matched, never reused.
//  4. Insert the key-dirty e-nodes into the table kept from the last round
//     (not cleared), by the probing and word-by-word comparison of
//     RebuildRounds, stepping over tombstones; each that finds an owner of
//     another class emits the pair (cls[owner], cls[i]), and each that
//     claims a slot records it.
//  5. Rounds repeat while a pair was emitted, as in RebuildRounds.
//
// A round runs as a full pass instead (clear the table, canonicalise and
// insert every e-node, as RebuildRounds' round does) when its dirty
// e-nodes are more than N/2, or when the tombstones plus the dirty e-nodes
// exceed T/4. Either kind of round gives the same pairs up to order, so
// the choice changes only the work. Since the live slots are at most N ≤
// T/2, the table is never more than 3/4 full; and a full pass for
// tombstones (N touches) follows more than T/4 ≥ N/2 touches of
// incremental rounds, so it at most triples their work.
//
// Why the partition is Rebuild's: after the inserts of every round, (a)
// the table holds exactly one live entry for each distinct canonical
// e-node, owned by an e-node whose current canon equals it, on its probe
// path; and (b) every e-node is in its owner's class once the round's
// pairs are applied. Both hold after round 1. In a later round, an
// e-node's canonical form changes exactly when one of its words is a
// loser, which depends only on the form: so all the e-nodes that shared a
// form are key-dirty together, and the live entry of every form that
// vanishes is owned by a key-dirty e-node and becomes a tombstone in step
// 3, before any insert. The live entries left are those of forms that did
// not change, whose e-nodes are not key-dirty and by (b) already in their
// owner's class. Each key-dirty insert then finds the one live entry of
// its new form or creates it, which restores (a), and emits the pairs
// that give (b). The pairs emitted only join e-nodes of equal canonical
// form, and every two e-nodes of equal form end up joined through their
// owner, so each round unites exactly the classes that RebuildRounds'
// round unites, and both stop at the same round. Tombstones are needed:
// a stale entry left live could sit on the probe path of its owner's new
// form (when the old and the new signature collide) and be matched in
// place of the form's real entry, which would split a class. Errors are
// those of g.Validate and of a uses index beyond int32 (IncrementalError).
func RebuildIncremental(g *Graph) (*RebuildResult, error) {
	return rebuildIncremental(g, nil)
}

// rebuildIncremental is RebuildIncremental with the table hashing by hash
// (nil: NodeSignature).
func rebuildIncremental(g *Graph, hash func(int32, []int32) uint32) (*RebuildResult, error) {
	res, _, err := runIncremental(g, hash)
	return res, err
}

// runIncremental is rebuildIncremental that also returns its final state.
func runIncremental(g *Graph, hash func(int32, []int32) uint32) (*RebuildResult, *incState, error) {
	if err := g.Validate(); err != nil {
		return nil, nil, err
	}
	s, err := newIncState(g)
	if err != nil {
		return nil, nil, err
	}
	s.table.hash = hash
	res := newRebuildResult(g)
	for pending := g.Unions; ; {
		if pending = s.round(res, pending); len(pending) == 0 {
			break
		}
	}
	res.DataParallelRounds = res.Rounds
	res.finishLabels(g.ClassCount, s.uf.find)
	return res, s, nil
}

// IncrementalError reports an e-graph whose incremental state cannot be
// indexed in int32.
type IncrementalError struct {
	Msg string
	Fix string
}

// Error says what overflowed and ends with a Fix.
func (e *IncrementalError) Error() string {
	return fmt.Sprintf("incremental rebuild: %s. Fix: %s", e.Msg, e.Fix)
}

// tombstone is the low word of a retired table slot: no e-node+1 is
// 0xFFFFFFFF since e-nodes are fewer than MaxGraphLen.
const tombstone = 0xFFFFFFFF

// maxIncrementalNodes is the most e-nodes whose table (the smallest power
// of two of at least 2N slots) numbers its slots in int32.
const maxIncrementalNodes = 1 << 30

// incState holds the arrays of RebuildIncremental.
type incState struct {
	*roundState
	useStart, uses []int32
	head, next     []int32 // link tree: roots linked under c
	slot           []int32 // slot owned by each e-node, or -1
	classStamp     []int32
	nodeStamp      []int32
	losers, walk   []int32
	dirty, keyed   []int32
	tombs          int
	// The full passes after round 1: for too many dirty e-nodes, and for
	// tombstones.
	fullForDirty, fullForTombs int
	stamp                      int32 // the current round, the stamp of what it visits
}

func newIncState(g *Graph) (*incState, error) {
	if err := checkIncrementalSizes(g.NodeCount(), len(g.Children)); err != nil {
		return nil, err
	}
	useStart, uses, err := UsesIndex(g)
	if err != nil {
		return nil, err
	}
	c, n := int(g.ClassCount), g.NodeCount()
	s := &incState{roundState: newRoundState(g), useStart: useStart, uses: uses,
		head: filled(c, -1), next: filled(c, -1), slot: filled(n, -1),
		classStamp: make([]int32, c), nodeStamp: make([]int32, n)}
	return s, nil
}

// filled returns n copies of v.
func filled(n int, v int32) []int32 {
	s := make([]int32, n)
	for i := range s {
		s[i] = v
	}
	return s
}

// checkIncrementalSizes refuses an e-graph of n e-nodes and m children
// whose table slots or uses index do not fit int32 indices.
func checkIncrementalSizes(n, m int) error {
	const fix = "split the e-graph, or use RebuildRounds or Rebuild"
	if n > maxIncrementalNodes {
		return &IncrementalError{Msg: fmt.Sprintf("%d e-nodes need a table of more than 2^31 slots, beyond int32 slot numbers (at most %d e-nodes)", n, maxIncrementalNodes), Fix: fix}
	}
	if total := int64(n) + int64(m); total > math.MaxInt32 {
		return &IncrementalError{Msg: fmt.Sprintf("the uses index needs %d entries (%d e-nodes plus %d children), more than %d", total, n, m, math.MaxInt32), Fix: fix}
	}
	return nil
}

// UsesIndex returns the uses index of RebuildIncremental: for every class
// id c, the e-nodes whose class is c and those that name c as a child
// (once per occurrence, in e-node order), uses[start[c]:start[c+1]], by a
// counting sort. It refuses, with an *IncrementalError, an e-graph whose
// index or table would not be numbered in int32. g must be valid
// (g.Validate).
func UsesIndex(g *Graph) (start, uses []int32, err error) {
	if err := checkIncrementalSizes(g.NodeCount(), len(g.Children)); err != nil {
		return nil, nil, err
	}
	total := g.NodeCount() + len(g.Children)
	start = make([]int32, g.ClassCount+1)
	for i, c := range g.NodeClass {
		start[c+1]++
		for _, k := range g.NodeChildren(i) {
			start[k+1]++
		}
	}
	for c := range g.ClassCount {
		start[c+1] += start[c]
	}
	fill := append([]int32(nil), start[:g.ClassCount]...)
	uses = make([]int32, total)
	for i, c := range g.NodeClass {
		uses[fill[c]] = int32(i)
		fill[c]++
		for _, k := range g.NodeChildren(i) {
			uses[fill[k]] = int32(i)
			fill[k]++
		}
	}
	return start, uses, nil
}

// round runs one round, counts it in res and returns the pairs it emitted.
func (s *incState) round(res *RebuildResult, pending []int32) []int32 {
	res.Rounds++
	s.stamp = int32(res.Rounds)
	merges := s.applyAndLink(pending)
	if res.Rounds == 1 {
		res.UnionMerges = merges
		res.ClassesAfterUnions = res.ClassIDs - merges
	} else {
		res.CongruenceMerges += merges
	}
	if s.incremental(res.Rounds) {
		s.dirtyPass()
		res.NodeTouches += len(s.dirty)
	} else {
		s.fullPass()
		res.NodeTouches += s.g.NodeCount()
	}
	res.DistinctNodes = s.table.count
	return s.pairs
}

// incremental collects the dirty e-nodes of round r after its step 1 and
// reports whether the round runs over them alone: not in round 1, not for
// more than N/2 dirty e-nodes, nor when the tombstones plus the dirty
// e-nodes pass T/4.
func (s *incState) incremental(r int) bool {
	switch {
	case r == 1:
		return false
	case !s.collectDirty(s.g.NodeCount() / 2):
		s.fullForDirty++
		return false
	case s.tombs+len(s.dirty) > len(s.table.slots)/4:
		s.fullForTombs++
		return false
	}
	return true
}

// applyAndLink is step 1: it applies the pairs, records the losers and
// links them in the link tree, and returns how many pairs joined classes.
func (s *incState) applyAndLink(pairs []int32) int {
	s.losers = s.losers[:0]
	for k := 0; k < len(pairs); k += 2 {
		if l := s.uf.link(pairs[k], pairs[k+1]); l >= 0 {
			w := s.uf.parent[l]
			s.next[l], s.head[w] = s.head[w], l
			s.losers = append(s.losers, l)
		}
	}
	return len(s.losers)
}

// collectDirty is step 2: it lists the uses of every class id whose root
// changed in s.dirty, and reports false (stopping early) once they are
// more than limit.
func (s *incState) collectDirty(limit int) bool {
	s.dirty = s.dirty[:0]
	for _, l := range s.losers {
		if s.classStamp[l] == s.stamp {
			continue
		}
		s.classStamp[l] = s.stamp
		s.walk = append(s.walk[:0], l)
		for len(s.walk) > 0 {
			c := s.walk[len(s.walk)-1]
			s.walk = s.walk[:len(s.walk)-1]
			if !s.markUses(c, limit) {
				return false
			}
			s.pushLinked(c)
		}
	}
	return true
}

// markUses adds the uses of class id c not yet listed this round to
// s.dirty and reports whether they stay within limit.
func (s *incState) markUses(c int32, limit int) bool {
	for _, i := range s.uses[s.useStart[c]:s.useStart[c+1]] {
		if s.nodeStamp[i] != s.stamp {
			s.nodeStamp[i] = s.stamp
			s.dirty = append(s.dirty, i)
		}
	}
	return len(s.dirty) <= limit
}

// pushLinked puts the class ids linked under c, not yet walked this
// round, on the walk.
func (s *incState) pushLinked(c int32) {
	for m := s.head[c]; m >= 0; m = s.next[m] {
		if s.classStamp[m] != s.stamp {
			s.classStamp[m] = s.stamp
			s.walk = append(s.walk, m)
		}
	}
}

// fullPass is a round of RebuildRounds over every e-node that records the
// owners' slots; it clears the tombstones.
func (s *incState) fullPass() {
	s.canonicalise()
	s.table.clear()
	s.tombs = 0
	s.pairs = s.pairs[:0]
	for i := range int32(s.g.NodeCount()) {
		s.slot[i] = -1
		s.insert(i)
	}
}

// dirtyPass is steps 3 and 4 over the dirty e-nodes.
func (s *incState) dirtyPass() {
	s.keyed = s.keyed[:0]
	for _, i := range s.dirty {
		if s.canonicaliseNode(i) {
			s.keyed = append(s.keyed, i)
			s.retire(i)
		}
	}
	s.pairs = s.pairs[:0]
	for _, i := range s.keyed {
		s.insert(i)
	}
}

// canonicaliseNode rewrites e-node i's class and children to roots and
// reports whether a child changed.
func (s *incState) canonicaliseNode(i int32) bool {
	s.cls[i] = s.uf.find(s.g.NodeClass[i])
	changed := false
	for k := s.g.ChildStart[i]; k < s.g.ChildStart[i+1]; k++ {
		if r := s.uf.find(s.g.Children[k]); r != s.canon[k] {
			s.canon[k], changed = r, true
		}
	}
	return changed
}

// retire turns the slot e-node i owns, if any, into a tombstone.
func (s *incState) retire(i int32) {
	if p := s.slot[i]; p >= 0 {
		s.table.slots[p] = s.table.slots[p]&^0xFFFFFFFF | tombstone
		s.table.count--
		s.tombs++
		s.slot[i] = -1
	}
}

// insert adds e-node i to the table, records the slot it claims, and
// emits a pair when it matches an owner of another class.
func (s *incState) insert(i int32) {
	o, p := s.table.insertLive(i)
	if o < 0 {
		s.slot[i] = p
	} else if s.cls[o] != s.cls[i] {
		s.pairs = append(s.pairs, s.cls[o], s.cls[i])
	}
}

// insertLive adds e-node i unless an equal e-node is stored, stepping
// over tombstones: it returns the equal e-node stored and -1, or -1 and
// the slot claimed.
func (t *nodeTable) insertLive(i int32) (owner, slot int32) {
	h := t.signature(i)
	for pos := uint64(h) & t.mask; ; pos = (pos + 1) & t.mask {
		s := t.slots[pos]
		if s == 0 {
			t.slots[pos] = uint64(h)<<32 | uint64(i+1)
			t.count++
			return -1, int32(pos)
		}
		if uint32(s>>32) == h && uint32(s) != tombstone {
			if j := int32(uint32(s)) - 1; t.equal(i, j) {
				return j, -1
			}
		}
	}
}

// link is union that returns the loser (the larger root, now linked under
// the smaller), or -1 when a and b were in one set.
func (u minUnionFind) link(a, b int32) int32 {
	ra, rb := u.find(a), u.find(b)
	if ra == rb {
		return -1
	}
	if rb < ra {
		ra, rb = rb, ra
	}
	u.parent[rb] = ra
	return rb
}
