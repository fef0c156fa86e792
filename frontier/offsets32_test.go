package frontier

import (
	"fmt"
	"math"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOffsets32 checks the narrowing of a CSR's offsets for the GPU
// kernels: a graph up to 2^32-1 entries narrows to the same values, and a
// larger one is refused by both the check and the conversion, from two
// numbers only (the targets of the wide graphs here are short: the check
// reads the last offset, not the arrays).
func TestOffsets32(t *testing.T) {
	cases := []struct {
		name    string
		g       *CSR
		want    []uint32
		entries uint64
	}{
		{"small", &CSR{Name: "s", Offsets: []uint64{0, 1, 3, 4}, Targets: []int32{1, 0, 2, 1}}, []uint32{0, 1, 3, 4}, 0},
		{"empty", &CSR{Name: "e"}, []uint32{}, 0},
		{"at the limit", &CSR{Name: "max", Offsets: []uint64{0, math.MaxUint32}}, []uint32{0, math.MaxUint32}, 0},
		{"one past", &CSR{Name: "wide", Offsets: []uint64{0, 1 << 32}}, nil, 1 << 32},
		{"scale 29", &CSR{Name: "kron-29", Offsets: []uint64{0, 1 << 33, 1 << 34}}, nil, 1 << 34},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.g.Offsets32()
			if c.entries == 0 {
				require.NoError(t, c.g.CheckOffsets32())
				require.NoError(t, err)
				assert.Equal(t, c.want, got)
				return
			}
			want := &Offsets32Error{Source: c.g.Name, Entries: c.entries, Limit: MaxOffsets32Entries}
			assert.Equal(t, want, c.g.CheckOffsets32())
			assert.Equal(t, want, err)
			assert.Nil(t, got)
			assert.Nil(t, compactOffsets(c.g, 2), "the CPU traversals keep the 64-bit offsets")
		})
	}
	small := &CSR{Offsets: []uint64{0, 2, 3}}
	assert.Equal(t, []uint32{0, 2, 3}, compactOffsets(small, 2), "the CPU traversals' 32-bit copy")
}

// TestNarrowOffsets checks NarrowOffsets on every schedule: rebased
// ranges, the first value that passes 32 bits wherever it lies, a value
// below the base, and a destination of the wrong length.
func TestNarrowOffsets(t *testing.T) {
	const n = 300000
	ramp := make([]uint64, n)
	for i := range ramp {
		ramp[i] = 7*uint64(i) + 1<<40
	}
	cases := []struct {
		name    string
		src     []uint64
		base    uint64
		entries uint64 // 0: it fits
	}{
		{"rebased range", ramp, 1 << 40, 0},
		{"wrapped below the base", ramp, 1<<40 + 8, math.MaxUint64},
		{"past 32 bits", ramp, 1<<40 - 1<<32, 7*(n-1) + 1<<32},
		{"not rebased", ramp, 0, 7*(n-1) + 1<<40},
		{"empty", nil, 0, 0},
	}
	for _, c := range cases {
		for _, workers := range []int{1, 2, 7, runtime.GOMAXPROCS(0)} {
			name := fmt.Sprintf("%s, %d workers", c.name, workers)
			dst := make([]uint32, len(c.src))
			err := narrowOffsets("g", dst, c.src, c.base, workers)
			if c.entries != 0 {
				assert.Equal(t, &Offsets32Error{Source: "g", Entries: c.entries, Limit: MaxOffsets32Entries}, err, name)
				continue
			}
			require.NoError(t, err, name)
			for i, v := range c.src {
				if uint64(dst[i]) != v-c.base {
					require.Failf(t, "wrong offset", "%s: dst[%d] = %d, want %d", name, i, dst[i], v-c.base)
				}
			}
		}
	}
	// One wide value in the middle of an otherwise small array.
	src := make([]uint64, n)
	src[n/2+3] = 1 << 32
	for _, workers := range []int{1, 3} {
		err := narrowOffsets("mid", make([]uint32, n), src, 0, workers)
		assert.Equal(t, &Offsets32Error{Source: "mid", Entries: 1 << 32, Limit: MaxOffsets32Entries}, err, "%d workers", workers)
	}
	err := NarrowOffsets("len", make([]uint32, 2), []uint64{0, 1, 2}, 0)
	require.ErrorContains(t, err, "Fix:")
	require.NoError(t, NarrowOffsets("public", make([]uint32, 3), []uint64{5, 6, 9}, 5))
}

// TestWidenOffsets checks that widening is the inverse of narrowing.
func TestWidenOffsets(t *testing.T) {
	narrow := make([]uint32, 200000)
	for i := range narrow {
		narrow[i] = uint32(i) * 21000
	}
	wide := WidenOffsets(narrow)
	require.Len(t, wide, len(narrow))
	for i, v := range narrow {
		require.Equal(t, uint64(v), wide[i])
	}
	back, err := (&CSR{Offsets: wide}).Offsets32()
	require.NoError(t, err)
	assert.Equal(t, narrow, back)
	assert.Empty(t, WidenOffsets(nil))
}

// TestOffsets32ErrorMessage checks that each form of the refusal names the
// graph, the entries and the limit, and ends with a fix.
func TestOffsets32ErrorMessage(t *testing.T) {
	cases := []struct {
		name string
		err  *Offsets32Error
		want []string
	}{
		{"graph", &Offsets32Error{Source: "kron-27", Entries: 1 << 32, Limit: MaxOffsets32Entries},
			[]string{`graph "kron-27" has 4294967296 adjacency entries`, "the 4294967295 that 32-bit offsets address", "Fix: run it on the CPU reference, or build a graph of at most 4294967295 adjacency entries; the GPU kernels take 32-bit offsets"}},
		{"part", &Offsets32Error{Source: "kron-28", Part: "device 0's part, vertices [0, 64),", Entries: 1 << 33, Limit: MaxOffsets32Entries},
			[]string{`graph "kron-28": device 0's part, vertices [0, 64), holds 8589934592 adjacency entries`, "Fix: spread the graph over more devices"}},
		{"bound", &Offsets32Error{Source: "kron-27", Entries: 1 << 32, Bound: true, Limit: MaxOffsets32Entries},
			[]string{`graph "kron-27" may have up to 4294967296 adjacency entries`, "Fix: build it on the CPU"}},
	}
	for _, c := range cases {
		msg := c.err.Error()
		for _, w := range c.want {
			assert.Contains(t, msg, w, c.name)
		}
		assert.Contains(t, msg, "Fix:", c.name)
	}
}

// TestWideGraphLimits checks the host's limits past 2^32-1 adjacency
// entries without building such a graph: the generators and loaders
// accept sizes up to MaxGraphEdgeEntries and refuse larger ones before
// they allocate, with a *TooLargeError.
func TestWideGraphLimits(t *testing.T) {
	require.EqualValues(t, uint64(1)<<34, MaxGraphEdgeEntries)
	require.EqualValues(t, 29, MaxKroneckerScale)
	require.NoError(t, CheckKronecker(MaxKroneckerScale, DefaultEdgeFactor), "2^34 entries, at the limit")
	cases := []struct {
		name    string
		err     error
		value   uint64
		limitOK bool
	}{
		{"kronecker scale 30", CheckKronecker(30, DefaultEdgeFactor), 1 << 35, false},
		{"kronecker scale 29 at edge factor 17", CheckKronecker(29, 17), 34 << 29, false},
		{"load of 2^33+1 edges", checkSize("big.el", 9, 10, 1<<33+1, 1<<40, Limits{VerticesPerByte: 1, MaxLoadBytes: math.MaxUint64}), 1<<34 + 2, false},
		{"load of 2^33 edges", checkSize("big.el", 9, 10, 1<<33, 1<<40, Limits{VerticesPerByte: 1, MaxLoadBytes: math.MaxUint64}), 0, true},
	}
	for _, c := range cases {
		if c.limitOK {
			assert.NoError(t, c.err, c.name)
			continue
		}
		var tl *TooLargeError
		require.ErrorAs(t, c.err, &tl, c.name)
		assert.Equal(t, "edge entries", tl.Field, c.name)
		assert.Equal(t, c.value, tl.Value, c.name)
		assert.EqualValues(t, MaxGraphEdgeEntries, tl.Limit, c.name)
		assert.Contains(t, c.err.Error(), "Fix:", c.name)
	}
	// A CSR whose offsets say 2^32 entries is no longer too large for the
	// host: Check goes on to its structure (its targets are short here).
	var se *StructureError
	require.ErrorAs(t, (&CSR{Name: "wide", Offsets: []uint64{0, 1 << 32}}).Check(), &se)
	assert.Equal(t, 1, se.Index)
}

// BenchmarkOffsets32 measures the narrowing of 2^25 offsets (a scale 25
// graph's) for an upload: serial, on every CPU, and Offsets32 with its
// allocation.
func BenchmarkOffsets32(b *testing.B) {
	const n = 1 << 25
	src := make([]uint64, n)
	for i := range src {
		src[i] = 30 * uint64(i)
	}
	dst := make([]uint32, n)
	for _, workers := range []int{1, runtime.GOMAXPROCS(0)} {
		b.Run(fmt.Sprintf("workers-%d", workers), func(b *testing.B) {
			b.SetBytes(12 * n)
			for b.Loop() {
				if err := narrowOffsets("b", dst, src, 0, workers); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("Offsets32", func(b *testing.B) {
		g := &CSR{Name: "b", Offsets: src}
		b.SetBytes(12 * n)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := g.Offsets32(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
