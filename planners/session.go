package planners

import (
	"fmt"

	"github.com/gpuplan/gpuplan/internal/checked"
)

// ResidentGraphReadback says when a resident graph session copies results
// back to the host.
type ResidentGraphReadback int

const (
	// ReadbackFinalOnly reads the output back once, after the last run.
	ReadbackFinalOnly ResidentGraphReadback = iota
	// ReadbackPerRun reads the output back after every run. Resident
	// sessions reject it: a per-run readback puts a host fence in every run.
	ReadbackPerRun
)

// String returns "final-only" or "per-run".
func (r ResidentGraphReadback) String() string {
	switch r {
	case ReadbackFinalOnly:
		return "final-only"
	case ReadbackPerRun:
		return "per-run"
	}
	return fmt.Sprintf("ResidentGraphReadback(%d)", int(r))
}

// ResidentGraphSessionProfile describes repeated runs over one graph kept
// resident on the device (vyre's CudaResidentGraphSessionProfile).
type ResidentGraphSessionProfile struct {
	GraphLayoutHash      uint64                // identity of the resident graph layout; 0 is invalid
	GraphBytes           uint64                // bytes of the graph uploaded once
	RunCount             uint64                // runs over the resident graph
	PerRunFrontierBytes  uint64                // frontier bytes refreshed by every run
	ReusableScratchBytes uint64                // scratch bytes allocated once and reused
	PerRunOutputBytes    uint64                // output bytes of one run
	BudgetBytes          uint64                // device bytes the session may keep resident
	Readback             ResidentGraphReadback // must be ReadbackFinalOnly
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

// Error describes the failure and ends with a "Fix:" sentence.
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
		return "resident graph session: per-run readback puts a host fence in every run. Fix: read the output back once, after the final run"
	case OverBudget:
		return fmt.Sprintf("resident graph session: peak resident bytes %d exceed the budget of %d bytes. Fix: raise budget_bytes or shrink the graph, frontier, scratch or output", e.RequiredBytes, e.BudgetBytes)
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
	peak, err := checked.Add(p.GraphBytes, p.PerRunFrontierBytes, fieldGraphPlusFrontier)
	if err != nil {
		return ResidentGraphSessionPlan{}, err
	}
	if peak, err = checked.Add(peak, p.ReusableScratchBytes, fieldGraphFrontierScr); err != nil {
		return ResidentGraphSessionPlan{}, err
	}
	if peak, err = checked.Add(peak, p.PerRunOutputBytes, fieldPeakResident); err != nil {
		return ResidentGraphSessionPlan{}, err
	}
	if peak > p.BudgetBytes {
		return ResidentGraphSessionPlan{}, &SessionError{Kind: OverBudget, RequiredBytes: peak, BudgetBytes: p.BudgetBytes}
	}
	refresh, err := checked.Mul(p.RunCount, p.PerRunFrontierBytes, fieldFrontierRefresh)
	if err != nil {
		return ResidentGraphSessionPlan{}, err
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
		return ResidentGraphSessionPlan{}, err
	}
	allocs, err := checked.Mul(warm, allocationsAvoidedPerRun, fieldAvoidedAllocations)
	if err != nil {
		return ResidentGraphSessionPlan{}, err
	}
	plan.AvoidedGraphUploadBytes = avoided
	plan.GraphReuse.WarmReuses = warm
	plan.GraphReuse.AvoidedUploadBytes = avoided
	plan.AvoidedDeviceAllocations = allocs
	plan.AvoidedHostFences = warm
	return plan, nil
}
