package kronbuild

import (
	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/internal/kernelabi"
)

//go:generate go run ./internal/genheader kernels/kronbuild_abi.h

// Ptr is the pointer type of a kernel parameter struct (kernelabi.Ptr):
// executor.Buffer on the host, executor.DevPtr in the emulation.
type Ptr = kernelabi.Ptr

// PermDrawParams are the parameters of KernelPermDraw: the draws of the
// label shuffle's steps StepHi down to 1, the first of them the PCG's
// draw number Draw (counting from 0), written as Keys[s-1] = j<<Scale | s
// for step s and its draw j.
type PermDrawParams[P Ptr] struct {
	Keys   P      `c:"unsigned long long *__restrict__ keys"`
	Ctl    P      `c:"unsigned long long *ctl"`
	Seed1  uint64 `c:"unsigned long long seed1"`
	Seed2  uint64 `c:"unsigned long long seed2"`
	Scale  uint64 `c:"unsigned long long scale"`
	StepHi uint64 `c:"unsigned long long step_hi"`
	Draw   uint64 `c:"unsigned long long draw"`
}

// PermLinksParams are the parameters of KernelPermLinks: the Count sorted
// draw keys, and what each step and each position links to (see the
// kernel source).
type PermLinksParams[P Ptr] struct {
	Keys  P      `c:"const unsigned long long *__restrict__ keys"`
	Perm  P      `c:"unsigned int *__restrict__ perm"`
	Last  P      `c:"unsigned int *__restrict__ last"`
	Count uint64 `c:"unsigned long long count"`
	Scale uint64 `c:"unsigned long long scale"`
}

// PermLabelsParams are the parameters of KernelPermLabels.
type PermLabelsParams[P Ptr] struct {
	Perm P      `c:"unsigned int *__restrict__ perm"`
	Last P      `c:"const unsigned int *__restrict__ last"`
	N    uint64 `c:"unsigned long long n"`
}

// EdgeParams are the parameters the edge kernels begin with: the labels,
// the generator's seed and scale, the number of edges and the quadrant
// thresholds (frontier.KroneckerThresholds).
type EdgeParams[P Ptr] struct {
	Perm  P      `c:"const unsigned int *__restrict__ perm"`
	Seed  uint64 `c:"unsigned long long seed"`
	Scale uint64 `c:"unsigned long long scale"`
	Edges uint64 `c:"unsigned long long edges"`
	TAB   uint64 `c:"unsigned long long t_ab"`
	TA    uint64 `c:"unsigned long long t_a"`
	TC    uint64 `c:"unsigned long long t_c"`
}

// CountParams are the parameters of KernelCount: the adjacency entries of
// every bucket of 1<<BucketShift consecutive sources, into Counts.
type CountParams[P Ptr] struct {
	EdgeParams[P] `c:"KRON_EDGE_PARAMS"`
	Counts        P      `c:"unsigned long long *counts"`
	BucketShift   uint64 `c:"unsigned long long bucket_shift"`
	Buckets       uint64 `c:"unsigned long long buckets"`
}

// GenerateParams are the parameters of KernelGenerate: the entries whose
// source lies in [RowFirst, RowFirst+Rows), as keys (u-RowFirst)<<Scale |
// v, at most Capacity of them, appended at Ctl[CtlCursor].
type GenerateParams[P Ptr] struct {
	EdgeParams[P] `c:"KRON_EDGE_PARAMS"`
	Keys          P      `c:"unsigned long long *__restrict__ keys"`
	Ctl           P      `c:"unsigned long long *ctl"`
	RowFirst      uint64 `c:"unsigned long long row_first"`
	Rows          uint64 `c:"unsigned long long rows"`
	Capacity      uint64 `c:"unsigned long long capacity"`
}

// SortPassParams are the parameters the sort kernels end with: the digit
// matrix, the keys, the pass's bits [Bit, Bit+Bits) and the blocks, each
// of which takes Segment consecutive keys.
type SortPassParams[P Ptr] struct {
	Hist    P      `c:"unsigned long long *hist"`
	Count   uint64 `c:"unsigned long long count"`
	Bit     uint64 `c:"unsigned long long bit"`
	Bits    uint64 `c:"unsigned long long bits"`
	Segment uint64 `c:"unsigned long long segment"`
	Blocks  uint64 `c:"unsigned long long blocks"`
}

// SortHistParams are the parameters of KernelSortHist.
type SortHistParams[P Ptr] struct {
	Keys              P `c:"const unsigned long long *__restrict__ keys"`
	SortPassParams[P] `c:"KRON_SORT_PASS_PARAMS"`
}

// SortScatterParams are the parameters of KernelSortScatter.
type SortScatterParams[P Ptr] struct {
	In                P `c:"const unsigned long long *__restrict__ in"`
	Out               P `c:"unsigned long long *__restrict__ out"`
	SortPassParams[P] `c:"KRON_SORT_PASS_PARAMS"`
}

// ScanParams are the parameters of KernelScan: Data[0:Count] becomes its
// exclusive prefix sum and Data[Count] the total.
type ScanParams[P Ptr] struct {
	Data  P      `c:"unsigned long long *data"`
	Count uint64 `c:"unsigned long long count"`
}

// UniqueCountParams are the parameters of KernelUniqueCount: the distinct
// keys of each block's Segment of the Count sorted keys, into Counts.
type UniqueCountParams[P Ptr] struct {
	Keys    P      `c:"const unsigned long long *__restrict__ keys"`
	Counts  P      `c:"unsigned long long *counts"`
	Count   uint64 `c:"unsigned long long count"`
	Segment uint64 `c:"unsigned long long segment"`
}

// CompactParams are the parameters of KernelCompact: the distinct sorted
// keys of a part become its targets and its rows' offsets, Base entries
// after the parts before it; Counts holds KernelUniqueCount's counts,
// scanned.
type CompactParams[P Ptr] struct {
	Keys     P      `c:"const unsigned long long *__restrict__ keys"`
	Counts   P      `c:"const unsigned long long *__restrict__ counts"`
	Targets  P      `c:"unsigned int *__restrict__ targets"`
	Offsets  P      `c:"unsigned long long *__restrict__ offsets"`
	Count    uint64 `c:"unsigned long long count"`
	Segment  uint64 `c:"unsigned long long segment"`
	Blocks   uint64 `c:"unsigned long long blocks"`
	Scale    uint64 `c:"unsigned long long scale"`
	RowFirst uint64 `c:"unsigned long long row_first"`
	Rows     uint64 `c:"unsigned long long rows"`
	Base     uint64 `c:"unsigned long long base"`
}

// FillParams are the parameters of KernelFill: Words[First:First+Count] =
// Value.
type FillParams[P Ptr] struct {
	Words P      `c:"unsigned long long *words"`
	First uint64 `c:"unsigned long long first"`
	Count uint64 `c:"unsigned long long count"`
	Value uint64 `c:"unsigned long long value"`
}

// Entry points of the kronbuild kernel module (kernels/kronbuild.cu).
const (
	// KernelPermDraw draws the label shuffle's random indices.
	KernelPermDraw = "kron_perm_draw"
	// KernelPermLinks links every shuffle step to the step before it
	// that drew the same index, and every position to its first writer.
	KernelPermLinks = "kron_perm_links"
	// KernelPermLabels resolves the links into the labels.
	KernelPermLabels = "kron_perm_labels"
	// KernelCount counts the adjacency entries of every source bucket.
	KernelCount = "kron_count"
	// KernelGenerate writes one part's adjacency entries as sort keys.
	KernelGenerate = "kron_generate"
	// KernelSortHist counts each block's digits of one radix pass.
	KernelSortHist = "kron_sort_hist"
	// KernelScan is an exclusive prefix sum in one block.
	KernelScan = "kron_scan"
	// KernelSortScatter moves the keys of one radix pass, stably.
	KernelSortScatter = "kron_sort_scatter"
	// KernelUniqueCount counts each block's distinct sorted keys.
	KernelUniqueCount = "kron_unique_count"
	// KernelCompact writes a part's targets and offsets.
	KernelCompact = "kron_compact"
	// KernelFill fills a range of 64-bit words.
	KernelFill = "kron_fill"
)

// The kernels' fixed shapes.
const (
	// Threads is the block size of every kernel but KernelScan.
	Threads = 256
	// ScanThreads is KernelScan's block size; ScanItems the values a
	// thread scans per round.
	ScanThreads = 512
	ScanItems   = 4
	// DigitBits is the radix of a sort pass; Digits its digit values.
	DigitBits = 8
	Digits    = 1 << DigitBits
	// SortItems is the keys a thread ranks per tile of KernelSortScatter;
	// SortTile the keys of a tile.
	SortItems = 16
	SortTile  = Threads * SortItems
	// MaxSortBlocks bounds a sort's blocks, and so its digit matrix.
	MaxSortBlocks = 2048
	// GenEdges is the edges a thread of KernelGenerate draws per tile.
	GenEdges = 4
	// CompactItems is the keys a thread of KernelCompact takes per tile.
	CompactItems = 4
	// MaxBuckets bounds KernelCount's source buckets.
	MaxBuckets = 1024
	// PermSteps is the shuffle steps one thread of KernelPermDraw draws.
	PermSteps = 64
	// LinkFlag marks a step's link word that holds its drawn index: no
	// earlier step drew it (vertex ids are below 2^30).
	LinkFlag = 1 << 31
)

// Words of the control buffer (64-bit).
const (
	// CtlCursor is KernelGenerate's count of the keys it wrote.
	CtlCursor = 0
	// CtlReject is the first rejected draw of KernelPermDraw: step<<32 |
	// the draws it rejected, 0 when none was.
	CtlReject = 1
	// CtlWords is the size of the control buffer.
	CtlWords = 4
)

// SplitMix64, as frontier.Kronecker draws its edges with, one stream of
// chunkEdges edges after another.
const (
	chunkEdges     = frontier.KroneckerChunkEdges
	splitGamma     = 0x9e3779b97f4a7c15
	splitStreamMul = 0xbf58476d1ce4e5b9
	splitMix1      = 0xbf58476d1ce4e5b9
	splitMix2      = 0x94d049bb133111eb
)

// math/rand/v2's PCG (128-bit LCG, DXSM output), as frontier's label
// shuffle draws with.
const (
	pcgMulHi   = 2549297995355413924
	pcgMulLo   = 4865540595714422341
	pcgIncHi   = 6364136223846793005
	pcgIncLo   = 1442695040888963407
	pcgDXSMMul = 0xda942042e4dd58b5
)

// ABI is the kernel ABI of the kronbuild module, from which
// kernels/kronbuild_abi.h is generated (go generate) and against which the
// PTX is checked.
var ABI = kernelabi.Module{
	Name: "kronbuild",
	Doc:  "Kernel ABI of gpuplan's Graph500 Kronecker graph build: constants shared with the Go host\ncode and the parameter list of every entry point.",
	Kernels: []kernelabi.Kernel{
		{Name: KernelPermDraw, Doc: "The label shuffle's draws of steps step_hi down to 1.", Params: PermDrawParams[executor.DevPtr]{}},
		{Name: KernelPermLinks, Doc: "Each step's earlier step of the same draw, each position's first writer.", Params: PermLinksParams[executor.DevPtr]{}},
		{Name: KernelPermLabels, Doc: "The labels, from the links.", Params: PermLabelsParams[executor.DevPtr]{}},
		{Name: KernelCount, Doc: "The adjacency entries of every source bucket.", Params: CountParams[executor.DevPtr]{}},
		{Name: KernelGenerate, Doc: "One part's adjacency entries as sort keys.", Params: GenerateParams[executor.DevPtr]{}},
		{Name: KernelSortHist, Doc: "Each block's digit counts of one radix pass.", Params: SortHistParams[executor.DevPtr]{}},
		{Name: KernelScan, Doc: "Exclusive prefix sum in one block, the total after it.", Params: ScanParams[executor.DevPtr]{}},
		{Name: KernelSortScatter, Doc: "The stable scatter of one radix pass.", Params: SortScatterParams[executor.DevPtr]{}},
		{Name: KernelUniqueCount, Doc: "Each block's distinct sorted keys.", Params: UniqueCountParams[executor.DevPtr]{}},
		{Name: KernelCompact, Doc: "A part's targets and offsets from its distinct keys.", Params: CompactParams[executor.DevPtr]{}},
		{Name: KernelFill, Doc: "A range of 64-bit words set to one value.", Params: FillParams[executor.DevPtr]{}},
	},
	Consts: abiConsts(),
}

// abiConsts lists the constants the header defines.
func abiConsts() []kernelabi.Const {
	return []kernelabi.Const{
		{Name: "THREADS", Value: Threads, Doc: "Block size of every kernel but kron_scan."},
		{Name: "SCAN_THREADS", Value: ScanThreads, Doc: "kron_scan's block size and values per thread per round."},
		{Name: "SCAN_ITEMS", Value: ScanItems},
		{Name: "DIGIT_BITS", Value: DigitBits, Doc: "Bits of a radix sort pass, and its digit values."},
		{Name: "DIGITS", Value: Digits},
		{Name: "SORT_ITEMS", Value: SortItems, Doc: "Keys a thread ranks per tile of kron_sort_scatter, and the keys of a tile."},
		{Name: "SORT_TILE", Value: SortTile},
		{Name: "GEN_EDGES", Value: GenEdges, Doc: "Edges a thread of kron_generate draws per tile."},
		{Name: "COMPACT_ITEMS", Value: CompactItems, Doc: "Keys a thread of kron_compact takes per tile."},
		{Name: "MAX_BUCKETS", Value: MaxBuckets, Doc: "Most source buckets kron_count counts."},
		{Name: "PERM_STEPS", Value: PermSteps, Doc: "Shuffle steps one thread of kron_perm_draw draws."},
		{Name: "LINK_FLAG", Value: LinkFlag, Doc: "Marks a link word that holds a drawn index."},
		{Name: "CTL_CURSOR", Value: CtlCursor, Doc: "Control words (64-bit): kron_generate's cursor, kron_perm_draw's first rejection."},
		{Name: "CTL_REJECT", Value: CtlReject},
		{Name: "CHUNK_EDGES", Value: chunkEdges, Doc: "Edges of one SplitMix64 stream, and SplitMix64's constants."},
		{Name: "SPLIT_GAMMA", Value: splitGamma},
		{Name: "SPLIT_STREAM_MUL", Value: splitStreamMul},
		{Name: "SPLIT_MIX1", Value: splitMix1},
		{Name: "SPLIT_MIX2", Value: splitMix2},
		{Name: "PCG_MUL_HI", Value: pcgMulHi, Doc: "math/rand/v2's PCG: the 128-bit multiplier and increment, the DXSM multiplier."},
		{Name: "PCG_MUL_LO", Value: pcgMulLo},
		{Name: "PCG_INC_HI", Value: pcgIncHi},
		{Name: "PCG_INC_LO", Value: pcgIncLo},
		{Name: "PCG_DXSM_MUL", Value: pcgDXSMMul},
	}
}
