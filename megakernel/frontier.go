package megakernel

import (
	"fmt"
	"strings"

	"github.com/gpuplan/gpuplan/internal/checked"
)

// FusedWaveScratchMultiplier is the scratch multiplier of a fused wave in
// the frontier memory split: a wave costs frontier + 4 x scratch + output.
const FusedWaveScratchMultiplier = 4

// FrontierWave is the per-wave memory footprint (vyre's
// MegakernelFrontierWave). A wave's index is its id.
type FrontierWave struct {
	FrontierBytes uint64 `json:"frontier_bytes"`
	ScratchBytes  uint64 `json:"scratch_bytes"`
	OutputBytes   uint64 `json:"output_bytes"`
}

// FusedBytes returns the wave's fused cost frontier + 4 x scratch + output,
// or an overflow error labelled "fused wave bytes".
func (w FrontierWave) FusedBytes() (uint64, error) {
	s, err := checked.Mul(w.ScratchBytes, FusedWaveScratchMultiplier, "fused wave bytes")
	if err != nil {
		return 0, err
	}
	return checked.Sum("fused wave bytes", w.FrontierBytes, s, w.OutputBytes)
}

// GroupOverBudgetError reports that the resident graph or a single fused
// wave does not fit the memory budget (vyre's GroupOverBudget). Field is
// "resident graph bytes" or "single fused frontier wave bytes".
type GroupOverBudgetError struct {
	RequiredBytes uint64
	BudgetBytes   uint64
	Field         string
	// Wave is the offending wave id for "single fused frontier wave bytes",
	// -1 otherwise.
	Wave int
}

// Error describes the failure and ends with a "Fix:" sentence.
func (e *GroupOverBudgetError) Error() string {
	what := e.Field
	if e.Wave >= 0 {
		what = fmt.Sprintf("%s (wave %d)", e.Field, e.Wave)
	}
	return fmt.Sprintf("%s: %d bytes required but only %d bytes of budget are available. Fix: raise the memory budget, shrink the resident graph, or split the wave's frontier and scratch buffers",
		what, e.RequiredBytes, e.BudgetBytes)
}

// FrontierMemoryPlan is the barrier plan after splitting each layer to fit
// the memory budget, with the per-group peaks (vyre's frontier memory plan).
type FrontierMemoryPlan struct {
	// Barriers is the split plan: Order keeps the layered order, GroupStart
	// has the extra boundaries, and GlobalBarriers = groups - 1.
	Barriers BarrierPlan `json:"barriers"`
	// Layers is the number of dependency layers before the split.
	Layers int `json:"layers"`
	// PeakFrontierBytes, PeakScratchBytes and PeakOutputBytes are the
	// per-field maxima of the group sums (scratch unscaled).
	PeakFrontierBytes uint64 `json:"peak_frontier_bytes"`
	PeakScratchBytes  uint64 `json:"peak_scratch_bytes"`
	PeakOutputBytes   uint64 `json:"peak_output_bytes"`
	// AmortizedReadbackBytes = max(readback bytes, peak output bytes).
	AmortizedReadbackBytes uint64 `json:"amortized_readback_bytes"`
	// MaxGroupWidth is the largest group size.
	MaxGroupWidth int `json:"max_group_width"`
}

// FrontierMemoryRequest is the input of PlanFrontierMemory.
type FrontierMemoryRequest struct {
	Waves              []FrontierWave
	Dependencies       []Dependency
	ResidentGraphBytes uint64
	BudgetBytes        uint64
	ReadbackBytes      uint64
}

// PlanFrontierMemory barrier-plans the waves (PlanBarriers) and splits every
// layer greedily, in layer order, into chunks whose fused cost fits
// BudgetBytes - ResidentGraphBytes (vyre's
// plan_megakernel_frontier_memory_with_scratch). It runs in
// O(waves + dependencies).
//
// Errors, in order: the barrier errors; *GroupOverBudgetError for "resident
// graph bytes" and then "single fused frontier wave bytes"; and
// *checked.OverflowError labelled "fused wave bytes", "barrier group fused
// wave budget bytes", "frontier wave bytes", "scratch wave bytes" or
// "output wave bytes".
func PlanFrontierMemory(req FrontierMemoryRequest) (FrontierMemoryPlan, error) {
	layered, err := PlanBarriers(len(req.Waves), req.Dependencies)
	if err != nil {
		return FrontierMemoryPlan{}, err
	}
	return splitFrontierMemory(layered, req)
}

// groupInputs names a sum over the waves of one barrier group, by their
// ids, for an overflow error: the first few ids and how many more.
func groupInputs(what string, ids []int32) string {
	var b strings.Builder
	for i, id := range ids {
		if i == 8 {
			fmt.Fprintf(&b, ", ... %d more", len(ids)-i)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprint(&b, id)
	}
	return fmt.Sprintf("the sum of %s over the waves with ids %s", what, b.String())
}

func splitFrontierMemory(layered BarrierPlan, req FrontierMemoryRequest) (FrontierMemoryPlan, error) {
	if req.ResidentGraphBytes > req.BudgetBytes {
		return FrontierMemoryPlan{}, &GroupOverBudgetError{RequiredBytes: req.ResidentGraphBytes,
			BudgetBytes: req.BudgetBytes, Field: "resident graph bytes", Wave: -1}
	}
	groupBudget := req.BudgetBytes - req.ResidentGraphBytes
	plan := FrontierMemoryPlan{Layers: layered.GroupCount(), AmortizedReadbackBytes: req.ReadbackBytes}
	if layered.GroupCount() == 0 {
		plan.Barriers = layered
		return plan, nil
	}
	starts := make([]int32, 0, len(layered.GroupStart))
	var sumF, sumS, sumO uint64
	closeGroup := func(end int32) {
		starts = append(starts, end)
		plan.PeakFrontierBytes = max(plan.PeakFrontierBytes, sumF)
		plan.PeakScratchBytes = max(plan.PeakScratchBytes, sumS)
		plan.PeakOutputBytes = max(plan.PeakOutputBytes, sumO)
		sumF, sumS, sumO = 0, 0, 0
	}
	starts = append(starts, 0)
	for gi := 0; gi < layered.GroupCount(); gi++ {
		lo, hi := layered.GroupStart[gi], layered.GroupStart[gi+1]
		var running uint64
		for i := lo; i < hi; i++ {
			w := req.Waves[layered.Order[i]]
			cost, err := w.FusedBytes()
			if err != nil {
				return FrontierMemoryPlan{}, checked.Inputs(err, fmt.Sprintf("frontier_bytes + 4 x scratch_bytes + output_bytes of the wave with id %d", layered.Order[i]))
			}
			if cost > groupBudget {
				return FrontierMemoryPlan{}, &GroupOverBudgetError{RequiredBytes: cost, BudgetBytes: groupBudget,
					Field: "single fused frontier wave bytes", Wave: int(layered.Order[i])}
			}
			next, err := checked.Add(running, cost, "barrier group fused wave budget bytes")
			if err != nil {
				return FrontierMemoryPlan{}, checked.Inputs(err, groupInputs("frontier_bytes + 4 x scratch_bytes + output_bytes", layered.Order[lo:i+1]))
			}
			if next > groupBudget && i > lo {
				closeGroup(i)
				next = cost
			}
			running = next
			if sumF, err = checked.Add(sumF, w.FrontierBytes, "frontier wave bytes"); err != nil {
				return FrontierMemoryPlan{}, checked.Inputs(err, groupInputs("frontier_bytes", layered.Order[lo:i+1]))
			}
			if sumS, err = checked.Add(sumS, w.ScratchBytes, "scratch wave bytes"); err != nil {
				return FrontierMemoryPlan{}, checked.Inputs(err, groupInputs("scratch_bytes", layered.Order[lo:i+1]))
			}
			if sumO, err = checked.Add(sumO, w.OutputBytes, "output wave bytes"); err != nil {
				return FrontierMemoryPlan{}, checked.Inputs(err, groupInputs("output_bytes", layered.Order[lo:i+1]))
			}
		}
		closeGroup(hi)
	}
	plan.Barriers = BarrierPlan{Order: layered.Order, GroupStart: starts, GlobalBarriers: len(starts) - 2}
	plan.MaxGroupWidth = plan.Barriers.MaxGroupWidth()
	plan.AmortizedReadbackBytes = max(req.ReadbackBytes, plan.PeakOutputBytes)
	return plan, nil
}
