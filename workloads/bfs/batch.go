package bfs

import (
	"fmt"

	"github.com/gpuplan/gpuplan/planners"
)

// SessionCounts are the quantities the resident graph session plan
// predicts and the executor's telemetry measures.
type SessionCounts struct {
	// GraphUploadBytes is what the session's setup uploaded: the graph,
	// once.
	GraphUploadBytes uint64 `json:"graph_upload_bytes"`
	// ResidentBytes is the device memory the session keeps resident.
	ResidentBytes uint64 `json:"resident_bytes"`
	// RunUploadBytes is what the runs uploaded (the per-run frontier
	// refresh: none, a run's root is reset by a kernel).
	RunUploadBytes uint64 `json:"run_upload_bytes"`
	// RunAllocationBytes is what the runs allocated: nothing, the graph,
	// queues and levels are reused.
	RunAllocationBytes uint64 `json:"run_allocation_bytes"`
	// OutputReadbacks and OutputReadbackBytes are the readbacks of the
	// output beyond each run's own control flow: one, of the last run's
	// levels (final-only readback).
	OutputReadbacks     uint64 `json:"output_readbacks"`
	OutputReadbackBytes uint64 `json:"output_readback_bytes"`
}

// SessionCheck compares a resident graph session plan with what the
// executor measured.
type SessionCheck struct {
	Plan      planners.ResidentGraphSessionPlan `json:"plan"`
	Predicted SessionCounts                     `json:"predicted"`
	Measured  SessionCounts                     `json:"measured"`
}

// Mismatches lists, by name, every quantity whose measurement differs from
// the prediction.
func (c SessionCheck) Mismatches() []string {
	p, m := c.Predicted, c.Measured
	var out []string
	for _, q := range []struct {
		name       string
		pred, meas uint64
	}{
		{"graph upload bytes", p.GraphUploadBytes, m.GraphUploadBytes},
		{"resident bytes", p.ResidentBytes, m.ResidentBytes},
		{"run upload bytes", p.RunUploadBytes, m.RunUploadBytes},
		{"run allocation bytes", p.RunAllocationBytes, m.RunAllocationBytes},
		{"output readbacks", p.OutputReadbacks, m.OutputReadbacks},
		{"output readback bytes", p.OutputReadbackBytes, m.OutputReadbackBytes},
	} {
		if q.pred != q.meas {
			out = append(out, fmt.Sprintf("%s: predicted %d, measured %d", q.name, q.pred, q.meas))
		}
	}
	return out
}

// SessionProfile is the resident graph session profile of runs traversals
// over the session's graph: the graph uploaded once, nothing uploaded per
// run, the queues, visited bitmaps, control words and decision log reused
// as scratch, the levels as the output, read back once after the last run.
func (s *Session) SessionProfile(runs int) planners.ResidentGraphSessionProfile {
	n := uint64(s.g.NumVertices())
	graph := uint64(s.width)*(n+1) + 4*uint64(max(1, s.g.NumEdgeEntries()))
	return planners.ResidentGraphSessionProfile{
		GraphLayoutHash:      s.layoutHash(),
		GraphBytes:           graph,
		RunCount:             uint64(max(runs, 0)),
		ReusableScratchBytes: 2*s.plans.Queue.Queue.QueueBytes + 2*VisitedBytes(s.g) + 4*CtlWords + s.logBytes(),
		PerRunOutputBytes:    4 * n,
		BudgetBytes:          s.plans.Memory.BudgetBytes,
		Readback:             planners.ReadbackFinalOnly,
	}
}

// layoutHash identifies the resident graph: the frontier digest
// (frontier.CSR.Digest) of its CSR arrays as the device holds them,
// offsets at the session's width then targets, never 0. It is computed on
// every core the first time it is asked for, then kept: the graph on the
// device does not change.
func (s *Session) layoutHash() uint64 {
	if s.layout == 0 {
		// The session uploaded its offsets at this width (upload), so
		// they fit it.
		h, _ := s.g.Digest(int(s.width))
		s.layout = max(h, 1)
	}
	return s.layout
}

// BatchResult is a batch of runs over the resident graph.
type BatchResult struct {
	Runs []Run `json:"runs"`
	// Levels are the last run's levels, the batch's one output readback.
	Levels []int32      `json:"-"`
	Check  SessionCheck `json:"session"`
}

// Batch runs arm from every root over the resident graph as the resident
// graph session plan says: no upload and no allocation per run, and the
// output (the last run's levels) read back once, at the end. Each run's own
// control flow (its reset, convergence checks and result words) is counted
// apart. The check compares the plan's prediction with the telemetry.
func (s *Session) Batch(arm Arm, roots []int32) (BatchResult, error) {
	if len(roots) == 0 {
		return BatchResult{}, fmt.Errorf("BFS batch has no roots. Fix: pass at least one root")
	}
	plan, err := planners.PlanResidentGraphSession(s.SessionProfile(len(roots)))
	if err != nil {
		return BatchResult{}, err
	}
	res := BatchResult{Check: SessionCheck{Plan: plan, Predicted: SessionCounts{
		GraphUploadBytes: plan.OneTimeGraphUploadBytes, ResidentBytes: plan.PeakResidentBytes,
		RunUploadBytes: plan.TotalFrontierRefreshBytes, OutputReadbacks: uint64(len(roots)) - plan.AvoidedHostFences,
		OutputReadbackBytes: plan.HostReadbackBytes}}}
	before := s.x.Telemetry()
	var ctl Run
	for _, root := range roots {
		r, err := s.Run(arm, root)
		if err != nil {
			return res, err
		}
		res.Runs = append(res.Runs, r)
		ctl.Readbacks += r.Readbacks
		ctl.ReadbackBytes += r.ReadbackBytes
	}
	if res.Levels, err = s.Levels(); err != nil {
		return res, err
	}
	d := s.x.Telemetry().Sub(before)
	res.Check.Measured = SessionCounts{GraphUploadBytes: s.opened.HostToDeviceBytes, ResidentBytes: s.x.ResidentBytes(),
		RunUploadBytes: d.HostToDeviceBytes, RunAllocationBytes: d.ResidentAllocationBytesRequested,
		OutputReadbacks: d.DeviceReadbackOperations - ctl.Readbacks, OutputReadbackBytes: d.DeviceToHostBytes - ctl.ReadbackBytes}
	return res, nil
}
