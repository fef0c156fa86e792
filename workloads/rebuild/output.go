package rebuild

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"slices"

	"github.com/gpuplan/gpuplan/egraph"
	"github.com/gpuplan/gpuplan/executor"
)

// Output is what a rebuild leaves on the device, read back in vyre's
// readback format (egraph.DecodeReadbackPairs): the canonical partition
// and the deduplicated e-node table.
type Output struct {
	// Rewrites are the canonical rewrites of the final partition, in
	// ascending class order: every class id whose representative (the
	// smallest id of its class) differs, as PlanUnionCompaction emits them.
	Rewrites []egraph.CanonicalRewrite `json:"rewrites"`
	// Nodes is the deduplicated e-node table: one e-node per distinct
	// canonical e-node, with its class, in ascending e-node order.
	Nodes []NodeEntry `json:"nodes"`
	// Result is the rebuild as egraph's references report it: the labels
	// from the rewrites, the counts from the device's result words.
	Result *egraph.RebuildResult `json:"result"`
}

// NodeEntry is one distinct canonical e-node: the input e-node that owns
// its key in the final table, and its class (the smallest class id).
type NodeEntry struct {
	Row   uint32 `json:"row"`
	Class uint32 `json:"class"`
}

// Output reads back the last run's output (the two readback slabs, each an
// 8-byte count then 8-byte pairs) and builds the partition from it. run is
// the Run that left it. The rewrites must be what PlanUnionCompaction makes
// of them (every representative the smallest of its class, every rewrite
// listed once), and their class count must agree with the device's merge
// counts; otherwise it is an error.
func (s *Session) Output(run Run) (*Output, error) {
	z := s.plans.Sizes
	nodesAt := 8 * (1 + z.Classes)
	counts, err := s.x.DownloadRanges(s.buf.out, []executor.Range{{Offset: 0, Len: 8}, {Offset: nodesAt, Len: 8}})
	if err != nil {
		return nil, err
	}
	nc, nn := leU64(counts[0]), leU64(counts[1])
	if nc > z.Classes || nn > z.Rows {
		return nil, fmt.Errorf("rebuild %s of %s: the device counted %d rewrites and %d distinct e-nodes, more than the %d classes and %d e-nodes. Fix: this is a kernel bug; report it", run.Arm, s.name, nc, nn, z.Classes, z.Rows)
	}
	data, err := s.x.DownloadRanges(s.buf.out, []executor.Range{{Offset: 8, Len: 8 * max(nc, 1)}, {Offset: nodesAt + 8, Len: 8 * max(nn, 1)}})
	if err != nil {
		return nil, err
	}
	rw, _, err := egraph.DecodeReadbackPairsUnique(counts[0], data[0])
	if err != nil {
		return nil, err
	}
	nodes, _, err := egraph.DecodeReadbackPairs(counts[1], data[1])
	if err != nil {
		return nil, err
	}
	o := &Output{}
	if o.Rewrites, err = compactRewrites(rw, uint64(len(rw)) != nc); err != nil {
		return nil, fmt.Errorf("rebuild %s of %s: %w", run.Arm, s.name, err)
	}
	o.Nodes = make([]NodeEntry, len(nodes))
	for i, p := range nodes {
		o.Nodes[i] = NodeEntry{Row: p.A, Class: p.B}
	}
	slices.SortFunc(o.Nodes, func(a, b NodeEntry) int { return cmp.Compare(a.Row, b.Row) })
	o.Result, err = s.result(run, o)
	return o, err
}

func leU64(b []byte) uint64 {
	var v uint64
	for i := 7; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}

// compactRewrites checks that the decoded (class, root) pairs are the
// canonical rewrites of their own union compaction: the same list, so
// every root is its class's smallest id and no class is listed twice.
func compactRewrites(pairs []egraph.EclassPair, duplicates bool) ([]egraph.CanonicalRewrite, error) {
	plan, err := egraph.PlanUnionCompaction(pairs, egraph.DefaultLaunchConfig())
	if err != nil {
		return nil, err
	}
	same := !duplicates && len(plan.CanonicalRewrites) == len(pairs)
	for i := 0; same && i < len(pairs); i++ {
		same = plan.CanonicalRewrites[i] == egraph.CanonicalRewrite{EclassID: pairs[i].A, Representative: pairs[i].B}
	}
	if !same {
		return nil, fmt.Errorf("the %d rewrites read back are not their own union compaction (%d rewrites): a class is listed twice or a representative is not its class's smallest id. Fix: this is a kernel bug; report it", len(pairs), len(plan.CanonicalRewrites))
	}
	return plan.CanonicalRewrites, nil
}

// result builds the RebuildResult of a run from its output.
func (s *Session) result(run Run, o *Output) (*egraph.RebuildResult, error) {
	z := s.plans.Sizes
	res := &egraph.RebuildResult{Labels: make([]int32, z.Classes), ClassIDs: int(z.Classes), UnionPairs: int(z.UnionPairs),
		UnionMerges: run.UnionMerges, CongruenceMerges: run.CongruenceMerges, Nodes: int(z.Rows), DistinctNodes: len(o.Nodes),
		Rounds: run.Rounds}
	for c := range res.Labels {
		res.Labels[c] = int32(c)
	}
	for _, rw := range o.Rewrites {
		if uint64(rw.EclassID) >= z.Classes || rw.Representative >= rw.EclassID {
			return nil, fmt.Errorf("rebuild %s of %s: rewrite (%d, %d) names a class outside 0..%d or a larger representative. Fix: this is a kernel bug; report it", run.Arm, s.name, rw.EclassID, rw.Representative, z.Classes-1)
		}
		res.Labels[rw.EclassID] = int32(rw.Representative)
	}
	res.ClassesAfterUnions = res.ClassIDs - res.UnionMerges
	res.Classes = res.ClassesAfterUnions - res.CongruenceMerges
	if got := res.ClassIDs - len(o.Rewrites); got != res.Classes {
		return nil, fmt.Errorf("rebuild %s of %s: the rewrites leave %d classes but the device counted %d merges (%d classes). Fix: this is a kernel bug; report it", run.Arm, s.name, got, run.UnionMerges+run.CongruenceMerges, res.Classes)
	}
	return res, nil
}

// CheckAgainst compares a GPU rebuild's result with the CPU reference
// (egraph.Rebuild) and the data-parallel rounds (egraph.RebuildRounds):
// the labels of every class id, the counts, and the rounds.
func CheckAgainst(got, worklist, rounds *egraph.RebuildResult) error {
	if i := firstDiff(got.Labels, worklist.Labels); i >= 0 {
		return fmt.Errorf("class id %d is in the class of %d on the GPU but of %d in the CPU reference. Fix: this is a kernel bug; run the arms one at a time to isolate it", i, got.Labels[i], worklist.Labels[i])
	}
	type count struct {
		name      string
		got, want int
	}
	for _, c := range []count{{"union merges", got.UnionMerges, worklist.UnionMerges}, {"congruence merges", got.CongruenceMerges, worklist.CongruenceMerges},
		{"classes", got.Classes, worklist.Classes}, {"distinct e-nodes", got.DistinctNodes, worklist.DistinctNodes}, {"rounds", got.Rounds, rounds.Rounds}} {
		if c.got != c.want {
			return fmt.Errorf("the GPU rebuild counted %d %s, the CPU reference %d. Fix: this is a kernel bug; run the arms one at a time to isolate it", c.got, c.name, c.want)
		}
	}
	return nil
}

func firstDiff(a, b []int32) int {
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}

// CheckNodeTable checks a deduplicated e-node table against the final
// labels of g: every entry's class is its e-node's label, no two entries
// share a canonical key (op and children rewritten to labels), and every
// e-node's key is some entry's.
func CheckNodeTable(g *egraph.Graph, labels []int32, nodes []NodeEntry) error {
	keys := newKeyIndex(g, labels)
	seen := make(map[uint64][]int32, len(nodes))
	for _, e := range nodes {
		if int(e.Row) >= g.NodeCount() || e.Class != uint32(labels[g.NodeClass[e.Row]]) {
			return fmt.Errorf("e-node table entry (%d, %d) names an e-node outside the e-graph or a class other than its label. Fix: this is a kernel bug; report it", e.Row, e.Class)
		}
		h := keys.sig(int32(e.Row))
		for _, j := range seen[h] {
			if keys.equal(j, int32(e.Row)) {
				return fmt.Errorf("e-nodes %d and %d of the e-node table have the same canonical key. Fix: this is a kernel bug; report it", j, e.Row)
			}
		}
		seen[h] = append(seen[h], int32(e.Row))
	}
	for i := range int32(g.NodeCount()) {
		found := false
		for _, j := range seen[keys.sig(i)] {
			found = found || keys.equal(i, j)
		}
		if !found {
			return fmt.Errorf("e-node %d's canonical key is not in the e-node table. Fix: this is a kernel bug; report it", i)
		}
	}
	return nil
}

// keyIndex computes canonical keys of e-nodes under final labels.
type keyIndex struct {
	g     *egraph.Graph
	canon []int32
}

func newKeyIndex(g *egraph.Graph, labels []int32) keyIndex {
	canon := make([]int32, len(g.Children))
	for k, c := range g.Children {
		canon[k] = labels[c]
	}
	return keyIndex{g: g, canon: canon}
}

func (k keyIndex) children(i int32) []int32 { return k.canon[k.g.ChildStart[i]:k.g.ChildStart[i+1]] }

func (k keyIndex) sig(i int32) uint64 {
	return uint64(egraph.NodeSignature(k.g.NodeOp[i], k.children(i)))<<32 | uint64(uint32(k.g.NodeOp[i]))
}

func (k keyIndex) equal(i, j int32) bool {
	return k.g.NodeOp[i] == k.g.NodeOp[j] && slices.Equal(k.children(i), k.children(j))
}

// PartitionChecksum identifies a partition of e-nodes up to renaming: the
// classes renumbered by first appearance, hashed with FNV-64a, and the
// class count. Two partitions have the same checksum exactly when they
// are equal up to renaming (barring a hash collision).
func PartitionChecksum(classes []int32) string {
	var top int32
	for _, c := range classes {
		top = max(top, c)
	}
	first := make([]uint32, int(top)+1)
	for i := range first {
		first[i] = ^uint32(0)
	}
	h := fnv.New64a()
	buf := make([]byte, 0, 4096)
	var n uint32
	for _, c := range classes {
		if c < 0 {
			return "part-invalid"
		}
		if first[c] == ^uint32(0) {
			first[c] = n
			n++
		}
		id := first[c]
		buf = append(buf, byte(id), byte(id>>8), byte(id>>16), byte(id>>24))
		if len(buf) == cap(buf) {
			h.Write(buf)
			buf = buf[:0]
		}
	}
	h.Write(buf)
	return fmt.Sprintf("part-%016x-c%d", h.Sum64(), n)
}
