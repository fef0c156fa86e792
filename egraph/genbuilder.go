package egraph

import "fmt"

// genRand is splitmix64: small, fast and the same on every platform and Go
// version, so a seed names the same graph everywhere.
type genRand struct{ s uint64 }

func (r *genRand) next() uint64 {
	r.s += 0x9E3779B97F4A7C15
	z := r.s
	z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
	z = (z ^ z>>27) * 0x94D049BB133111EB
	return z ^ z>>31
}

// intn returns a number in [0, n) for 0 < n < 2^32.
func (r *genRand) intn(n int) int { return int((r.next() >> 32) * uint64(n) >> 32) }

// percent returns true with probability p/100.
func (r *genRand) percent(p int) bool { return r.intn(100) < p }

// genBuilder grows a generated Graph and tracks the planted equalities:
// hidden is a union-find over class ids of the classes the generator knows
// will end up equal, and ring lists the members of each hidden group.
type genBuilder struct {
	g        *Graph
	r        genRand
	n        int // target e-node count
	leaves   int
	hidden   []int32
	ring     []int32
	internal []int32 // e-nodes that are not leaves
	kids     []int32 // scratch children
}

func newGenBuilder(cfg GenConfig) *genBuilder {
	n := cfg.Nodes
	g := &Graph{NodeClass: make([]int32, 0, n), NodeOp: make([]int32, 0, n), ChildStart: make([]int32, 1, n+1), Children: make([]int32, 0, 2*n)}
	b := &genBuilder{g: g, r: genRand{s: cfg.Seed ^ 0x6567672D62656E63}, n: n}
	b.leaves = min(n, max(1, min(n/16, maxLeaves)))
	if cfg.Shape == ShapeAllDistinct {
		b.leaves = min(n, 16)
	}
	b.setLeaves(b.leaves)
	return b
}

// setLeaves declares the internal ops u0..u2 (arity 1), b0..b2 (arity 2),
// t0, t1 (arity 3), then k leaf ops a0, a1, ...
func (b *genBuilder) setLeaves(k int) {
	b.leaves = k
	b.g.Ops = b.g.Ops[:0]
	for i, name := range []string{"u0", "u1", "u2", "b0", "b1", "b2", "t0", "t1"} {
		b.g.Ops = append(b.g.Ops, OpDecl{Arity: int32(1 + i/3), Name: name})
	}
	for i := range k {
		b.g.Ops = append(b.g.Ops, OpDecl{Arity: 0, Name: fmt.Sprintf("a%d", i)})
	}
}

// full reports whether the target e-node count is reached.
func (b *genBuilder) full() bool { return b.g.NodeCount() >= b.n }

func (b *genBuilder) newClass() int32 {
	c := b.g.ClassCount
	b.g.ClassCount++
	b.hidden = append(b.hidden, c)
	b.ring = append(b.ring, c)
	return c
}

func (b *genBuilder) addNode(class, op int32, children []int32) {
	g := b.g
	if g.Ops[op].Arity > 0 {
		b.internal = append(b.internal, int32(g.NodeCount()))
	}
	g.NodeClass = append(g.NodeClass, class)
	g.NodeOp = append(g.NodeOp, op)
	g.Children = append(g.Children, children...)
	g.ChildStart = append(g.ChildStart, int32(len(g.Children)))
}

func (b *genBuilder) find(x int32) int32 {
	for b.hidden[x] != x {
		b.hidden[x] = b.hidden[b.hidden[x]]
		x = b.hidden[x]
	}
	return x
}

// plant records that classes a and b will be equal.
func (b *genBuilder) plant(x, y int32) {
	rx, ry := b.find(x), b.find(y)
	if rx == ry {
		return
	}
	b.hidden[max(rx, ry)] = min(rx, ry)
	b.ring[rx], b.ring[ry] = b.ring[ry], b.ring[rx]
}

// union appends a pending union pair and plants it.
func (b *genBuilder) union(x, y int32) {
	b.g.Unions = append(b.g.Unions, x, y)
	b.plant(x, y)
}

// otherMember returns another class of c's hidden group, or -1.
func (b *genBuilder) otherMember(c int32) int32 {
	m := c
	for steps := 1 + b.r.intn(4); steps > 0; steps-- {
		m = b.ring[m]
	}
	if m == c {
		m = b.ring[c]
	}
	if m == c {
		return -1
	}
	return m
}

// pickClass returns an existing class id: half the time one of the 1024
// newest (which makes deep terms), otherwise any.
func (b *genBuilder) pickClass() int32 {
	cc := int(b.g.ClassCount)
	if b.r.percent(50) {
		return int32(cc - 1 - b.r.intn(min(cc, 1024)))
	}
	return int32(b.r.intn(cc))
}

// pickOp returns an internal op: arity 1, 2, 3 with weights 3:5:2.
func (b *genBuilder) pickOp() int32 {
	switch v := b.r.intn(10); {
	case v < 3:
		return int32(b.r.intn(3))
	case v < 8:
		return int32(3 + b.r.intn(3))
	default:
		return int32(6 + b.r.intn(2))
	}
}

// addLeaves adds one e-node per leaf op, each its own class.
func (b *genBuilder) addLeaves() {
	for k := range b.leaves {
		b.addNode(b.newClass(), int32(internalOps+k), nil)
	}
}

// fresh adds a random e-node over existing classes, in class (or a new
// class when class < 0).
func (b *genBuilder) fresh(class int32) {
	op := b.pickOp()
	b.kids = b.kids[:0]
	for range b.g.Ops[op].Arity {
		b.kids = append(b.kids, b.pickClass())
	}
	if class < 0 {
		class = b.newClass()
	}
	b.addNode(class, op, b.kids)
}

// variant adds a copy of a random earlier e-node with one child replaced
// by another class of its hidden group, in a new class planted equal to
// the original's. It reports false when no such child was found.
func (b *genBuilder) variant() bool {
	in := b.internal
	var n int32
	if b.r.percent(50) {
		n = in[len(in)-1-b.r.intn(min(len(in), 256))]
	} else {
		n = in[b.r.intn(len(in))]
	}
	b.kids = append(b.kids[:0], b.g.NodeChildren(int(n))...)
	k := len(b.kids)
	for j, t := b.r.intn(k), 0; t < k; t++ {
		pos := (j + t) % k
		if d := b.otherMember(b.kids[pos]); d >= 0 {
			b.kids[pos] = d
			c := b.newClass()
			b.plant(c, b.g.NodeClass[n])
			b.addNode(c, b.g.NodeOp[n], b.kids)
			return true
		}
	}
	return false
}

// random builds ShapeRandom (chain false) or ShapeUnionChain.
func (b *genBuilder) random(chain bool) {
	b.addLeaves()
	if chain {
		m := min(b.leaves, max(2, b.leaves/2))
		for k := m - 2; k >= 0; k-- {
			b.union(int32(k), int32(k+1))
		}
	} else {
		for range b.leaves / 2 {
			b.union(int32(b.r.intn(b.leaves)), int32(b.r.intn(b.leaves)))
		}
	}
	for !b.full() {
		switch v := b.r.intn(100); {
		case v < 35 && len(b.internal) > 0 && b.variant():
		case v >= 35 && v < 45:
			b.fresh(b.g.NodeClass[b.r.intn(b.g.NodeCount())])
		default:
			b.fresh(-1)
		}
	}
	b.extraUnions(!chain)
}

// extraUnions appends unions that a rewrite would make: pairs already
// planted equal (about one per 50 e-nodes) and a few self-pairs; shuffle
// mixes all pairs.
func (b *genBuilder) extraUnions(shuffle bool) {
	for range b.n / 50 {
		if len(b.internal) == 0 {
			break
		}
		c := b.g.NodeClass[b.internal[b.r.intn(len(b.internal))]]
		if d := b.otherMember(c); d >= 0 {
			b.union(c, d)
		}
	}
	for range b.n / 500 {
		c := int32(b.r.intn(int(b.g.ClassCount)))
		b.union(c, c)
	}
	if !shuffle {
		return
	}
	u := b.g.Unions
	for k := len(u)/2 - 1; k > 0; k-- {
		j := b.r.intn(k + 1)
		u[2*k], u[2*j] = u[2*j], u[2*k]
		u[2*k+1], u[2*j+1] = u[2*j+1], u[2*k+1]
	}
}

// giant builds ShapeGiantClass.
func (b *genBuilder) giant() {
	b.addLeaves()
	var seeds []int32
	for op := int32(0); op < internalOps && !b.full(); op++ {
		b.kids = b.kids[:0]
		for range b.g.Ops[op].Arity {
			b.kids = append(b.kids, int32(b.r.intn(b.leaves)))
		}
		c := b.newClass()
		seeds = append(seeds, c)
		b.addNode(c, op, b.kids)
	}
	for !b.full() {
		b.fresh(-1)
	}
	for k := 1; k < b.leaves; k++ {
		b.union(int32(k), int32(b.r.intn(k)))
	}
	for _, s := range seeds {
		b.union(s, 0)
	}
	b.extraUnions(true)
}

// cycles builds ShapeDeepCycle with cycles of length d (0: the default).
func (b *genBuilder) cycles(d int) {
	if d == 0 {
		d = DefaultCycleLength
	}
	pairs := (b.n - 1) / (2 * d)
	if pairs == 0 {
		d, pairs = (b.n-1)/2, 1
	}
	if d < 2 {
		pairs = 0
	}
	b.setLeaves(b.n - 2*d*pairs)
	b.addLeaves()
	for p := range pairs {
		a0 := b.cycle(d, p)
		b0 := b.cycle(d, p)
		b.union(a0, b0)
	}
}

// cycle adds one cycle of d e-nodes, c_i = op_i(c_{i+1 mod d}) (every
// fourth with a leaf as second child), and returns c_0.
func (b *genBuilder) cycle(d, p int) int32 {
	first := b.g.ClassCount
	for range d {
		b.newClass()
	}
	for i := range d {
		next := first + int32((i+1)%d)
		if i%4 == 3 {
			leaf := int32((p + i) % b.leaves)
			b.addNode(first+int32(i), 3, []int32{next, leaf})
			continue
		}
		b.addNode(first+int32(i), int32(i%3), []int32{next})
	}
	return first
}

// distinct builds ShapeAllDistinct: internal e-node k (counted from 0
// after the leaves) has op k mod 8 and first child k/8, so no two share
// (op, first child).
func (b *genBuilder) distinct() {
	b.addLeaves()
	for k := 0; !b.full(); k++ {
		op := int32(k % internalOps)
		b.kids = append(b.kids[:0], int32(k/internalOps))
		for range b.g.Ops[op].Arity - 1 {
			b.kids = append(b.kids, b.pickClass())
		}
		b.addNode(b.newClass(), op, b.kids)
	}
}
