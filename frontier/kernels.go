package frontier

import (
	_ "embed"
	"fmt"
	"math"
)

//go:embed kernels/bfs.ptx
var bfsPTX []byte

// Entry points of the BFS kernel module (frontier/kernels/bfs.cu). Every
// scalar parameter is 64 bits wide.
const (
	// KernelInit resets one BFS: (offsets, level, q0, ctl, n, root, chunk,
	// qcap); the root's items go into q0 with label 0.
	KernelInit = "bfs_init"
	// KernelWaveScan is the level-synchronous top-down wave, one thread per
	// vertex: (offsets, targets, level, ctl, n, depth); it sets the changed
	// flag CtlScanChangedWord(depth).
	KernelWaveScan = "bfs_wave_scan"
	// KernelQueueLevel expands one level from the frontier queue: (offsets,
	// targets, level, q0, q1, ctl, chunk, qcap, lowDegree, depthBase,
	// phaseBegin, phaseEnd) runs level depthBase+phaseBegin and needs
	// phaseEnd = phaseBegin+1 (the executor's split-dispatch convention).
	KernelQueueLevel = "bfs_queue_level"
	// KernelMegakernel runs every level in one cooperative launch: (offsets,
	// targets, level, q0, q1, ctl, n, chunk, qcap, lowDegree, maxSteps,
	// ahead): steps between grid barriers, in each of which a block expands
	// up to ahead levels of its own kept frontier (1: level-synchronous).
	KernelMegakernel = "bfs_megakernel"
	// KernelBarrierOnly crosses levels megakernel barriers and does nothing
	// else: (ctl, levels), after KernelInit reset ctl.
	KernelBarrierOnly = "bfs_barrier_only"
	// KernelCopy copies 16-byte words for the copy-bandwidth ceiling: (src,
	// dst, n16).
	KernelCopy = "copy_u4"
)

// Layout of the kernels' control buffer, in uint32 words: each control word
// sits on its own 128-byte line.
const (
	// CtlLineWords is the number of uint32 words in one 128-byte line.
	CtlLineWords = 32
	// CtlWords is the size of the control buffer in uint32 words: three
	// count lines, one unused line, the result line and the megakernel's
	// three level-word lines.
	CtlWords = 8 * CtlLineWords
	// CtlResultLevels is the word holding the number of levels (the
	// largest level + 1).
	CtlResultLevels = 4 * CtlLineWords
	// CtlResultChanged is the megakernel's final changed flag: 0 when the
	// frontier emptied (converged), 1 when the level budget ran out first.
	CtlResultChanged = CtlResultLevels + 1
	// CtlResultOverflow is non-zero if a push ever exceeded the queue's
	// capacity (a sizing bug; the result is then invalid).
	CtlResultOverflow = CtlResultLevels + 2
	// CtlResultMisuse is 1 if a KernelQueueLevel launch was given more than
	// one phase, and 2 if KernelMegakernel was launched with more than 65,535
	// blocks (its level words count arrivals in 16 bits; it then does
	// nothing).
	CtlResultMisuse = CtlResultLevels + 3
	// CtlResultBarriers is the number of grid barriers (steps) the
	// megakernel crossed.
	CtlResultBarriers = CtlResultLevels + 4
	// CtlResultRelabels is the low word of the megakernel's 64-bit count of
	// claims that lowered a label (only running ahead lowers labels).
	CtlResultRelabels = CtlResultLevels + 6
)

// QueueItemBytes is the device size of one frontier-queue item: its edge
// range (two uint32) and, in a separate array after the queue's items, the
// label (level) of its vertex.
const QueueItemBytes = 12

// CtlMegaWord returns the uint32 index of the megakernel's 64-bit barrier
// word for ring slot step%3: step s pushes into CtlMegaWord(s+1) (bits
// 32..63: items pushed to the global queue) and its blocks arrive on it
// (bits 0..15: one per block; bits 16..31: one per block that kept work of
// its own for the next step).
func CtlMegaWord(step int) int { return (5 + step%3) * CtlLineWords }

// CtlScanChangedWord returns the control word holding the scan wave's
// changed flag for level depth (the wave clears the other parity's word).
func CtlScanChangedWord(depth int) int { return CtlResultLevels + 8 + depth%2 }

// CtlCountWord returns the control word holding the queue count of ring slot
// depth%3: level depth reads CtlCountWord(depth) and pushes into
// CtlCountWord(depth+1), whose value after the level is its changed flag.
func CtlCountWord(depth int) int { return (depth % 3) * CtlLineWords }

// MaxRunAhead is the largest run-ahead depth the megakernel takes: the most
// levels a block expands from its own kept frontier between two grid
// barriers (1 is level-synchronous).
const MaxRunAhead = 1 << 16

// DefaultRunAhead returns the megakernel's default run-ahead depth for a
// graph: 4 levels for graphs of low degree (LowDegree: grids, road
// networks), whose many small levels are bound by the grid barrier, and 1
// (level-synchronous) for the rest, whose few large levels gain nothing
// from running ahead and lose to the labels it lowers. Measured on an H100,
// megakernel per level over 16 roots:
//
//	graph          ahead 1   2         4         8         16        32
//	grid-2048      2.59 us   -         1.81 us   1.65 us   1.59 us   1.54 us
//	road-2048      2.80 us   2.19 us   2.08 us   3.18 us   -         -
//	road-1024      2.58 us   -         -         1.59 us   -         -
//	kron-20        160 us    -         -         188 us    -         -
//
// Deeper run-ahead lowers more labels: on grid-2048 about 65,000 per
// traversal at 8 (1.6% of the vertices) and 330,000 at 32; on road-2048,
// whose shortest paths wind, 2.7 million at 4 and 11 million at 8, which
// is why 4 and not 8. Blocks that progress unevenly lower the most labels:
// bounding a block's lead over the smallest pending label, or adapting
// each block's depth to the labels it lowered, both measured slower.
func DefaultRunAhead(lowDegree bool) int {
	if lowDegree {
		return 4
	}
	return 1
}

// DefaultChunk is the largest number of edges in one frontier-queue item.
const DefaultChunk = 256

// BFSKernelPTX returns a copy of the PTX of the BFS kernels, generated by
// nvcc 11.8 for compute_80 (it loads on Ampere and Hopper).
func BFSKernelPTX() []byte { return append([]byte(nil), bfsPTX...) }

// BFSKernelNames lists the entry points in BFSKernelPTX.
func BFSKernelNames() []string {
	return []string{KernelInit, KernelWaveScan, KernelQueueLevel, KernelMegakernel, KernelBarrierOnly, KernelCopy}
}

// QueueCapacity returns the number of items each of the two frontier queues
// needs so that no level can overflow: every vertex is discovered once and
// becomes ceil(degree/chunk) <= 1 + degree/chunk items, so a level never
// holds more than n + entries/chunk + 1 items.
func QueueCapacity(g *CSR, chunk int) (uint64, error) {
	if chunk < 1 {
		return 0, fmt.Errorf("chunk %d is below 1. Fix: use frontier.DefaultChunk", chunk)
	}
	c := uint64(g.NumVertices()) + uint64(g.NumEdgeEntries())/uint64(chunk) + 1
	if c > math.MaxUint32 {
		return 0, &TooLargeError{Source: g.Name, Field: "frontier queue items", Value: c, Limit: math.MaxUint32}
	}
	return c, nil
}

// DeviceBytes returns the device memory one resident BFS needs: the CSR,
// the levels, two frontier queues of QueueItemBytes-byte items and the
// control buffer.
func DeviceBytes(g *CSR, chunk int) (uint64, error) {
	qcap, err := QueueCapacity(g, chunk)
	if err != nil {
		return 0, err
	}
	return g.Bytes() + 4*uint64(g.NumVertices()) + 2*QueueItemBytes*qcap + 4*CtlWords, nil
}

// CheckDeviceBudget returns a *TooLargeError naming "device bytes" when the
// resident BFS state of g does not fit in budget bytes.
func CheckDeviceBudget(g *CSR, chunk int, budget uint64) error {
	need, err := DeviceBytes(g, chunk)
	if err != nil {
		return err
	}
	if need > budget {
		return &TooLargeError{Source: g.Name, Field: "device bytes", Value: need, Limit: budget}
	}
	return nil
}

// LowDegree reports whether the kernels should take their low-degree path
// for g (average degree at most 8: grids, road networks), which claims
// every target with a compare-and-swap instead of testing it first.
func LowDegree(g *CSR) bool {
	return g.NumVertices() > 0 && g.NumEdgeEntries() <= 8*g.NumVertices()
}
