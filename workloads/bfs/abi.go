package bfs

import (
	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/internal/kernelabi"
	"github.com/gpuplan/gpuplan/planners"
)

//go:generate go run ./internal/genheader kernels/bfs_abi.h

// Ptr is the pointer type of a kernel parameter struct (kernelabi.Ptr):
// executor.Buffer on the host, executor.DevPtr in the emulation.
type Ptr = kernelabi.Ptr

// InitParams are the parameters of KernelInit.
type InitParams[P Ptr] struct {
	Offsets P      `c:"const unsigned int *__restrict__ offsets"`
	Level   P      `c:"int *level"`
	Q0      P      `c:"uint2 *q0"`
	Vis     P      `c:"unsigned int *vis"`
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

// TraversalParams are the parameters KernelDoLevel and the megakernels
// begin with: the graph, the levels, the frontier queues, the visited
// bitmaps, the control words and the decision log, then the vertex count,
// the item size, the queues' capacity and whether the graph's average
// degree is low.
type TraversalParams[P Ptr] struct {
	Offsets   P      `c:"const unsigned int *__restrict__ offsets"`
	Targets   P      `c:"const int *__restrict__ targets"`
	Level     P      `c:"int *level"`
	Q0        P      `c:"uint2 *q0"`
	Q1        P      `c:"uint2 *q1"`
	Vis0      P      `c:"unsigned int *vis0"`
	Vis1      P      `c:"unsigned int *vis1"`
	Ctl       P      `c:"unsigned int *ctl"`
	Log       P      `c:"uint4 *dlog"`
	N         uint64 `c:"unsigned long long n"`
	Chunk     uint64 `c:"unsigned long long chunk"`
	QCap      uint64 `c:"unsigned long long qcap"`
	LowDegree uint64 `c:"unsigned long long low_degree"`
}

// DoLevelParams are the parameters of KernelDoLevel. Direction is
// DirTopDown or DirBottomUp when the host decided the level's direction,
// 0 when the kernel decides it by the device rule. The last two are the
// split-dispatch phase range, as for KernelQueueLevel.
type DoLevelParams[P Ptr] struct {
	TraversalParams[P] `c:"BFS_TRAVERSAL_PARAMS"`
	LogCap             uint64 `c:"unsigned long long log_cap"`
	Direction          uint64 `c:"unsigned long long direction"`
	DepthBase          uint64 `c:"unsigned long long depth_base"`
	PhaseBegin         uint64 `c:"unsigned long long phase_begin"`
	PhaseEnd           uint64 `c:"unsigned long long phase_end"`
}

// InitW64Params are the parameters of KernelInitW64: InitParams's, over
// 64-bit offsets and 16-byte queue items.
type InitW64Params[P Ptr] struct {
	Offsets P      `c:"const unsigned long long *__restrict__ offsets"`
	Level   P      `c:"int *level"`
	Q0      P      `c:"ulonglong2 *q0"`
	Vis     P      `c:"unsigned int *vis"`
	Ctl     P      `c:"unsigned int *ctl"`
	N       uint64 `c:"unsigned long long n"`
	Root    uint64 `c:"unsigned long long root"`
	Chunk   uint64 `c:"unsigned long long chunk"`
	QCap    uint64 `c:"unsigned long long qcap"`
}

// QueueLevelW64Params are the parameters of KernelQueueLevelW64:
// QueueLevelParams's, over 64-bit offsets and 16-byte queue items.
type QueueLevelW64Params[P Ptr] struct {
	Offsets    P      `c:"const unsigned long long *__restrict__ offsets"`
	Targets    P      `c:"const int *__restrict__ targets"`
	Level      P      `c:"int *level"`
	Q0         P      `c:"ulonglong2 *q0"`
	Q1         P      `c:"ulonglong2 *q1"`
	Ctl        P      `c:"unsigned int *ctl"`
	Chunk      uint64 `c:"unsigned long long chunk"`
	QCap       uint64 `c:"unsigned long long qcap"`
	LowDegree  uint64 `c:"unsigned long long low_degree"`
	DepthBase  uint64 `c:"unsigned long long depth_base"`
	PhaseBegin uint64 `c:"unsigned long long phase_begin"`
	PhaseEnd   uint64 `c:"unsigned long long phase_end"`
}

// DoLevelW64Params are the parameters of KernelDoLevelW64: DoLevelParams's
// flattened, over 64-bit offsets, 16-byte queue items and 32-byte log
// entries.
type DoLevelW64Params[P Ptr] struct {
	Offsets    P      `c:"const unsigned long long *__restrict__ offsets"`
	Targets    P      `c:"const int *__restrict__ targets"`
	Level      P      `c:"int *level"`
	Q0         P      `c:"ulonglong2 *q0"`
	Q1         P      `c:"ulonglong2 *q1"`
	Vis0       P      `c:"unsigned int *vis0"`
	Vis1       P      `c:"unsigned int *vis1"`
	Ctl        P      `c:"unsigned int *ctl"`
	Log        P      `c:"ulonglong4 *dlog"`
	N          uint64 `c:"unsigned long long n"`
	Chunk      uint64 `c:"unsigned long long chunk"`
	QCap       uint64 `c:"unsigned long long qcap"`
	LowDegree  uint64 `c:"unsigned long long low_degree"`
	LogCap     uint64 `c:"unsigned long long log_cap"`
	Direction  uint64 `c:"unsigned long long direction"`
	DepthBase  uint64 `c:"unsigned long long depth_base"`
	PhaseBegin uint64 `c:"unsigned long long phase_begin"`
	PhaseEnd   uint64 `c:"unsigned long long phase_end"`
}

// MegakernelParams are the parameters of KernelMegakernel. Ahead is the
// deepest run-ahead; Adapt (1) lets the depth adapt from each step's
// lowered labels, 0 keeps it at Ahead. Direction is MegaTopDown (every
// level top-down), MegaAuto (the device rule decides every level) or
// MegaAsync (every level top-down, without grid barriers, within a window
// of Ahead - 1 labels). Keep
// is a block's keep budget in edges: MaxMegakernelKeep when at least that,
// else DefaultMegakernelKeep.
type MegakernelParams[P Ptr] struct {
	TraversalParams[P] `c:"BFS_TRAVERSAL_PARAMS"`
	MaxSteps           uint64 `c:"unsigned long long max_steps"`
	Ahead              uint64 `c:"unsigned long long ahead"`
	Adapt              uint64 `c:"unsigned long long adapt"`
	Direction          uint64 `c:"unsigned long long direction"`
	LogCap             uint64 `c:"unsigned long long log_cap"`
	Keep               uint64 `c:"unsigned long long keep"`
}

// MSInitParams are the parameters of KernelMSInit: a multi-source pass of
// NRoots roots (Roots holds them), Width bits per vertex word; Phase 0
// clears (the words and the first PlaneWords 32-bit words of the level
// planes), phase 1 places the roots.
type MSInitParams[P Ptr] struct {
	Offsets    P      `c:"const unsigned int *__restrict__ offsets"`
	Roots      P      `c:"const unsigned int *__restrict__ roots"`
	Seen       P      `c:"void *seen"`
	Cur        P      `c:"void *cur"`
	Next       P      `c:"void *next"`
	List       P      `c:"unsigned int *list"`
	Hubs       P      `c:"unsigned int *hubs"`
	Planes     P      `c:"void *planes"`
	Ctl        P      `c:"unsigned int *ctl"`
	N          uint64 `c:"unsigned long long n"`
	NRoots     uint64 `c:"unsigned long long nroots"`
	Width      uint64 `c:"unsigned long long width"`
	PlaneWords uint64 `c:"unsigned long long plane_words"`
	Phase      uint64 `c:"unsigned long long phase"`
}

// MSLevelParams are the parameters of KernelMSLevel: level Depth of a
// multi-source pass, pushed from ListIn's vertices (Pull 0) or pulled by
// every vertex some root has not seen (Pull 1). GraphHubs lists every hub
// of the graph (its vertex and first chunk, as a level's hub list) and
// GraphHubc counts them (hubs above bit 32, their chunks below): a pulling
// level spreads the hubs' edges over the grid in chunks.
type MSLevelParams[P Ptr] struct {
	Offsets   P      `c:"const unsigned int *__restrict__ offsets"`
	Targets   P      `c:"const int *__restrict__ targets"`
	Seen      P      `c:"void *seen"`
	Cur       P      `c:"void *cur"`
	Next      P      `c:"void *next"`
	ListIn    P      `c:"unsigned int *list_in"`
	ListOut   P      `c:"unsigned int *list_out"`
	Hubs      P      `c:"const unsigned int *__restrict__ hubs"`
	GraphHubs P      `c:"const unsigned int *__restrict__ graph_hubs"`
	Planes    P      `c:"void *planes"`
	Ctl       P      `c:"unsigned int *ctl"`
	N         uint64 `c:"unsigned long long n"`
	NRoots    uint64 `c:"unsigned long long nroots"`
	Width     uint64 `c:"unsigned long long width"`
	Depth     uint64 `c:"unsigned long long depth"`
	Pull      uint64 `c:"unsigned long long pull"`
	GraphHubc uint64 `c:"unsigned long long graph_hubc"`
}

// MSFinishParams are the parameters of KernelMSFinish, which ends level
// Depth of a multi-source pass; after a pulling level it ends the graph's
// hubs (GraphHubs and GraphHubc, as in MSLevelParams).
type MSFinishParams[P Ptr] struct {
	Offsets   P      `c:"const unsigned int *__restrict__ offsets"`
	Seen      P      `c:"void *seen"`
	Cur       P      `c:"void *cur"`
	Next      P      `c:"void *next"`
	ListIn    P      `c:"unsigned int *list_in"`
	ListOut   P      `c:"unsigned int *list_out"`
	Hubs      P      `c:"unsigned int *hubs"`
	GraphHubs P      `c:"const unsigned int *__restrict__ graph_hubs"`
	Planes    P      `c:"void *planes"`
	Ctl       P      `c:"unsigned int *ctl"`
	N         uint64 `c:"unsigned long long n"`
	Width     uint64 `c:"unsigned long long width"`
	Depth     uint64 `c:"unsigned long long depth"`
	Pull      uint64 `c:"unsigned long long pull"`
	GraphHubc uint64 `c:"unsigned long long graph_hubc"`
}

// BarrierParams are the parameters of KernelBarrierOnly.
type BarrierParams[P Ptr] struct {
	Ctl    P      `c:"unsigned int *ctl"`
	Levels uint64 `c:"unsigned long long levels"`
}

// CopyParams are the parameters of KernelCopy (kernelabi.CopyParams).
type CopyParams[P Ptr] = kernelabi.CopyParams[P]

// GatherParams are the parameters of KernelGather: Out[i] is the level of
// vertex Idx[i] for i < Count, Unreached (-1) for an index of N or more
// (the host checks the indices first).
type GatherParams[P Ptr] struct {
	Level P      `c:"const int *__restrict__ level"`
	Idx   P      `c:"const unsigned int *__restrict__ idx"`
	Out   P      `c:"int *__restrict__ out"`
	N     uint64 `c:"unsigned long long n"`
	Count uint64 `c:"unsigned long long count"`
}

// LevelCountsParams are the parameters of KernelLevelCounts: Counts[l]
// (64-bit) grows by the vertices of level l, for l < NLevels; the host
// zeroes Counts before the launch.
type LevelCountsParams[P Ptr] struct {
	Level   P      `c:"const int *__restrict__ level"`
	Counts  P      `c:"unsigned long long *counts"`
	N       uint64 `c:"unsigned long long n"`
	NLevels uint64 `c:"unsigned long long nlevels"`
}

// MSGatherParams are the parameters of KernelMSGather, read after a
// multi-source pass of NRoots roots (Width bits per word, its levels in
// the first Bits planes): for i < Count, Pairs[i] is a root's index in the
// pass and a vertex (two uint32), and Out[i] that root's level of that
// vertex, Unreached (-1) where the root's seen bit is clear or the pair is
// out of range.
type MSGatherParams[P Ptr] struct {
	Seen   P      `c:"const void *__restrict__ seen"`
	Planes P      `c:"const void *__restrict__ planes"`
	Pairs  P      `c:"const uint2 *__restrict__ pairs"`
	Out    P      `c:"int *__restrict__ out"`
	N      uint64 `c:"unsigned long long n"`
	NRoots uint64 `c:"unsigned long long nroots"`
	Width  uint64 `c:"unsigned long long width"`
	Bits   uint64 `c:"unsigned long long bits"`
	Count  uint64 `c:"unsigned long long count"`
}

// MSLevelCountsParams are the parameters of KernelMSLevelCounts, read
// after a multi-source pass as for MSGatherParams: Counts[r*NLevels + l]
// (64-bit) grows by the vertices root r of the pass reached at level l,
// for l < NLevels; the host zeroes Counts before the launch.
type MSLevelCountsParams[P Ptr] struct {
	Seen    P      `c:"const void *__restrict__ seen"`
	Planes  P      `c:"const void *__restrict__ planes"`
	Counts  P      `c:"unsigned long long *counts"`
	N       uint64 `c:"unsigned long long n"`
	NRoots  uint64 `c:"unsigned long long nroots"`
	Width   uint64 `c:"unsigned long long width"`
	Bits    uint64 `c:"unsigned long long bits"`
	NLevels uint64 `c:"unsigned long long nlevels"`
}

// Entry points of the BFS kernel module (kernels/bfs.cu).
const (
	// KernelInit resets one BFS: every level to -1 but the root's 0, the
	// visited bitmap to the root alone, the root's items (label 0) into
	// q0, and the control words with the root as level 0's frontier.
	KernelInit = "bfs_init"
	// KernelInitW64, KernelQueueLevelW64 and KernelDoLevelW64 are
	// KernelInit, KernelQueueLevel and KernelDoLevel over 64-bit offsets,
	// for graphs of more than 2^32-1 adjacency entries: their queue items
	// are two uint64 (QueueItemBytesW64 with the label), the frontier's
	// edges are the 64-bit word CtlEdgesW64 of a count line (the high half
	// of CtlCounts still holds its vertices), and their decision log
	// entries are LogEntryBytesW64.
	KernelInitW64       = "bfs_init_w64"
	KernelQueueLevelW64 = "bfs_queue_level_w64"
	KernelDoLevelW64    = "bfs_do_level_w64"
	// KernelWaveScan is the level-synchronous top-down wave, one thread per
	// vertex; it sets the changed flag CtlScanChangedWord(depth).
	KernelWaveScan = "bfs_wave_scan"
	// KernelQueueLevel expands one level from the frontier queue: level
	// depth_base+phase_begin, with phase_end = phase_begin+1.
	KernelQueueLevel = "bfs_queue_level"
	// KernelDoLevel runs one level of a direction-optimizing BFS, top-down
	// from the frontier queue or bottom-up over the visited bitmap, as the
	// host says or as the device rule decides; it counts the next
	// frontier's vertices and edges and logs the decision.
	KernelDoLevel = "bfs_do_level"
	// KernelMegakernel runs every level in one cooperative launch, in steps
	// between grid barriers: direction-optimizing and level-synchronous
	// when the device rule may go bottom-up, otherwise top-down with each
	// block running up to `ahead` levels ahead on its own kept frontier.
	KernelMegakernel = "bfs_megakernel"
	// KernelMegakernelNarrow is KernelMegakernel compiled for blocks of at
	// most MegakernelNarrowThreads threads, one block per SM, so that it
	// keeps more registers a thread; a session launches it whenever its
	// megakernel blocks are that small.
	KernelMegakernelNarrow = "bfs_megakernel_narrow"
	// KernelMegakernelAsync is KernelMegakernelNarrow with the asynchronous
	// traversal (direction MegaAsync): every level top-down, without grid
	// barriers between levels. The other two entry points refuse MegaAsync.
	KernelMegakernelAsync = "bfs_megakernel_async"
	// KernelBarrierOnly crosses `levels` megakernel barriers and does
	// nothing else, after KernelInit reset ctl.
	KernelBarrierOnly = "bfs_barrier_only"
	// KernelCopy copies 16-byte words, for the copy-bandwidth ceiling.
	KernelCopy = "copy_u4"
	// KernelMSInit starts a multi-source pass: the roots' bits and
	// levels, the first vertex list and its counts.
	KernelMSInit = "msbfs_init"
	// KernelMSLevel runs one level of a multi-source pass, push or pull.
	KernelMSLevel = "msbfs_level"
	// KernelMSFinish ends a multi-source level: the pushed vertices' bits
	// recorded, the spent frontier words cleared.
	KernelMSFinish = "msbfs_finish"
	// KernelGather reads the levels of a list of vertices from the last
	// traversal, one thread per vertex.
	KernelGather = "bfs_gather"
	// KernelLevelCounts counts the vertices of every level below nlevels,
	// in a shared-memory histogram per block when nlevels is at most
	// CountSharedBins, with global 64-bit atomics otherwise.
	KernelLevelCounts = "bfs_level_counts"
	// KernelMSGather decodes the levels of (root, vertex) pairs from a
	// multi-source pass's seen words and level planes.
	KernelMSGather = "msbfs_gather"
	// KernelMSLevelCounts counts every root's vertices of every level of
	// a multi-source pass, in a shared-memory histogram per block when
	// nroots x nlevels is at most CountSharedBins, with global 64-bit
	// atomics otherwise.
	KernelMSLevelCounts = "msbfs_level_counts"
)

// Layout of the kernels' control buffer, in uint32 words. Each control
// word sits on its own 128-byte line: lines 0 to 2 hold the queue counts of
// a three-level ring (and, in a direction-optimizing BFS, the frontier's
// vertices and edges), line 3 is unused, line 4 holds the results and
// lines 5 to 7 the megakernel's three barrier words with its step counts.
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
	// CtlCounts is the offset, in a count line or a barrier line, of the
	// 64-bit frontier count: the frontier's vertices in the high 32 bits
	// and the sum of their degrees in the low 32 (the sum of the degrees of
	// distinct vertices is below 2^32, so the halves never carry).
	CtlCounts = 2
	// CtlStepRelabels is the offset, in a barrier line, of the step's
	// count of claims that lowered a label.
	CtlStepRelabels = 4
	// CtlHubs is the offset, in a count line, of a multi-source level's
	// 64-bit hub count: the frontier's hubs in the high 32 bits and their
	// edge chunks in the low 32.
	CtlHubs = 6
	// CtlEdgesW64 is the offset, in a count line, of the 64-bit kernels'
	// frontier edges (a 64-bit word; their CtlCounts word's low half is 0).
	CtlEdgesW64 = 8
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
	// ResultMisuse is a Misuse code when a kernel was launched
	// against its contract (it then does nothing).
	ResultMisuse = 3
	// ResultBarriers is the number of grid barriers (steps) the megakernel
	// crossed.
	ResultBarriers = 4
	// ResultDirMismatch is the first level (1-based: the level a step
	// discovers) whose direction, given by the host, differs from the
	// device rule's; 0 when they always agreed.
	ResultDirMismatch = 5
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
	// MisusePhases: a per-level launch was given several phases.
	MisusePhases = 1
	// MisuseGrid: KernelMegakernel was launched with more than
	// MaxMegakernelBlocks blocks.
	MisuseGrid = 2
	// MisuseAsync: KernelMegakernel or KernelMegakernelNarrow was given
	// MegaAsync, which only KernelMegakernelAsync runs.
	MisuseAsync = 3
)

// Directions and reasons as the kernels write them: the planner's values.
const (
	// DirTopDown and DirBottomUp are planners.DirectionTopDown and
	// planners.DirectionBottomUp.
	DirTopDown  = uint64(planners.DirectionTopDown)
	DirBottomUp = uint64(planners.DirectionBottomUp)
	// MegaTopDown, MegaAuto and MegaAsync are the megakernel's direction
	// modes: every level top-down in steps between grid barriers, the
	// device rule's decision at every level, and every level top-down
	// without grid barriers between levels.
	MegaTopDown = 0
	MegaAuto    = 1
	MegaAsync   = 2
)

// The asynchronous megakernel's fixed sizes: the labels its pending counts
// cycle through, the most ring items a block takes a round, the idle rounds
// after which a block ignores the window, the q1 words its counters take,
// and the most edges of a ring item and the largest label a ring slot holds
// (an item or label past them sets the overflow flag).
const (
	asyncLabels       = 64
	asyncTake         = 32
	asyncForce        = 64
	asyncCounterWords = 192
	// asyncMinQueueItems is the smallest frontier queue whose second half
	// (q1) holds the counters.
	asyncMinQueueItems = (4*asyncCounterWords + QueueItemBytes - 1) / QueueItemBytes
	// AsyncItemEdges is the most edges one item of the asynchronous
	// megakernel's ring holds: Config.Chunk may be at most this with
	// Config.MegakernelAsync.
	AsyncItemEdges = 511
	asyncMaxLabel  = 0x7ffffe
)

// A decision log entry's first word: the direction in bits 0..1, the
// planner's reason in bits 2..5 (0 when the level's direction was not the
// rule's: a forced top-down traversal), which visited bitmap was current
// in bit 6, and the megakernel's run-ahead depth in bits 16..31.
const (
	logDirMask     = 0x3
	logReasonShift = 2
	logReasonMask  = 0xf
	logParityBit   = 6
	logDepthShift  = 16
	// LogEntryBytes is the size of one decision log entry: the first word,
	// then the frontier's vertices, its edges and the unexplored edges.
	LogEntryBytes = 16
	// LogEntryBytesW64 is the size of one entry of the 64-bit kernels'
	// log: the first word with the frontier's vertices above it, then its
	// edges, the unexplored edges and a zero word, each 64 bits.
	LogEntryBytesW64 = 32
)

// The kernels' fixed sizes.
const (
	// QueueItemBytes is the device size of one frontier-queue item: its edge
	// range (two uint32) and, in an array after the queue's items, the label
	// of its vertex.
	QueueItemBytes = 12
	// QueueItemBytesW64 is QueueItemBytes for the 64-bit kernels, whose
	// edge ranges are two uint64.
	QueueItemBytesW64 = 20
	// LevelW64MaxThreads and levelW64MinBlocks are the 64-bit direction-
	// optimizing level's launch bounds: blocks of at most LevelW64MaxThreads
	// threads, levelW64MinBlocks of which an SM must hold, so that its
	// registers stay within as many blocks of the per-level kernels' default
	// size as the 32-bit level fits.
	LevelW64MaxThreads = 256
	levelW64MinBlocks  = 5
	// levelBlockQueueItems and megaBlockQueueItems are the items a block
	// stages in shared memory per level (per step in the megakernel).
	levelBlockQueueItems = 1024
	megaBlockQueueItems  = 1024
	// keepItems and keepEdges are the capacity of a megakernel block's keep
	// queue; a launch's budget (MegakernelParams.Keep) is keepEdgesSmall
	// or keepEdges edges and a keepEdgesPerItem-th as many vertices of the
	// block's own discoveries for its next level, a kept vertex having at
	// most keepItemEdges edges; a block that turned a candidate away keeps
	// its first keepLow vertices.
	keepItems        = 128
	keepEdges        = 512
	keepEdgesSmall   = 256
	keepEdgesPerItem = keepEdges / keepItems
	keepItemEdges    = 64
	keepLow          = 16
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
	// MegakernelNarrowThreads is the largest block of
	// KernelMegakernelNarrow.
	MegakernelNarrowThreads = 512
	// MaxMegakernelBlocks is the largest megakernel grid: a barrier word
	// counts block arrivals in 16 bits.
	MaxMegakernelBlocks = arriveMask
	// buSerial is how many edges a bottom-up lane checks on its own, with
	// their loads in flight together, before its warp scans the rest of
	// its edges with it, 32 at a time; buTileWords is the bitmap words each
	// warp takes per tile of a bottom-up level (a block counts its finds
	// once per tile).
	buSerial    = 4
	buTileWords = 4
	// runAheadStart is the adaptive megakernel's first run-ahead depth.
	runAheadStart = 2
	// msListCap is the vertex ids a block stages in shared memory per
	// multi-source level.
	msListCap = 2048
	// msHubEdges is the degree from which a multi-source push spreads a
	// frontier vertex's edges over the whole grid, in chunks of
	// msHubChunk edges, instead of leaving them to one warp.
	msHubEdges = 1024
	msHubChunk = 256
	// msPullRounds is how many rounds of 32 edges a warp of a pulling
	// multi-source level loads before it ORs any: its loads of targets,
	// then of frontier words, are in flight together.
	msPullRounds = 4
	// megaFresh is 1 when a megakernel block running ahead checks each kept
	// vertex's label against its level (0 leaves the check out).
	megaFresh = 0
	// msGroupBytes is a multi-source pass's level-plane group: a vertex's
	// planes lie together, msGroupBytes of them, so that a level whose
	// label sets several low bits writes one sector per vertex.
	msGroupBytes = planners.PlaneGroupBytes
	// CountSharedBins is the most bins a level-count kernel keeps in a
	// block's shared-memory histogram (32-bit bins, 16 KiB): levels (times
	// roots, for a multi-source pass) past it add to the global 64-bit
	// counts directly.
	CountSharedBins = 4096
)

// ABI is the kernel ABI of the BFS module, from which kernels/bfs_abi.h is
// generated (go generate) and against which the PTX is checked.
var ABI = kernelabi.Module{
	Name: "bfs",
	Doc:  "Kernel ABI of gpuplan's BFS kernels: constants shared with the Go host code and the\nparameter list of every entry point.",
	Kernels: []kernelabi.Kernel{
		{Name: KernelInit, Doc: "Resets one BFS.", Params: InitParams[executor.DevPtr]{}},
		{Name: KernelInitW64, Doc: "Resets one BFS over 64-bit offsets.", Params: InitW64Params[executor.DevPtr]{}},
		{Name: KernelQueueLevelW64, Doc: "One level from the frontier queue over 64-bit offsets.", Params: QueueLevelW64Params[executor.DevPtr]{}},
		{Name: KernelDoLevelW64, Doc: "One direction-optimizing level over 64-bit offsets.", Params: DoLevelW64Params[executor.DevPtr]{}},
		{Name: KernelWaveScan, Doc: "The level-synchronous scan wave, one thread per vertex.", Params: ScanParams[executor.DevPtr]{}},
		{Name: KernelQueueLevel, Doc: "One level from the frontier queue; the last two parameters are the split-dispatch phase range.", Params: QueueLevelParams[executor.DevPtr]{}},
		{Name: KernelDoLevel, Doc: "One direction-optimizing level; the last two parameters are the split-dispatch phase range.", Params: DoLevelParams[executor.DevPtr]{}},
		{Name: KernelMegakernel, Doc: "Every level in one cooperative launch.", Params: MegakernelParams[executor.DevPtr]{}},
		{Name: KernelMegakernelNarrow, Doc: "The megakernel for blocks of at most MEGA_NARROW_THREADS threads.", Params: MegakernelParams[executor.DevPtr]{}},
		{Name: KernelMegakernelAsync, Doc: "The narrow megakernel with the asynchronous traversal (MEGA_ASYNC).", Params: MegakernelParams[executor.DevPtr]{}},
		{Name: KernelBarrierOnly, Doc: "Megakernel barriers alone.", Params: BarrierParams[executor.DevPtr]{}},
		{Name: KernelCopy, Doc: "A 16-byte-word copy, for the copy-bandwidth ceiling.", Params: CopyParams[executor.DevPtr]{}},
		{Name: KernelMSInit, Doc: "Starts a multi-source pass.", Params: MSInitParams[executor.DevPtr]{}},
		{Name: KernelMSLevel, Doc: "One level of a multi-source pass.", Params: MSLevelParams[executor.DevPtr]{}},
		{Name: KernelMSFinish, Doc: "Ends one level of a multi-source pass.", Params: MSFinishParams[executor.DevPtr]{}},
		{Name: KernelGather, Doc: "The levels of a list of vertices.", Params: GatherParams[executor.DevPtr]{}},
		{Name: KernelLevelCounts, Doc: "The vertices of every level below nlevels (counts zeroed by the host).", Params: LevelCountsParams[executor.DevPtr]{}},
		{Name: KernelMSGather, Doc: "The levels of (root, vertex) pairs of a multi-source pass.", Params: MSGatherParams[executor.DevPtr]{}},
		{Name: KernelMSLevelCounts, Doc: "Every root's vertices of every level of a multi-source pass (counts zeroed by the host).", Params: MSLevelCountsParams[executor.DevPtr]{}},
	},
	Consts: []kernelabi.Const{
		{Name: "CTL_LINE", Value: CtlLineWords, Doc: "uint32 words in one 128-byte control line."},
		{Name: "CTL_WORDS", Value: CtlWords, Doc: "uint32 words in the control buffer."},
		{Name: "CTL_RESULT", Value: CtlResult, Doc: "First word of the result line."},
		{Name: "CTL_MEGA_LINE", Value: ctlMegaLine, Doc: "Line of the first megakernel barrier word."},
		{Name: "CTL_COUNTS", Value: CtlCounts, Doc: "Offsets in a count or barrier line of the 64-bit frontier count (vertices\nabove, edges below) and of the step's lowered labels."},
		{Name: "CTL_STEP_RELABELS", Value: CtlStepRelabels},
		{Name: "CTL_EDGES_W64", Value: CtlEdgesW64, Doc: "Offset in a count line of the 64-bit kernels' 64-bit frontier edges."},
		{Name: "CTL_HUBS", Value: CtlHubs, Doc: "Offset in a count line of a multi-source level's 64-bit hub count (hubs\nabove, their edge chunks below)."},
		{Name: "RESULT_LEVELS", Value: ResultLevels, Doc: "Result words, from CTL_RESULT: levels, changed flag, overflow, misuse,\nbarriers, direction mismatch, relabels (64 bits) and the scan wave's\nchanged flags."},
		{Name: "RESULT_CHANGED", Value: ResultChanged},
		{Name: "RESULT_OVERFLOW", Value: ResultOverflow},
		{Name: "RESULT_MISUSE", Value: ResultMisuse},
		{Name: "RESULT_BARRIERS", Value: ResultBarriers},
		{Name: "RESULT_DIR_MISMATCH", Value: ResultDirMismatch},
		{Name: "RESULT_RELABELS", Value: ResultRelabels},
		{Name: "RESULT_SCAN_CHANGED", Value: ResultScanChanged},
		{Name: "MISUSE_PHASES", Value: MisusePhases, Doc: "Misuse codes."},
		{Name: "MISUSE_GRID", Value: MisuseGrid},
		{Name: "MISUSE_ASYNC", Value: MisuseAsync},
		{Name: "DIR_TOP_DOWN", Value: DirTopDown, Doc: "Directions, reasons and thresholds of the direction rule: the planner's\n(planners.PlanBFSDirection) values."},
		{Name: "DIR_BOTTOM_UP", Value: DirBottomUp},
		{Name: "REASON_LOW_DEGREE", Value: uint64(planners.ReasonLowAverageDegree)},
		{Name: "REASON_EDGES_WITHIN", Value: uint64(planners.ReasonFrontierEdgesWithinThreshold)},
		{Name: "REASON_EDGES_ABOVE", Value: uint64(planners.ReasonFrontierEdgesAboveThreshold)},
		{Name: "REASON_GROWING", Value: uint64(planners.ReasonFrontierGrowing)},
		{Name: "REASON_ABOVE", Value: uint64(planners.ReasonFrontierAboveThreshold)},
		{Name: "REASON_BELOW", Value: uint64(planners.ReasonFrontierBelowThreshold)},
		{Name: "DIR_ALPHA", Value: planners.DefaultDirectionAlpha},
		{Name: "DIR_BETA", Value: planners.DefaultDirectionBeta},
		{Name: "DIR_MIN_DEGREE", Value: planners.DefaultBottomUpMinDegree},
		{Name: "MEGA_TOP_DOWN", Value: MegaTopDown, Doc: "The megakernel's direction modes."},
		{Name: "MEGA_AUTO", Value: MegaAuto},
		{Name: "MEGA_ASYNC", Value: MegaAsync},
		{Name: "ASYNC_LABELS", Value: asyncLabels, Doc: "The asynchronous megakernel's labels of pending counts, ring items taken\na round, idle rounds before it ignores the window, q1 words of its\ncounters, and a ring slot's most edges and largest label."},
		{Name: "ASYNC_TAKE", Value: asyncTake},
		{Name: "ASYNC_FORCE", Value: asyncForce},
		{Name: "ASYNC_COUNTER_WORDS", Value: asyncCounterWords},
		{Name: "ASYNC_ITEM_EDGES", Value: AsyncItemEdges},
		{Name: "ASYNC_MAX_LABEL", Value: asyncMaxLabel},
		{Name: "LOG_DIR_MASK", Value: logDirMask, Doc: "A decision log entry's first word: direction, reason, current visited\nbitmap and run-ahead depth."},
		{Name: "LOG_REASON_SHIFT", Value: logReasonShift},
		{Name: "LOG_REASON_MASK", Value: logReasonMask},
		{Name: "LOG_PARITY_BIT", Value: logParityBit},
		{Name: "LOG_DEPTH_SHIFT", Value: logDepthShift},
		{Name: "QUEUE_ITEM_BYTES", Value: QueueItemBytes, Doc: "Device bytes of one frontier-queue item: its edge range and its label (the\n64-bit kernels' with 64-bit offsets)."},
		{Name: "QUEUE_ITEM_BYTES_W64", Value: QueueItemBytesW64},
		{Name: "LEVEL_W64_MAX_THREADS", Value: LevelW64MaxThreads, Doc: "The 64-bit direction-optimizing level's launch bounds: its largest block,\nand the blocks an SM must hold."},
		{Name: "LEVEL_W64_MIN_BLOCKS", Value: levelW64MinBlocks},
		{Name: "LEVEL_BLOCK_QCAP", Value: levelBlockQueueItems, Doc: "Items a block stages in shared memory per level (per megakernel step)."},
		{Name: "MEGA_BLOCK_QCAP", Value: megaBlockQueueItems},
		{Name: "MEGA_NARROW_THREADS", Value: MegakernelNarrowThreads, Doc: "The largest block of the narrow megakernel."},
		{Name: "KEEP_ITEMS", Value: keepItems, Doc: "A megakernel block's keep queue: its capacity in vertices and edges (the\nlarge budget), the small budget's edges, the budget's edges per vertex,\nthe edges of one kept vertex, and the vertices it keeps after turning a\ncandidate away."},
		{Name: "KEEP_EDGES", Value: keepEdges},
		{Name: "KEEP_EDGES_SMALL", Value: keepEdgesSmall},
		{Name: "KEEP_EDGES_PER_ITEM", Value: keepEdgesPerItem},
		{Name: "KEEP_ITEM_EDGES", Value: keepItemEdges},
		{Name: "KEEP_LOW", Value: keepLow, Tunable: true},
		{Name: "KEEP_SHIFT", Value: keepShift, Doc: "A keep queue's reservation word: vertices above this bit, edges below."},
		{Name: "SPEC", Value: specTargets, Doc: "Targets a megakernel claim reads alongside the claim."},
		{Name: "ROTATE_MUL", Value: rotateMul, Doc: "Multiplier of the step hash that rotates the megakernel's warps."},
		{Name: "ARRIVE_MASK", Value: arriveMask, Doc: "A barrier word's arrival field, and the shift of its kept-work field."},
		{Name: "ARRIVE_KEPT_SHIFT", Value: arriveKeptShift},
		{Name: "BU_SERIAL", Value: buSerial, Tunable: true, Doc: "Edges a bottom-up lane checks alone before its warp joins in, and the\nbitmap words a warp takes per tile of a bottom-up level."},
		{Name: "BU_TILE_WORDS", Value: buTileWords, Tunable: true},
		{Name: "RUN_AHEAD_START", Value: runAheadStart, Tunable: true, Doc: "The adaptive megakernel's first run-ahead depth."},
		{Name: "MS_LIST_CAP", Value: msListCap, Doc: "Vertex ids a block stages in shared memory per multi-source level."},
		{Name: "MS_HUB_EDGES", Value: msHubEdges, Tunable: true, Doc: "Degree from which a multi-source push spreads a vertex's edges over the\nwhole grid, in chunks of MS_HUB_CHUNK edges."},
		{Name: "MS_HUB_CHUNK", Value: msHubChunk, Tunable: true},
		{Name: "MEGA_FRESH", Value: megaFresh, Tunable: true, Doc: "1: a megakernel block running ahead checks each kept vertex's label\nagainst its level (expand_kept); 0: it does not."},
		{Name: "MS_PULL_ROUNDS", Value: msPullRounds, Tunable: true, Doc: "Rounds of 32 edges a warp of a pulling multi-source level loads before\nit ORs any."},
		{Name: "MS_GROUP_BYTES", Value: msGroupBytes, Doc: "Bytes of one vertex's group of multi-source level planes."},
		{Name: "COUNT_SHARED_BINS", Value: CountSharedBins, Doc: "The most bins of a level-count kernel's shared-memory histogram (32-bit\nbins); a count of more bins adds to the global counts directly."},
	},
}
