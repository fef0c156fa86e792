package planners

import (
	"cmp"
	"fmt"
	"math"
	"math/bits"
	"slices"

	"github.com/gpuplan/gpuplan/internal/checked"
)

// The CUDA optimisation pass ids vyre ships benchmark evidence for.
const (
	PassGraphCaptureReplay = "cuda.graph_capture_replay"
	PassLaunchFusion       = "cuda.launch_fusion"
	PassResultCompaction   = "cuda.result_compaction"
	PassResidentGraphReuse = "cuda.resident_graph_reuse"
)

// BenchmarkPassCandidate is an optimisation pass with the benchmark evidence
// for when it pays off (vyre's BenchmarkPassCandidate).
type BenchmarkPassCandidate struct {
	// PassID names the pass; non-empty and unique within one call.
	PassID string `json:"pass_id"`
	// MinFrontierItems is the smallest frontier the speedup was measured at.
	MinFrontierItems uint64 `json:"min_frontier_items"`
	// MinReuseCount is the smallest reuse count the speedup needs.
	MinReuseCount uint64 `json:"min_reuse_count"`
	// MinAvoidedReadbackBytes is the smallest avoidable readback it needs.
	MinAvoidedReadbackBytes uint64 `json:"min_avoided_readback_bytes"`
	// PlanningCostNs is the time planning the pass costs.
	PlanningCostNs uint64 `json:"planning_cost_ns"`
	// ScratchBytes is the scratch memory the pass needs.
	ScratchBytes uint64 `json:"scratch_bytes"`
	// ExpectedSpeedupBPS is the measured speedup; must be above 10000 (1.0×).
	ExpectedSpeedupBPS uint32 `json:"expected_speedup_bps"`
	// MandatoryWhenProfitable makes a pass whose thresholds are met
	// required: not fitting the budgets is then an error, not a skip.
	MandatoryWhenProfitable bool `json:"mandatory_when_profitable"`
}

// BenchmarkPassSelectionSample describes the workload and the budgets.
type BenchmarkPassSelectionSample struct {
	// FrontierItems is the workload's frontier size.
	FrontierItems uint64 `json:"frontier_items"`
	// ReuseCount is how often the workload reuses resident data.
	ReuseCount uint64 `json:"reuse_count"`
	// AvoidableReadbackBytes is the readback the workload could avoid.
	AvoidableReadbackBytes uint64 `json:"avoidable_readback_bytes"`
	// PlanningBudgetNs bounds the selected passes' total planning cost.
	PlanningBudgetNs uint64 `json:"planning_budget_ns"`
	// ScratchBudgetBytes bounds the selected passes' total scratch.
	ScratchBudgetBytes uint64 `json:"scratch_budget_bytes"`
}

// PassSkipReason says why a pass was not selected.
type PassSkipReason uint8

const (
	// FrontierBelowThreshold: the sample's frontier is below the pass's minimum.
	FrontierBelowThreshold PassSkipReason = iota + 1
	// ReuseBelowThreshold: the sample's reuse count is below the minimum.
	ReuseBelowThreshold
	// ReadbackBelowThreshold: the avoidable readback is below the minimum.
	ReadbackBelowThreshold
	// PlanningBudgetExceeded: the pass's planning cost does not fit.
	PlanningBudgetExceeded
	// ScratchBudgetExceeded: the pass's scratch does not fit.
	ScratchBudgetExceeded
)

var passSkipReasonNames = [...]string{
	FrontierBelowThreshold: "frontier_below_threshold",
	ReuseBelowThreshold:    "reuse_below_threshold",
	ReadbackBelowThreshold: "readback_below_threshold",
	PlanningBudgetExceeded: "planning_budget_exceeded",
	ScratchBudgetExceeded:  "scratch_budget_exceeded",
}

// String returns the JSON spelling of r, for example "reuse_below_threshold".
func (r PassSkipReason) String() string {
	if int(r) < len(passSkipReasonNames) && passSkipReasonNames[r] != "" {
		return passSkipReasonNames[r]
	}
	return fmt.Sprintf("PassSkipReason(%d)", uint8(r))
}

// MarshalText encodes r as its String form.
func (r PassSkipReason) MarshalText() ([]byte, error) {
	if int(r) < len(passSkipReasonNames) && passSkipReasonNames[r] != "" {
		return []byte(passSkipReasonNames[r]), nil
	}
	return nil, fmt.Errorf("skip reason %d is not defined. Fix: use a reason returned by SelectBenchmarkPasses", uint8(r))
}

// UnmarshalText decodes a reason written by MarshalText.
func (r *PassSkipReason) UnmarshalText(text []byte) error {
	for i, name := range passSkipReasonNames {
		if name != "" && name == string(text) {
			*r = PassSkipReason(i)
			return nil
		}
	}
	return fmt.Errorf("reason %q is not a pass skip reason. Fix: use one of frontier_below_threshold, reuse_below_threshold, readback_below_threshold, planning_budget_exceeded, scratch_budget_exceeded", string(text))
}

// SkippedPass is a pass that was not selected, and why.
type SkippedPass struct {
	PassID string         `json:"pass_id"`
	Reason PassSkipReason `json:"reason"`
}

// BenchmarkPassSelectionPlan is the outcome of SelectBenchmarkPasses.
type BenchmarkPassSelectionPlan struct {
	// SelectedPassIDs are in selection order.
	SelectedPassIDs []string `json:"selected_pass_ids"`
	// SkippedPasses are in selection order.
	SkippedPasses []SkippedPass `json:"skipped_passes"`
	// TotalPlanningCostNs and TotalScratchBytes sum the selected passes;
	// they never exceed the sample's budgets.
	TotalPlanningCostNs uint64 `json:"total_planning_cost_ns"`
	TotalScratchBytes   uint64 `json:"total_scratch_bytes"`
	// ProjectedSpeedupBPS starts at 10000 and is multiplied by every
	// selected pass's speedup: floor(projected × speedup / 10000).
	ProjectedSpeedupBPS uint32 `json:"projected_speedup_bps"`
}

// PassSelectionErrorKind names a pass-selection failure (vyre's
// BenchmarkPassSelectionError).
type PassSelectionErrorKind uint8

const (
	// PassSelectionEmptyPassID: pass_id is empty.
	PassSelectionEmptyPassID PassSelectionErrorKind = iota + 1
	// PassSelectionDuplicatePassID: a pass id repeats.
	PassSelectionDuplicatePassID
	// PassSelectionMissingSpeedupEvidence: expected_speedup_bps ≤ 10000.
	PassSelectionMissingSpeedupEvidence
	// PassSelectionMandatoryProfitablePassOverBudget: a mandatory pass whose
	// thresholds are met does not fit the planning or scratch budget.
	PassSelectionMandatoryProfitablePassOverBudget
)

var passSelectionKindNames = [...]string{
	PassSelectionEmptyPassID:                       "EmptyPassId",
	PassSelectionDuplicatePassID:                   "DuplicatePassId",
	PassSelectionMissingSpeedupEvidence:            "MissingSpeedupEvidence",
	PassSelectionMandatoryProfitablePassOverBudget: "MandatoryProfitablePassOverBudget",
}

// String returns the vyre variant name.
func (k PassSelectionErrorKind) String() string {
	if int(k) < len(passSelectionKindNames) && passSelectionKindNames[k] != "" {
		return passSelectionKindNames[k]
	}
	return fmt.Sprintf("PassSelectionErrorKind(%d)", uint8(k))
}

// PassSelectionError is a pass-selection failure. A projected speedup above
// math.MaxUint32 is reported as *checked.OverflowError ("projected speedup
// bps", Bits 32).
type PassSelectionError struct {
	Kind PassSelectionErrorKind
	// Index is the candidate's position in the input.
	Index int
	// PassID is the candidate's id.
	PassID string
	// ExpectedSpeedupBPS is set for MissingSpeedupEvidence.
	ExpectedSpeedupBPS uint32
	// Reason (PlanningBudgetExceeded or ScratchBudgetExceeded), the total
	// the pass would bring (RequiredTotal) and the budget are set for
	// MandatoryProfitablePassOverBudget. RequiredTotal is pinned at
	// math.MaxUint64 when the true sum is larger.
	Reason        PassSkipReason
	RequiredTotal uint64
	Budget        uint64
}

// Field returns the input field the error is about.
func (e *PassSelectionError) Field() string {
	switch e.Kind {
	case PassSelectionEmptyPassID, PassSelectionDuplicatePassID:
		return fmt.Sprintf("candidates[%d].pass_id", e.Index)
	case PassSelectionMissingSpeedupEvidence:
		return fmt.Sprintf("candidates[%d].expected_speedup_bps", e.Index)
	case PassSelectionMandatoryProfitablePassOverBudget:
		if e.Reason == ScratchBudgetExceeded {
			return "sample.scratch_budget_bytes"
		}
		return "sample.planning_budget_ns"
	}
	return ""
}

// Error describes the failure, names the input field and ends with a "Fix:" sentence.
func (e *PassSelectionError) Error() string {
	f := e.Field()
	switch e.Kind {
	case PassSelectionEmptyPassID:
		return fmt.Sprintf("%s is empty. Fix: name the pass, for example %q", f, PassLaunchFusion)
	case PassSelectionDuplicatePassID:
		return fmt.Sprintf("%s: pass id %q appears twice. Fix: list every pass once", f, e.PassID)
	case PassSelectionMissingSpeedupEvidence:
		return fmt.Sprintf("%s: pass %q claims %d bps, which is no speedup. Fix: give a measured expected_speedup_bps above 10000 or drop the pass",
			f, e.PassID, e.ExpectedSpeedupBPS)
	case PassSelectionMandatoryProfitablePassOverBudget:
		what := "planning cost"
		if e.Reason == ScratchBudgetExceeded {
			what = "scratch"
		}
		return fmt.Sprintf("%s: mandatory pass %q is profitable here but brings the total %s to %d, above the budget of %d (%s). Fix: raise %s to at least %d or stop marking %q mandatory_when_profitable",
			f, e.PassID, what, e.RequiredTotal, e.Budget, e.Reason, f, e.RequiredTotal, e.PassID)
	}
	return fmt.Sprintf("pass selection error %d. Fix: check the candidates", uint8(e.Kind))
}

// passValue is speedup × (min frontier + min reuse + min readback) as an
// exact 128-bit number (hi, lo).
type passValue struct{ hi, lo uint64 }

func benchmarkPassValue(c *BenchmarkPassCandidate) passValue {
	s1, c1 := bits.Add64(c.MinFrontierItems, c.MinReuseCount, 0)
	s2, c2 := bits.Add64(s1, c.MinAvoidedReadbackBytes, 0)
	sumHi := c1 + c2 // the sum is (sumHi, s2), sumHi ≤ 2
	hi, lo := bits.Mul64(s2, uint64(c.ExpectedSpeedupBPS))
	return passValue{hi: hi + sumHi*uint64(c.ExpectedSpeedupBPS), lo: lo} // < 2^98: no wrap
}

// passSortKey is one candidate's place in the selection order.
type passSortKey struct {
	value     passValue
	pos       int
	mandatory bool
}

func comparePassValue(a, b passValue) int {
	if c := cmp.Compare(a.hi, b.hi); c != 0 {
		return c
	}
	return cmp.Compare(a.lo, b.lo)
}

// SelectBenchmarkPasses chooses the optimisation passes whose benchmark
// evidence applies to sample, within its planning and scratch budgets.
//
// Candidates are validated in input order (PassSelectionEmptyPassID,
// PassSelectionDuplicatePassID, PassSelectionMissingSpeedupEvidence), then
// ordered: mandatory passes first, then by speedup × (min frontier + min
// reuse + min readback) computed exactly, highest first, then by pass id.
// Walking that order, a pass below one of its thresholds (frontier, reuse,
// readback, checked in that order) is skipped even when mandatory; a pass
// that does not fit the planning budget and then the scratch budget is
// skipped, or, when mandatory, fails the whole selection with
// PassSelectionMandatoryProfitablePassOverBudget. As in vyre's dry run,
// that error is raised before anything else is decided: an overflowing
// projected speedup (a *checked.OverflowError "projected speedup bps", 32
// bits) is reported only after the whole walk, so it never hides it.
func SelectBenchmarkPasses(candidates []BenchmarkPassCandidate, sample BenchmarkPassSelectionSample) (BenchmarkPassSelectionPlan, error) {
	if err := validatePassCandidates(candidates); err != nil {
		return BenchmarkPassSelectionPlan{}, err
	}
	keys := passSelectionOrder(candidates)
	plan := BenchmarkPassSelectionPlan{SelectedPassIDs: []string{}, SkippedPasses: []SkippedPass{}, ProjectedSpeedupBPS: checked.BasisPoints}
	// An overflowing projection is remembered, not returned, until the walk
	// has found every mandatory pass over budget.
	var projectionOverflows bool
	for _, key := range keys {
		i := key.pos
		c := &candidates[i]
		if reason := plan.skipReason(c, &sample); reason != 0 {
			if c.MandatoryWhenProfitable && (reason == PlanningBudgetExceeded || reason == ScratchBudgetExceeded) {
				return BenchmarkPassSelectionPlan{}, plan.mandatoryOverBudget(i, c, reason, &sample)
			}
			plan.SkippedPasses = append(plan.SkippedPasses, SkippedPass{PassID: c.PassID, Reason: reason})
			continue
		}
		plan.TotalPlanningCostNs += c.PlanningCostNs
		plan.TotalScratchBytes += c.ScratchBytes
		plan.SelectedPassIDs = append(plan.SelectedPassIDs, c.PassID)
		if !projectionOverflows {
			projected, ok := checked.MulDiv(uint64(plan.ProjectedSpeedupBPS), uint64(c.ExpectedSpeedupBPS), checked.BasisPoints)
			if projectionOverflows = !ok || projected > math.MaxUint32; !projectionOverflows {
				plan.ProjectedSpeedupBPS = uint32(projected)
			}
		}
	}
	// The walk has decided every pass and raised any
	// MandatoryProfitablePassOverBudget, as vyre's dry run does before
	// anything else; only now is an overflowing projection reported.
	if projectionOverflows {
		return BenchmarkPassSelectionPlan{}, &checked.OverflowError{Field: "projected speedup bps", Bits: 32, Inputs: "the product of the selected candidates' expected_speedup_bps"}
	}
	return plan, nil
}

// validatePassCandidates checks every candidate in input order: an empty
// pass id, a repeated pass id, then no speedup evidence.
func validatePassCandidates(candidates []BenchmarkPassCandidate) error {
	ids := make(map[string]struct{}, len(candidates))
	for i := range candidates {
		c := &candidates[i]
		switch _, dup := ids[c.PassID]; {
		case c.PassID == "":
			return &PassSelectionError{Kind: PassSelectionEmptyPassID, Index: i}
		case dup:
			return &PassSelectionError{Kind: PassSelectionDuplicatePassID, Index: i, PassID: c.PassID}
		case c.ExpectedSpeedupBPS <= checked.BasisPoints:
			return &PassSelectionError{Kind: PassSelectionMissingSpeedupEvidence, Index: i,
				PassID: c.PassID, ExpectedSpeedupBPS: c.ExpectedSpeedupBPS}
		}
		ids[c.PassID] = struct{}{}
	}
	return nil
}

// passSelectionOrder returns the candidates in selection order: mandatory
// passes first, then by value (see benchmarkPassValue), highest first, then
// by pass id.
func passSelectionOrder(candidates []BenchmarkPassCandidate) []passSortKey {
	// Sort flat (mandatory, value, position) records; pass ids are compared
	// only to break exact ties.
	keys := make([]passSortKey, len(candidates))
	for i := range candidates {
		keys[i] = passSortKey{value: benchmarkPassValue(&candidates[i]), pos: i, mandatory: candidates[i].MandatoryWhenProfitable}
	}
	slices.SortFunc(keys, func(a, b passSortKey) int {
		if a.mandatory != b.mandatory {
			if a.mandatory {
				return -1
			}
			return 1
		}
		if c := comparePassValue(b.value, a.value); c != 0 {
			return c
		}
		return cmp.Compare(candidates[a.pos].PassID, candidates[b.pos].PassID)
	})
	return keys
}

// skipReason returns why candidate c is not selected next, given the
// passes the plan has selected so far: a threshold that sample does not
// meet (frontier, reuse, readback) or a budget the pass does not fit
// (planning, scratch); 0 when it is selected.
func (plan *BenchmarkPassSelectionPlan) skipReason(c *BenchmarkPassCandidate, sample *BenchmarkPassSelectionSample) PassSkipReason {
	switch {
	case sample.FrontierItems < c.MinFrontierItems:
		return FrontierBelowThreshold
	case sample.ReuseCount < c.MinReuseCount:
		return ReuseBelowThreshold
	case sample.AvoidableReadbackBytes < c.MinAvoidedReadbackBytes:
		return ReadbackBelowThreshold
	// The totals never exceed their budgets, so budget − total cannot
	// underflow and total + cost is compared without overflowing.
	case c.PlanningCostNs > sample.PlanningBudgetNs-plan.TotalPlanningCostNs:
		return PlanningBudgetExceeded
	case c.ScratchBytes > sample.ScratchBudgetBytes-plan.TotalScratchBytes:
		return ScratchBudgetExceeded
	}
	return 0
}

// mandatoryOverBudget is the PassSelectionMandatoryProfitablePassOverBudget
// error of mandatory candidate c (at input position i) that exceeds the
// budget reason names; the total it would bring is pinned at math.MaxUint64
// when the true sum is larger.
func (plan *BenchmarkPassSelectionPlan) mandatoryOverBudget(i int, c *BenchmarkPassCandidate, reason PassSkipReason, sample *BenchmarkPassSelectionSample) error {
	total, cost, budget := plan.TotalPlanningCostNs, c.PlanningCostNs, sample.PlanningBudgetNs
	if reason == ScratchBudgetExceeded {
		total, cost, budget = plan.TotalScratchBytes, c.ScratchBytes, sample.ScratchBudgetBytes
	}
	required, carry := bits.Add64(total, cost, 0)
	if carry != 0 {
		required = math.MaxUint64
	}
	return &PassSelectionError{Kind: PassSelectionMandatoryProfitablePassOverBudget,
		Index: i, PassID: c.PassID, Reason: reason, RequiredTotal: required, Budget: budget}
}
