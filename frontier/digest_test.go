package frontier

import (
	"encoding/binary"
	"hash/fnv"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testPiece is the piece size of the tests that cross piece boundaries
// with small graphs.
const testPiece = 64

// randomDigestCSR is a CSR of n offsets and m targets of random values,
// small enough that every offset fits 32 bits (not a well-formed graph:
// the digest reads the arrays as they are).
func randomDigestCSR(rng *rand.Rand, n, m int) *CSR {
	g := &CSR{Name: "random", Offsets: make([]uint64, n), Targets: make([]int32, m)}
	for i := range g.Offsets {
		g.Offsets[i] = rng.Uint64N(1 << 20)
	}
	for i := range g.Targets {
		g.Targets[i] = rng.Int32()
	}
	return g
}

// wideDigestCSR is randomDigestCSR with its last offset 2^32, so that it
// does not fit 32-bit offsets.
func wideDigestCSR(rng *rand.Rand, n, m int) *CSR {
	g := randomDigestCSR(rng, n, m)
	g.Name = "wide"
	g.Offsets[n-1] = 1 << 32
	return g
}

// cloneDigestCSR is a deep copy of g.
func cloneDigestCSR(g *CSR) *CSR {
	return &CSR{Name: g.Name, Offsets: slices.Clone(g.Offsets), Targets: slices.Clone(g.Targets)}
}

// referenceStream is g's digest stream built whole: the offsets as
// offsetBytes-byte little-endian words, then the targets as 4-byte ones.
func referenceStream(g *CSR, offsetBytes int) []byte {
	var b []byte
	for _, o := range g.Offsets {
		if offsetBytes == 8 {
			b = binary.LittleEndian.AppendUint64(b, o)
		} else {
			b = binary.LittleEndian.AppendUint32(b, uint32(o))
		}
	}
	for _, t := range g.Targets {
		b = binary.LittleEndian.AppendUint32(b, uint32(t))
	}
	return b
}

// referenceDigest is the digest's definition over a whole stream, with
// hash/fnv: each piece hashed on its own, then the digests and the length.
func referenceDigest(stream []byte, piece int) uint64 {
	top := fnv.New64a()
	for lo := 0; lo < len(stream); lo += piece {
		h := fnv.New64a()
		h.Write(stream[lo:min(lo+piece, len(stream))])
		top.Write(binary.LittleEndian.AppendUint64(nil, h.Sum64()))
	}
	top.Write(binary.LittleEndian.AppendUint64(nil, uint64(len(stream))))
	return top.Sum64()
}

// viewModes are the memory modes this machine can run: encoding always,
// hashing the arrays' memory only when it is little-endian.
func viewModes() []bool {
	if littleEndian() {
		return []bool{false, true}
	}
	return []bool{false}
}

// mustDigest is g.digest, which must not fail.
func mustDigest(t testing.TB, g *CSR, offsetBytes int, p digestParams) uint64 {
	t.Helper()
	d, err := g.digest(offsetBytes, p)
	require.NoError(t, err, "%s, %d-byte offsets, %+v", g.Name, offsetBytes, p)
	return d
}

// fnv1a is FNV-1a 64 exactly as hash/fnv computes it, for any split of
// the input.
func TestFNV1aMatchesHashFNV(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 7, 8, 100, 4097} {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		h := fnv.New64a()
		h.Write(b)
		assert.Equal(t, h.Sum64(), fnv1a(fnv1a(fnvOffset64, b[:n/2]), b[n/2:]), "%d bytes", n)
	}
}

// The digest is the definition's (referenceDigest over the whole stream)
// for graphs with and without pieces that straddle the offsets and the
// targets, at both offset widths (wide graphs only at 8 bytes), empty, for
// piece sizes, worker counts and both memory modes.
func TestDigestMatchesDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	cases := []struct {
		name   string
		g      *CSR
		widths []int
	}{
		{"empty", &CSR{}, []int{4, 8}},
		{"one vertex", &CSR{Offsets: []uint64{0}}, []int{4, 8}},
		{"tiny", &CSR{Offsets: []uint64{0, 1, 2}, Targets: []int32{1, 0}}, []int{4, 8}},
		{"whole pieces", randomDigestCSR(rng, 16, 32), []int{4, 8}},
		{"straddling piece", randomDigestCSR(rng, 37, 53), []int{4, 8}},
		{"targets only", &CSR{Targets: []int32{3, 1, 4, 1, 5}}, []int{4, 8}},
		{"negative targets", &CSR{Offsets: []uint64{0, 2}, Targets: []int32{-1, -2}}, []int{4, 8}},
		{"wide offsets", wideDigestCSR(rng, 9, 21), []int{8}},
		{"wide, many pieces", wideDigestCSR(rng, 100, 301), []int{8}},
	}
	for _, c := range cases {
		for _, width := range c.widths {
			stream := referenceStream(c.g, width)
			for _, piece := range []int{8, testPiece, 1 << 20} {
				want := referenceDigest(stream, piece)
				for _, workers := range []int{1, 3, 64} {
					for _, view := range viewModes() {
						p := digestParams{pieceBytes: piece, workers: workers, view: view}
						assert.Equal(t, want, mustDigest(t, c.g, width, p), "%s, %d-byte offsets, %+v", c.name, width, p)
					}
				}
			}
			got, err := c.g.Digest(width)
			require.NoError(t, err, c.name)
			assert.Equal(t, referenceDigest(stream, DigestPieceBytes), got, "%s, %d-byte offsets", c.name, width)
		}
	}
}

// The digest is pinned: a change of its definition shows here, and in the
// recorded evidence (kronbuild's checksums) it would no longer match.
func TestDigestPinned(t *testing.T) {
	g := &CSR{Offsets: []uint64{0, 1, 2}, Targets: []int32{1, 0}}
	for _, c := range []struct {
		width int
		want  uint64
	}{
		{4, 0xf0e4d0c54d219030},
		{8, 0xa96229a7e0848729},
	} {
		got, err := g.Digest(c.width)
		require.NoError(t, err)
		assert.Equal(t, c.want, got, "%d-byte offsets: %#016x", c.width, got)
	}
}

// Equal graphs have equal digests; a change of one offset or one target
// anywhere (the first and the last piece, either side of a piece boundary,
// in the piece that holds the end of the offsets and the start of the
// targets) or a swap of two words across a boundary changes it. The graph
// has 37 offsets (148 bytes at 4 bytes) and 53 targets (212 bytes): pieces
// of 64 bytes end at offsets[15], offsets[31], targets[10] (the third
// piece straddles), targets[26], targets[42] and targets[52]. At 8 bytes
// the boundaries move, and the same changes still show.
func TestDigestTellsChanges(t *testing.T) {
	base := randomDigestCSR(rand.New(rand.NewPCG(5, 6)), 37, 53)
	cases := []struct {
		name   string
		change func(g *CSR)
	}{
		{"first offset", func(g *CSR) { g.Offsets[0]++ }},
		{"last offset of the first piece", func(g *CSR) { g.Offsets[15] ^= 1 << 7 }},
		{"first offset of the second piece", func(g *CSR) { g.Offsets[16] ^= 1 }},
		{"last offset, in the straddling piece", func(g *CSR) { g.Offsets[36] ^= 1 << 19 }},
		{"first target, in the straddling piece", func(g *CSR) { g.Targets[0] ^= 1 << 30 }},
		{"last target of the straddling piece", func(g *CSR) { g.Targets[10]++ }},
		{"first target after it", func(g *CSR) { g.Targets[11]-- }},
		{"last target, in the last piece", func(g *CSR) { g.Targets[52] ^= -1 << 31 }},
		{"two targets swapped across a piece boundary", func(g *CSR) {
			g.Targets[26], g.Targets[27] = g.Targets[27], g.Targets[26]
		}},
		{"two whole pieces swapped", func(g *CSR) {
			a := slices.Clone(g.Targets[11:27])
			copy(g.Targets[11:27], g.Targets[27:43])
			copy(g.Targets[27:43], a)
		}},
		{"offset and target swapped across their boundary", func(g *CSR) {
			g.Offsets[36], g.Targets[0] = uint64(uint32(g.Targets[0])), int32(g.Offsets[36])
		}},
	}
	for _, width := range []int{4, 8} {
		for _, p := range []digestParams{
			{pieceBytes: testPiece, workers: 1},
			{pieceBytes: testPiece, workers: 4, view: littleEndian()},
			{pieceBytes: DigestPieceBytes, workers: runtime.GOMAXPROCS(0), view: littleEndian()},
		} {
			want := mustDigest(t, base, width, p)
			require.Equal(t, want, mustDigest(t, cloneDigestCSR(base), width, p), "equal graphs, %d-byte offsets, %+v", width, p)
			for _, c := range cases {
				g := cloneDigestCSR(base)
				c.change(g)
				require.NotEqual(t, base, g, "%s changes the graph", c.name)
				assert.NotEqual(t, want, mustDigest(t, g, width, p), "%s, %d-byte offsets, %+v", c.name, width, p)
			}
		}
	}
}

// The digest does not depend on the goroutines that compute it, nor on
// whether they read the arrays' memory or encode it.
func TestDigestIndependentOfWorkers(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, c := range []struct {
		g     *CSR
		width int
	}{
		{randomDigestCSR(rng, 1001, 4003), 4},
		{randomDigestCSR(rng, 1001, 4003), 8},
		{wideDigestCSR(rng, 1001, 4003), 8},
	} {
		want := mustDigest(t, c.g, c.width, digestParams{pieceBytes: testPiece, workers: 1})
		for _, workers := range []int{0, 1, 2, 3, 8, runtime.GOMAXPROCS(0), 1000} {
			for _, view := range viewModes() {
				p := digestParams{pieceBytes: testPiece, workers: workers, view: view}
				assert.Equal(t, want, mustDigest(t, c.g, c.width, p), "%s, %d-byte offsets, %+v", c.g.Name, c.width, p)
			}
		}
	}
}

// The offset width is part of the digest: 4- and 8-byte offsets of one
// graph give different digests, and at 8 bytes offsets past 32 bits are
// hashed whole (2^32 is not 0).
func TestDigestOffsetWidths(t *testing.T) {
	for _, g := range []*CSR{
		{Offsets: []uint64{0}},
		{Offsets: []uint64{0, 1, 2}, Targets: []int32{1, 0}},
		{Offsets: []uint64{0, MaxOffsets32Entries}},
	} {
		narrow, err := g.Digest(4)
		require.NoError(t, err)
		wide, err := g.Digest(8)
		require.NoError(t, err)
		assert.NotEqual(t, narrow, wide, "%v", g.Offsets)
	}
	zero, err := (&CSR{Offsets: []uint64{0, 0}}).Digest(8)
	require.NoError(t, err)
	past, err := (&CSR{Offsets: []uint64{0, 1 << 32}}).Digest(8)
	require.NoError(t, err)
	assert.NotEqual(t, zero, past)
}

// Digest refuses an offset width other than 4 or 8, and 4-byte offsets
// when an offset does not fit 32 bits, wherever it is (the last offset,
// seen before hashing, or one inside, seen by the goroutine that hashes
// it), naming the graph and the offset, with a fix.
func TestDigestRefuses(t *testing.T) {
	inside := randomDigestCSR(rand.New(rand.NewPCG(11, 12)), 1001, 50)
	inside.Name = "inside"
	inside.Offsets[700] = 1<<32 + 5
	cases := []struct {
		name  string
		g     *CSR
		width int
		want  []string
	}{
		{"no width", &CSR{Name: "g"}, 0, []string{`graph "g"`, "0-byte offsets", "Fix: pass 4"}},
		{"2 bytes", &CSR{Name: "g"}, 2, []string{`graph "g"`, "2-byte offsets", "Fix:"}},
		{"16 bytes", &CSR{Name: "g", Offsets: []uint64{0}}, 16, []string{"16-byte offsets", "Fix:"}},
		{"negative", &CSR{Name: "g"}, -4, []string{"-4-byte offsets", "Fix:"}},
		{"last offset past 32 bits", &CSR{Name: "big", Offsets: []uint64{0, 1 << 32}}, 4,
			[]string{`graph "big"`, "offset 1 is 4294967296", "Fix: digest it with 8-byte offsets"}},
		{"offset inside past 32 bits", inside, 4,
			[]string{`graph "inside"`, "offset 700 is 4294967301", "Fix: digest it with 8-byte offsets"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, p := range []digestParams{
				{pieceBytes: DigestPieceBytes, workers: runtime.GOMAXPROCS(0), view: littleEndian()},
				{pieceBytes: testPiece, workers: 1},
				{pieceBytes: testPiece, workers: 7, view: littleEndian()},
			} {
				_, err := c.g.digest(c.width, p)
				require.Error(t, err, "%+v", p)
				for _, w := range c.want {
					assert.Contains(t, err.Error(), w, "%+v", p)
				}
			}
			_, err := c.g.Digest(c.width)
			assert.Error(t, err)
		})
	}
	d, err := inside.Digest(8)
	require.NoError(t, err, "8-byte offsets hold every offset")
	assert.Equal(t, referenceDigest(referenceStream(inside, 8), DigestPieceBytes), d)
}

// BenchmarkDigest hashes a graph of 2^23+1 offsets and 2^27 targets (a 544
// MiB stream at 4-byte offsets, nine pieces) on one goroutine and on
// GOMAXPROCS, reading the arrays' memory where it can, at both offset
// widths, and on GOMAXPROCS encoding every word.
func BenchmarkDigest(b *testing.B) {
	rng := rand.New(rand.NewPCG(9, 10))
	g := &CSR{Offsets: make([]uint64, 1<<23+1), Targets: make([]int32, 1<<27)}
	for i := range g.Offsets {
		g.Offsets[i] = uint64(i) << 4
	}
	for i := range g.Targets {
		g.Targets[i] = rng.Int32()
	}
	for _, c := range []struct {
		name           string
		width, workers int
		view           bool
	}{
		{"offsets=4/workers=1", 4, 1, littleEndian()},
		{"offsets=4/workers=gomaxprocs", 4, runtime.GOMAXPROCS(0), littleEndian()},
		{"offsets=8/workers=gomaxprocs", 8, runtime.GOMAXPROCS(0), littleEndian()},
		{"offsets=4/workers=gomaxprocs/encoded", 4, runtime.GOMAXPROCS(0), false},
	} {
		b.Run(c.name, func(b *testing.B) {
			p := digestParams{pieceBytes: DigestPieceBytes, workers: c.workers, view: c.view}
			b.SetBytes(int64(csrStream{offsets: g.Offsets, targets: g.Targets, offsetBytes: c.width}.len()))
			for b.Loop() {
				if _, err := g.digest(c.width, p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
