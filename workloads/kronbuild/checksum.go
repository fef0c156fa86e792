package kronbuild

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"unsafe"

	"github.com/gpuplan/gpuplan/frontier"
)

// ChecksumPieceBytes is the size in bytes of the pieces CSRChecksum cuts
// its byte stream into and hashes on their own (the last piece may be
// shorter). It is part of the checksum's definition: another size gives
// other checksums.
const ChecksumPieceBytes = 64 << 20

// ChecksumPrefix starts every CSRChecksum ("fnv64t-", a tree of FNV-1a
// 64-bit hashes), so that its checksums are not taken for those of a
// single FNV-1a pass over the same bytes ("fnv64-").
const ChecksumPrefix = "fnv64t-"

// The FNV-1a 64-bit offset basis and prime (hash/fnv's New64a).
const (
	fnvOffset64 uint64 = 14695981039346656037
	fnvPrime64  uint64 = 1099511628211
)

// encodeBufBytes is the size of the buffer each goroutine of CSRChecksum
// encodes words into when it cannot hash an array's memory as it is.
const encodeBufBytes = 16 << 10

// CSRChecksum names a CSR's arrays: ChecksumPrefix and 16 hex digits. Two
// builds of one graph agree on it exactly when their arrays are equal (up
// to hash collisions), whatever the number of CPUs that computed it.
//
// It hashes one byte stream: the offsets, as 4-byte little-endian words
// (as a GPU holds them) when the graph fits 32-bit offsets
// (frontier.CSR.CheckOffsets32) and as 8-byte little-endian words when it
// does not, then the targets as 4-byte little-endian words. The stream is
// cut into pieces of ChecksumPieceBytes from its start (the last one
// shorter; a piece may hold the end of the offsets and the start of the
// targets), and each piece is hashed with FNV-1a 64 on its own, the
// pieces spread over up to GOMAXPROCS goroutines. The checksum is FNV-1a
// 64 over the pieces' digests, in order, each as an 8-byte little-endian
// word, then the stream's length in bytes as one more such word (an empty
// CSR has no pieces: only its length, 0, is hashed).
//
// The stream is never built: on a little-endian machine the pieces are
// hashed straight from the arrays' memory where its words are the
// stream's, and elsewhere encoded through a small buffer per goroutine.
func CSRChecksum(g *frontier.CSR) string {
	return checksumCSR(g, checksumParams{
		pieceBytes: ChecksumPieceBytes,
		workers:    runtime.GOMAXPROCS(0),
		view:       littleEndian(),
	})
}

// checksumParams is how checksumCSR runs: the piece size (a positive
// multiple of 8; CSRChecksum's is ChecksumPieceBytes), the goroutines it
// may use, and whether it may hash the arrays' memory as it is (only on a
// little-endian machine).
type checksumParams struct {
	pieceBytes, workers int
	view                bool
}

// checksumCSR is CSRChecksum with the piece size, goroutines and memory
// view of p. A piece size that is not a positive multiple of 8 is rounded
// down to one (at least 8), so that no piece boundary splits a word.
func checksumCSR(g *frontier.CSR, p checksumParams) string {
	s := newCSRStream(g, p.view)
	piece := max(8, p.pieceBytes-p.pieceBytes%8)
	n := s.len()
	pieces := (n + piece - 1) / piece
	workers := max(1, min(pieces, p.workers))
	digests := make([]uint64, pieces)
	bufs := make([][]byte, workers)
	eachPieceOn(workers, pieces, func(w, i int) {
		if bufs[w] == nil {
			bufs[w] = make([]byte, encodeBufBytes)
		}
		digests[i] = s.hash(i*piece, min((i+1)*piece, n), bufs[w])
	})
	return fmt.Sprintf("%s%016x", ChecksumPrefix, combineDigests(digests, n))
}

// combineDigests is FNV-1a 64 over the digests, in order, then n, each as
// an 8-byte little-endian word.
func combineDigests(digests []uint64, n int) uint64 {
	var word [8]byte
	h := fnvOffset64
	for _, d := range digests {
		binary.LittleEndian.PutUint64(word[:], d)
		h = fnv1a(h, word[:])
	}
	binary.LittleEndian.PutUint64(word[:], uint64(n))
	return fnv1a(h, word[:])
}

// csrStream is a CSR's checksum stream, read from its arrays: the offsets
// as offsetSize-byte words, then the targets as 4-byte words; view says
// whether an array's memory may be hashed as it is where its words are
// the stream's.
type csrStream struct {
	offsets    []uint64
	targets    []int32
	offsetSize int
	view       bool
}

// newCSRStream is g's stream: 4-byte offsets when g fits 32-bit offsets,
// else 8-byte ones.
func newCSRStream(g *frontier.CSR, view bool) csrStream {
	s := csrStream{offsets: g.Offsets, targets: g.Targets, offsetSize: 4, view: view}
	if g.CheckOffsets32() != nil {
		s.offsetSize = 8
	}
	return s
}

// offsetBytes is the length in bytes of the stream's offsets part.
func (s csrStream) offsetBytes() int { return s.offsetSize * len(s.offsets) }

// len is the stream's length in bytes.
func (s csrStream) len() int { return s.offsetBytes() + 4*len(s.targets) }

// hash is FNV-1a 64 of the stream's bytes [lo, hi), which start and end
// on word boundaries of both parts (lo a multiple of 8, hi one or the
// stream's end), encoding through buf where it must.
func (s csrStream) hash(lo, hi int, buf []byte) uint64 {
	h, ob := fnvOffset64, s.offsetBytes()
	if lo < ob {
		h = hashWords(h, s.offsets[lo/s.offsetSize:min(hi, ob)/s.offsetSize], s.offsetSize, s.view, buf)
	}
	if hi > ob {
		h = hashWords(h, s.targets[(max(lo, ob)-ob)/4:(hi-ob)/4], 4, s.view, buf)
	}
	return h
}

// hashWords folds words, each as a size-byte little-endian word, into the
// FNV-1a 64 state h: straight from their memory when view allows it and T
// is size bytes wide, else encoded into buf a buffer at a time.
func hashWords[T uint64 | int32](h uint64, words []T, size int, view bool, buf []byte) uint64 {
	var zero T
	if view && int(unsafe.Sizeof(zero)) == size {
		return fnv1a(h, asBytes(words))
	}
	per := len(buf) / size
	for len(words) > 0 {
		k := min(per, len(words))
		encodeWords(buf, words[:k], size)
		h = fnv1a(h, buf[:k*size])
		words = words[k:]
	}
	return h
}

// encodeWords writes words into buf as size-byte (4 or 8) little-endian
// words; 4-byte words keep the low 32 bits.
func encodeWords[T uint64 | int32](buf []byte, words []T, size int) {
	if size == 8 {
		for i, w := range words {
			binary.LittleEndian.PutUint64(buf[8*i:], uint64(w))
		}
		return
	}
	for i, w := range words {
		binary.LittleEndian.PutUint32(buf[4*i:], uint32(w))
	}
}

// asBytes is words' memory as bytes, in the machine's byte order.
func asBytes[T uint64 | int32](words []T) []byte {
	var zero T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(words))), len(words)*int(unsafe.Sizeof(zero)))
}

// fnv1a folds b into the FNV-1a 64 state h (fnvOffset64 to start).
func fnv1a(h uint64, b []byte) uint64 {
	for _, c := range b {
		h ^= uint64(c)
		h *= fnvPrime64
	}
	return h
}

// littleEndian reports whether the machine stores words little-endian,
// the stream's byte order.
func littleEndian() bool {
	return binary.NativeEndian.Uint16([]byte{1, 0}) == 1
}
