package bfsquery

import (
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/internal/checked"
	"github.com/gpuplan/gpuplan/internal/memcheck"
)

// TestCPUWorkingSetCountsTheCPUPath checks the estimate's arithmetic on
// batches of each path: one root (the 32-bit offsets, its levels and
// BFSParallel's frontier lists), several roots (their levels and one
// multi-source pass), a directed graph (its transpose, and one root at a
// time), and targets read.
func TestCPUWorkingSetCountsTheCPUPath(t *testing.T) {
	const n, e = 1_000_000, 4_000_000
	cases := []struct {
		name string
		b    CPUBatch
		want uint64
	}{
		{"one root", CPUBatch{Vertices: n, Entries: e, Roots: 1, Queries: 1},
			4*n + 4*(n+1) + 12*n + 128 + 80},
		{"one root, two queries", CPUBatch{Vertices: n, Entries: e, Roots: 1, Queries: 2},
			4*n + 4*(n+1) + 12*n + 128 + 2*80},
		{"64 roots in a pass", CPUBatch{Vertices: n, Entries: e, Roots: 64, Queries: 64},
			64*4*n + 40*n + 64*128 + 64*80},
		{"directed, 3 roots", CPUBatch{Vertices: n, Entries: e, Directed: true, Roots: 3, Queries: 3},
			8*(n+1) + 4*e + 3*4*n + 4*(n+1) + 12*n + 3*128 + 3*80},
		{"targets with parents read", CPUBatch{Vertices: n, Entries: e, Roots: 1, Queries: 1, Reads: 1000},
			4*n + 4*(n+1) + 12*n + 12*1000 + 128 + 80},
		{"an empty batch", CPUBatch{Vertices: 1}, 4*2 + 12},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := CPUWorkingSet(c.b)
			require.NoError(t, err)
			assert.Equal(t, c.want, got)
		})
	}
}

// TestCPUWorkingSetIsMonotone checks on random batches that more vertices
// or more entries never make a smaller estimate.
func TestCPUWorkingSetIsMonotone(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for range 5000 {
		b := CPUBatch{Vertices: rng.Uint64N(1 << 36), Entries: rng.Uint64N(1 << 38), Directed: rng.IntN(2) == 0,
			Roots: rng.Uint64N(1 << 12), Queries: rng.Uint64N(1 << 14), Reads: rng.Uint64N(1 << 30)}
		base, err := CPUWorkingSet(b)
		require.NoError(t, err, "%+v", b)
		more := b
		more.Vertices += 1 + rng.Uint64N(1<<20)
		v, err := CPUWorkingSet(more)
		require.NoError(t, err)
		assert.GreaterOrEqual(t, v, base, "more vertices: %+v", more)
		more = b
		more.Entries += 1 + rng.Uint64N(1<<33)
		e, err := CPUWorkingSet(more)
		require.NoError(t, err)
		assert.GreaterOrEqual(t, e, base, "more entries, past 2^32 too: %+v", more)
	}
}

// TestCPUWorkingSetRefusesOverflow gives sizes whose bytes do not fit 64
// bits: each is a *checked.OverflowError, not a wrapped number.
func TestCPUWorkingSetRefusesOverflow(t *testing.T) {
	for _, c := range []struct {
		name string
		b    CPUBatch
	}{
		{"vertices", CPUBatch{Vertices: math.MaxUint64 / 8, Roots: 1}},
		{"every vertex + 1", CPUBatch{Vertices: math.MaxUint64}},
		{"roots' levels", CPUBatch{Vertices: 1 << 40, Roots: 1 << 30}},
		{"a directed graph's entries", CPUBatch{Vertices: 1, Entries: 1 << 63, Directed: true}},
		{"reads", CPUBatch{Vertices: 1, Reads: 1 << 62}},
		{"the sum", CPUBatch{Vertices: 1 << 40, Roots: 1 << 22, Queries: 1 << 62}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := CPUWorkingSet(c.b)
			var oe *checked.OverflowError
			require.True(t, errors.As(err, &oe), "%v", err)
			assert.Contains(t, err.Error(), "Fix:")
		})
	}
}

// TestCPUBatchOf counts a batch's roots, queries and reads: targets, and
// with parents the targets' in-neighbours, repeats included.
func TestCPUBatchOf(t *testing.T) {
	path, err := frontier.ParseEdgeList([]byte("0 1\n1 2\n2 3\n"), "p", frontier.Limits{})
	require.NoError(t, err)
	star, err := ReadDirected(strings.NewReader("0 3\n1 3\n2 3\n3 0\n"), "s", 16, frontier.Limits{})
	require.NoError(t, err)
	cases := []struct {
		name     string
		g        *frontier.CSR
		directed bool
		qs       []Query
		roots    uint64
		reads    uint64
	}{
		{"every vertex", path, false, []Query{{Root: 0}, {Root: 0}}, 1, 0},
		{"targets", path, false, []Query{{Root: 0, Targets: []int32{1, 3}}, {Root: 2, Targets: []int32{1}}}, 2, 3},
		{"parents, undirected", path, false, []Query{{Root: 0, Targets: []int32{1, 1, 3}, Parents: true}}, 1, 3 + 2 + 2 + 1},
		{"parents, directed", star, true, []Query{{Root: 0, Targets: []int32{3, 0}, Parents: true}, {Root: 1, Targets: []int32{3}, Parents: true}}, 2, 3 + 3 + 1 + 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := CPUBatchOf(c.g, c.directed, c.qs)
			assert.Equal(t, CPUBatch{Vertices: uint64(c.g.NumVertices()), Entries: uint64(c.g.NumEdgeEntries()), Directed: c.directed,
				Roots: c.roots, Queries: uint64(len(c.qs)), Reads: c.reads}, b)
		})
	}
}

// TestAnswersAllocateTheirLevelsOnly measures what building and writing
// answers over every vertex allocate: an answer holds its levels (4 bytes
// a vertex) and no list of every vertex, and the binary format writes
// without a slice a word, where each made 4 and 8 bytes a vertex of
// garbage that the CPU working set did not count.
func TestAnswersAllocateTheirLevelsOnly(t *testing.T) {
	const n = 1 << 20
	levels := make([]int32, n)
	for i := range levels {
		levels[i] = int32(i % 7)
	}
	g := &Graph{}
	set := &Answers{Vertices: n, Answers: []Answer{{Root: 0, Levels: levels}}}
	for _, c := range []struct {
		name  string
		run   func()
		bound memcheck.Bound
	}{
		{"an answer over every vertex", func() { _ = g.answer(Query{MaxDepth: NoDepthLimit}, fullView(levels)) }, memcheck.Bound{Base: 4*n + 4096}},
		{"an answer within a depth", func() { _ = g.answer(Query{MaxDepth: 3}, fullView(levels)) }, memcheck.Bound{Base: 4*n + 4096}},
		{"the binary format", func() { require.NoError(t, set.WriteBinary(io.Discard)) }, memcheck.Bound{Base: 128 << 10}},
	} {
		t.Run(c.name, func(t *testing.T) { memcheck.Check(t, c.bound, n, c.run) })
	}
}
