package egraph

// RebuildResult is the outcome of restoring congruence on a Graph.
type RebuildResult struct {
	// Labels[c] is the smallest class id of the final class of class id c:
	// each class is represented by its smallest id.
	Labels []int32 `json:"-"`
	// ClassIDs is the number of class ids before anything was merged.
	ClassIDs int `json:"class_ids"`
	// ClassesAfterUnions is the number of classes once the pending unions
	// are applied, before any congruence repair.
	ClassesAfterUnions int `json:"classes_after_unions"`
	// Classes is the number of classes after the rebuild.
	Classes int `json:"classes"`
	// UnionPairs and UnionMerges count the pending union pairs and those
	// that joined two distinct classes.
	UnionPairs  int `json:"union_pairs"`
	UnionMerges int `json:"union_merges"`
	// CongruenceMerges counts the merges found by congruence.
	CongruenceMerges int `json:"congruence_merges"`
	// Nodes and DistinctNodes count the e-nodes in and the distinct
	// canonical e-nodes after the rebuild (egg's total_number_of_nodes).
	Nodes         int `json:"nodes"`
	DistinctNodes int `json:"distinct_nodes"`
	// Rounds counts passes over e-nodes: for Rebuild, the first pass over
	// every e-node plus one per generation of the repair worklist; for
	// RebuildRounds, the rounds run, the last of which found nothing new;
	// for RebuildHybrid, its data-parallel rounds plus the generations of
	// the worklist that finished it, if one did.
	Rounds int `json:"rounds"`
	// DataParallelRounds counts the rounds that were passes of
	// RebuildRounds over every e-node: all of Rounds for RebuildRounds and
	// the GPU rebuild, none for Rebuild, and for RebuildHybrid those run
	// before the worklist took over (at most 64 with its defaults).
	DataParallelRounds int `json:"data_parallel_rounds"`
	// WorklistFinished reports that the worklist of Rebuild carried the
	// closure to its end: always for Rebuild, never for RebuildRounds, and
	// for RebuildHybrid when a round united too few classes to run another
	// (or HybridOptions.MaxRounds had run).
	WorklistFinished bool `json:"worklist_finished"`
	// NodeTouches counts the e-nodes canonicalised, summed over the
	// rounds: set by RebuildIncremental only (RebuildRounds touches every
	// e-node in each of its rounds, Nodes times Rounds).
	NodeTouches int `json:"node_touches,omitempty"`
}

// NodeClasses returns the final class of every e-node of g, in e-node
// order: the partition that egg's .post.txt holds, with each class named by
// its smallest class id.
func (r *RebuildResult) NodeClasses(g *Graph) []int32 {
	out := make([]int32, g.NodeCount())
	for i, c := range g.NodeClass {
		out[i] = r.Labels[c]
	}
	return out
}

// finishLabels fills Labels with the smallest member of each class
// (rootOf returns any fixed representative of a class id) and counts the
// classes.
func (r *RebuildResult) finishLabels(classes int32, rootOf func(int32) int32) {
	first := make([]int32, classes)
	for i := range first {
		first[i] = -1
	}
	r.Labels = make([]int32, classes)
	r.Classes = 0
	for c := range classes {
		root := rootOf(c)
		if first[root] < 0 {
			first[root] = c
			r.Classes++
		}
		r.Labels[c] = first[root]
	}
}

// Rebuild restores congruence the way egg's deferred rebuild does and
// returns the final partition. It is the CPU reference.
//
//  1. Every pending union pair is applied to a union-find over class ids.
//  2. Every e-node is hash-consed: its children are rewritten to their
//     roots and the e-node is looked up in a hash table keyed by (op,
//     children); if an equal e-node is there, their classes are united,
//     otherwise the e-node is stored.
//  3. Each union of two classes puts the e-nodes that have a child in the
//     absorbed class (its parents) on a worklist: their stored keys are
//     stale. Like egg, the absorbed class is the one with fewer parents.
//  4. Each e-node taken from the worklist is removed from the table, its
//     children are rewritten and it is hash-consed again as in step 2.
//     This repeats, one generation of the worklist at a time, until the
//     worklist is empty: no union is left to propagate.
//
// The class ids united by the same e-node's class id count as equal from
// the start. Cycles are legal. Errors are those of g.Validate.
func Rebuild(g *Graph) (*RebuildResult, error) {
	if err := g.Validate(); err != nil {
		return nil, err
	}
	w := newWorklist(g)
	res := newRebuildResult(g)
	res.UnionMerges = w.unitePairs(g.Unions)
	res.ClassesAfterUnions = res.ClassIDs - res.UnionMerges
	w.pushing = true
	res.Rounds = 1
	for i := range int32(g.NodeCount()) {
		w.process(i)
	}
	res.Rounds += w.drain()
	res.CongruenceMerges = w.merges
	res.DistinctNodes = w.memo.count
	res.WorklistFinished = true
	res.finishLabels(g.ClassCount, w.find)
	return res, nil
}

// unitePairs unites the classes of the flat pairs and returns how many
// joined distinct classes.
func (w *worklist) unitePairs(pairs []int32) int {
	merges := 0
	for k := 0; k < len(pairs); k += 2 {
		if w.union(pairs[k], pairs[k+1]) {
			merges++
		}
	}
	return merges
}

// drain processes the worklist one generation at a time until it is
// empty and returns the number of generations.
func (w *worklist) drain() int {
	generations := 0
	for len(w.pending) > 0 {
		generations++
		cur := w.pending
		w.pending = w.spare[:0]
		for _, i := range cur {
			w.queued[i] = false
			w.process(i)
		}
		w.spare = cur
	}
	return generations
}

// Node states of the worklist rebuild.
const (
	nodeUnseen  = 0 // not hash-consed yet
	nodeStored  = 1 // stored in the table under its current children
	nodeMatched = 2 // matched an equal stored e-node; not stored itself
)

// worklist is the state of one Rebuild: a union-find whose roots are kept
// with the class that has more parents (egg's choice), the members of each
// class as a ring, the parents of each class id, the canonical children of
// every e-node and the table of stored e-nodes.
type worklist struct {
	g       *Graph
	parent  []int32
	ring    []int32 // next member of the same class, circular
	pcount  []int32 // parent entries of a root's class
	pstart  []int32 // parents of class id c: pnodes[pstart[c]:pstart[c+1]]
	pnodes  []int32
	canon   []int32 // children rewritten to roots (same layout as Children)
	state   []uint8
	queued  []bool
	pending []int32
	spare   []int32
	memo    *nodeTable
	merges  int
	pushing bool
}

func newWorklist(g *Graph) *worklist {
	c := g.ClassCount
	w := &worklist{g: g, parent: make([]int32, c), ring: make([]int32, c), pcount: make([]int32, c),
		canon: append([]int32(nil), g.Children...), state: make([]uint8, g.NodeCount()), queued: make([]bool, g.NodeCount()),
		// A generation queues each e-node at most once: reserving N
		// entries saves the repeated growth of a long worklist.
		pending: make([]int32, 0, g.NodeCount())}
	for i := range c {
		w.parent[i], w.ring[i] = i, i
	}
	w.pstart, w.pnodes = parentLists(g)
	for i := range c {
		w.pcount[i] = w.pstart[i+1] - w.pstart[i]
	}
	w.memo = newNodeTable(g.NodeCount(), g.NodeOp, g.ChildStart, w.canon)
	return w
}

// parentLists returns, for every class id, the e-nodes that name it as a
// child (once per occurrence), by a counting sort.
func parentLists(g *Graph) (start, nodes []int32) {
	start = make([]int32, g.ClassCount+1)
	for _, c := range g.Children {
		start[c+1]++
	}
	for i := range g.ClassCount {
		start[i+1] += start[i]
	}
	fill := append([]int32(nil), start[:g.ClassCount]...)
	nodes = make([]int32, len(g.Children))
	for i := range int32(g.NodeCount()) {
		for _, c := range g.NodeChildren(int(i)) {
			nodes[fill[c]] = i
			fill[c]++
		}
	}
	return start, nodes
}

func (w *worklist) find(x int32) int32 {
	p := w.parent
	for p[x] != x {
		p[x] = p[p[x]]
		x = p[x]
	}
	return x
}

// union joins the classes of a and b; the root with more parents stays
// root and, once hash-consing has started, the parents of every member of
// the absorbed class are queued.
func (w *worklist) union(a, b int32) bool {
	ra, rb := w.find(a), w.find(b)
	if ra == rb {
		return false
	}
	if w.pcount[ra] < w.pcount[rb] {
		ra, rb = rb, ra
	}
	if w.pushing {
		for m := rb; ; {
			for _, p := range w.pnodes[w.pstart[m]:w.pstart[m+1]] {
				if !w.queued[p] {
					w.queued[p] = true
					w.pending = append(w.pending, p)
				}
			}
			if m = w.ring[m]; m == rb {
				break
			}
		}
	}
	w.parent[rb] = ra
	w.pcount[ra] += w.pcount[rb]
	w.ring[ra], w.ring[rb] = w.ring[rb], w.ring[ra]
	return true
}

// process hash-conses e-node i under the current union-find.
func (w *worklist) process(i int32) {
	lo, hi := w.g.ChildStart[i], w.g.ChildStart[i+1]
	stale := w.state[i] == nodeUnseen
	for k := lo; k < hi; k++ {
		if w.find(w.canon[k]) != w.canon[k] {
			stale = true
		}
	}
	if !stale {
		return
	}
	if w.state[i] == nodeStored {
		w.memo.remove(i)
	}
	for k := lo; k < hi; k++ {
		w.canon[k] = w.find(w.canon[k])
	}
	j := w.memo.insert(i)
	if j < 0 {
		w.state[i] = nodeStored
		return
	}
	w.state[i] = nodeMatched
	if w.union(w.g.NodeClass[i], w.g.NodeClass[j]) {
		w.merges++
	}
}
