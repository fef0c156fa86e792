package frontier

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// parallelGrain is the smallest number of items worth a goroutine of its
// own in the parallel graph steps: below it, the work runs on fewer workers.
const parallelGrain = 1 << 14

// workersFor returns how many workers a parallel step over n items uses:
// GOMAXPROCS, but never so many that a worker gets less than grain items,
// and at least one.
func workersFor(n, grain int) int {
	return capWorkers(n, runtime.GOMAXPROCS(0), grain)
}

// capWorkers returns how many of workers a parallel step over n items
// uses: never so many that a worker gets less than grain items, and at
// least one.
func capWorkers(n, workers, grain int) int {
	return max(1, min(workers, n/max(1, grain)))
}

// splitRun calls fn(w, lo, hi) for workers contiguous ranges of [0, n), the
// w-th range on its own goroutine, and waits for all of them. The ranges
// depend only on n and workers, so a step that keeps per-worker state gets
// the same ranges on every run.
func splitRun(n, workers int, fn func(w, lo, hi int)) {
	workers = max(1, min(workers, n))
	if workers == 1 {
		fn(0, 0, n)
		return
	}
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		lo, hi := splitBounds(n, workers, w)
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(w, lo, hi)
		}()
	}
	wg.Wait()
}

// splitBounds returns the w-th of workers contiguous ranges of [0, n): the
// first n%workers ranges have one item more than the others.
func splitBounds(n, workers, w int) (lo, hi int) {
	q, r := n/workers, n%workers
	lo = w*q + min(w, r)
	hi = lo + q
	if w < r {
		hi++
	}
	return lo, hi
}

// firstInPieces splits [0, n) into workers contiguous pieces (splitRun),
// calls first(lo, hi) for each on its own goroutine, and returns the
// lowest index any of them returned, or -1 when all returned -1. first
// returns the lowest index in [lo, hi) that it looks for, or -1.
func firstInPieces(n, workers int, first func(lo, hi int) int) int {
	found := make([]int, max(1, min(workers, n)))
	splitRun(n, len(found), func(w, lo, hi int) {
		found[w] = first(lo, hi)
	})
	for _, i := range found {
		if i >= 0 {
			return i
		}
	}
	return -1
}

// EachPiece calls fn(p) for every p in [0, pieces) on up to GOMAXPROCS
// goroutines, each taking the next piece from a shared counter (so that a
// few slow pieces do not hold up the others), and waits for all of them.
// It is frontier's dynamic split of work over the CPUs, for packages that
// check or compare a graph piece by piece.
func EachPiece(pieces int, fn func(p int)) {
	dynamicRun(pieces, runtime.GOMAXPROCS(0), func(_, p int) { fn(p) })
}

// dynamicRun calls fn(w, i) for every i in [0, n) on workers goroutines
// that take the next i from a shared counter, so a few expensive items do
// not hold up the others; w is the calling worker's index (for scratch
// buffers). It waits for all of them.
func dynamicRun(n, workers int, fn func(w, i int)) {
	workers = max(1, min(workers, n))
	if workers == 1 {
		for i := 0; i < n; i++ {
			fn(0, i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				fn(w, i)
			}
		}()
	}
	wg.Wait()
}
