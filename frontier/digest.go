package frontier

import (
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"unsafe"
)

// DigestPieceBytes is the size in bytes of the pieces CSR.Digest cuts its
// byte stream into and hashes on their own (the last piece may be
// shorter). It is part of the digest's definition: another size gives
// other digests.
const DigestPieceBytes = 64 << 20

// The FNV-1a 64-bit offset basis and prime (hash/fnv's New64a).
const (
	fnvOffset64 uint64 = 14695981039346656037
	fnvPrime64  uint64 = 1099511628211
)

// digestBufBytes is the size of the buffer each goroutine of Digest
// encodes words into when it cannot hash an array's memory as it is.
const digestBufBytes = 16 << 10

// Digest hashes g's arrays as a device holds them, with offsets of
// offsetBytes (4 or 8) bytes: two graphs have equal digests at one width
// exactly when their arrays are equal (up to hash collisions), whatever
// the number of CPUs that computed them.
//
// It hashes one byte stream: the offsets as offsetBytes-byte little-endian
// words, then the targets as 4-byte little-endian words. The stream is cut
// into pieces of DigestPieceBytes from its start (the last one shorter; a
// piece may hold the end of the offsets and the start of the targets), and
// each piece is hashed with FNV-1a 64 on its own, the pieces spread over
// up to GOMAXPROCS goroutines. The digest is FNV-1a 64 over the pieces'
// digests, in order, each as an 8-byte little-endian word, then the
// stream's length in bytes as one more such word (an empty CSR has no
// pieces: only its length, 0, is hashed).
//
// The stream is never built: on a little-endian machine the pieces are
// hashed straight from the arrays' memory where its words are the
// stream's, and elsewhere encoded through a small buffer per goroutine.
//
// An offsetBytes other than 4 or 8 is an error, and so is 4 when an offset
// does not fit 32 bits (it would be hashed cut short).
func (g *CSR) Digest(offsetBytes int) (uint64, error) {
	return g.digest(offsetBytes, digestParams{
		pieceBytes: DigestPieceBytes,
		workers:    runtime.GOMAXPROCS(0),
		view:       littleEndian(),
	})
}

// digestParams is how digest runs: the piece size (a positive multiple of
// 8; Digest's is DigestPieceBytes), the goroutines it may use, and whether
// it may hash the arrays' memory as it is (only on a little-endian
// machine).
type digestParams struct {
	pieceBytes, workers int
	view                bool
}

// digest is Digest with the piece size, goroutines and memory view of p.
// A piece size that is not a positive multiple of 8 is rounded down to one
// (at least 8), so that no piece boundary splits a word.
func (g *CSR) digest(offsetBytes int, p digestParams) (uint64, error) {
	switch {
	case offsetBytes != 4 && offsetBytes != 8:
		return 0, fmt.Errorf("graph %q: a digest of %d-byte offsets. Fix: pass 4 (32-bit offsets) or 8 (64-bit offsets)", g.Name, offsetBytes)
	case offsetBytes == 4 && len(g.Offsets) > 0 && g.Offsets[len(g.Offsets)-1] > math.MaxUint32:
		return 0, g.offsets32DigestError()
	}
	s := csrStream{offsets: g.Offsets, targets: g.Targets, offsetBytes: offsetBytes, view: p.view}
	piece := max(8, p.pieceBytes-p.pieceBytes%8)
	n := s.len()
	pieces := (n + piece - 1) / piece
	workers := max(1, min(pieces, p.workers))
	digests := make([]uint64, pieces)
	bufs := make([][]byte, workers)
	wide := make([]bool, workers)
	dynamicRun(pieces, workers, func(w, i int) {
		if bufs[w] == nil {
			bufs[w] = make([]byte, digestBufBytes)
		}
		var cut bool
		digests[i], cut = s.hash(i*piece, min((i+1)*piece, n), bufs[w])
		wide[w] = wide[w] || cut
	})
	for _, cut := range wide {
		if cut {
			return 0, g.offsets32DigestError()
		}
	}
	return combineDigests(digests, n), nil
}

// offsets32DigestError is Digest's error for 4-byte offsets when one of
// g's offsets does not fit 32 bits: it names the first such offset.
func (g *CSR) offsets32DigestError() error {
	i := 0
	for i < len(g.Offsets)-1 && g.Offsets[i] <= math.MaxUint32 {
		i++
	}
	return fmt.Errorf("graph %q: offset %d is %d, which does not fit the 4-byte offsets of its digest (at most %d). Fix: digest it with 8-byte offsets, Digest(8), as its 64-bit layout holds them",
		g.Name, i, g.Offsets[i], uint64(math.MaxUint32))
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

// csrStream is a CSR's digest stream, read from its arrays: the offsets as
// offsetBytes-byte words, then the targets as 4-byte words; view says
// whether an array's memory may be hashed as it is where its words are the
// stream's.
type csrStream struct {
	offsets     []uint64
	targets     []int32
	offsetBytes int
	view        bool
}

// offsetsLen is the length in bytes of the stream's offsets part.
func (s csrStream) offsetsLen() int { return s.offsetBytes * len(s.offsets) }

// len is the stream's length in bytes.
func (s csrStream) len() int { return s.offsetsLen() + 4*len(s.targets) }

// hash is FNV-1a 64 of the stream's bytes [lo, hi), which start and end on
// word boundaries of both parts (lo a multiple of 8, hi one or the
// stream's end), encoding through buf where it must; cut reports a 4-byte
// offset among them that lost high bits.
func (s csrStream) hash(lo, hi int, buf []byte) (h uint64, cut bool) {
	h, ob := fnvOffset64, s.offsetsLen()
	if lo < ob {
		offsets := s.offsets[lo/s.offsetBytes : min(hi, ob)/s.offsetBytes]
		if s.offsetBytes == 4 {
			h, cut = hashNarrowed(h, offsets, buf)
		} else {
			h = hashWords(h, offsets, s.view, buf)
		}
	}
	if hi > ob {
		h = hashWords(h, s.targets[(max(lo, ob)-ob)/4:(hi-ob)/4], s.view, buf)
	}
	return h, cut
}

// hashNarrowed folds offsets, each as a 4-byte little-endian word, into the
// FNV-1a 64 state h, encoded into buf a buffer at a time; cut reports an
// offset that does not fit 32 bits.
func hashNarrowed(h uint64, offsets []uint64, buf []byte) (uint64, bool) {
	per := len(buf) / 4
	var acc uint64
	for len(offsets) > 0 {
		k := min(per, len(offsets))
		for i, o := range offsets[:k] {
			acc |= o
			binary.LittleEndian.PutUint32(buf[4*i:], uint32(o))
		}
		h = fnv1a(h, buf[:4*k])
		offsets = offsets[k:]
	}
	return h, acc > math.MaxUint32
}

// hashWords folds words, each as a little-endian word of its own width,
// into the FNV-1a 64 state h: straight from their memory when view allows
// it, else encoded into buf a buffer at a time.
func hashWords[T uint64 | int32](h uint64, words []T, view bool, buf []byte) uint64 {
	if view {
		return fnv1a(h, asBytes(words))
	}
	var zero T
	size := int(unsafe.Sizeof(zero))
	per := len(buf) / size
	for len(words) > 0 {
		k := min(per, len(words))
		encodeWords(buf, words[:k])
		h = fnv1a(h, buf[:k*size])
		words = words[k:]
	}
	return h
}

// encodeWords writes words into buf as little-endian words of their own
// width.
func encodeWords[T uint64 | int32](buf []byte, words []T) {
	var zero T
	if unsafe.Sizeof(zero) == 8 {
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
