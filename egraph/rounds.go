package egraph

// RebuildRounds restores congruence in data-parallel rounds, the algorithm
// the GPU rebuild runs, and returns the same partition as Rebuild. Every
// step is a pass over a flat array that a GPU runs one thread per element;
// this function runs them in order on the CPU and is the specification
// that the GPU kernels and their emulation follow.
//
// State, all int32: parent[C] (union-find over class ids, parent[c] = c
// at the start), cls[N] (the canonical class of each e-node), canon[M] (the
// children rewritten to roots, laid out like Children), table[T] (T the
// smallest power of two at least 2N and at least 16; each slot 0 or
// signature<<32 | (node+1)), pairs (the pending union pairs, at most
// max(U, N)) and the changed flag.
//
// A round is five steps, each a grid-wide pass that ends before the next
// begins:
//
//  1. Apply the pending pairs. For a pair (a, b): ra = find(a),
//     rb = find(b); while ra != rb, link the larger root under the smaller
//     (the GPU does it with compare-and-swap on parent[larger], expecting
//     it to still be its own parent, and retries from find on failure).
//     find halves paths: parent[x] = parent[parent[x]] as it walks (a
//     benign race on the GPU: every write stores an ancestor). The smallest
//     id always wins, so the root of a class is its smallest class id
//     whatever order the pairs are applied in. In round 1 the pending pairs
//     are the graph's Unions; later, the pairs emitted by step 4.
//  2. Canonicalise: cls[i] = find(NodeClass[i]) for every e-node and
//     canon[k] = find(Children[k]) for every child slot.
//  3. Group equal e-nodes: clear the table, then insert every e-node i
//     under NodeSignature(op[i], canon of i) by linear probing from
//     signature mod T. An empty slot is claimed (compare-and-swap from 0);
//     a slot holding the same signature is compared word by word (op, then
//     the canonical children); a match makes the slot's e-node i's owner.
//     The number of claimed slots is the count of distinct canonical
//     e-nodes.
//  4. Union the classes of equal e-nodes: every e-node whose owner has a
//     different canonical class emits the pair (cls[owner], cls[i]) into
//     the pending pairs of the next round (an atomic counter hands out the
//     slots).
//  5. Set the changed flag when step 4 emitted a pair. Rounds repeat while
//     it is set; the round that emits nothing is the last, so Rounds
//     counts it.
//
// The final partition is find(c) for every class id c: the smallest id
// of its class. Which e-node owns a key in step 3 depends on the order of
// insertion, but the classes united do not, so every order gives the same
// partition. Errors are those of g.Validate.
//
// The rounds are as many as the longest chain of congruences that one
// merge sets off (a tower f(f(...f(x))) against f(f(...f(y))) with x ~ y
// pending takes one round per level), and each is a pass over every
// e-node, so the time can grow as the square of the e-graph. RebuildHybrid
// gives the same partition after at most 64 of these rounds, finishing
// with the worklist; RebuildRounds stays the exact specification of the
// GPU's rounds and of their count.
func RebuildRounds(g *Graph) (*RebuildResult, error) {
	if err := g.Validate(); err != nil {
		return nil, err
	}
	s := newRoundState(g)
	res := newRebuildResult(g)
	for pending := g.Unions; ; {
		if _, pending = s.round(res, pending); len(pending) == 0 {
			break
		}
	}
	res.DataParallelRounds = res.Rounds
	res.finishLabels(g.ClassCount, s.uf.find)
	return res, nil
}

// newRebuildResult returns a result with g's counts filled in.
func newRebuildResult(g *Graph) *RebuildResult {
	return &RebuildResult{ClassIDs: int(g.ClassCount), UnionPairs: g.UnionCount(), Nodes: g.NodeCount()}
}

// round runs one round of RebuildRounds on pending, counts it and its
// merges in res, and returns the merges of its step 1 and the pairs its
// step 4 emitted for the next round.
func (s *roundState) round(res *RebuildResult, pending []int32) (merges int, next []int32) {
	res.Rounds++
	merges = s.applyPairs(pending)
	if res.Rounds == 1 {
		res.UnionMerges = merges
		res.ClassesAfterUnions = res.ClassIDs - merges
	} else {
		res.CongruenceMerges += merges
	}
	s.canonicalise()
	next = s.group()
	res.DistinctNodes = s.table.count
	return merges, next
}

// roundState holds the arrays of RebuildRounds.
type roundState struct {
	g     *Graph
	uf    minUnionFind
	cls   []int32
	canon []int32
	table *nodeTable
	pairs []int32
}

func newRoundState(g *Graph) *roundState {
	s := &roundState{g: g, uf: newMinUnionFind(g.ClassCount), cls: make([]int32, g.NodeCount()),
		canon: make([]int32, len(g.Children)), pairs: make([]int32, 0, 2*g.NodeCount())}
	s.table = newNodeTable(g.NodeCount(), g.NodeOp, g.ChildStart, s.canon)
	return s
}

// applyPairs is step 1: it returns how many pairs joined distinct classes.
func (s *roundState) applyPairs(pairs []int32) int {
	merges := 0
	for k := 0; k < len(pairs); k += 2 {
		if s.uf.union(pairs[k], pairs[k+1]) {
			merges++
		}
	}
	return merges
}

// canonicalise is step 2.
func (s *roundState) canonicalise() {
	for i, c := range s.g.NodeClass {
		s.cls[i] = s.uf.find(c)
	}
	for k, c := range s.g.Children {
		s.canon[k] = s.uf.find(c)
	}
}

// group is steps 3 and 4: it returns the pairs to apply next round.
func (s *roundState) group() []int32 {
	s.table.clear()
	s.pairs = s.pairs[:0]
	for i := range int32(s.g.NodeCount()) {
		if o := s.table.insert(i); o >= 0 && s.cls[o] != s.cls[i] {
			s.pairs = append(s.pairs, s.cls[o], s.cls[i])
		}
	}
	return s.pairs
}
