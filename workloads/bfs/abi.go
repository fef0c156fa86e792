package bfs

import (
	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/internal/kernelabi"
)

//go:generate go run ./internal/genheader kernels/bfs_abi.h

// Ptr is the pointer type of a kernel parameter struct: executor.Buffer on
// the host, executor.DevPtr in the kernels' Go emulation.
type Ptr interface {
	executor.Buffer | executor.DevPtr
}

// InitParams are the parameters of KernelInit.
type InitParams[P Ptr] struct {
	Offsets P      `c:"const unsigned int *__restrict__ offsets"`
	Level   P      `c:"int *level"`
	Q0      P      `c:"uint2 *q0"`
	Ctl     P      `c:"unsigned int *ctl"`
	N       uint64 `c:"unsigned long long n"`
	Root    uint64 `c:"unsigned long long root"`
	Chunk   uint64 `c:"unsigned long long chunk"`
	QCap    uint64 `c:"unsigned long long qcap"`
}

// ScanParams are the parameters of KernelWaveScan.
type ScanParams[P Ptr] struct {
	Offsets P      `c:"const unsigned int *__restrict__ offsets"`
	Targets P      `c:"const int *__restrict__ targets"`
	Level   P      `c:"int *level"`
	Ctl     P      `c:"unsigned int *ctl"`
	N       uint64 `c:"unsigned long long n"`
	Depth   uint64 `c:"unsigned long long depth"`
}

// QueueLevelParams are the parameters of KernelQueueLevel. The last two
// are the executor's split-dispatch phase range, appended by
// DispatchWithGridSyncSplit (see kernelabi.SplitArgs).
type QueueLevelParams[P Ptr] struct {
	Offsets    P      `c:"const unsigned int *__restrict__ offsets"`
	Targets    P      `c:"const int *__restrict__ targets"`
	Level      P      `c:"int *level"`
	Q0         P      `c:"uint2 *q0"`
	Q1         P      `c:"uint2 *q1"`
	Ctl        P      `c:"unsigned int *ctl"`
	Chunk      uint64 `c:"unsigned long long chunk"`
	QCap       uint64 `c:"unsigned long long qcap"`
	LowDegree  uint64 `c:"unsigned long long low_degree"`
	DepthBase  uint64 `c:"unsigned long long depth_base"`
	PhaseBegin uint64 `c:"unsigned long long phase_begin"`
	PhaseEnd   uint64 `c:"unsigned long long phase_end"`
}

// MegakernelParams are the parameters of KernelMegakernel.
type MegakernelParams[P Ptr] struct {
	Offsets   P      `c:"const unsigned int *__restrict__ offsets"`
	Targets   P      `c:"const int *__restrict__ targets"`
	Level     P      `c:"int *level"`
	Q0        P      `c:"uint2 *q0"`
	Q1        P      `c:"uint2 *q1"`
	Ctl       P      `c:"unsigned int *ctl"`
	N         uint64 `c:"unsigned long long n"`
	Chunk     uint64 `c:"unsigned long long chunk"`
	QCap      uint64 `c:"unsigned long long qcap"`
	LowDegree uint64 `c:"unsigned long long low_degree"`
	MaxSteps  uint64 `c:"unsigned long long max_steps"`
	Ahead     uint64 `c:"unsigned long long ahead"`
}

// BarrierParams are the parameters of KernelBarrierOnly.
type BarrierParams[P Ptr] struct {
	Ctl    P      `c:"unsigned int *ctl"`
	Levels uint64 `c:"unsigned long long levels"`
}

// CopyParams are the parameters of KernelCopy.
type CopyParams[P Ptr] struct {
	Src P      `c:"const uint4 *__restrict__ src"`
	Dst P      `c:"uint4 *__restrict__ dst"`
	N16 uint64 `c:"unsigned long long n16"`
}

// Entry points of the BFS kernel module (kernels/bfs.cu).
const (
	// KernelInit resets one BFS: every level to -1 but the root's 0, the
	// root's items (label 0) into q0, and the control words.
	KernelInit = "bfs_init"
	// KernelWaveScan is the level-synchronous top-down wave, one thread per
	// vertex; it sets the changed flag CtlScanChangedWord(depth).
	KernelWaveScan = "bfs_wave_scan"
	// KernelQueueLevel expands one level from the frontier queue: level
	// depth_base+phase_begin, with phase_end = phase_begin+1.
	KernelQueueLevel = "bfs_queue_level"
	// KernelMegakernel runs every level in one cooperative launch, in steps
	// between grid barriers; in each a block expands up to `ahead` levels
	// of its own kept frontier (1: level-synchronous).
	KernelMegakernel = "bfs_megakernel"
	// KernelBarrierOnly crosses `levels` megakernel barriers and does
	// nothing else, after KernelInit reset ctl.
	KernelBarrierOnly = "bfs_barrier_only"
	// KernelCopy copies 16-byte words, for the copy-bandwidth ceiling.
	KernelCopy = "copy_u4"
)

// Layout of the kernels' control buffer, in uint32 words. Each control
// word sits on its own 128-byte line: lines 0 to 2 hold the queue counts of
// a three-level ring, line 3 is unused, line 4 holds the results and lines
// 5 to 7 the megakernel's three 64-bit barrier words.
const (
	// CtlLineWords is the number of uint32 words in one 128-byte line.
	CtlLineWords = 32
	// CtlWords is the size of the control buffer in uint32 words.
	CtlWords = 8 * CtlLineWords
	// ctlResultLine and ctlMegaLine are the lines of the results and of
	// the first barrier word.
	ctlResultLine = 4
	ctlMegaLine   = 5
	// CtlResult is the first word of the result line.
	CtlResult = ctlResultLine * CtlLineWords
)

// Result words, as offsets from CtlResult.
const (
	// ResultLevels is the number of levels (the largest level + 1).
	ResultLevels = 0
	// ResultChanged is the megakernel's final changed flag: 0 when the
	// frontier emptied, 1 when its step budget ran out first.
	ResultChanged = 1
	// ResultOverflow is non-zero if a push ever exceeded a queue's capacity.
	ResultOverflow = 2
	// ResultMisuse is MisusePhases or MisuseGrid when a kernel was launched
	// against its contract (it then does nothing).
	ResultMisuse = 3
	// ResultBarriers is the number of grid barriers (steps) the megakernel
	// crossed.
	ResultBarriers = 4
	// ResultRelabels is the low word of the megakernel's 64-bit count of
	// claims that lowered a label.
	ResultRelabels = 6
	// ResultScanChanged is the first of the scan wave's two changed flags
	// (by depth parity).
	ResultScanChanged = 8
	// ResultWords is the number of result words the host reads after a run:
	// levels through the high word of the relabels.
	ResultWords = ResultRelabels + 2
)

// Misuse codes in ResultMisuse.
const (
	// MisusePhases: a KernelQueueLevel launch was given several phases.
	MisusePhases = 1
	// MisuseGrid: KernelMegakernel was launched with more than
	// MaxMegakernelBlocks blocks.
	MisuseGrid = 2
)

// The kernels' fixed sizes.
const (
	// QueueItemBytes is the device size of one frontier-queue item: its edge
	// range (two uint32) and, in an array after the queue's items, the label
	// of its vertex.
	QueueItemBytes = 12
	// levelBlockQueueItems and megaBlockQueueItems are the items a block
	// stages in shared memory per level (per step in the megakernel).
	levelBlockQueueItems = 1024
	megaBlockQueueItems  = 1024
	// keepItems, keepEdges, keepItemEdges and keepLow are a megakernel
	// block's keep budget: at most keepItems vertices and keepEdges edges of
	// its own discoveries for its next level, a kept vertex having at most
	// keepItemEdges edges; a block that turned a candidate away keeps its
	// first keepLow vertices.
	keepItems     = 64
	keepEdges     = 256
	keepItemEdges = 64
	keepLow       = 16
	// keepShift splits a keep queue's reservation word: vertices above,
	// edges below.
	keepShift = 20
	// specTargets is how many targets a megakernel claim reads alongside
	// the claim.
	specTargets = 4
	// rotateMul is the multiplier of the step hash that rotates the
	// megakernel's warps over the global queue.
	rotateMul = 2654435761
	// arriveMask selects the arrivals in a barrier word; arriveKeptShift is
	// the bit of the blocks that kept work.
	arriveMask      = 0xffff
	arriveKeptShift = 16
	// MaxMegakernelBlocks is the largest megakernel grid: a barrier word
	// counts block arrivals in 16 bits.
	MaxMegakernelBlocks = arriveMask
)

// ABI is the kernel ABI of the BFS module, from which kernels/bfs_abi.h is
// generated (go generate) and against which the PTX is checked.
var ABI = kernelabi.Module{
	Name: "bfs",
	Doc:  "Kernel ABI of gpuplan's BFS kernels: constants shared with the Go host code and the\nparameter list of every entry point.",
	Kernels: []kernelabi.Kernel{
		{Name: KernelInit, Doc: "Resets one BFS.", Params: InitParams[executor.DevPtr]{}},
		{Name: KernelWaveScan, Doc: "The level-synchronous scan wave, one thread per vertex.", Params: ScanParams[executor.DevPtr]{}},
		{Name: KernelQueueLevel, Doc: "One level from the frontier queue; the last two parameters are the split-dispatch phase range.", Params: QueueLevelParams[executor.DevPtr]{}},
		{Name: KernelMegakernel, Doc: "Every level in one cooperative launch.", Params: MegakernelParams[executor.DevPtr]{}},
		{Name: KernelBarrierOnly, Doc: "Megakernel barriers alone.", Params: BarrierParams[executor.DevPtr]{}},
		{Name: KernelCopy, Doc: "A 16-byte-word copy, for the copy-bandwidth ceiling.", Params: CopyParams[executor.DevPtr]{}},
	},
	Consts: []kernelabi.Const{
		{Name: "CTL_LINE", Value: CtlLineWords, Doc: "uint32 words in one 128-byte control line."},
		{Name: "CTL_WORDS", Value: CtlWords, Doc: "uint32 words in the control buffer."},
		{Name: "CTL_RESULT", Value: CtlResult, Doc: "First word of the result line."},
		{Name: "CTL_MEGA_LINE", Value: ctlMegaLine, Doc: "Line of the first megakernel barrier word."},
		{Name: "RESULT_LEVELS", Value: ResultLevels, Doc: "Result words, from CTL_RESULT: levels, changed flag, overflow, misuse,\nbarriers, relabels (64 bits) and the scan wave's changed flags."},
		{Name: "RESULT_CHANGED", Value: ResultChanged},
		{Name: "RESULT_OVERFLOW", Value: ResultOverflow},
		{Name: "RESULT_MISUSE", Value: ResultMisuse},
		{Name: "RESULT_BARRIERS", Value: ResultBarriers},
		{Name: "RESULT_RELABELS", Value: ResultRelabels},
		{Name: "RESULT_SCAN_CHANGED", Value: ResultScanChanged},
		{Name: "MISUSE_PHASES", Value: MisusePhases, Doc: "Misuse codes."},
		{Name: "MISUSE_GRID", Value: MisuseGrid},
		{Name: "QUEUE_ITEM_BYTES", Value: QueueItemBytes, Doc: "Device bytes of one frontier-queue item: its edge range and its label."},
		{Name: "LEVEL_BLOCK_QCAP", Value: levelBlockQueueItems, Doc: "Items a block stages in shared memory per level (per megakernel step)."},
		{Name: "MEGA_BLOCK_QCAP", Value: megaBlockQueueItems},
		{Name: "KEEP_ITEMS", Value: keepItems, Tunable: true, Doc: "A megakernel block's keep budget: vertices, edges, edges of one kept\nvertex, and the vertices it keeps after turning a candidate away."},
		{Name: "KEEP_EDGES", Value: keepEdges, Tunable: true},
		{Name: "KEEP_ITEM_EDGES", Value: keepItemEdges},
		{Name: "KEEP_LOW", Value: keepLow, Tunable: true},
		{Name: "KEEP_SHIFT", Value: keepShift, Doc: "A keep queue's reservation word: vertices above this bit, edges below."},
		{Name: "SPEC", Value: specTargets, Doc: "Targets a megakernel claim reads alongside the claim."},
		{Name: "ROTATE_MUL", Value: rotateMul, Doc: "Multiplier of the step hash that rotates the megakernel's warps."},
		{Name: "ARRIVE_MASK", Value: arriveMask, Doc: "A barrier word's arrival field, and the shift of its kept-work field."},
		{Name: "ARRIVE_KEPT_SHIFT", Value: arriveKeptShift},
	},
}
