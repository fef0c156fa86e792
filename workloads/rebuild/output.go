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
	res, err := s.Partition(run)
	if err != nil {
		return nil, err
	}
	o := &Output{Result: res}
	pairs := make([]egraph.EclassPair, 0, len(res.Labels)-res.Classes)
	for c, l := range res.Labels {
		if int(l) != c {
			pairs = append(pairs, egraph.EclassPair{A: uint32(c), B: uint32(l)})
		}
	}
	if o.Rewrites, err = compactRewrites(pairs); err != nil {
		return nil, fmt.Errorf("rebuild %s of %s: %w", run.Arm, s.name, err)
	}
	if o.Nodes, err = s.nodeTable(run, uint64(res.DistinctNodes)); err != nil {
		return nil, err
	}
	return o, nil
}

// Partition reads back the last run's canonical rewrites (one readback
// slab) and the deduplicated e-node count, and builds the RebuildResult:
// the check every benchmark sample takes, in time linear in the classes.
// Every class must be rewritten at most once, to a smaller class that is
// itself not rewritten, and the classes left must agree with the device's
// merge counts; otherwise it is an error.
func (s *Session) Partition(run Run) (*egraph.RebuildResult, error) {
	z := s.plans.Sizes
	counts, err := s.x.DownloadRanges(s.buf.out, []executor.Range{{Offset: 0, Len: 8}, {Offset: s.nodesAt(), Len: 8}})
	if err != nil {
		return nil, err
	}
	nc, nn := leU64(counts[0]), leU64(counts[1])
	if nc > z.Classes || nn > z.Rows {
		return nil, fmt.Errorf("rebuild %s of %s: the device counted %d rewrites and %d distinct e-nodes, more than the %d classes and %d e-nodes. Fix: this is a kernel bug; report it", run.Arm, s.name, nc, nn, z.Classes, z.Rows)
	}
	raw, err := s.x.DownloadRange(s.buf.out, 8, 8*max(nc, 1))
	if err != nil {
		return nil, err
	}
	rw, _, err := egraph.DecodeReadbackPairs(counts[0], raw)
	if err != nil {
		return nil, err
	}
	return s.result(run, rw, int(nn))
}

// nodesAt is the byte offset of the e-node table's slab in the output.
func (s *Session) nodesAt() uint64 { return 8 * (1 + s.plans.Sizes.Classes) }

// nodeTable reads back the deduplicated e-node table (n entries), sorted
// by e-node.
func (s *Session) nodeTable(run Run, n uint64) ([]NodeEntry, error) {
	at := s.nodesAt()
	raw, err := s.x.DownloadRange(s.buf.out, at, 8*(1+max(n, 1)))
	if err != nil {
		return nil, err
	}
	pairs, got, err := egraph.DecodeReadbackPairs(raw[:8], raw[8:])
	if err != nil || got != n {
		return nil, fmt.Errorf("rebuild %s of %s: the e-node table's count changed from %d to %d while it was read (%v). Fix: this is a bug; report it", run.Arm, s.name, n, got, err)
	}
	nodes := make([]NodeEntry, len(pairs))
	for i, p := range pairs {
		nodes[i] = NodeEntry{Row: p.A, Class: p.B}
	}
	slices.SortFunc(nodes, func(a, b NodeEntry) int { return cmp.Compare(a.Row, b.Row) })
	return nodes, nil
}

func leU64(b []byte) uint64 {
	var v uint64
	for i := 7; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}

// compactRewrites checks that the (class, root) pairs, in class order,
// are the canonical rewrites of their own union compaction: the same list,
// so every root is its class's smallest id and no class is listed twice.
func compactRewrites(pairs []egraph.EclassPair) ([]egraph.CanonicalRewrite, error) {
	plan, err := egraph.PlanUnionCompaction(pairs, egraph.DefaultLaunchConfig())
	if err != nil {
		return nil, err
	}
	same := len(plan.CanonicalRewrites) == len(pairs)
	for i := 0; same && i < len(pairs); i++ {
		same = plan.CanonicalRewrites[i] == egraph.CanonicalRewrite{EclassID: pairs[i].A, Representative: pairs[i].B}
	}
	if !same {
		return nil, fmt.Errorf("the %d rewrites read back are not their own union compaction (%d rewrites): a representative is not its class's smallest id. Fix: this is a kernel bug; report it", len(pairs), len(plan.CanonicalRewrites))
	}
	return plan.CanonicalRewrites, nil
}

// result builds the RebuildResult of a run from its rewrites.
func (s *Session) result(run Run, rewrites []egraph.EclassPair, distinct int) (*egraph.RebuildResult, error) {
	z := s.plans.Sizes
	res := &egraph.RebuildResult{Labels: make([]int32, z.Classes), ClassIDs: int(z.Classes), UnionPairs: int(z.UnionPairs),
		UnionMerges: run.UnionMerges, CongruenceMerges: run.CongruenceMerges, Nodes: int(z.Rows), DistinctNodes: distinct,
		Rounds: run.Rounds, DataParallelRounds: run.Rounds}
	for c := range res.Labels {
		res.Labels[c] = int32(c)
	}
	bad := func(rw egraph.EclassPair, why string) error {
		return fmt.Errorf("rebuild %s of %s: rewrite (%d, %d) %s. Fix: this is a kernel bug; report it", run.Arm, s.name, rw.A, rw.B, why)
	}
	for _, rw := range rewrites {
		switch {
		case uint64(rw.A) >= z.Classes || rw.B >= rw.A:
			return nil, bad(rw, fmt.Sprintf("names a class outside 0..%d or a representative not smaller than its class", z.Classes-1))
		case res.Labels[rw.A] != int32(rw.A):
			return nil, bad(rw, "rewrites a class a second time")
		}
		res.Labels[rw.A] = int32(rw.B)
	}
	for _, rw := range rewrites {
		if res.Labels[rw.B] != int32(rw.B) {
			return nil, bad(rw, "names a representative that is itself rewritten")
		}
	}
	res.ClassesAfterUnions = res.ClassIDs - res.UnionMerges
	res.Classes = res.ClassesAfterUnions - res.CongruenceMerges
	if got := res.ClassIDs - len(rewrites); got != res.Classes {
		return nil, fmt.Errorf("rebuild %s of %s: the rewrites leave %d classes but the device counted %d merges (%d classes). Fix: this is a kernel bug; report it", run.Arm, s.name, got, run.UnionMerges+run.CongruenceMerges, res.Classes)
	}
	return res, nil
}

// CheckAgainst compares a GPU rebuild's result with the CPU reference
// (egraph.Rebuild) and the data-parallel rounds (egraph.RebuildRounds):
// the labels of every class id, the counts, and the rounds. rounds may be
// nil (RebuildRounds is slow on large inputs): the rounds are then not
// compared.
func CheckAgainst(got, worklist, rounds *egraph.RebuildResult) error {
	if i := firstDiff(got.Labels, worklist.Labels); i >= 0 {
		return fmt.Errorf("class id %d is in the class of %d on the GPU but of %d in the CPU reference. Fix: this is a kernel bug; run the arms one at a time to isolate it", i, got.Labels[i], worklist.Labels[i])
	}
	type count struct {
		name      string
		got, want int
	}
	for _, c := range []count{{"union merges", got.UnionMerges, worklist.UnionMerges}, {"congruence merges", got.CongruenceMerges, worklist.CongruenceMerges},
		{"classes", got.Classes, worklist.Classes}, {"distinct e-nodes", got.DistinctNodes, worklist.DistinctNodes}, {"rounds", got.Rounds, roundsOf(rounds, got)}} {
		if c.got != c.want {
			return fmt.Errorf("the GPU rebuild counted %d %s, the CPU reference %d. Fix: this is a kernel bug; run the arms one at a time to isolate it", c.got, c.name, c.want)
		}
	}
	return nil
}

// roundsOf returns the reference's rounds, or got's when there is none.
func roundsOf(ref, got *egraph.RebuildResult) int {
	if ref == nil {
		return got.Rounds
	}
	return ref.Rounds
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
// e-node's key is some entry's. The entries are sorted by key signature,
// so the check takes time O(n log n) and no map.
func CheckNodeTable(g *egraph.Graph, labels []int32, nodes []NodeEntry) error {
	keys := newKeyIndex(g, labels)
	sorted := make([]keyed, len(nodes))
	for i, e := range nodes {
		if int(e.Row) >= g.NodeCount() || e.Class != uint32(labels[g.NodeClass[e.Row]]) {
			return fmt.Errorf("e-node table entry (%d, %d) names an e-node outside the e-graph or a class other than its label. Fix: this is a kernel bug; report it", e.Row, e.Class)
		}
		sorted[i] = keyed{sig: keys.sig(int32(e.Row)), row: int32(e.Row)}
	}
	slices.SortFunc(sorted, func(a, b keyed) int { return cmp.Compare(a.sig, b.sig) })
	for i := range sorted {
		for j := i + 1; j < len(sorted) && sorted[j].sig == sorted[i].sig; j++ {
			if keys.equal(sorted[i].row, sorted[j].row) {
				return fmt.Errorf("e-nodes %d and %d of the e-node table have the same canonical key. Fix: this is a kernel bug; report it", sorted[i].row, sorted[j].row)
			}
		}
	}
	for i := range int32(g.NodeCount()) {
		h := keys.sig(i)
		k, _ := slices.BinarySearchFunc(sorted, h, func(e keyed, h uint64) int { return cmp.Compare(e.sig, h) })
		for ; k < len(sorted) && sorted[k].sig == h && !keys.equal(i, sorted[k].row); k++ {
		}
		if k == len(sorted) || sorted[k].sig != h {
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

// sig is the e-node's NodeSignature with its op: equal keys give equal
// values.
func (k keyIndex) sig(i int32) uint64 {
	return uint64(egraph.NodeSignature(k.g.NodeOp[i], k.children(i)))<<32 | uint64(uint32(k.g.NodeOp[i]))
}

func (k keyIndex) equal(i, j int32) bool {
	return k.g.NodeOp[i] == k.g.NodeOp[j] && slices.Equal(k.children(i), k.children(j))
}

// keyed is an e-node with its key signature.
type keyed struct {
	sig uint64
	row int32
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
