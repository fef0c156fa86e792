package rebuild

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/bits"

	"github.com/gpuplan/gpuplan/egraph"
	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/internal/checked"
	"github.com/gpuplan/gpuplan/megakernel"
	"github.com/gpuplan/gpuplan/planners"
	"github.com/gpuplan/gpuplan/workloads/harness"
)

// Sizes are the sizes of a rebuild's state: the e-graph's counts and the
// bytes of every resident buffer.
type Sizes struct {
	Rows       uint64 `json:"rows"`
	ChildSlots uint64 `json:"child_slots"`
	Classes    uint64 `json:"classes"`
	UnionPairs uint64 `json:"union_pairs"`
	// TableSlots is the hash table's slots: the smallest power of two at
	// least twice the rows (so it is at most half full) and at least
	// MinTableSlots.
	TableSlots uint64 `json:"table_slots"`
	// Bytes of each buffer, in allocation order.
	ImageBytes  uint64 `json:"image_bytes"`
	UnionsBytes uint64 `json:"unions_bytes"`
	PairsBytes  uint64 `json:"pairs_bytes"`
	ParentBytes uint64 `json:"parent_bytes"`
	ClsBytes    uint64 `json:"cls_bytes"`
	CanonBytes  uint64 `json:"canon_bytes"`
	TableBytes  uint64 `json:"table_bytes"`
	CtlBytes    uint64 `json:"ctl_bytes"`
	OutBytes    uint64 `json:"out_bytes"`
	// The incremental rounds' buffers (Config.Incremental; 0 otherwise,
	// see PlanIncrementalSizes): the uses index, the link tree, the slots
	// the rows own, the stamps, the lists and the counters.
	UseStartBytes uint64 `json:"use_start_bytes,omitempty"`
	UsesBytes     uint64 `json:"uses_bytes,omitempty"`
	LinkBytes     uint64 `json:"link_bytes,omitempty"`
	SlotBytes     uint64 `json:"slot_bytes,omitempty"`
	StampBytes    uint64 `json:"stamp_bytes,omitempty"`
	ListsBytes    uint64 `json:"lists_bytes,omitempty"`
	IncCtlBytes   uint64 `json:"inc_ctl_bytes,omitempty"`
}

// buffers returns the buffer sizes in allocation order.
func (z Sizes) buffers() []uint64 {
	return []uint64{z.ImageBytes, z.UnionsBytes, z.PairsBytes, z.ParentBytes, z.ClsBytes, z.CanonBytes, z.TableBytes, z.CtlBytes, z.OutBytes}
}

// incBuffers returns the incremental buffers' sizes in allocation order.
func (z Sizes) incBuffers() []uint64 {
	return []uint64{z.UseStartBytes, z.UsesBytes, z.LinkBytes, z.SlotBytes, z.StampBytes, z.ListsBytes, z.IncCtlBytes}
}

// PlanIncrementalSizes returns z with the buffers of KernelIncremental
// sized, every size checked: the uses index (classes+1 and rows+children
// words), the link tree (3 words a class), the slots (a word a row), the
// stamps (a word a class and a row), the lists (a word a class, two a row)
// and the counters (IncCtlWords words).
func PlanIncrementalSizes(z Sizes) (Sizes, error) {
	var err error
	words := func(dst *uint64, field string, terms ...uint64) {
		var n uint64
		if err == nil {
			n, err = checked.Sum(field, terms...)
		}
		if err == nil {
			*dst, err = checked.Mul(n, 4, field)
		}
	}
	words(&z.UseStartBytes, "uses index start bytes", z.Classes, 1)
	words(&z.UsesBytes, "uses index bytes", z.Rows, z.ChildSlots)
	words(&z.LinkBytes, "link tree bytes", z.Classes, z.Classes, z.Classes)
	words(&z.SlotBytes, "owned slot bytes", z.Rows)
	words(&z.StampBytes, "stamp bytes", z.Classes, z.Rows)
	words(&z.ListsBytes, "incremental list bytes", z.Classes, z.Rows, z.Rows)
	z.IncCtlBytes = 4 * IncCtlWords
	if err != nil {
		return Sizes{}, err
	}
	return z, nil
}

// Plans are the plan values a Session consumes. Every decision a session
// takes comes from one of them.
type Plans struct {
	// Image is the byte layout of the device image (egraph's nine
	// sections), uploaded once and kept resident.
	Image egraph.ByteLayout `json:"image"`
	// Work is the scan kernels' wave plan: RowScan waves for the row
	// stages, ChildEdgeScan for canon-children and EclassGroupScan for the
	// compaction of classes. The host loop launches a stage wave by wave.
	Work egraph.KernelWorkPlan `json:"work"`
	// Sizes are the state's sizes, the hash table's slots among them.
	Sizes Sizes `json:"sizes"`
	// Memory is the resident memory plan: NewSession refuses an e-graph
	// that does not fit before allocating anything, and allocates exactly
	// Memory.RequiredBytes.
	Memory megakernel.MemoryPlan `json:"memory"`
	// Convergence is the device-side convergence plan: its iteration
	// budget bounds the rounds of every arm, and the persistent kernel's
	// changed flag is read once, at the end.
	Convergence megakernel.ConvergencePlan `json:"convergence"`
	// Stages are the stages of one round as the launch fusion planner sees
	// them, and Fusion its plan: the device loop launches exactly its
	// groups, and the persistent kernel puts a grid barrier after each.
	Stages []planners.LaunchFusionStage `json:"stages"`
	Fusion planners.LaunchFusionPlan    `json:"fusion"`
	// CompactStages and CompactFusion are the same for the final
	// compaction.
	CompactStages []planners.LaunchFusionStage `json:"compact_stages"`
	CompactFusion planners.LaunchFusionPlan    `json:"compact_fusion"`
	// StepGrid is the step kernel's co-resident grid at its block size,
	// from the occupancy model; a launch that strides over its items uses
	// at most stepGridWaves times its blocks.
	StepGrid executor.GridPlan `json:"step_grid"`
	// PersistentGrid is the persistent kernel's launch shape.
	PersistentGrid executor.GridPlan `json:"persistent_grid"`
	// IncrementalGrid is KernelIncremental's launch shape, planned like
	// PersistentGrid when Config.Incremental is set (nil otherwise).
	IncrementalGrid *executor.GridPlan `json:"incremental_grid,omitempty"`
}

// tableSlots returns the smallest power of two at least 2*rows and at
// least MinTableSlots.
func tableSlots(rows uint64) (uint64, error) {
	if rows > 1<<62 {
		return 0, &checked.OverflowError{Field: "hash table slots"}
	}
	t := uint64(MinTableSlots)
	if 2*rows > t {
		t = 1 << bits.Len64(2*rows-1)
	}
	return t, nil
}

// PlanSizes sizes the state of a rebuild of an image's rows, children and
// classes with unionPairs pending pairs. Every size is checked; the image
// is 6 words per row, one per child, two per class and one more.
func PlanSizes(layout egraph.ByteLayout, imageBytes, unionPairs uint64) (Sizes, error) {
	z := Sizes{Rows: uint64(layout.RowCount), ChildSlots: uint64(layout.ChildCount), Classes: uint64(layout.GroupCount),
		UnionPairs: unionPairs, ImageBytes: imageBytes, CtlBytes: 4 * CtlWords}
	if z.Rows == 0 || z.Classes == 0 {
		return Sizes{}, fmt.Errorf("rebuild of an image with %d rows and %d classes: nothing to rebuild. Fix: give the e-graph at least one e-node", z.Rows, z.Classes)
	}
	var err error
	if z.TableSlots, err = tableSlots(z.Rows); err != nil {
		return Sizes{}, err
	}
	mul := func(dst *uint64, n, by uint64, field string) {
		if err == nil {
			*dst, err = checked.Mul(n, by, field)
		}
	}
	mul(&z.UnionsBytes, max(unionPairs, 1), 8, "union pair bytes")
	mul(&z.PairsBytes, z.Rows, 8, "emitted pair bytes")
	mul(&z.ParentBytes, z.Classes, 4, "union-find bytes")
	mul(&z.ClsBytes, z.Rows, 4, "canonical class bytes")
	mul(&z.CanonBytes, max(z.ChildSlots, 1), 4, "canonical children bytes")
	mul(&z.TableBytes, z.TableSlots, 8, "hash table bytes")
	var outWords uint64
	if err == nil {
		outWords, err = checked.Sum("readback words", 2, z.Classes, z.Rows)
	}
	mul(&z.OutBytes, outWords, 8, "readback bytes")
	return z, err
}

// imageRowBytes and imageChildBytes are the image's bytes per row (five
// row sections and group_rows) and per child slot.
const (
	imageRowBytes   = 24
	imageChildBytes = 4
)

// MemoryRequest returns the memory request of a rebuild with these sizes:
// the graph is the image's row and child sections; the frontier is the
// pending pairs (the input's unions and the pairs a round emits); the
// scratch is the image's two class sections and the union-find, canonical
// arrays, hash table and control words (and the incremental buffers, when
// sized); the output is the two readback slabs.
func MemoryRequest(z Sizes, budget uint64) (megakernel.MemoryRequest, error) {
	graph, err := megakernel.GraphLayoutBytes(graphShape(z), imageRowBytes, imageChildBytes)
	if err != nil {
		return megakernel.MemoryRequest{}, err
	}
	if z.ImageBytes < graph {
		return megakernel.MemoryRequest{}, fmt.Errorf("image of %d bytes is smaller than its %d row and child bytes. Fix: plan the sizes from the image's upload plan", z.ImageBytes, graph)
	}
	frontier, err := checked.Add(z.UnionsBytes, z.PairsBytes, "pending pair bytes")
	if err != nil {
		return megakernel.MemoryRequest{}, err
	}
	scratch, err := checked.Sum("rebuild scratch bytes", append([]uint64{z.ImageBytes - graph, z.ParentBytes, z.ClsBytes, z.CanonBytes, z.TableBytes, z.CtlBytes},
		z.incBuffers()...)...)
	if err != nil {
		return megakernel.MemoryRequest{}, err
	}
	return megakernel.MemoryRequest{Graph: graphShape(z), BytesPerNode: imageRowBytes, BytesPerEdge: imageChildBytes,
		FrontierBytes: frontier, ScratchBytes: scratch, OutputBytes: z.OutBytes, BudgetBytes: budget}, nil
}

// graphShape is the e-graph as the planners see it: e-nodes and child
// slots.
func graphShape(z Sizes) megakernel.GraphShape {
	return megakernel.GraphShape{NodeCount: z.Rows, EdgeCount: z.ChildSlots}
}

// PlanMemory plans the resident memory of a rebuild with sizes z under
// budget. It fails with *megakernel.OverBudgetError, wrapped with the
// input's name, when the state does not fit.
func PlanMemory(name string, z Sizes, budget uint64) (megakernel.MemoryPlan, error) {
	req, err := MemoryRequest(z, budget)
	if err != nil {
		return megakernel.MemoryPlan{}, err
	}
	return harness.PlanMemory("e-graph rebuild of "+name, req)
}

// layoutHash names the state a stage needs complete, for the launch
// fusion planner: stages with one hash may share a launch without a grid
// barrier between them.
func layoutHash(name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte("gpuplan/rebuild/" + name))
	return max(h.Sum64(), 1)
}

// The layout hashes of the stages: the union-find before the pending pairs
// are applied (unite, clear), the rows after (the canonical and group
// stages), and the final state (the compaction).
var (
	hashPending = layoutHash("pending")
	hashRows    = layoutHash("rows")
	hashFinal   = layoutHash("final")
)

// FusionStages returns the stages of one round for the launch fusion
// planner, with the bytes each reads, writes and needs. Unite requires
// host materialisation: its input, the round's pending pairs, is what the
// host loop reads as its changed flag, so it starts a launch.
func FusionStages(z Sizes) []planners.LaunchFusionStage {
	rows4 := 4 * z.Rows
	return []planners.LaunchFusionStage{
		{ID: uint32(StageUnite), LayoutHash: hashPending, InputBytes: z.UnionsBytes + z.PairsBytes, OutputBytes: z.ParentBytes, RequiresHostMaterialization: true},
		{ID: uint32(StageClear), LayoutHash: hashPending, OutputBytes: z.TableBytes},
		{ID: uint32(StageCanonClasses), LayoutHash: hashRows, InputBytes: rows4 + z.ParentBytes, OutputBytes: z.ClsBytes},
		{ID: uint32(StageCanonChildren), LayoutHash: hashRows, InputBytes: 4*z.ChildSlots + z.ParentBytes, OutputBytes: z.CanonBytes},
		{ID: uint32(StageGroup), LayoutHash: hashRows, InputBytes: 3*rows4 + z.ClsBytes + z.CanonBytes, OutputBytes: z.TableBytes + z.PairsBytes},
	}
}

// CompactFusionStages returns the stages of the final compaction.
func CompactFusionStages(z Sizes) []planners.LaunchFusionStage {
	half := z.OutBytes / 2
	return []planners.LaunchFusionStage{
		{ID: uint32(StageCompactClasses), LayoutHash: hashFinal, InputBytes: z.ParentBytes + 8*z.Classes, OutputBytes: half},
		{ID: uint32(StageCompactNodes), LayoutHash: hashFinal, InputBytes: z.TableBytes + z.ClsBytes, OutputBytes: z.OutBytes - half},
	}
}

// GroupMask returns the stage mask of a fusion group.
func GroupMask(g planners.LaunchFusionGroup) uint64 {
	var m uint64
	for _, id := range g.StageIDs {
		m |= Stage(id).Bit()
	}
	return m
}

// PhaseStarts returns the persistent kernel's phase starts for a fusion
// plan: the first stage of every group.
func PhaseStarts(p planners.LaunchFusionPlan) uint64 {
	var m uint64
	for _, g := range p.Groups {
		if len(g.StageIDs) > 0 {
			m |= Stage(g.StageIDs[0]).Bit()
		}
	}
	return m
}

// checkGroups checks that every group of a fusion plan is a set of stages
// one launch may run (no grid barrier needed inside it): unite never with
// the stages after it, clear never with group.
func checkGroups(p planners.LaunchFusionPlan) error {
	after := StageCanonClasses.Bit() | StageCanonChildren.Bit() | StageGroup.Bit()
	for i, g := range p.Groups {
		m := GroupMask(g)
		if m&StageUnite.Bit() != 0 && m&after != 0 || m&StageClear.Bit() != 0 && m&StageGroup.Bit() != 0 {
			return fmt.Errorf("launch fusion group %d fuses stages %v, which need a grid barrier between them. Fix: give those stages different layout hashes", i, g.StageIDs)
		}
	}
	return nil
}

// PlanFusion plans the launches of one round and of the compaction under
// maxGroupBytes.
func PlanFusion(z Sizes, maxGroupBytes uint64) (round, compact planners.LaunchFusionPlan, err error) {
	return planFusion(FusionStages(z), CompactFusionStages(z), maxGroupBytes)
}

func planFusion(stages, compactStages []planners.LaunchFusionStage, maxGroupBytes uint64) (round, compact planners.LaunchFusionPlan, err error) {
	if round, err = planners.PlanLaunchFusion(stages, maxGroupBytes); err != nil {
		return round, compact, fmt.Errorf("rebuild launch fusion: %w", err)
	}
	if err = checkGroups(round); err != nil {
		return round, compact, err
	}
	if compact, err = planners.PlanLaunchFusion(compactStages, maxGroupBytes); err != nil {
		return round, compact, fmt.Errorf("rebuild compaction fusion: %w", err)
	}
	return round, compact, nil
}

// PlanConvergence plans the device loop: every round that emits a pair
// unites at least two classes, so a rebuild of c classes converges within
// c+1 rounds (capped at 2^32-1).
func PlanConvergence(classes uint64) (megakernel.ConvergencePlan, error) {
	return megakernel.PlanDeviceConvergence(uint32(min(classes+1, math.MaxUint32)), megakernel.ChangedFlagBytes, 0)
}

// ArmForTopology maps an execution topology to the arm that runs it: a
// fused wave or a warp-sparse frontier (few pending pairs per e-node, where
// a round is mostly launch overhead) runs as one persistent cooperative
// launch; every other topology has rounds large enough to fill the device
// and runs as the device loop.
func ArmForTopology(t megakernel.Topology) Arm {
	return harness.TopologyArm(t, ArmPersistent, ArmDeviceLoop)
}

// Profile is what one measured rebuild says about an e-graph, the input of
// the arm plan.
type Profile struct {
	// Rounds and Rows are the rebuild's rounds and e-nodes.
	Rounds, Rows int
	// PendingPairs is the pairs applied over all rounds: the input's
	// unions and every pair a round emitted.
	PendingPairs uint64
	// RoundNs is the host loop's cost of one round.
	RoundNs float64
	// StepCost is the launch overhead and the host loop's readback per
	// round.
	harness.StepCost
}

// ArmPlan is the execution arm the megakernel topology selection picks for
// an e-graph from its measured profile.
type ArmPlan = harness.ArmPlan[Arm, Profile]

// PlanArm selects the topology from a measured profile: the schedule sample
// is one round (its cost, the frontier density as the pending pairs per
// e-node per round, its readback), the fusion pressure comes from the
// homotopy scheduler, and memory pressure from the memory plan.
func PlanArm(p Profile, graph megakernel.GraphShape, mem megakernel.MemoryPlan) (ArmPlan, error) {
	if p.Rounds < 1 || p.Rows < 1 {
		return ArmPlan{}, fmt.Errorf("profile of %d rounds over %d e-nodes is not a rebuild. Fix: profile a rebuild of a non-empty e-graph", p.Rounds, p.Rows)
	}
	density := min(1, float64(p.PendingPairs)/(float64(p.Rounds)*float64(p.Rows)))
	return harness.PlanStep(p, p.StepCost, p.RoundNs, density, graph, mem, ArmForTopology)
}
