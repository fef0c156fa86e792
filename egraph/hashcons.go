package egraph

// minUnionFind is a union-find over class ids in which the smaller root
// always wins: the root of a set is its smallest member, whatever the order
// of the unions. find halves paths as it walks them.
type minUnionFind struct {
	parent []int32
}

func newMinUnionFind(n int32) minUnionFind {
	p := make([]int32, n)
	for i := range p {
		p[i] = int32(i)
	}
	return minUnionFind{parent: p}
}

func (u minUnionFind) find(x int32) int32 {
	p := u.parent
	for p[x] != x {
		p[x] = p[p[x]]
		x = p[x]
	}
	return x
}

// union joins the sets of a and b under the smaller root and reports
// whether they were distinct.
func (u minUnionFind) union(a, b int32) bool {
	ra, rb := u.find(a), u.find(b)
	if ra == rb {
		return false
	}
	if rb < ra {
		ra, rb = rb, ra
	}
	u.parent[rb] = ra
	return true
}

// NodeSignature is the 32-bit hash of an e-node's (op, children) that the
// rebuilds group e-nodes by: h = op*0x9E3779B1 XOR len(children); for each
// child c, h = (h XOR c) * 0x85EBCA6B, then h ^= h>>15; finally murmur3's
// 32-bit finaliser (h ^= h>>16; h *= 0x85EBCA6B; h ^= h>>13;
// h *= 0xC2B2AE35; h ^= h>>16). Equal e-nodes have equal signatures; the
// converse is checked by comparing the words.
func NodeSignature(op int32, children []int32) uint32 {
	h := uint32(op)*0x9E3779B1 ^ uint32(len(children))
	for _, c := range children {
		h = (h ^ uint32(c)) * 0x85EBCA6B
		h ^= h >> 15
	}
	h ^= h >> 16
	h *= 0x85EBCA6B
	h ^= h >> 13
	h *= 0xC2B2AE35
	h ^= h >> 16
	return h
}

// nodeTable is an open-addressing hash table (linear probing, at most half
// full) of e-node indices keyed by their (op, children) as found in ops,
// start and words. A slot holds signature<<32 | (node+1); 0 is empty.
// Every stored node's words must stay unchanged while it is in the table.
type nodeTable struct {
	slots []uint64
	mask  uint64
	count int
	ops   []int32
	start []int32
	words []int32
	// hash replaces NodeSignature when set (tests force collisions).
	hash func(op int32, children []int32) uint32
}

// newNodeTable sizes a table for up to n e-nodes.
func newNodeTable(n int, ops, start, words []int32) *nodeTable {
	size := 16
	for size < 2*n {
		size *= 2
	}
	return &nodeTable{slots: make([]uint64, size), mask: uint64(size - 1), ops: ops, start: start, words: words}
}

func (t *nodeTable) key(i int32) []int32 { return t.words[t.start[i]:t.start[i+1]] }

func (t *nodeTable) signature(i int32) uint32 {
	if t.hash != nil {
		return t.hash(t.ops[i], t.key(i))
	}
	return NodeSignature(t.ops[i], t.key(i))
}

func (t *nodeTable) equal(i, j int32) bool {
	if t.ops[i] != t.ops[j] {
		return false
	}
	a, b := t.key(i), t.key(j)
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if a[k] != b[k] {
			return false
		}
	}
	return true
}

// insert adds e-node i unless an equal e-node is stored: it returns that
// e-node, or -1 when i was added. It is insertLive on a table without
// tombstones.
func (t *nodeTable) insert(i int32) int32 {
	owner, _ := t.insertLive(i)
	return owner
}

// remove deletes e-node i, which must be stored, and shifts the entries
// after it back so that no probe sequence is broken.
func (t *nodeTable) remove(i int32) {
	h := t.signature(i)
	hole := uint64(h) & t.mask
	for uint32(t.slots[hole]) != uint32(i+1) {
		hole = (hole + 1) & t.mask
	}
	for p := (hole + 1) & t.mask; t.slots[p] != 0; p = (p + 1) & t.mask {
		home := (t.slots[p] >> 32) & t.mask
		if (p-home)&t.mask >= (p-hole)&t.mask {
			t.slots[hole] = t.slots[p]
			hole = p
		}
	}
	t.slots[hole] = 0
	t.count--
}

// clear empties the table.
func (t *nodeTable) clear() {
	clear(t.slots)
	t.count = 0
}
