package rebuild

import (
	"github.com/gpuplan/gpuplan/egraph"
	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/internal/kernelabi"
)

//go:generate go run ./internal/genheader kernels/rebuild_abi.h

// Ptr is the pointer type of a kernel parameter struct (kernelabi.Ptr):
// executor.Buffer on the host, executor.DevPtr in the emulation.
type Ptr = kernelabi.Ptr

// ResetParams are the parameters of KernelReset.
type ResetParams[P Ptr] struct {
	Parent  P      `c:"unsigned int *parent"`
	Ctl     P      `c:"unsigned int *ctl"`
	Out     P      `c:"unsigned long long *out"`
	Classes uint64 `c:"unsigned long long classes"`
}

// StateParams are the parameters KernelStep and KernelPersistent begin
// with: the resident state (the image, the pending unions, the union-find,
// the canonical classes and children, the hash table, the pairs, the
// control words and the output), the image's sections as word offsets,
// and the sizes.
type StateParams[P Ptr] struct {
	Image       P      `c:"const unsigned int *__restrict__ image"`
	Unions      P      `c:"const unsigned int *__restrict__ unions"`
	Parent      P      `c:"unsigned int *parent"`
	Cls         P      `c:"unsigned int *cls"`
	Canon       P      `c:"unsigned int *canon"`
	Table       P      `c:"unsigned long long *table"`
	Pairs       P      `c:"unsigned int *pairs"`
	Ctl         P      `c:"unsigned int *ctl"`
	Out         P      `c:"unsigned long long *out"`
	SecClass    uint64 `c:"unsigned long long sec_class"`
	SecOp       uint64 `c:"unsigned long long sec_op"`
	SecOffset   uint64 `c:"unsigned long long sec_offset"`
	SecLen      uint64 `c:"unsigned long long sec_len"`
	SecChildren uint64 `c:"unsigned long long sec_children"`
	SecGroups   uint64 `c:"unsigned long long sec_groups"`
	Rows        uint64 `c:"unsigned long long rows"`
	ChildSlots  uint64 `c:"unsigned long long child_slots"`
	Classes     uint64 `c:"unsigned long long classes"`
	UnionPairs  uint64 `c:"unsigned long long union_pairs"`
	TableSlots  uint64 `c:"unsigned long long table_slots"`
}

// StepParams are the parameters of KernelStep: the resident state, then
// the round, the stages to run (a mask of Stage bits) and the range of
// items of each stage's pass the launch covers.
type StepParams[P Ptr] struct {
	StateParams[P] `c:"REBUILD_STATE_PARAMS"`
	Round          uint64 `c:"unsigned long long round"`
	Stages         uint64 `c:"unsigned long long stages"`
	ItemFirst      uint64 `c:"unsigned long long item_first"`
	ItemCount      uint64 `c:"unsigned long long item_count"`
}

// PersistentParams are the parameters of KernelPersistent: the resident
// state, the round budget and the stages that start a phase (a mask of
// Stage bits; a grid barrier precedes each such stage but the first).
type PersistentParams[P Ptr] struct {
	StateParams[P] `c:"REBUILD_STATE_PARAMS"`
	MaxRounds      uint64 `c:"unsigned long long max_rounds"`
	PhaseStarts    uint64 `c:"unsigned long long phase_starts"`
}

// IncStateParams are the incremental state (egraph.RebuildIncremental's
// arrays) that KernelIncremental and KernelIncrementalStep take after the
// resident state. UseStart and Uses are egraph.UsesIndex, uploaded once;
// Link holds the link tree (head, next and up, classes words each); Slot
// the table slot each row owns (IncNil for none); Stamp the round stamps
// of the classes then of the rows; Lists the losers (classes words), the
// dirty rows and the key-dirty rows (rows words each); IncCtl the counters
// (IncCtlWords words).
type IncStateParams[P Ptr] struct {
	UseStart P `c:"const unsigned int *__restrict__ use_start"`
	Uses     P `c:"const unsigned int *__restrict__ uses"`
	Link     P `c:"unsigned int *link"`
	Slot     P `c:"unsigned int *slot"`
	Stamp    P `c:"unsigned int *stamp"`
	Lists    P `c:"unsigned int *lists"`
	IncCtl   P `c:"unsigned int *inc_ctl"`
}

// IncrementalParams are the parameters of KernelIncremental: the resident
// state, the incremental state and the round budget.
type IncrementalParams[P Ptr] struct {
	StateParams[P]    `c:"REBUILD_STATE_PARAMS"`
	IncStateParams[P] `c:"REBUILD_INC_PARAMS"`
	MaxRounds         uint64 `c:"unsigned long long max_rounds"`
}

// IncStepParams are the parameters of KernelIncrementalStep: the resident
// state, the incremental state, the round and the phase (0 to
// IncPhases-1, or IncPhaseInit).
type IncStepParams[P Ptr] struct {
	StateParams[P]    `c:"REBUILD_STATE_PARAMS"`
	IncStateParams[P] `c:"REBUILD_INC_PARAMS"`
	Round             uint64 `c:"unsigned long long round"`
	Phase             uint64 `c:"unsigned long long phase"`
}

// BarrierParams are the parameters of KernelBarrierOnly.
type BarrierParams[P Ptr] struct {
	Ctl    P      `c:"unsigned int *ctl"`
	Rounds uint64 `c:"unsigned long long rounds"`
	Phases uint64 `c:"unsigned long long phases"`
}

// BucketParams are the parameters of KernelBucketPairs: the image and its
// sections, the scratch slab laid out by egraph.PlanScratchSlab (byte
// offsets of its four parts), the control words for the pair counters,
// and one wave of one signature bucket's candidate pairs.
type BucketParams[P Ptr] struct {
	Image       P      `c:"const unsigned int *__restrict__ image"`
	Slab        P      `c:"unsigned char *slab"`
	Ctl         P      `c:"unsigned int *ctl"`
	SecClass    uint64 `c:"unsigned long long sec_class"`
	SecOp       uint64 `c:"unsigned long long sec_op"`
	SecOffset   uint64 `c:"unsigned long long sec_offset"`
	SecLen      uint64 `c:"unsigned long long sec_len"`
	SecSig      uint64 `c:"unsigned long long sec_sig"`
	SecChildren uint64 `c:"unsigned long long sec_children"`
	ChildSlots  uint64 `c:"unsigned long long child_slots"`
	BucketWords uint64 `c:"unsigned long long bucket_words"`
	BucketRows  uint64 `c:"unsigned long long bucket_rows"`
	OutPairs    uint64 `c:"unsigned long long out_pairs"`
	OutCount    uint64 `c:"unsigned long long out_count"`
	Bucket      uint64 `c:"unsigned long long bucket"`
	First       uint64 `c:"unsigned long long first"`
	Count       uint64 `c:"unsigned long long count"`
}

// Entry points of the rebuild kernel module (kernels/rebuild.cu).
const (
	// KernelReset prepares one rebuild: every class its own root, the
	// control words and the two output counts zero.
	KernelReset = "rebuild_reset"
	// KernelStep runs the stages of one round (or the final compaction)
	// that one launch covers: the host loop launches one stage at a time,
	// the device loop the launch fusion plan's groups.
	KernelStep = "rebuild_step"
	// KernelPersistent runs every round and the compaction in one
	// cooperative launch, with a grid barrier between phases.
	KernelPersistent = "rebuild_persistent"
	// KernelIncremental runs the incremental rounds of
	// egraph.RebuildIncremental and the compaction in one cooperative
	// launch: after the first, a round canonicalises and re-inserts only
	// the rows its unions changed, into a table kept across rounds.
	KernelIncremental = "rebuild_incremental"
	// KernelIncrementalStep runs one phase of one incremental round, or
	// the initialisation of the incremental state: the host loop and the
	// device loop launch the phases one after another.
	KernelIncrementalStep = "rebuild_incremental_step"
	// KernelBarrierOnly crosses the persistent kernel's barriers and does
	// nothing else: its round floor.
	KernelBarrierOnly = "rebuild_barrier_only"
	// KernelBucketPairs is vyre's pairwise structural-equivalence check
	// inside signature buckets: the reference path.
	KernelBucketPairs = "rebuild_bucket_pairs"
)

// Stage is one pass of a rebuild round (or of the final compaction); a
// launch runs a set of them, as a mask of 1<<Stage bits.
type Stage uint

// The stages, in the order a round runs them.
const (
	// StageUnite applies the round's pending pairs to the union-find:
	// smallest id wins, compare-and-swap on the larger root, path halving.
	StageUnite Stage = iota
	// StageClear empties the hash table of the previous round.
	StageClear
	// StageCanonClasses sets every e-node's canonical class (RowScan).
	StageCanonClasses
	// StageCanonChildren rewrites every child slot to its class's root
	// (ChildEdgeScan).
	StageCanonChildren
	// StageGroup inserts every e-node into the hash table under its
	// (op, canonical children) and emits the pair (owner's class, its
	// class) when an equal e-node of another class owns the key (RowScan).
	StageGroup
	// StageCompactClasses emits every class id whose root differs, with
	// its root: the canonical rewrites (EclassGroupScan).
	StageCompactClasses
	// StageCompactNodes emits every e-node that owns a key of the final
	// table, with its class: the deduplicated e-node table.
	StageCompactNodes
	stageCount
)

var stageNames = [...]string{"unite", "clear", "canon-classes", "canon-children", "group", "compact-classes", "compact-nodes"}

// String returns the stage's name.
func (s Stage) String() string {
	if s < stageCount {
		return stageNames[s]
	}
	return "stage(?)"
}

// MarshalText encodes the stage's name.
func (s Stage) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Bit returns the stage's bit in a stage mask.
func (s Stage) Bit() uint64 { return 1 << s }

// RoundStages are the stages of one round, in order.
func RoundStages() []Stage {
	return []Stage{StageUnite, StageClear, StageCanonClasses, StageCanonChildren, StageGroup}
}

// CompactStages are the stages of the final compaction, in order.
func CompactStages() []Stage { return []Stage{StageCompactClasses, StageCompactNodes} }

// Layout of the kernels' control buffer, in uint32 words, one 128-byte
// line per group of words: lines 0 to 2 hold the persistent kernel's three
// 64-bit barrier words, lines 3 to 5 the step kernels' ring of three
// pending-pair counts, line 6 the results and line 7 the structural-
// equivalence counters.
const (
	// CtlLineWords is the number of uint32 words in one 128-byte line.
	CtlLineWords = 32
	// CtlWords is the size of the control buffer in uint32 words.
	CtlWords = 8 * CtlLineWords
	// ctlCountLine, ctlResultLine and ctlBucketLine are the first lines
	// of the counts, the results and the bucket counters.
	ctlCountLine  = 3
	ctlResultLine = 6
	ctlBucketLine = 7
	// CtlResult is the first word of the result line.
	CtlResult = ctlResultLine * CtlLineWords
	// CtlBucket is the first word of the structural-equivalence counters.
	CtlBucket = ctlBucketLine * CtlLineWords
)

// Result words, as offsets from CtlResult.
const (
	// ResultDone is set once a step launch found that the previous round
	// emitted no pair: every later round launch returns at once.
	ResultDone = 0
	// ResultRounds is the number of rounds run, the last of which emitted
	// nothing (set by the step launch that found it, and by the persistent
	// kernel).
	ResultRounds = 1
	// ResultChanged is the persistent kernel's final changed flag: 0 when
	// a round emitted nothing, 1 when the round budget ran out first.
	ResultChanged = 2
	// ResultMisuse is MisuseGrid or MisusePhases when a kernel was launched
	// against its contract (it then does nothing).
	ResultMisuse = 3
	// ResultUnionMerges counts the links of round 0 (the pending unions).
	ResultUnionMerges = 4
	// ResultCongruenceMerges counts the links of the later rounds.
	ResultCongruenceMerges = 5
	// ResultOverflow is non-zero if a table probe passed every slot.
	ResultOverflow = 6
	// ResultBarriers is the number of grid barriers the persistent kernel
	// crossed.
	ResultBarriers = 7
	// ResultWords is the number of result words the host reads after a run.
	ResultWords = 8
)

// Structural-equivalence counters: 64-bit words, as uint32 offsets from
// CtlBucket.
const (
	// BucketExact counts candidate pairs structurally equal across classes.
	BucketExact = 0
	// BucketRedundant counts equal pairs already in one class.
	BucketRedundant = 2
	// BucketRejected counts pairs whose signatures collide but whose rows
	// differ.
	BucketRejected = 4
)

// Misuse codes in ResultMisuse.
const (
	// MisuseGrid: KernelPersistent or KernelIncremental was launched with
	// more than MaxPersistentBlocks blocks.
	MisuseGrid = 1
	// MisusePhases: KernelPersistent was given phase starts that do not
	// begin with StageUnite, a step launch mixed round and compaction
	// stages, or KernelIncrementalStep was given a phase past
	// IncPhaseInit.
	MisusePhases = 2
)

// Counters of KernelIncremental in its IncCtl buffer, in uint32 words.
const (
	// IncLosers counts the losers of the round's unite phase.
	IncLosers = 0
	// IncDirty counts the round's dirty rows.
	IncDirty = 1
	// IncKeyed counts the round's key-dirty rows.
	IncKeyed = 2
	// IncTombs is the table's tombstones at the start of the round, and
	// IncTombsNew those the round retired.
	IncTombs    = 3
	IncTombsNew = 4
	// IncFullPasses counts the rounds after the first run as full passes.
	IncFullPasses = 5
	// IncTouches is the 64-bit count of rows canonicalised over all rounds
	// (egraph.RebuildResult.NodeTouches), words 6 and 7.
	IncTouches = 6
	// IncFull is 1 while the round runs as a full pass (set by its
	// canonicalise phase, read by its group phase).
	IncFull = 8
	// IncCtlWords is the size of the IncCtl buffer: one 128-byte line.
	IncCtlWords = CtlLineWords
	// IncNil is an empty link, list entry or slot.
	IncNil = 0xFFFFFFFF
	// IncTombstone is the low word of a retired table slot.
	IncTombstone = 0xFFFFFFFF
	// IncPhases is the grid barriers of one incremental round: unite,
	// mark, canonicalise, group. One more precedes the first round.
	IncPhases = 4
	// IncPhaseInit is KernelIncrementalStep's phase that initialises the
	// incremental state, launched once before round 0.
	IncPhaseInit = 4
)

// Constants of NodeSignature (egraph), which the kernels hash e-nodes with.
const (
	sigOpMul    = 0x9E3779B1
	sigChildMul = 0x85EBCA6B
	sigFinMul1  = 0x85EBCA6B
	sigFinMul2  = 0xC2B2AE35
)

// The kernels' fixed sizes.
const (
	// arriveMask selects the arrivals in a barrier word; its high half
	// counts the pairs emitted in the phase that ends at the barrier.
	arriveMask = 0xffff
	// MaxPersistentBlocks is the largest persistent grid: a barrier word
	// counts block arrivals in 16 bits.
	MaxPersistentBlocks = arriveMask
	// MinTableSlots is the smallest hash table.
	MinTableSlots = 16
	// BucketRecordWords is the size of a signature bucket's device record.
	BucketRecordWords = egraph.SignatureBucketRecordWords
)

// ABI is the kernel ABI of the rebuild module, from which
// kernels/rebuild_abi.h is generated (go generate) and against which the
// PTX is checked.
var ABI = kernelabi.Module{
	Name: "rebuild",
	Doc:  "Kernel ABI of gpuplan's e-graph rebuild kernels: constants shared with the Go host code and\nthe parameter list of every entry point.",
	Kernels: []kernelabi.Kernel{
		{Name: KernelReset, Doc: "Prepares one rebuild.", Params: ResetParams[executor.DevPtr]{}},
		{Name: KernelStep, Doc: "The stages of one round, or the compaction, that one launch covers.", Params: StepParams[executor.DevPtr]{}},
		{Name: KernelPersistent, Doc: "Every round and the compaction in one cooperative launch.", Params: PersistentParams[executor.DevPtr]{}},
		{Name: KernelBarrierOnly, Doc: "The persistent kernel's barriers alone.", Params: BarrierParams[executor.DevPtr]{}},
		{Name: KernelIncremental, Doc: "The incremental rounds and the compaction in one cooperative launch.", Params: IncrementalParams[executor.DevPtr]{}},
		{Name: KernelIncrementalStep, Doc: "One phase of one incremental round, or their initialisation.", Params: IncStepParams[executor.DevPtr]{}},
		{Name: KernelBucketPairs, Doc: "Pairwise structural equivalence inside one signature bucket's wave.", Params: BucketParams[executor.DevPtr]{}},
	},
	Consts: abiConsts(),
}

// abiConsts lists the constants the header defines.
func abiConsts() []kernelabi.Const {
	c := []kernelabi.Const{
		{Name: "CTL_LINE", Value: CtlLineWords, Doc: "uint32 words in one 128-byte control line."},
		{Name: "CTL_WORDS", Value: CtlWords, Doc: "uint32 words in the control buffer."},
		{Name: "CTL_COUNT_LINE", Value: ctlCountLine, Doc: "First line of the ring of pending-pair counts."},
		{Name: "CTL_RESULT", Value: CtlResult, Doc: "First word of the result line, and of the bucket counters (64-bit words)."},
		{Name: "CTL_BUCKET", Value: CtlBucket},
		{Name: "RESULT_DONE", Value: ResultDone, Doc: "Result words, from CTL_RESULT."},
		{Name: "RESULT_ROUNDS", Value: ResultRounds},
		{Name: "RESULT_CHANGED", Value: ResultChanged},
		{Name: "RESULT_MISUSE", Value: ResultMisuse},
		{Name: "RESULT_UNION_MERGES", Value: ResultUnionMerges},
		{Name: "RESULT_CONGRUENCE_MERGES", Value: ResultCongruenceMerges},
		{Name: "RESULT_OVERFLOW", Value: ResultOverflow},
		{Name: "RESULT_BARRIERS", Value: ResultBarriers},
		{Name: "BUCKET_EXACT", Value: BucketExact, Doc: "Structural-equivalence counters (64-bit), from CTL_BUCKET."},
		{Name: "BUCKET_REDUNDANT", Value: BucketRedundant},
		{Name: "BUCKET_REJECTED", Value: BucketRejected},
		{Name: "MISUSE_GRID", Value: MisuseGrid, Doc: "Misuse codes."},
		{Name: "MISUSE_PHASES", Value: MisusePhases},
		{Name: "ARRIVE_MASK", Value: arriveMask, Doc: "A barrier word's arrival field; its high half counts the pairs emitted."},
		{Name: "SIG_OP_MUL", Value: sigOpMul, Doc: "NodeSignature's multipliers: op, child, and the two of the finaliser."},
		{Name: "SIG_CHILD_MUL", Value: sigChildMul},
		{Name: "SIG_FIN_MUL1", Value: sigFinMul1},
		{Name: "SIG_FIN_MUL2", Value: sigFinMul2},
		{Name: "BUCKET_RECORD_WORDS", Value: BucketRecordWords, Doc: "Words of a signature bucket record: signature, first row, rows, pairs (64 bits)."},
		{Name: "INC_LOSERS", Value: IncLosers, Doc: "The incremental kernel's counters, uint32 words of inc_ctl (INC_TOUCHES is 64-bit)."},
		{Name: "INC_DIRTY", Value: IncDirty},
		{Name: "INC_KEYED", Value: IncKeyed},
		{Name: "INC_TOMBS", Value: IncTombs},
		{Name: "INC_TOMBS_NEW", Value: IncTombsNew},
		{Name: "INC_FULL_PASSES", Value: IncFullPasses},
		{Name: "INC_TOUCHES", Value: IncTouches},
		{Name: "INC_FULL", Value: IncFull},
		{Name: "INC_CTL_WORDS", Value: IncCtlWords},
		{Name: "INC_NIL", Value: IncNil, Doc: "An empty link, list entry or slot; the low word of a table tombstone."},
		{Name: "INC_TOMBSTONE", Value: IncTombstone},
		{Name: "INC_PHASES", Value: IncPhases, Doc: "Grid barriers per incremental round; the step kernel's initialising phase."},
		{Name: "INC_PHASE_INIT", Value: IncPhaseInit},
	}
	names := [...]string{"STAGE_UNITE", "STAGE_CLEAR", "STAGE_CANON_CLASSES", "STAGE_CANON_CHILDREN", "STAGE_GROUP", "STAGE_COMPACT_CLASSES", "STAGE_COMPACT_NODES"}
	for s := range stageCount {
		k := kernelabi.Const{Name: names[s], Value: uint64(s)}
		if s == 0 {
			k.Doc = "Stage numbers; a launch's stages are a mask of 1 << stage."
		}
		c = append(c, k)
	}
	return c
}
