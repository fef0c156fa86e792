package executor

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCopyParallel(t *testing.T) {
	for _, tc := range []struct {
		name string
		n    int
	}{
		{"empty", 0},
		{"one byte", 1},
		{"below the split", parallelCopyMin - 1},
		{"at the split", parallelCopyMin},
		{"uneven pieces", 5*parallelCopyPiece + 12345},
		{"many pieces", 37*parallelCopyPiece + 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(tc.n), 7))
			src := make([]byte, tc.n)
			for i := range src {
				src[i] = byte(rng.Uint32())
			}
			// A guard byte past the end must survive.
			dst := make([]byte, tc.n+1)
			dst[tc.n] = 0xA5
			copyParallel(dst[:tc.n], src)
			require.Equal(t, src, dst[:tc.n])
			require.Equal(t, byte(0xA5), dst[tc.n])
		})
	}
}

// TestCopyParallelRandomRanges copies random sub-ranges of one buffer into
// another and checks every byte against the sequential copy.
func TestCopyParallelRandomRanges(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	src := make([]byte, 9*parallelCopyPiece)
	for i := range src {
		src[i] = byte(rng.Uint32())
	}
	for range 40 {
		lo := rng.IntN(len(src))
		hi := lo + rng.IntN(len(src)-lo+1)
		got := make([]byte, len(src))
		want := make([]byte, len(src))
		copyParallel(got[lo:hi], src[lo:hi])
		copy(want[lo:hi], src[lo:hi])
		require.Equal(t, want, got, "range [%d, %d)", lo, hi)
	}
}

// BenchmarkCopyParallel compares one goroutine's copy of a staging chunk
// into fresh memory (its pages faulted in by the copy, as a large
// readback's are) with the split copy.
func BenchmarkCopyParallel(b *testing.B) {
	src := make([]byte, DefaultStagingChunkBytes)
	for i := range src {
		src[i] = byte(i * 31)
	}
	for _, bc := range []struct {
		name string
		copy func(dst, src []byte)
	}{
		{"serial", func(dst, src []byte) { copy(dst, src) }},
		{"parallel", copyParallel},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				bc.copy(make([]byte, len(src)), src)
			}
		})
	}
}
