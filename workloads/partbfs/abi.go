package partbfs

import (
	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/internal/kernelabi"
)

//go:generate go run ./internal/genheader kernels/partbfs_abi.h

// Ptr is the pointer type of a kernel parameter struct (kernelabi.Ptr):
// executor.Buffer on the host, executor.DevPtr in the emulation.
type Ptr = kernelabi.Ptr

// InitParams are the parameters of KernelInit. N is the part's vertex
// count, S the plan's slice words, Parts the device count and Root the
// root's local index (NoRoot when another part owns it).
type InitParams[P Ptr] struct {
	Level  P      `c:"int *level"`
	Front0 P      `c:"unsigned long long *front0"`
	Front1 P      `c:"unsigned long long *front1"`
	Next   P      `c:"unsigned long long *next"`
	Counts P      `c:"unsigned long long *counts"`
	Ctl    P      `c:"unsigned long long *ctl"`
	N      uint64 `c:"unsigned long long n"`
	S      uint64 `c:"unsigned long long s"`
	Parts  uint64 `c:"unsigned long long parts"`
	Root   uint64 `c:"unsigned long long root"`
}

// ShapeParams are the partition's shape as one part's kernels see it,
// which every kernel but KernelInit and KernelCopy takes and checks (a
// misuse otherwise): S slice words per part, Parts parts, and the part's
// own index Self.
type ShapeParams struct {
	S     uint64 `c:"unsigned long long s"`
	Parts uint64 `c:"unsigned long long parts"`
	Self  uint64 `c:"unsigned long long self"`
}

// ExpandParams are the parameters of KernelExpand: the part's frontier
// (Front) is expanded top-down into Next, in global vertex space (slice e
// of Next holds part e's vertices).
type ExpandParams[P Ptr] struct {
	Offsets     P      `c:"const unsigned int *__restrict__ offsets"`
	Targets     P      `c:"const int *__restrict__ targets"`
	Level       P      `c:"const int *level"`
	Front       P      `c:"const unsigned long long *front"`
	Next        P      `c:"unsigned long long *next"`
	Bounds      P      `c:"const unsigned int *__restrict__ bounds"`
	Ctl         P      `c:"unsigned long long *ctl"`
	N           uint64 `c:"unsigned long long n"`
	ShapeParams `c:"PBFS_SHAPE_PARAMS"`
}

// CountParams are the parameters of KernelCount: the set bits of every
// other part's slice of Next, into the part's row of Counts.
type CountParams[P Ptr] struct {
	Next        P `c:"const unsigned long long *next"`
	Bounds      P `c:"const unsigned int *__restrict__ bounds"`
	Counts      P `c:"unsigned long long *counts"`
	Ctl         P `c:"unsigned long long *ctl"`
	ShapeParams `c:"PBFS_SHAPE_PARAMS"`
}

// CompactParams are the parameters of KernelCompact: the slices of the
// parts in QueueMask become queues of local indices in Outbox.
type CompactParams[P Ptr] struct {
	Next        P `c:"const unsigned long long *next"`
	Outbox      P `c:"unsigned int *outbox"`
	Bounds      P `c:"const unsigned int *__restrict__ bounds"`
	Ctl         P `c:"unsigned long long *ctl"`
	ShapeParams `c:"PBFS_SHAPE_PARAMS"`
	QueueMask   uint64 `c:"unsigned long long queue_mask"`
}

// ApplyParams are the parameters of KernelApply: the part's own slice of
// Next and what the other parts sent (bitmap slices from BitmapMask,
// queues from QueueMask, in Xbuf) claim level Depth+1.
type ApplyParams[P Ptr] struct {
	Offsets     P      `c:"const unsigned int *__restrict__ offsets"`
	Level       P      `c:"int *level"`
	Front       P      `c:"unsigned long long *front"`
	FrontNext   P      `c:"unsigned long long *front_next"`
	Next        P      `c:"unsigned long long *next"`
	Xbuf        P      `c:"const unsigned long long *xbuf"`
	Counts      P      `c:"unsigned long long *counts"`
	Ctl         P      `c:"unsigned long long *ctl"`
	N           uint64 `c:"unsigned long long n"`
	ShapeParams `c:"PBFS_SHAPE_PARAMS"`
	Depth       uint64 `c:"unsigned long long depth"`
	QueueMask   uint64 `c:"unsigned long long queue_mask"`
	BitmapMask  uint64 `c:"unsigned long long bitmap_mask"`
}

// BottomUpParams are the parameters of KernelBottomUp: every unvisited
// vertex of the part looks for a parent in the gathered frontier (Xbuf).
type BottomUpParams[P Ptr] struct {
	Offsets     P      `c:"const unsigned int *__restrict__ offsets"`
	Targets     P      `c:"const int *__restrict__ targets"`
	Level       P      `c:"int *level"`
	Front       P      `c:"unsigned long long *front"`
	FrontNext   P      `c:"unsigned long long *front_next"`
	Xbuf        P      `c:"const unsigned long long *xbuf"`
	Bounds      P      `c:"const unsigned int *__restrict__ bounds"`
	Ctl         P      `c:"unsigned long long *ctl"`
	N           uint64 `c:"unsigned long long n"`
	ShapeParams `c:"PBFS_SHAPE_PARAMS"`
	Depth       uint64 `c:"unsigned long long depth"`
}

// CopyParams are the parameters of KernelCopy: Words 4-byte words.
type CopyParams[P Ptr] struct {
	Src   P      `c:"const unsigned int *__restrict__ src"`
	Dst   P      `c:"unsigned int *__restrict__ dst"`
	Words uint64 `c:"unsigned long long words"`
}

// Entry points of the partitioned BFS module (kernels/partbfs.cu).
const (
	// KernelInit resets one part for a traversal.
	KernelInit = "pbfs_init"
	// KernelExpand expands the part's frontier top-down.
	KernelExpand = "pbfs_expand"
	// KernelCount counts each other part's discovered vertices.
	KernelCount = "pbfs_count"
	// KernelCompact turns slices into queues for the queue-form peers.
	KernelCompact = "pbfs_compact"
	// KernelApply claims the discoveries of a top-down level.
	KernelApply = "pbfs_apply"
	// KernelBottomUp runs one bottom-up level of the part.
	KernelBottomUp = "pbfs_bottom_up"
	// KernelCopy copies 4-byte words: the device-copy exchange of the
	// one-device simulation.
	KernelCopy = "pbfs_copy"
)

// Layout of the control buffer, in 8-byte words.
const (
	// CtlFound is the first of two found counters, by the parity of the
	// depth a step expands from; CtlEdges likewise the found vertices'
	// degrees. A step adds into slot depth%2 and zeroes slot (depth+1)%2.
	CtlFound = 0
	CtlEdges = 2
	// CtlMisuse holds a Misuse code when a kernel was launched against its
	// contract; CtlOverflow is set when a queue would pass its slot.
	CtlMisuse   = 4
	CtlOverflow = 5
	// CtlQueuePos is the first of MaxParts queue fill counters.
	CtlQueuePos = 8
	// CtlWords is the control buffer's size in 8-byte words.
	CtlWords = CtlQueuePos + MaxParts
	// ControlBytes is the control buffer's size in bytes: the scratch a
	// partition plan counts on every device.
	ControlBytes = 8 * CtlWords
)

// MaxParts is the most parts a traversal has: peers are passed as one
// 64-bit mask.
const MaxParts = 64

// NoRoot is InitParams.Root for a part that does not own the root.
const NoRoot = ^uint64(0)

// Misuse codes in CtlMisuse.
const (
	// MisuseShape: the part's vertices exceed its slice, the part count is
	// 0 or above MaxParts, or Self is not a part.
	MisuseShape = 1
	// MisuseVertex: a queue held an index outside the receiving part.
	MisuseVertex = 2
)

// ABI is the kernel ABI of the module, from which kernels/partbfs_abi.h is
// generated (go generate) and against which the PTX is checked.
var ABI = kernelabi.Module{
	Name: "partbfs",
	Doc:  "Kernel ABI of gpuplan's partitioned BFS kernels: constants shared with the Go host code and the\nparameter list of every entry point.",
	Kernels: []kernelabi.Kernel{
		{Name: KernelInit, Doc: "Resets one part for a traversal.", Params: InitParams[executor.DevPtr]{}},
		{Name: KernelExpand, Doc: "Expands the part's frontier top-down into every part's slice of next.", Params: ExpandParams[executor.DevPtr]{}},
		{Name: KernelCount, Doc: "Counts the vertices discovered for each other part.", Params: CountParams[executor.DevPtr]{}},
		{Name: KernelCompact, Doc: "Turns the slices of the queue-form peers into queues.", Params: CompactParams[executor.DevPtr]{}},
		{Name: KernelApply, Doc: "Claims a top-down level's discoveries for the part.", Params: ApplyParams[executor.DevPtr]{}},
		{Name: KernelBottomUp, Doc: "One bottom-up level of the part.", Params: BottomUpParams[executor.DevPtr]{}},
		{Name: KernelCopy, Doc: "A 4-byte-word copy, the exchange of the one-device simulation.", Params: CopyParams[executor.DevPtr]{}},
	},
	Consts: []kernelabi.Const{
		{Name: "CTL_FOUND", Value: CtlFound, Doc: "Control words (8 bytes each): found and edge counters by depth parity,\nmisuse and overflow flags, queue fill counters."},
		{Name: "CTL_EDGES", Value: CtlEdges},
		{Name: "CTL_MISUSE", Value: CtlMisuse},
		{Name: "CTL_OVERFLOW", Value: CtlOverflow},
		{Name: "CTL_QPOS", Value: CtlQueuePos},
		{Name: "CTL_WORDS", Value: CtlWords},
		{Name: "MAX_PARTS", Value: MaxParts, Doc: "The most parts: peers are passed as one 64-bit mask."},
		{Name: "MISUSE_SHAPE", Value: MisuseShape, Doc: "Misuse codes."},
		{Name: "MISUSE_VERTEX", Value: MisuseVertex},
	},
}
