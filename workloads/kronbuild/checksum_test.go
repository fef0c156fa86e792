package kronbuild

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/frontier"
)

// testPiece is the piece size of the tests that cross piece boundaries
// with small graphs.
const testPiece = 64

// randomCSR is a CSR of n offsets and m targets of random values, small
// enough that it fits 32-bit offsets.
func randomCSR(rng *rand.Rand, n, m int) *frontier.CSR {
	g := &frontier.CSR{Offsets: make([]uint64, n), Targets: make([]int32, m)}
	for i := range g.Offsets {
		g.Offsets[i] = rng.Uint64N(1 << 20)
	}
	for i := range g.Targets {
		g.Targets[i] = rng.Int32()
	}
	return g
}

// cloneCSR is a deep copy of g.
func cloneCSR(g *frontier.CSR) *frontier.CSR {
	return &frontier.CSR{Offsets: slices.Clone(g.Offsets), Targets: slices.Clone(g.Targets)}
}

// wideCSR is a CSR of n offsets, the last 2^32 so that it does not fit
// 32-bit offsets, and m random targets.
func wideCSR(rng *rand.Rand, n, m int) *frontier.CSR {
	g := randomCSR(rng, n, m)
	g.Offsets[n-1] = 1 << 32
	return g
}

// referenceStream is g's checksum stream built whole: the offsets as
// offsetSize-byte little-endian words, then the targets as 4-byte ones.
func referenceStream(g *frontier.CSR, offsetSize int) []byte {
	var b []byte
	for _, o := range g.Offsets {
		if offsetSize == 8 {
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

// referenceChecksum is the checksum's definition over a whole stream, with
// hash/fnv: each piece hashed on its own, then the digests and the length.
func referenceChecksum(stream []byte, piece int) string {
	top := fnv.New64a()
	for lo := 0; lo < len(stream); lo += piece {
		h := fnv.New64a()
		h.Write(stream[lo:min(lo+piece, len(stream))])
		top.Write(binary.LittleEndian.AppendUint64(nil, h.Sum64()))
	}
	top.Write(binary.LittleEndian.AppendUint64(nil, uint64(len(stream))))
	return fmt.Sprintf("fnv64t-%016x", top.Sum64())
}

// viewModes are the memory modes this machine can run: encoding always,
// hashing the arrays' memory only when it is little-endian.
func viewModes() []bool {
	if littleEndian() {
		return []bool{false, true}
	}
	return []bool{false}
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

// The checksum is the definition's (referenceChecksum over the whole
// stream) for graphs with and without pieces that straddle the offsets
// and the targets, narrow and wide, empty, for piece sizes, worker counts
// and both memory modes.
func TestCSRChecksumMatchesDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	cases := []struct {
		name       string
		g          *frontier.CSR
		offsetSize int
	}{
		{"empty", &frontier.CSR{}, 4},
		{"one vertex", &frontier.CSR{Offsets: []uint64{0}}, 4},
		{"tiny", &frontier.CSR{Offsets: []uint64{0, 1, 2}, Targets: []int32{1, 0}}, 4},
		{"whole pieces", randomCSR(rng, 16, 32), 4},
		{"straddling piece", randomCSR(rng, 37, 53), 4},
		{"negative targets", &frontier.CSR{Offsets: []uint64{0, 2}, Targets: []int32{-1, -2}}, 4},
		{"wide offsets", wideCSR(rng, 9, 21), 8},
		{"wide, many pieces", wideCSR(rng, 100, 301), 8},
	}
	for _, c := range cases {
		stream := referenceStream(c.g, c.offsetSize)
		for _, piece := range []int{8, testPiece, 1 << 20} {
			want := referenceChecksum(stream, piece)
			for _, workers := range []int{1, 3, 64} {
				for _, view := range viewModes() {
					p := checksumParams{pieceBytes: piece, workers: workers, view: view}
					assert.Equal(t, want, checksumCSR(c.g, p), "%s: %+v", c.name, p)
				}
			}
		}
		assert.Equal(t, referenceChecksum(stream, ChecksumPieceBytes), CSRChecksum(c.g), c.name)
	}
}

// The checksum is pinned: a change of its definition shows here, and in
// the recorded evidence it would no longer match.
func TestCSRChecksumPinned(t *testing.T) {
	g := &frontier.CSR{Offsets: []uint64{0, 1, 2}, Targets: []int32{1, 0}}
	assert.Equal(t, "fnv64t-f0e4d0c54d219030", CSRChecksum(g))
	assert.Regexp(t, `^fnv64t-[0-9a-f]{16}$`, CSRChecksum(g))
}

// Equal graphs have equal checksums; a change of one offset or one target
// anywhere (the first and the last piece, either side of a piece
// boundary, in the piece that holds the end of the offsets and the start
// of the targets) or a swap of two words across a boundary changes it.
// The graph has 37 offsets (148 bytes) and 53 targets (212 bytes): pieces
// of 64 bytes end at offsets[15], offsets[31], targets[10] (the third
// piece straddles), targets[26], targets[42] and targets[52].
func TestCSRChecksumTellsChanges(t *testing.T) {
	base := randomCSR(rand.New(rand.NewPCG(5, 6)), 37, 53)
	cases := []struct {
		name   string
		change func(g *frontier.CSR)
	}{
		{"first offset", func(g *frontier.CSR) { g.Offsets[0]++ }},
		{"last offset of the first piece", func(g *frontier.CSR) { g.Offsets[15] ^= 1 << 7 }},
		{"first offset of the second piece", func(g *frontier.CSR) { g.Offsets[16] ^= 1 }},
		{"last offset, in the straddling piece", func(g *frontier.CSR) { g.Offsets[36] ^= 1 << 19 }},
		{"first target, in the straddling piece", func(g *frontier.CSR) { g.Targets[0] ^= 1 << 30 }},
		{"last target of the straddling piece", func(g *frontier.CSR) { g.Targets[10]++ }},
		{"first target after it", func(g *frontier.CSR) { g.Targets[11]-- }},
		{"last target, in the last piece", func(g *frontier.CSR) { g.Targets[52] ^= -1 << 31 }},
		{"two targets swapped across a piece boundary", func(g *frontier.CSR) {
			g.Targets[26], g.Targets[27] = g.Targets[27], g.Targets[26]
		}},
		{"two whole pieces swapped", func(g *frontier.CSR) {
			a := slices.Clone(g.Targets[11:27])
			copy(g.Targets[11:27], g.Targets[27:43])
			copy(g.Targets[27:43], a)
		}},
		{"offset and target swapped across their boundary", func(g *frontier.CSR) {
			g.Offsets[36], g.Targets[0] = uint64(uint32(g.Targets[0])), int32(g.Offsets[36])
		}},
	}
	for _, p := range []checksumParams{
		{pieceBytes: testPiece, workers: 1},
		{pieceBytes: testPiece, workers: 4, view: littleEndian()},
		{pieceBytes: ChecksumPieceBytes, workers: runtime.GOMAXPROCS(0), view: littleEndian()},
	} {
		want := checksumCSR(base, p)
		require.Equal(t, want, checksumCSR(cloneCSR(base), p), "equal graphs, %+v", p)
		for _, c := range cases {
			g := cloneCSR(base)
			c.change(g)
			require.NotEqual(t, base, g, "%s changes the graph", c.name)
			assert.NotEqual(t, want, checksumCSR(g, p), "%s, %+v", c.name, p)
		}
	}
}

// The checksum does not depend on the goroutines that compute it, nor on
// whether they read the arrays' memory or encode it.
func TestCSRChecksumIndependentOfWorkers(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, g := range []*frontier.CSR{randomCSR(rng, 1001, 4003), wideCSR(rng, 1001, 4003)} {
		want := checksumCSR(g, checksumParams{pieceBytes: testPiece, workers: 1})
		for _, workers := range []int{0, 1, 2, 3, 8, runtime.GOMAXPROCS(0), 1000} {
			for _, view := range viewModes() {
				p := checksumParams{pieceBytes: testPiece, workers: workers, view: view}
				assert.Equal(t, want, checksumCSR(g, p), "%+v", p)
			}
		}
	}
}

// Offsets are hashed as 4-byte words when the graph fits 32-bit offsets
// (up to frontier.MaxOffsets32Entries entries) and as 8-byte words when it
// does not, so offsets past 32 bits are hashed whole: 2^32 is not 0.
func TestCSRChecksumOffsetWords(t *testing.T) {
	const limit = frontier.MaxOffsets32Entries
	cases := []struct {
		name       string
		g          *frontier.CSR
		offsetSize int
	}{
		{"small", &frontier.CSR{Offsets: []uint64{0, 1, 2}, Targets: []int32{1, 0}}, 4},
		{"at the 32-bit limit", &frontier.CSR{Offsets: []uint64{0, limit}}, 4},
		{"past the 32-bit limit (2^32)", &frontier.CSR{Offsets: []uint64{0, limit + 1}}, 8},
		{"2^33", &frontier.CSR{Offsets: []uint64{0, 1 << 33}}, 8},
	}
	seen := map[string]string{}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.offsetSize, newCSRStream(c.g, false).offsetSize)
			got := CSRChecksum(c.g)
			assert.Equal(t, referenceChecksum(referenceStream(c.g, c.offsetSize), ChecksumPieceBytes), got)
			assert.NotContains(t, seen, got, "the same as %s", seen[got])
			seen[got] = c.name
		})
	}
	assert.NotEqual(t, CSRChecksum(&frontier.CSR{Offsets: []uint64{0, 0}}), CSRChecksum(&frontier.CSR{Offsets: []uint64{0, 1 << 32}}))
}

// BenchmarkCSRChecksum hashes a graph of 2^23+1 offsets and 2^27 targets
// (a 544 MiB stream, nine pieces) on one goroutine and on GOMAXPROCS,
// reading the arrays' memory, and on GOMAXPROCS encoding it.
func BenchmarkCSRChecksum(b *testing.B) {
	rng := rand.New(rand.NewPCG(9, 10))
	g := &frontier.CSR{Offsets: make([]uint64, 1<<23+1), Targets: make([]int32, 1<<27)}
	for i := range g.Offsets {
		g.Offsets[i] = uint64(i) << 4
	}
	for i := range g.Targets {
		g.Targets[i] = rng.Int32()
	}
	n := int64(newCSRStream(g, false).len())
	for _, c := range []struct {
		name    string
		workers int
		view    bool
	}{
		{"workers=1", 1, littleEndian()},
		{"workers=gomaxprocs", runtime.GOMAXPROCS(0), littleEndian()},
		{"workers=gomaxprocs,encoded", runtime.GOMAXPROCS(0), false},
	} {
		b.Run(c.name, func(b *testing.B) {
			p := checksumParams{pieceBytes: ChecksumPieceBytes, workers: c.workers, view: c.view}
			b.SetBytes(n)
			for b.Loop() {
				checksumCSR(g, p)
			}
		})
	}
}
