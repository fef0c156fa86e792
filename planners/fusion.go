package planners

import (
	"fmt"
	"math"

	"github.com/gpuplan/gpuplan/internal/checked"
)

// LaunchFusionStage is one pipeline stage that may share a launch with its
// neighbours (vyre's LaunchFusionStage).
type LaunchFusionStage struct {
	// ID is the stable stage id; ids are unique within one call.
	ID uint32 `json:"id"`
	// LayoutHash is the memory-layout compatibility key: only stages with
	// the group's first hash join the group.
	LayoutHash uint64 `json:"layout_hash"`
	// InputBytes is the input the stage reads.
	InputBytes uint64 `json:"input_bytes"`
	// OutputBytes is the output the stage writes.
	OutputBytes uint64 `json:"output_bytes"`
	// ScratchBytes is the scratch the stage needs.
	ScratchBytes uint64 `json:"scratch_bytes"`
	// RequiresHostMaterialization means the stage's input must be visible on
	// the host, so it cannot join the previous stage's launch.
	RequiresHostMaterialization bool `json:"requires_host_materialization"`
}

// LaunchFusionGroup is a run of consecutive stages fused into one launch.
type LaunchFusionGroup struct {
	// StageIDs are the fused stages in pipeline order.
	StageIDs []uint32 `json:"stage_ids"`
	// LayoutHash is the first stage's layout hash, shared by all of them.
	LayoutHash uint64 `json:"layout_hash"`
	// RequiredBytes is the memory peak: the first stage's input, output and
	// scratch, plus scratch and output of every appended stage.
	RequiredBytes uint64 `json:"required_bytes"`
	// AvoidedIntermediateBytes sums the outputs consumed in place by the
	// next stage of the group.
	AvoidedIntermediateBytes uint64 `json:"avoided_intermediate_bytes"`
}

// LaunchFusionPlan is the result of PlanLaunchFusion.
type LaunchFusionPlan struct {
	// Groups are in pipeline order; flattened they list every stage once.
	Groups []LaunchFusionGroup `json:"groups"`
	// LaunchCount is the number of groups.
	LaunchCount uint32 `json:"launch_count"`
	// AvoidedLaunches = stages − groups.
	AvoidedLaunches uint32 `json:"avoided_launches"`
	// AvoidedIntermediateBytes sums the groups' avoided bytes.
	AvoidedIntermediateBytes uint64 `json:"avoided_intermediate_bytes"`
}

// FusionErrorKind names a launch-fusion failure (vyre's LaunchFusionError).
type FusionErrorKind uint8

const (
	// FusionZeroBudget: max_group_bytes is 0.
	FusionZeroBudget FusionErrorKind = iota + 1
	// FusionDuplicateStage: a stage id repeats (checked with 2+ stages).
	FusionDuplicateStage
	// FusionStageOverBudget: one stage alone needs more than the budget.
	FusionStageOverBudget
)

// String returns the vyre variant name.
func (k FusionErrorKind) String() string {
	switch k {
	case FusionZeroBudget:
		return "ZeroBudget"
	case FusionDuplicateStage:
		return "DuplicateStage"
	case FusionStageOverBudget:
		return "StageOverBudget"
	}
	return fmt.Sprintf("FusionErrorKind(%d)", uint8(k))
}

// FusionError is a launch-fusion planning failure. Arithmetic overflow is
// reported as *checked.OverflowError with the spec's label.
type FusionError struct {
	Kind FusionErrorKind
	// Index is the stage's position in the input (DuplicateStage and
	// StageOverBudget).
	Index int
	// ID is the stage id (DuplicateStage and StageOverBudget).
	ID uint32
	// RequiredBytes and BudgetBytes are set for StageOverBudget.
	RequiredBytes uint64
	BudgetBytes   uint64
}

// Field returns the input field the error is about.
func (e *FusionError) Field() string {
	switch e.Kind {
	case FusionZeroBudget:
		return "max_group_bytes"
	case FusionDuplicateStage:
		return fmt.Sprintf("stages[%d].id", e.Index)
	case FusionStageOverBudget:
		return fmt.Sprintf("stages[%d]", e.Index)
	}
	return ""
}

// Error describes the failure, names the input field and ends with a "Fix:" sentence.
func (e *FusionError) Error() string {
	switch e.Kind {
	case FusionZeroBudget:
		return "max_group_bytes is 0: no stage can fit a launch. Fix: set max_group_bytes to the device bytes one fused launch may use"
	case FusionDuplicateStage:
		return fmt.Sprintf("%s: stage id %d appears twice. Fix: give every stage a unique id", e.Field(), e.ID)
	case FusionStageOverBudget:
		return fmt.Sprintf("%s: stage %d alone needs %d bytes (input + output + scratch) but max_group_bytes is %d. Fix: raise max_group_bytes to at least %d or split stage %d",
			e.Field(), e.ID, e.RequiredBytes, e.BudgetBytes, e.RequiredBytes, e.ID)
	}
	return fmt.Sprintf("launch fusion error %d. Fix: check the stages", uint8(e.Kind))
}

// stageRequiredBytes is input + output + scratch of one stage on its own.
func stageRequiredBytes(s LaunchFusionStage) (uint64, error) {
	io, err := checked.Add(s.InputBytes, s.OutputBytes, "stage io bytes")
	if err != nil {
		return 0, err
	}
	return checked.Add(io, s.ScratchBytes, "stage required bytes")
}

// stagesInputs names the stage fields a fused launch's bytes come from.
func stagesInputs(first, last int) string {
	if first == last {
		return fmt.Sprintf("stages[%d].input_bytes + output_bytes + scratch_bytes", first)
	}
	return fmt.Sprintf("stages[%d].input_bytes + output_bytes + scratch_bytes, plus scratch_bytes + output_bytes of stages[%d..%d]", first, first+1, last)
}

// PlanLaunchFusion fuses runs of consecutive stages into single launches.
//
// A stage joins the current group when it does not need host
// materialisation, has the group's layout hash, and the group's peak plus
// the stage's scratch and output stays within maxGroupBytes (its input is
// the previous output, consumed in place). A host-materialising stage may
// start a group that later stages join.
//
// Errors, in order: FusionZeroBudget; with two or more stages
// FusionDuplicateStage; FusionStageOverBudget; overflow labels "stage io
// bytes", "stage required bytes", "fused scratch bytes", "fused output
// bytes", "avoided intermediate bytes", "total avoided intermediate bytes",
// and, for the 32-bit counts (Bits 32), "launch count" and "avoided
// launches".
func PlanLaunchFusion(stages []LaunchFusionStage, maxGroupBytes uint64) (LaunchFusionPlan, error) {
	if maxGroupBytes == 0 {
		return LaunchFusionPlan{}, &FusionError{Kind: FusionZeroBudget}
	}
	if len(stages) == 0 {
		return LaunchFusionPlan{Groups: []LaunchFusionGroup{}}, nil
	}
	if len(stages) > 1 {
		if _, i := positionsByID(len(stages), func(i int) uint32 { return stages[i].ID }); i < len(stages) {
			return LaunchFusionPlan{}, &FusionError{Kind: FusionDuplicateStage, Index: i, ID: stages[i].ID}
		}
	}
	// All stage ids share one backing array; each group takes a sub-slice.
	ids := make([]uint32, len(stages))
	for i, s := range stages {
		ids[i] = s.ID
	}
	var groups []LaunchFusionGroup
	var total uint64
	for i := 0; i < len(stages); {
		first := stages[i]
		required, err := stageRequiredBytes(first)
		if err != nil {
			return LaunchFusionPlan{}, checked.Inputs(err, stagesInputs(i, i))
		}
		if required > maxGroupBytes {
			return LaunchFusionPlan{}, &FusionError{Kind: FusionStageOverBudget, Index: i, ID: first.ID,
				RequiredBytes: required, BudgetBytes: maxGroupBytes}
		}
		var avoided uint64
		j := i + 1
		for ; j < len(stages); j++ {
			next := stages[j]
			if next.RequiresHostMaterialization || next.LayoutHash != first.LayoutHash {
				break
			}
			withScratch, err := checked.Add(required, next.ScratchBytes, "fused scratch bytes")
			if err != nil {
				return LaunchFusionPlan{}, checked.Inputs(err, stagesInputs(i, j))
			}
			withOutput, err := checked.Add(withScratch, next.OutputBytes, "fused output bytes")
			if err != nil {
				return LaunchFusionPlan{}, checked.Inputs(err, stagesInputs(i, j))
			}
			if withOutput > maxGroupBytes {
				break
			}
			// The avoided outputs are already part of required, so this sum
			// stays below the budget; it is checked all the same.
			if avoided, err = checked.Add(avoided, stages[j-1].OutputBytes, "avoided intermediate bytes"); err != nil {
				return LaunchFusionPlan{}, checked.Inputs(err, fmt.Sprintf("output_bytes of stages[%d..%d]", i, j-1))
			}
			required = withOutput
		}
		if total, err = checked.Add(total, avoided, "total avoided intermediate bytes"); err != nil {
			return LaunchFusionPlan{}, checked.Inputs(err, fmt.Sprintf("output_bytes of stages[0..%d]", j-1))
		}
		groups = append(groups, LaunchFusionGroup{
			StageIDs:                 ids[i:j:j],
			LayoutHash:               first.LayoutHash,
			RequiredBytes:            required,
			AvoidedIntermediateBytes: avoided,
		})
		i = j
	}
	if uint64(len(groups)) > math.MaxUint32 {
		return LaunchFusionPlan{}, &checked.OverflowError{Field: "launch count", Bits: 32, Inputs: "the number of stages"}
	}
	avoidedLaunches := uint64(len(stages) - len(groups))
	if avoidedLaunches > math.MaxUint32 {
		return LaunchFusionPlan{}, &checked.OverflowError{Field: "avoided launches", Bits: 32, Inputs: "the number of stages"}
	}
	return LaunchFusionPlan{
		Groups:                   groups,
		LaunchCount:              uint32(len(groups)),
		AvoidedLaunches:          uint32(avoidedLaunches),
		AvoidedIntermediateBytes: total,
	}, nil
}
