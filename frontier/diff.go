package frontier

import (
	"bytes"
	"runtime"
)

// diffGrain is the fewest levels worth a goroutine of their own in
// FirstDifference: the compare is bound by memory bandwidth, and below
// about a million levels a goroutine costs more to start than it saves.
const diffGrain = 1 << 20

// diffBlock is the levels firstDifferenceIn compares at a time through
// the runtime's vectorized memory compare, before it looks level by level
// for the index in a block that differs.
const diffBlock = 1 << 12

// FirstDifference returns the lowest index at which the level arrays a
// and b differ, or -1 when they are equal (as slices.Equal): where one is
// a prefix of the other, the shorter one's length. The arrays are
// compared in contiguous pieces (the split of CSR.Check) on up to
// GOMAXPROCS goroutines, each piece at least 2^20 levels long, so that
// arrays shorter than 2^21 levels are compared on one goroutine. The
// index does not depend on the number of CPUs.
func FirstDifference(a, b []int32) int {
	return firstDifference(a, b, runtime.GOMAXPROCS(0), diffGrain)
}

// firstDifference is FirstDifference on up to workers goroutines, each
// comparing at least grain levels (the fewer workers where the arrays
// are short).
func firstDifference(a, b []int32, workers, grain int) int {
	n := min(len(a), len(b))
	i := firstInPieces(n, capWorkers(n, workers, grain), func(lo, hi int) int {
		return firstDifferenceIn(a, b, lo, hi)
	})
	if i < 0 && len(a) != len(b) {
		return n
	}
	return i
}

// firstDifferenceIn returns the first i in [lo, hi) with a[i] != b[i], or
// -1: diffBlock levels at a time by their bytes, then the block that
// differs level by level.
func firstDifferenceIn(a, b []int32, lo, hi int) int {
	for blo := lo; blo < hi; blo += diffBlock {
		bhi := min(blo+diffBlock, hi)
		if bytes.Equal(asBytes(a[blo:bhi]), asBytes(b[blo:bhi])) {
			continue
		}
		for i := blo; i < bhi; i++ {
			if a[i] != b[i] {
				return i
			}
		}
	}
	return -1
}
