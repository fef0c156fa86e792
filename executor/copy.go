package executor

import (
	"runtime"
	"sync"
)

// Host copies between staging and the caller's memory. A large transfer
// is bound by the host's copy, not by the DMA engine (a single core copies
// a few GB/s into freshly faulted pages, PCIe moves tens), so the copy of
// a large chunk is split across cores.
const (
	// parallelCopyMin is the smallest copy that is split: below it one
	// goroutine's copy costs less than waking others.
	parallelCopyMin = 2 << 20
	// parallelCopyPiece is the least one goroutine of a split copy moves.
	parallelCopyPiece = 1 << 20
)

// copyParallel copies src into dst, which has the same length: as one
// copy when it is small, else in equal pieces on up to GOMAXPROCS
// goroutines (the caller's among them), returning when every piece is in.
func copyParallel(dst, src []byte) {
	n := min(len(dst), len(src))
	workers := min(runtime.GOMAXPROCS(0), n/parallelCopyPiece)
	if n < parallelCopyMin || workers < 2 {
		copy(dst, src)
		return
	}
	per := (n + workers - 1) / workers
	var wg sync.WaitGroup
	for lo := per; lo < n; lo += per {
		hi := min(lo+per, n)
		wg.Add(1)
		go func() {
			defer wg.Done()
			copy(dst[lo:hi], src[lo:hi])
		}()
	}
	copy(dst[:per], src[:per])
	wg.Wait()
}
