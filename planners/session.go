package planners

import (
	"fmt"

	"github.com/gpuplan/gpuplan/internal/checked"
)

// ResidentGraphReadback says when a resident graph session copies results
// back to the host.
type ResidentGraphReadback int

const (
	// ReadbackFinalOnly reads the output back once, after the last run. It
	// is the zero value. JSON: "final_only".
	ReadbackFinalOnly ResidentGraphReadback = iota
	// ReadbackPerRun reads the output back after every run. Resident
	// sessions reject it: a per-run readback puts a host fence in every run.
	// JSON: "per_run".
	ReadbackPerRun
)

// String returns the JSON spelling of r: "final_only" or "per_run".
func (r ResidentGraphReadback) String() string {
	switch r {
	case ReadbackFinalOnly:
		return "final_only"
	case ReadbackPerRun:
		return "per_run"
	}
	return fmt.Sprintf("ResidentGraphReadback(%d)", int(r))
}

// MarshalText encodes r as "final_only" or "per_run".
func (r ResidentGraphReadback) MarshalText() ([]byte, error) {
	switch r {
	case ReadbackFinalOnly, ReadbackPerRun:
		return []byte(r.String()), nil
	}
	return nil, fmt.Errorf("readback value %d is not defined. Fix: use final_only or per_run", int(r))
}

// UnmarshalText decodes "final_only" or "per_run".
func (r *ResidentGraphReadback) UnmarshalText(text []byte) error {
	switch string(text) {
	case "final_only":
		*r = ReadbackFinalOnly
	case "per_run":
		*r = ReadbackPerRun
	default:
		return fmt.Errorf("readback %q is not a readback policy. Fix: use \"final_only\" or \"per_run\"", string(text))
	}
	return nil
}

// ResidentGraphSessionProfile describes repeated runs over one graph kept
// resident on the device (vyre's CudaResidentGraphSessionProfile).
type ResidentGraphSessionProfile struct {
	// GraphLayoutHash is the identity of the resident graph layout; 0 is
	// invalid.
	GraphLayoutHash uint64 `json:"graph_layout_hash"`
	// GraphBytes is the size of the graph, uploaded once; 0 is invalid.
	GraphBytes uint64 `json:"graph_bytes"`
	// RunCount is the number of runs over the resident graph; 0 is invalid.
	RunCount uint64 `json:"run_count"`
	// PerRunFrontierBytes is the frontier refreshed by every run.
	PerRunFrontierBytes uint64 `json:"per_run_frontier_bytes"`
	// ReusableScratchBytes is the scratch allocated once and reused.
	ReusableScratchBytes uint64 `json:"reusable_scratch_bytes"`
	// PerRunOutputBytes is the output of one run.
	PerRunOutputBytes uint64 `json:"per_run_output_bytes"`
	// BudgetBytes is the device memory the session may keep resident; 0 is
	// invalid.
	BudgetBytes uint64 `json:"budget_bytes"`
	// Readback must be ReadbackFinalOnly.
	Readback ResidentGraphReadback `json:"readback"`
}

// ResidentGraphSessionPlan is the plan for a resident graph session (vyre's
// CudaResidentGraphSessionPlan). Its JSON form uses snake_case keys, like the
// other planners' plans.
type ResidentGraphSessionPlan struct {
	GraphLayoutHash           uint64              `json:"graph_layout_hash"`
	OneTimeGraphUploadBytes   uint64              `json:"one_time_graph_upload_bytes"`  // = GraphBytes
	TotalFrontierRefreshBytes uint64              `json:"total_frontier_refresh_bytes"` // = RunCount × PerRunFrontierBytes
	PeakResidentBytes         uint64              `json:"peak_resident_bytes"`          // graph + frontier + scratch + output
	AvoidedGraphUploadBytes   uint64              `json:"avoided_graph_upload_bytes"`   // = (RunCount−1) × GraphBytes
	GraphReuse                GraphReuseTelemetry `json:"graph_reuse"`
	AvoidedDeviceAllocations  uint64              `json:"avoided_device_allocations"` // = 3 × (RunCount−1): graph, scratch and output
	AvoidedHostFences         uint64              `json:"avoided_host_fences"`        // = RunCount−1
	HostReadbackBytes         uint64              `json:"host_readback_bytes"`        // = PerRunOutputBytes (one final readback)
	GraphTopologyResident     bool                `json:"graph_topology_resident"`
	ScratchReused             bool                `json:"scratch_reused"`
	FinalOnlyHostReadback     bool                `json:"final_only_host_readback"`
}

// SessionErrorKind names a resident graph session planning failure, in
// vyre's terms.
type SessionErrorKind int

// The session planning failures, in the order they are checked.
const (
	ZeroGraphHash SessionErrorKind = iota + 1
	ZeroGraphBytes
	ZeroRuns
	ZeroBudget
	PerRunReadbackRejected
	OverBudget
)

var sessionKindNames = map[SessionErrorKind]string{
	ZeroGraphHash:          "ZeroGraphHash",
	ZeroGraphBytes:         "ZeroGraphBytes",
	ZeroRuns:               "ZeroRuns",
	ZeroBudget:             "ZeroBudget",
	PerRunReadbackRejected: "PerRunReadbackRejected",
	OverBudget:             "OverBudget",
}

// String returns the vyre name of the kind.
func (k SessionErrorKind) String() string {
	if n, ok := sessionKindNames[k]; ok {
		return n
	}
	return fmt.Sprintf("SessionErrorKind(%d)", int(k))
}

// SessionError is a rejected resident graph session profile. RequiredBytes
// and BudgetBytes are set for OverBudget only. Arithmetic overflow is
// reported as *checked.OverflowError instead.
type SessionError struct {
	Kind          SessionErrorKind
	RequiredBytes uint64
	BudgetBytes   uint64
}

// Field returns the input field the error is about.
func (e *SessionError) Field() string {
	switch e.Kind {
	case ZeroGraphHash:
		return "graph_layout_hash"
	case ZeroGraphBytes:
		return "graph_bytes"
	case ZeroRuns:
		return "run_count"
	case ZeroBudget, OverBudget:
		return "budget_bytes"
	case PerRunReadbackRejected:
		return "readback"
	}
	return ""
}

// Error describes the failure, names the input field and ends with a "Fix:" sentence.
func (e *SessionError) Error() string {
	switch e.Kind {
	case ZeroGraphHash:
		return "resident graph session: graph_layout_hash is 0. Fix: pass the non-zero hash of the resident graph layout"
	case ZeroGraphBytes:
		return "resident graph session: graph_bytes is 0. Fix: pass the byte size of the resident graph"
	case ZeroRuns:
		return "resident graph session: run_count is 0. Fix: plan at least one run"
	case ZeroBudget:
		return "resident graph session: budget_bytes is 0. Fix: pass the device bytes the session may keep resident"
	case PerRunReadbackRejected:
		return "resident graph session: readback is per_run, which puts a host fence in every run. Fix: set readback to final_only and read the output back once, after the final run"
	case OverBudget:
		return fmt.Sprintf("resident graph session: peak resident bytes %d exceed budget_bytes %d. Fix: raise budget_bytes to at least %d or shrink the graph, frontier, scratch or output",
			e.RequiredBytes, e.BudgetBytes, e.RequiredBytes)
	}
	return fmt.Sprintf("resident graph session: %v. Fix: check the session profile", e.Kind)
}

// Overflow labels of the peak resident byte sum, as in vyre.
const (
	fieldGraphPlusFrontier   = "graph plus frontier bytes"
	fieldGraphFrontierScr    = "graph frontier scratch bytes"
	fieldPeakResident        = "peak resident bytes"
	fieldFrontierRefresh     = "total frontier refresh bytes"
	fieldAvoidedGraphUpload  = "avoided graph upload bytes"
	fieldAvoidedAllocations  = "avoided device allocations"
	allocationsAvoidedPerRun = 3
)

// PlanResidentGraphSession plans repeated runs over one resident graph.
// Checks run in vyre's order: hash, graph bytes, runs, budget, readback,
// the peak sum (overflow is a *checked.OverflowError naming the partial
// sum), then the budget. It is a pure function.
func PlanResidentGraphSession(p ResidentGraphSessionProfile) (ResidentGraphSessionPlan, error) {
	switch {
	case p.GraphLayoutHash == 0:
		return ResidentGraphSessionPlan{}, &SessionError{Kind: ZeroGraphHash}
	case p.GraphBytes == 0:
		return ResidentGraphSessionPlan{}, &SessionError{Kind: ZeroGraphBytes}
	case p.RunCount == 0:
		return ResidentGraphSessionPlan{}, &SessionError{Kind: ZeroRuns}
	case p.BudgetBytes == 0:
		return ResidentGraphSessionPlan{}, &SessionError{Kind: ZeroBudget}
	case p.Readback != ReadbackFinalOnly:
		return ResidentGraphSessionPlan{}, &SessionError{Kind: PerRunReadbackRejected}
	}
	const peakInputs = "graph_bytes + per_run_frontier_bytes + reusable_scratch_bytes + per_run_output_bytes"
	peak, err := checked.Add(p.GraphBytes, p.PerRunFrontierBytes, fieldGraphPlusFrontier)
	if err != nil {
		return ResidentGraphSessionPlan{}, checked.Inputs(err, "graph_bytes + per_run_frontier_bytes")
	}
	if peak, err = checked.Add(peak, p.ReusableScratchBytes, fieldGraphFrontierScr); err != nil {
		return ResidentGraphSessionPlan{}, checked.Inputs(err, "graph_bytes + per_run_frontier_bytes + reusable_scratch_bytes")
	}
	if peak, err = checked.Add(peak, p.PerRunOutputBytes, fieldPeakResident); err != nil {
		return ResidentGraphSessionPlan{}, checked.Inputs(err, peakInputs)
	}
	if peak > p.BudgetBytes {
		return ResidentGraphSessionPlan{}, &SessionError{Kind: OverBudget, RequiredBytes: peak, BudgetBytes: p.BudgetBytes}
	}
	refresh, err := checked.Mul(p.RunCount, p.PerRunFrontierBytes, fieldFrontierRefresh)
	if err != nil {
		return ResidentGraphSessionPlan{}, checked.Inputs(err, "run_count x per_run_frontier_bytes")
	}
	plan := ResidentGraphSessionPlan{
		GraphLayoutHash:           p.GraphLayoutHash,
		OneTimeGraphUploadBytes:   p.GraphBytes,
		TotalFrontierRefreshBytes: refresh,
		PeakResidentBytes:         peak,
		GraphReuse:                GraphReuseTelemetry{ColdUploads: 1, UploadBytes: p.GraphBytes},
		HostReadbackBytes:         p.PerRunOutputBytes,
		GraphTopologyResident:     true,
		ScratchReused:             true,
		FinalOnlyHostReadback:     true,
	}
	if p.RunCount == 1 {
		return plan, nil
	}
	warm := p.RunCount - 1
	avoided, err := checked.Mul(warm, p.GraphBytes, fieldAvoidedGraphUpload)
	if err != nil {
		return ResidentGraphSessionPlan{}, checked.Inputs(err, "(run_count - 1) x graph_bytes")
	}
	allocs, err := checked.Mul(warm, allocationsAvoidedPerRun, fieldAvoidedAllocations)
	if err != nil {
		return ResidentGraphSessionPlan{}, checked.Inputs(err, "(run_count - 1) x 3")
	}
	plan.AvoidedGraphUploadBytes = avoided
	plan.GraphReuse.WarmReuses = warm
	plan.GraphReuse.AvoidedUploadBytes = avoided
	plan.AvoidedDeviceAllocations = allocs
	plan.AvoidedHostFences = warm
	return plan, nil
}
