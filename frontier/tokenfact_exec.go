package frontier

import (
	"fmt"
	"math/bits"

	"github.com/gpuplan/gpuplan/internal/checked"
	"github.com/gpuplan/gpuplan/megakernel"
	"github.com/gpuplan/gpuplan/planners"
)

// Work queue shape used by the token/fact frontier execution plan.
const (
	// TokenFactQueueEntryBytes is the size of one queue entry (a u32 item id).
	TokenFactQueueEntryBytes = 4
	// TokenFactQueueControlBytes holds the queue's head/tail counters and flags.
	TokenFactQueueControlBytes = 16
)

// QueueSizing selects how the token/fact plan sizes its device work queue.
type QueueSizing uint8

const (
	// QueueSizingRelease is vyre 0.6.1: capacity = total active items,
	// budgeted against the payload budget. It is the zero value.
	QueueSizingRelease QueueSizing = iota
	// QueueSizingExpansionHeadroom is the post-0.6.1 variant: the queue
	// also reserves room for the items the frontier may expand to (from the
	// layout's out-degree profile), budgeted against what is left after the
	// graph and the largest fused wave.
	QueueSizingExpansionHeadroom
)

// String returns "release" or "expansion_headroom".
func (q QueueSizing) String() string {
	switch q {
	case QueueSizingRelease:
		return "release"
	case QueueSizingExpansionHeadroom:
		return "expansion_headroom"
	}
	return fmt.Sprintf("QueueSizing(%d)", uint8(q))
}

// MarshalText encodes the sizing name.
func (q QueueSizing) MarshalText() ([]byte, error) { return []byte(q.String()), nil }

// UnmarshalText decodes "release" or "expansion_headroom".
func (q *QueueSizing) UnmarshalText(b []byte) error {
	switch string(b) {
	case "release":
		*q = QueueSizingRelease
	case "expansion_headroom":
		*q = QueueSizingExpansionHeadroom
	default:
		return fmt.Errorf("queue_sizing %q is unknown. Fix: use \"release\" or \"expansion_headroom\"", string(b))
	}
	return nil
}

// TokenFactExecutionRequest is the input of PlanTokenFactFrontierExecution
// (the arguments of vyre's plan_cuda_token_fact_frontier_execution).
type TokenFactExecutionRequest struct {
	// Identity is the plan-cache identity (graph layout hash, analysis kind,
	// device key).
	Identity megakernel.PlanIdentity
	// Sample is the measured dispatch used for topology selection: a finite
	// dispatch cost above 0 and a finite frontier density in [0, 1].
	Sample megakernel.ScheduleSample
	// Layout is the token/fact graph's byte envelope.
	Layout TokenFactGraphLayout
	// Frontier is the frontier-typed IR plan adapted to CUDA waves.
	Frontier CudaFrontierInput
	// BudgetBytes is the device memory budget for graph, payload, queue and
	// frontier buffers together.
	BudgetBytes uint64
	// LaunchOverheadNS is the per-launch overhead in nanoseconds, finite and
	// at least 0.
	LaunchOverheadNS float64
	// FusionPressure is finite and in [0, 1].
	FusionPressure float64
	// QueueSizing picks the 0.6.1 queue (default) or the post-0.6.1
	// expansion-headroom queue.
	QueueSizing QueueSizing
}

// TokenFactExecutionPlan joins token/fact residency with the frontier
// megakernel plan (vyre's CudaTokenFactFrontierExecutionPlan).
// TotalRequiredBytes = frontier required + payload + queue resident bytes.
// ExpansionItems is the queue headroom of the expansion variant (0 in the
// 0.6.1 sizing).
type TokenFactExecutionPlan struct {
	Frontier               megakernel.FrontierExecutionPlan `json:"frontier"`
	WorkQueue              planners.DeviceWorkQueuePlan     `json:"work_queue"`
	QueueSizing            QueueSizing                      `json:"queue_sizing"`
	TotalActiveItems       uint64                           `json:"total_active_items"`
	ExpansionItems         uint64                           `json:"expansion_items"`
	ResidentPayloadBytes   uint64                           `json:"resident_payload_bytes"`
	ResidentWorkQueueBytes uint64                           `json:"resident_work_queue_bytes"`
	TotalRequiredBytes     uint64                           `json:"total_required_bytes"`
}

// GraphReuse says whether the graph must be uploaded or is already resident.
type GraphReuse uint8

const (
	// ColdUpload uploads the graph before the run. It is the zero value.
	ColdUpload GraphReuse = iota
	// WarmResident reuses a graph that is already resident.
	WarmResident
)

// String returns "cold_upload" or "warm_resident".
func (r GraphReuse) String() string {
	switch r {
	case ColdUpload:
		return "cold_upload"
	case WarmResident:
		return "warm_resident"
	}
	return fmt.Sprintf("GraphReuse(%d)", uint8(r))
}

// MarshalText encodes the reuse name.
func (r GraphReuse) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// UnmarshalText decodes "cold_upload" or "warm_resident".
func (r *GraphReuse) UnmarshalText(b []byte) error {
	switch string(b) {
	case "cold_upload":
		*r = ColdUpload
	case "warm_resident":
		*r = WarmResident
	default:
		return fmt.Errorf("graph_reuse %q is unknown. Fix: use \"cold_upload\" or \"warm_resident\"", string(b))
	}
	return nil
}

// TokenFactExecutionEnvelope adds residency accounting to a plan (vyre's
// CudaTokenFactFrontierExecutionEnvelope): a cold upload moves the graph
// bytes, a warm run avoids them; TotalResidentBytes is the plan's total.
type TokenFactExecutionEnvelope struct {
	Plan                    TokenFactExecutionPlan `json:"plan"`
	GraphReuse              GraphReuse             `json:"graph_reuse"`
	ResidentGraphBytes      uint64                 `json:"resident_graph_bytes"`
	GraphUploadBytes        uint64                 `json:"graph_upload_bytes"`
	AvoidedGraphUploadBytes uint64                 `json:"avoided_graph_upload_bytes"`
	TotalResidentBytes      uint64                 `json:"total_resident_bytes"`
}

// InvalidFloatError reports a float input of a TokenFactExecutionRequest
// that is NaN, infinite or outside its range.
type InvalidFloatError struct {
	// Field is the input's path: "sample.dispatch_cost_ns",
	// "sample.frontier_density", "launch_overhead_ns" or "fusion_pressure".
	Field string
	// Value is the rejected value.
	Value float64
	// Want says which values are accepted.
	Want string
	// Fix says how to correct the input.
	Fix string
}

// Error implements the error interface; it names the field and ends with a Fix.
func (e *InvalidFloatError) Error() string {
	return fmt.Sprintf("%s is %v, not %s. Fix: %s", e.Field, e.Value, e.Want, e.Fix)
}

// CheckFloatInputs checks every float input of the request, in this order:
// Sample.DispatchCostNS must be finite and above 0, Sample.FrontierDensity
// finite and in [0, 1], LaunchOverheadNS finite and at least 0, and
// FusionPressure finite and in [0, 1]. The first bad one is returned as an
// *InvalidFloatError naming its field. PlanTokenFactFrontierExecution runs
// it before anything else.
func (req *TokenFactExecutionRequest) CheckFloatInputs() error {
	bad := func(field string, v float64, want, fix string) error {
		return &InvalidFloatError{Field: field, Value: v, Want: want, Fix: fix}
	}
	s := req.Sample
	switch {
	case !checked.Finite(s.DispatchCostNS) || s.DispatchCostNS <= 0:
		return bad("sample.dispatch_cost_ns", s.DispatchCostNS, "a finite number of nanoseconds above 0",
			"give the measured dispatch cost in nanoseconds, above 0")
	case !checked.Finite(s.FrontierDensity) || s.FrontierDensity < 0 || s.FrontierDensity > 1:
		return bad("sample.frontier_density", s.FrontierDensity, "a finite fraction in [0, 1]",
			"give the active fraction of the frontier, between 0 and 1")
	case !checked.Finite(req.LaunchOverheadNS) || req.LaunchOverheadNS < 0:
		return bad("launch_overhead_ns", req.LaunchOverheadNS, "a finite number of nanoseconds, 0 or more",
			"give the per-launch overhead in nanoseconds, 0 or more")
	case !checked.Finite(req.FusionPressure) || req.FusionPressure < 0 || req.FusionPressure > 1:
		return bad("fusion_pressure", req.FusionPressure, "a finite pressure in [0, 1]",
			"give a fusion pressure between 0 and 1")
	}
	return nil
}

// ActiveItemWaveCountMismatchError reports a frontier input whose active
// item list and wave list differ in length.
type ActiveItemWaveCountMismatchError struct {
	Waves       int
	ActiveItems int
}

// Error implements the error interface; the message ends with a Fix.
func (e *ActiveItemWaveCountMismatchError) Error() string {
	return fmt.Sprintf("ActiveItemWaveCountMismatch: %d waves but %d active_items entries. Fix: give exactly one active_items entry per wave (use AdaptFrontierTypedIRToCUDA)", e.Waves, e.ActiveItems)
}

// ZeroResidentGraphBytesError reports a layout whose node and edge bytes
// are both zero.
type ZeroResidentGraphBytesError struct{}

// Error implements the error interface; the message ends with a Fix.
func (ZeroResidentGraphBytesError) Error() string {
	return "ZeroResidentGraphBytes: node_bytes + edge_bytes is 0. Fix: plan a graph with at least one node or edge and non-zero record widths"
}

// ResidentGraphByteEnvelopeMismatchError reports a layout whose
// resident_bytes differs from node_bytes + edge_bytes + payload_bytes.
type ResidentGraphByteEnvelopeMismatchError struct {
	Expected uint64 // layout.resident_bytes
	Actual   uint64 // node + edge + payload bytes
}

// Error implements the error interface; the message ends with a Fix.
func (e *ResidentGraphByteEnvelopeMismatchError) Error() string {
	return fmt.Sprintf("ResidentGraphByteEnvelopeMismatch: resident_bytes is %d but node_bytes + edge_bytes + payload_bytes is %d. Fix: build the layout with AdaptTokenFactGraphLayout", e.Expected, e.Actual)
}

// PayloadExceedsBudgetError reports a payload larger than the budget.
type PayloadExceedsBudgetError struct {
	PayloadBytes uint64
	BudgetBytes  uint64
}

// Error implements the error interface; the message ends with a Fix.
func (e *PayloadExceedsBudgetError) Error() string {
	return fmt.Sprintf("PayloadExceedsBudget: payload_bytes %d exceeds budget_bytes %d. Fix: raise budget_bytes or shrink the token/fact payload", e.PayloadBytes, e.BudgetBytes)
}

// FrontierPlanError wraps a failure of the frontier megakernel plan
// (vyre's FrontierPlan(...)).
type FrontierPlanError struct{ Err error }

// Error implements the error interface; the message ends with a Fix.
func (e *FrontierPlanError) Error() string { return "frontier plan: " + e.Err.Error() }

// Unwrap returns the megakernel error.
func (e *FrontierPlanError) Unwrap() error { return e.Err }

// WorkQueuePlanError wraps a failure of the work-queue plan (vyre's
// WorkQueue(...)).
type WorkQueuePlanError struct{ Err error }

// Error implements the error interface; the message ends with a Fix.
func (e *WorkQueuePlanError) Error() string { return "work queue plan: " + e.Err.Error() }

// Unwrap returns the planners error.
func (e *WorkQueuePlanError) Unwrap() error { return e.Err }

// PlanTokenFactFrontierExecution plans a frontier run over a resident
// token/fact graph (vyre 0.6.1 plan_cuda_token_fact_frontier_execution):
//
//  0. every float input must be finite and in range (CheckFloatInputs);
//  1. len(active_items) must equal len(waves);
//  2. resident graph = node_bytes + edge_bytes, which must be non-zero;
//  3. graph + payload must equal the layout's resident_bytes;
//  4. payload budget = budget - payload (the payload must fit);
//  5. the work queue holds the total active items (entry 4 bytes, control
//     16 bytes, final-only host sync) within the payload budget; an empty
//     frontier gets an all-zero queue. With QueueSizingExpansionHeadroom the
//     queue instead reserves expansion headroom (see expansionItems) within
//     payload budget - graph - largest fused wave (saturating at 0) and is
//     planned by planners.PlanDeviceWorkQueueWithExpansion;
//  6. the scheduler budget = payload budget - queue resident bytes;
//  7. megakernel.PlanFrontierExecution with the layout's shape and record
//     widths, the waves, their dependencies and the scheduler budget;
//  8. total required = frontier required + payload + queue resident.
//
// Errors, in that order: *InvalidFloatError, *ActiveItemWaveCountMismatchError,
// ZeroResidentGraphBytesError, *ResidentGraphByteEnvelopeMismatchError,
// *PayloadExceedsBudgetError, *WorkQueuePlanError, *FrontierPlanError and
// *checked.OverflowError ("resident graph bytes", "resident graph envelope
// bytes", "total active items", "fused wave bytes" for the expansion variant's
// largest wave, "total required bytes"). A nil cache plans through a single-use cache.
func PlanTokenFactFrontierExecution(cache *megakernel.PlanCache, req TokenFactExecutionRequest) (TokenFactExecutionPlan, error) {
	if err := req.CheckFloatInputs(); err != nil {
		return TokenFactExecutionPlan{}, err
	}
	in := req.Frontier
	if len(in.ActiveItems) != len(in.Waves) {
		return TokenFactExecutionPlan{}, &ActiveItemWaveCountMismatchError{Waves: len(in.Waves), ActiveItems: len(in.ActiveItems)}
	}
	l := req.Layout
	graph, err := checkTokenFactEnvelope(&l, req.BudgetBytes)
	if err != nil {
		return TokenFactExecutionPlan{}, err
	}
	payloadBudget := req.BudgetBytes - l.PayloadBytes
	active, err := checked.Sum("total active items", in.ActiveItems...)
	if err != nil {
		return TokenFactExecutionPlan{}, err
	}
	waves := in.Waves
	peakFused, err := peakFusedWaveBytes(waves, req.QueueSizing)
	if err != nil {
		return TokenFactExecutionPlan{}, err
	}
	plan := TokenFactExecutionPlan{QueueSizing: req.QueueSizing, TotalActiveItems: active, ResidentPayloadBytes: l.PayloadBytes}
	if err := plan.planWorkQueue(&l, graph, payloadBudget, peakFused); err != nil {
		return TokenFactExecutionPlan{}, err
	}
	plan.ResidentWorkQueueBytes = plan.WorkQueue.ResidentBytes
	deps := in.Dependencies
	plan.Frontier, err = megakernel.PlanFrontierExecution(cache, megakernel.FrontierExecutionRequest{
		Identity: req.Identity, Sample: req.Sample,
		Graph:        megakernel.GraphShape{NodeCount: l.GraphShape.NodeCount, EdgeCount: l.GraphShape.EdgeCount},
		BytesPerNode: l.NodeRecordBytes, BytesPerEdge: l.EdgeRecordBytes,
		Waves: waves, Dependencies: deps, BudgetBytes: payloadBudget - plan.WorkQueue.ResidentBytes,
		LaunchOverheadNS: req.LaunchOverheadNS, FusionPressure: req.FusionPressure,
	})
	if err != nil {
		return TokenFactExecutionPlan{}, &FrontierPlanError{Err: err}
	}
	plan.TotalRequiredBytes, err = checked.Sum("total required bytes", plan.Frontier.Execution.Memory.RequiredBytes, l.PayloadBytes, plan.WorkQueue.ResidentBytes)
	if err != nil {
		return TokenFactExecutionPlan{}, err
	}
	return plan, nil
}

// checkTokenFactEnvelope checks steps 2 to 4 of
// PlanTokenFactFrontierExecution on layout l and returns the resident graph
// bytes: non-zero node + edge bytes, graph + payload equal to the layout's
// resident bytes, and a payload within budget.
func checkTokenFactEnvelope(l *TokenFactGraphLayout, budget uint64) (uint64, error) {
	graph, err := checked.Add(l.NodeBytes, l.EdgeBytes, "resident graph bytes")
	if err != nil {
		return 0, err
	}
	if graph == 0 {
		return 0, ZeroResidentGraphBytesError{}
	}
	envelope, err := checked.Add(graph, l.PayloadBytes, "resident graph envelope bytes")
	if err != nil {
		return 0, err
	}
	if envelope != l.ResidentBytes {
		return 0, &ResidentGraphByteEnvelopeMismatchError{Expected: l.ResidentBytes, Actual: envelope}
	}
	if l.PayloadBytes > budget {
		return 0, &PayloadExceedsBudgetError{PayloadBytes: l.PayloadBytes, BudgetBytes: budget}
	}
	return graph, nil
}

// peakFusedWaveBytes returns the largest fused wave of waves for the
// expansion-headroom sizing, and 0 for any other sizing.
func peakFusedWaveBytes(waves []megakernel.FrontierWave, sizing QueueSizing) (uint64, error) {
	if sizing != QueueSizingExpansionHeadroom {
		return 0, nil
	}
	var peak uint64
	for i := range waves {
		f, err := waves[i].FusedBytes()
		if err != nil {
			return 0, err
		}
		peak = max(peak, f)
	}
	return peak, nil
}

// planWorkQueue plans the device work queue of step 5 for the plan's total
// active items and queue sizing, within payloadBudget; the expansion
// variant's queue gets payloadBudget - graph - peakFused (saturating).
// Queue planner failures are *WorkQueuePlanError.
func (plan *TokenFactExecutionPlan) planWorkQueue(l *TokenFactGraphLayout, graph, payloadBudget, peakFused uint64) error {
	active := plan.TotalActiveItems
	var err error
	switch {
	case active == 0:
		plan.WorkQueue = planners.DeviceWorkQueuePlan{FinalOnlyHostSync: true}
	case plan.QueueSizing == QueueSizingExpansionHeadroom:
		queueBudget := satSub(satSub(payloadBudget, graph), peakFused)
		plan.ExpansionItems = expansionItems(*l, active)
		plan.WorkQueue, err = planners.PlanDeviceWorkQueueWithExpansion(planners.DeviceWorkQueueExpansionProfile{
			InitialItems: active, ExpansionItems: plan.ExpansionItems, EntryBytes: TokenFactQueueEntryBytes,
			ControlBytes: TokenFactQueueControlBytes, BudgetBytes: queueBudget, HostSync: planners.WorkQueueFinalOnly})
	case plan.QueueSizing == QueueSizingRelease:
		plan.WorkQueue, err = planners.PlanDeviceWorkQueue(planners.DeviceWorkQueueProfile{
			InitialItems: active, QueueCapacity: active, EntryBytes: TokenFactQueueEntryBytes,
			ControlBytes: TokenFactQueueControlBytes, BudgetBytes: payloadBudget, HostSync: planners.WorkQueueFinalOnly})
	default:
		return fmt.Errorf("unknown queue sizing %d. Fix: use QueueSizingRelease or QueueSizingExpansionHeadroom", uint8(plan.QueueSizing))
	}
	if err != nil {
		return &WorkQueuePlanError{Err: err}
	}
	if plan.WorkQueue.ResidentBytes > payloadBudget {
		// The queue planners keep resident <= their budget <= payloadBudget.
		return &WorkQueuePlanError{Err: fmt.Errorf("queue resident bytes %d exceed the payload budget %d. Fix: raise budget_bytes", plan.WorkQueue.ResidentBytes, payloadBudget)}
	}
	return nil
}

// PlanTokenFactFrontierExecutionEnvelope is PlanTokenFactFrontierExecution
// plus residency accounting (vyre's ..._envelope): ColdUpload uploads the
// resident graph bytes (node + edge bytes), WarmResident avoids them.
func PlanTokenFactFrontierExecutionEnvelope(cache *megakernel.PlanCache, req TokenFactExecutionRequest, reuse GraphReuse) (TokenFactExecutionEnvelope, error) {
	if reuse != ColdUpload && reuse != WarmResident {
		return TokenFactExecutionEnvelope{}, fmt.Errorf("unknown graph reuse %d. Fix: use ColdUpload or WarmResident", uint8(reuse))
	}
	plan, err := PlanTokenFactFrontierExecution(cache, req)
	if err != nil {
		return TokenFactExecutionEnvelope{}, err
	}
	graph := req.Layout.NodeBytes + req.Layout.EdgeBytes // checked by the plan
	env := TokenFactExecutionEnvelope{Plan: plan, GraphReuse: reuse, ResidentGraphBytes: graph, TotalResidentBytes: plan.TotalRequiredBytes}
	if reuse == ColdUpload {
		env.GraphUploadBytes = graph
	} else {
		env.AvoidedGraphUploadBytes = graph
	}
	return env, nil
}

func satSub(a, b uint64) uint64 {
	if a < b {
		return 0
	}
	return a - b
}

// expansionItems is the post-0.6.1 queue headroom for active frontier
// items: the top-out-degree prefix sum at the first profile rank >= active
// when the layout carries a degree profile and such a rank exists;
// otherwise active x max_out_degree, or active x ceil(edges/nodes) without a
// profile. The result is capped by the edge count (so a product too large
// for 64 bits is the edge count).
func expansionItems(l TokenFactGraphLayout, active uint64) uint64 {
	edges := l.GraphShape.EdgeCount
	hasProfile := l.MaxOutDegree > 0
	if hasProfile {
		for k, rank := range TokenFactDegreeProfileRanks {
			if rank >= active {
				return min(l.TopOutDegreePrefixSums[k], edges)
			}
		}
	}
	per := l.MaxOutDegree
	if !hasProfile {
		per, _ = checked.CeilDiv(edges, l.GraphShape.NodeCount) // 0 when there are no nodes
	}
	hi, lo := bits.Mul64(active, per)
	if hi != 0 {
		return edges
	}
	return min(lo, edges)
}
