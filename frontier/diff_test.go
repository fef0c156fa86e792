package frontier

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// serialDifference is the reference of FirstDifference: one loop over the
// common prefix, then the shorter length where the lengths differ.
func serialDifference(a, b []int32) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return n
	}
	return -1
}

// largeLevels returns n levels of a BFS-like shape: runs of equal levels,
// some unreached.
func largeLevels(n int) []int32 {
	lv := make([]int32, n)
	for i := range lv {
		lv[i] = int32(i/9973%23) - 1
	}
	return lv
}

// A difference placed anywhere in a large array, at its start, in its
// middle, at a piece boundary and at its end, is found at its index by
// FirstDifference and by every split of it; of two differences the first
// wins, and a prefix differs at the shorter length.
func TestFirstDifferenceLarge(t *testing.T) {
	const n = 3*diffGrain + 5 // three pieces and a remainder
	cases := []struct {
		name string
		edit func(lv []int32) []int32
		want int
	}{
		{"equal", func(lv []int32) []int32 { return lv }, -1},
		{"start", func(lv []int32) []int32 { lv[0]++; return lv }, 0},
		{"middle", func(lv []int32) []int32 { lv[n/2] = -7; return lv }, n / 2},
		{"a piece boundary", func(lv []int32) []int32 { lv[diffGrain+2]++; return lv }, diffGrain + 2},
		{"the end of a block", func(lv []int32) []int32 { lv[2*diffBlock-1]++; return lv }, 2*diffBlock - 1},
		{"end", func(lv []int32) []int32 { lv[n-1]++; return lv }, n - 1},
		{"two in two pieces: the first wins", func(lv []int32) []int32 { lv[n-3], lv[diffGrain/2] = 99, 99; return lv }, diffGrain / 2},
		{"two in one block: the first wins", func(lv []int32) []int32 { lv[n/2+9], lv[n/2+1] = 99, 99; return lv }, n/2 + 1},
		{"one level short", func(lv []int32) []int32 { return lv[:n-1] }, n - 1},
		{"one level more", func(lv []int32) []int32 { return append(lv, 0) }, n},
		{"short and different: the difference wins", func(lv []int32) []int32 { lv[10]++; return lv[:n-1] }, 10},
		{"empty", func([]int32) []int32 { return nil }, 0},
	}
	ref := largeLevels(n)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := c.edit(slices.Clone(ref))
			require.Equal(t, c.want, serialDifference(ref, got), "the case places its difference")
			assert.Equal(t, c.want, FirstDifference(got, ref))
			assert.Equal(t, c.want, FirstDifference(ref, got), "either order")
			for _, w := range checkWorkerCounts() {
				assert.Equal(t, c.want, firstDifference(got, ref, w, diffBlock), "%d workers", w)
			}
		})
	}
}

// FirstDifference agrees with slices.Equal and with the serial loop over
// random level arrays, equal and with up to three edits, on any number of
// workers and pieces.
func TestFirstDifferenceProperties(t *testing.T) {
	for seed := uint64(1); seed <= 300; seed++ {
		r := rand.New(rand.NewPCG(seed, 13))
		a := make([]int32, r.IntN(3*diffBlock+2))
		for i := range a {
			a[i] = int32(r.IntN(4)) - 1
		}
		b := slices.Clone(a)
		if seed%3 != 0 {
			b = editLevels(r, b)
		}
		want := serialDifference(a, b)
		require.Equal(t, slices.Equal(a, b), want < 0, "seed %d", seed)
		for _, w := range checkWorkerCounts() {
			for _, grain := range []int{1, 3, 50, diffBlock} {
				require.Equal(t, want, firstDifference(a, b, w, grain), "seed %d, %d workers, grain %d", seed, w, grain)
			}
		}
		require.Equal(t, want, FirstDifference(a, b), "seed %d", seed)
		require.Equal(t, slices.Equal(a, b), FirstDifference(b, a) < 0, "seed %d", seed)
	}
}

// editLevels makes one to three edits to lv: a level set to a random one
// (perhaps the same), or the array cut or grown by one.
func editLevels(r *rand.Rand, lv []int32) []int32 {
	for range 1 + r.IntN(3) {
		switch k := r.IntN(10); {
		case k < 8 && len(lv) > 0:
			lv[r.IntN(len(lv))] = int32(r.IntN(4)) - 1
		case k < 9 && len(lv) > 0:
			lv = lv[:len(lv)-1]
		default:
			lv = append(lv, int32(r.IntN(4))-1)
		}
	}
	return lv
}

// BenchmarkFirstDifference compares two equal arrays of 2^26 levels (256
// MiB each): on one goroutine, through FirstDifference on GOMAXPROCS, and
// with slices.Equal, the serial compare the BFS benchmark ran before.
func BenchmarkFirstDifference(b *testing.B) {
	const n = 1 << 26
	ref := largeLevels(n)
	lv := slices.Clone(ref)
	for _, c := range []struct {
		name string
		same func() bool
	}{
		{"workers=1", func() bool { return firstDifference(lv, ref, 1, diffGrain) < 0 }},
		{"FirstDifference", func() bool { return FirstDifference(lv, ref) < 0 }},
		{"slices.Equal", func() bool { return slices.Equal(lv, ref) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(8 * n)
			for b.Loop() {
				if !c.same() {
					b.Fatal("equal arrays compared unequal")
				}
			}
		})
	}
	runtime.KeepAlive(lv)
}
