package frontier

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBuildUndirected(t *testing.T) {
	tests := []struct {
		name     string
		n        int
		src, dst []int32
		offsets  []uint64
		targets  []int32
	}{
		{"path", 3, []int32{0, 1}, []int32{1, 2}, []uint64{0, 1, 3, 4}, []int32{1, 0, 2, 1}},
		{"duplicates and loops", 3, []int32{0, 1, 1, 2, 2}, []int32{1, 0, 1, 2, 1}, []uint64{0, 1, 3, 4}, []int32{1, 0, 2, 1}},
		{"isolated vertex", 4, []int32{3}, []int32{0}, []uint64{0, 1, 1, 1, 2}, []int32{3, 0}},
		{"star sorted", 4, []int32{0, 0, 0}, []int32{3, 1, 2}, []uint64{0, 3, 4, 5, 6}, []int32{1, 2, 3, 0, 0, 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, err := BuildUndirected(tc.name, tc.n, tc.src, tc.dst)
			require.NoError(t, err)
			assert.Equal(t, tc.offsets, g.Offsets)
			assert.Equal(t, tc.targets, g.Targets)
			require.NoError(t, g.Check())
		})
	}
}

func TestBuildUndirectedErrors(t *testing.T) {
	var empty *EmptyGraphError
	_, err := BuildUndirected("loops", 3, []int32{1, 2}, []int32{1, 2})
	require.ErrorAs(t, err, &empty)
	assert.Contains(t, err.Error(), "Fix:")
	_, err = BuildUndirected("none", 0, nil, nil)
	require.ErrorAs(t, err, &empty)
	var vr *VertexRangeError
	_, err = BuildUndirected("range", 3, []int32{0, 1}, []int32{1, 3})
	require.ErrorAs(t, err, &vr)
	assert.Equal(t, 1, vr.Edge)
	assert.EqualValues(t, 3, vr.Vertex)
	_, err = BuildUndirected("neg", 3, []int32{-1}, []int32{1})
	require.ErrorAs(t, err, &vr)
	_, err = BuildUndirected("len", 3, []int32{0}, nil)
	require.Error(t, err)
	var tl *TooLargeError
	_, err = BuildUndirected("big", MaxGraphVertices+1, nil, nil)
	require.ErrorAs(t, err, &tl)
}

// TestBuildUndirectedProperties checks, over random edge lists, that the CSR
// is symmetric, sorted, loop-free and independent of the input order.
func TestBuildUndirectedProperties(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		r := rand.New(rand.NewPCG(seed, 7))
		n := 1 + r.IntN(50)
		m := r.IntN(200) + 1
		src, dst := make([]int32, m), make([]int32, m)
		want := map[[2]int32]bool{}
		for i := range src {
			src[i], dst[i] = int32(r.IntN(n)), int32(r.IntN(n))
			if src[i] != dst[i] {
				want[[2]int32{src[i], dst[i]}] = true
				want[[2]int32{dst[i], src[i]}] = true
			}
		}
		g, err := BuildUndirected("p", n, src, dst)
		if len(want) == 0 {
			var empty *EmptyGraphError
			require.ErrorAs(t, err, &empty)
			continue
		}
		require.NoError(t, err)
		require.NoError(t, g.Check())
		got := map[[2]int32]bool{}
		for v := int32(0); int(v) < n; v++ {
			nb := g.Neighbors(v)
			for i, w := range nb {
				require.NotEqual(t, v, w)
				if i > 0 {
					require.Less(t, nb[i-1], w)
				}
				got[[2]int32{v, w}] = true
			}
		}
		assert.Equal(t, want, got)
		r.Shuffle(m, func(i, j int) { src[i], src[j] = src[j], src[i]; dst[i], dst[j] = dst[j], dst[i] })
		g2, err := BuildUndirected("p", n, src, dst)
		require.NoError(t, err)
		assert.Equal(t, g.Offsets, g2.Offsets)
		assert.Equal(t, g.Targets, g2.Targets)
	}
}

func TestCheck(t *testing.T) {
	good := &CSR{Name: "g", Offsets: []uint64{0, 1, 2}, Targets: []int32{1, 0}}
	require.NoError(t, good.Check())
	assert.EqualValues(t, 20, good.Bytes())
	var se *StructureError
	for _, g := range []*CSR{
		{Offsets: []uint64{1, 1, 2}, Targets: []int32{1, 0}},
		{Offsets: []uint64{0, 2, 1}, Targets: []int32{1, 0}},
		{Offsets: []uint64{0, 1, 3}, Targets: []int32{1, 0}},
		{Offsets: []uint64{0, 1, 2}, Targets: []int32{2, 0}},
	} {
		require.ErrorAs(t, g.Check(), &se)
		assert.Contains(t, se.Error(), "Fix:")
	}
	var empty *EmptyGraphError
	require.ErrorAs(t, (&CSR{}).Check(), &empty)
}

// serialCheck is CSR.Check as it ran on one core, kept as the reference
// the parallel check must agree with, error for error.
func serialCheck(g *CSR) error {
	n := g.NumVertices()
	if n == 0 {
		return &EmptyGraphError{Source: g.Name, Vertices: 0}
	}
	if n > MaxGraphVertices {
		return &TooLargeError{Source: g.Name, Field: "vertices", Value: uint64(n), Limit: MaxGraphVertices}
	}
	if uint64(len(g.Targets)) > MaxGraphEdgeEntries {
		return &TooLargeError{Source: g.Name, Field: "edge entries", Value: uint64(len(g.Targets)), Limit: MaxGraphEdgeEntries}
	}
	if g.Offsets[0] != 0 {
		return &StructureError{Source: g.Name, Index: 0, Msg: fmt.Sprintf("offsets[0] is %d, want 0", g.Offsets[0])}
	}
	for v := 0; v < n; v++ {
		if g.Offsets[v+1] < g.Offsets[v] {
			return &StructureError{Source: g.Name, Index: v + 1, Msg: fmt.Sprintf("offsets[%d]=%d is below offsets[%d]=%d", v+1, g.Offsets[v+1], v, g.Offsets[v])}
		}
	}
	if g.Offsets[n] != uint64(len(g.Targets)) {
		return &StructureError{Source: g.Name, Index: n, Msg: fmt.Sprintf("offsets[%d]=%d, want len(targets)=%d", n, g.Offsets[n], len(g.Targets))}
	}
	for i, t := range g.Targets {
		if t < 0 || int(t) >= n {
			return &StructureError{Source: g.Name, Index: i, Msg: fmt.Sprintf("targets[%d]=%d is not a vertex (0..%d)", i, t, n-1)}
		}
	}
	return nil
}

// ring returns the cycle on n vertices as a CSR: vertex v's row is
// v-1, v+1 (mod n), two entries, so that offsets[v] is 2v.
func ring(n int) *CSR {
	g := &CSR{Name: "ring", Offsets: make([]uint64, n+1), Targets: make([]int32, 0, 2*n)}
	for v := range n {
		g.Targets = append(g.Targets, int32((v+n-1)%n), int32((v+1)%n))
		g.Offsets[v+1] = uint64(2 * (v + 1))
	}
	return g
}

// checkWorkerCounts are the goroutine counts the parallel check is run on
// against the serial reference: one, a few (pieces of uneven length), and
// more than a small graph has entries.
func checkWorkerCounts() []int { return []int{1, 2, 3, 4, 5, 7, 16, 64, 300} }

// The parallel check returns the serial check's error, whatever the
// number of pieces: the first fault in index order, offsets before
// targets, wherever the faults lie. On the 64-vertex ring and 4 workers,
// the offsets are cut at vertices 16, 32 and 48 and the targets at 32, 64
// and 96.
func TestCheckParallelFirstFault(t *testing.T) {
	cases := []struct {
		name string
		edit func(g *CSR)
		// index is the StructureError's Index; -1 for no error or
		// another error type.
		index int
		kind  error
	}{
		{"well formed", func(*CSR) {}, -1, nil},
		{"no targets", func(g *CSR) { g.Offsets, g.Targets = make([]uint64, 65), nil }, -1, nil},
		{"no vertices", func(g *CSR) { g.Offsets, g.Targets = nil, nil }, -1, &EmptyGraphError{}},
		{"one offset", func(g *CSR) { g.Offsets, g.Targets = []uint64{0}, nil }, -1, &EmptyGraphError{}},
		{"first offset, with a later decrease", func(g *CSR) { g.Offsets[0], g.Offsets[30] = 1, 0 }, 0, &StructureError{}},
		{"decrease in the first piece", func(g *CSR) { g.Offsets[3] = 0 }, 3, &StructureError{}},
		{"decrease across a piece boundary", func(g *CSR) { g.Offsets[16] = 29 }, 16, &StructureError{}},
		{"decrease in the last piece", func(g *CSR) { g.Offsets[60] = 1 }, 60, &StructureError{}},
		{"two decreases in two pieces: the first wins", func(g *CSR) { g.Offsets[50], g.Offsets[20] = 1, 1 }, 20, &StructureError{}},
		{"two decreases in one piece: the first wins", func(g *CSR) { g.Offsets[44], g.Offsets[40] = 1, 1 }, 40, &StructureError{}},
		{"last offset below the one before it", func(g *CSR) { g.Offsets[64] = 125 }, 64, &StructureError{}},
		{"last offset past the targets", func(g *CSR) { g.Offsets[64] = 129 }, 64, &StructureError{}},
		{"last offset short of the targets", func(g *CSR) { g.Targets = append(g.Targets, 0) }, 64, &StructureError{}},
		{"target in the first piece", func(g *CSR) { g.Targets[5] = 64 }, 5, &StructureError{}},
		{"negative target at a piece boundary", func(g *CSR) { g.Targets[32] = -1 }, 32, &StructureError{}},
		{"target in the last piece", func(g *CSR) { g.Targets[127] = math.MaxInt32 }, 127, &StructureError{}},
		{"two targets in two pieces: the first wins", func(g *CSR) { g.Targets[100], g.Targets[40] = 64, -5 }, 40, &StructureError{}},
		{"two targets in one piece: the first wins", func(g *CSR) { g.Targets[70], g.Targets[66] = 64, math.MinInt32 }, 66, &StructureError{}},
		{"every target: the first wins", func(g *CSR) {
			for i := range g.Targets {
				g.Targets[i] = 64
			}
		}, 0, &StructureError{}},
		{"an offsets fault before an earlier piece's target fault", func(g *CSR) { g.Targets[0], g.Offsets[63] = 99, 0 }, 63, &StructureError{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := ring(64)
			c.edit(g)
			want := serialCheck(g)
			if c.kind == nil {
				require.NoError(t, want)
			} else {
				require.IsType(t, c.kind, want)
			}
			if se, ok := want.(*StructureError); ok {
				assert.Equal(t, c.index, se.Index, "the fault the case places")
			}
			for _, w := range checkWorkerCounts() {
				assert.Equal(t, want, g.check(w, 1), "%d workers", w)
			}
			assert.Equal(t, want, g.Check())
		})
	}
}

// A target fault is found in any block of targets firstNonVertex scans,
// at the edges of a block too, and the first of two in different blocks
// wins.
func TestCheckTargetBlocks(t *testing.T) {
	const n = 2 * targetBlock // the ring's 4 blocks of targets
	cases := []struct {
		name   string
		faults []int
	}{
		{"first of the first block", []int{0}},
		{"last of the first block", []int{targetBlock - 1}},
		{"first of the second block", []int{targetBlock}},
		{"inside the third block", []int{2*targetBlock + 17}},
		{"last target", []int{2*n - 1}},
		{"in the last block and the second", []int{2*n - 3, targetBlock + 1}},
		{"two in the third block", []int{3*targetBlock - 1, 2*targetBlock + 9}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := ring(n)
			for k, i := range c.faults {
				g.Targets[i] = []int32{n, -1}[k%2]
			}
			want := serialCheck(g)
			var se *StructureError
			require.ErrorAs(t, want, &se)
			assert.Equal(t, slices.Min(c.faults), se.Index)
			for _, w := range checkWorkerCounts() {
				assert.Equal(t, want, g.check(w, 1), "%d workers", w)
			}
		})
	}
	assert.Zero(t, largestUnsigned(nil))
	assert.EqualValues(t, 9, largestUnsigned([]int32{3, 9, 1, 0, 2, 8, 7}), "the values past the last four")
	assert.EqualValues(t, 1<<32-1, largestUnsigned([]int32{5, -1, 3}), "a negative value as uint32")
}

// TestCheckParallelProperties checks, over random CSRs, some well formed
// and some with up to three random faults in either array, that the
// parallel check returns the serial check's error on any number of
// workers and pieces.
func TestCheckParallelProperties(t *testing.T) {
	for seed := uint64(1); seed <= 300; seed++ {
		r := rand.New(rand.NewPCG(seed, 11))
		g := randomCSR(r)
		valid := seed%3 == 0
		if !valid {
			corrupt(r, g)
		}
		want := serialCheck(g)
		if valid {
			require.NoError(t, want, "seed %d", seed)
		}
		for _, w := range checkWorkerCounts() {
			for _, grain := range []int{1, 3, 50} {
				require.Equal(t, want, g.check(w, grain), "seed %d, %d workers, grain %d", seed, w, grain)
			}
		}
		require.Equal(t, want, g.Check(), "seed %d", seed)
	}
}

// randomCSR returns a well-formed CSR of 1 to 2000 vertices, each with up
// to 8 targets drawn from its vertices: up to four of firstNonVertex's
// blocks of targets.
func randomCSR(r *rand.Rand) *CSR {
	n := 1 + r.IntN(2000)
	g := &CSR{Name: "random", Offsets: make([]uint64, n+1)}
	for v := range n {
		for range r.IntN(9) {
			g.Targets = append(g.Targets, int32(r.IntN(n)))
		}
		g.Offsets[v+1] = uint64(len(g.Targets))
	}
	return g
}

// corrupt makes one to three faults in g: an offset set to a value near
// the targets' count, a target set to a value near the vertices' range, or
// the targets cut or grown by one.
func corrupt(r *rand.Rand, g *CSR) {
	n, m := g.NumVertices(), len(g.Targets)
	for range 1 + r.IntN(3) {
		switch k := r.IntN(10); {
		case k < 4:
			g.Offsets[r.IntN(n+1)] = uint64(r.IntN(m + 3))
		case k < 9 && m > 0:
			g.Targets[r.IntN(m)] = int32(r.IntN(n+6) - 3)
		default:
			g.Targets = append(g.Targets, int32(r.IntN(n)))
		}
	}
}

// BenchmarkCSRCheck checks a Kronecker graph of scale 22 (2^22 vertices,
// about 1.3e8 targets, 540 MB of arrays): on one goroutine, on
// GOMAXPROCS, through Check, and with the serial reference loop
// (serialCheck), the check as it ran before it was split.
func BenchmarkCSRCheck(b *testing.B) {
	g, err := Kronecker(22, DefaultEdgeFactor, 1)
	if err != nil {
		b.Fatal(err)
	}
	runtime.GC() // the generator's garbage, collected before the timing
	bytes := int64(8*len(g.Offsets) + 4*len(g.Targets))
	for _, c := range []struct {
		name  string
		check func() error
	}{
		{"workers=1", func() error { return g.check(1, checkGrain) }},
		{"workers=gomaxprocs", func() error { return g.check(runtime.GOMAXPROCS(0), checkGrain) }},
		{"Check", g.Check},
		{"serial-reference", func() error { return serialCheck(g) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(bytes)
			for b.Loop() {
				if err := c.check(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
