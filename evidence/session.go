package evidence

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gpuplan/gpuplan/internal/checked"
	"github.com/gpuplan/gpuplan/internal/quote"
	"github.com/gpuplan/gpuplan/planners"
)

// ResidentGraphSessionCSVHeader is the 17-column header of vyre's resident
// graph session evidence CSV (RESIDENT_GRAPH_SESSION_INPUT_HEADER).
const ResidentGraphSessionCSVHeader = "backend_id,device_ordinal,device_memory_bytes,compute_capability_major,compute_capability_minor,graph_nodes,graph_edges,graph_layout_hash,graph_bytes,run_count,per_run_frontier_bytes,reusable_scratch_bytes,per_run_output_bytes,budget_bytes,host_orchestrated_ns,resident_megakernel_ns,setup_ns"

var sessionColumns = strings.Split(ResidentGraphSessionCSVHeader, ",")

// sessionHostColumn is the 0-based column of host_orchestrated_ns in the
// session CSV; resident_megakernel_ns and setup_ns follow it.
const sessionHostColumn = 14

// ResidentGraphSessionEvidence is one measured resident graph session: the
// device, the graph, the session plan and the two timings.
type ResidentGraphSessionEvidence struct {
	BackendID              string
	DeviceOrdinal          uint64
	DeviceMemoryBytes      uint64
	ComputeCapabilityMajor uint32
	ComputeCapabilityMinor uint32
	GraphNodes             uint64
	GraphEdges             uint64
	Plan                   planners.ResidentGraphSessionPlan
	HostOrchestratedNS     float64
	ResidentMegakernelNS   float64
	SetupNS                float64
}

// ErrNonResidentEvidence reports a session plan that does not keep the graph
// resident, reuse scratch and read back once (vyre's NonResidentEvidence).
var ErrNonResidentEvidence = errors.New("resident graph evidence: the plan does not keep the graph topology resident, reuse scratch and read back only once. Fix: plan the session with PlanResidentGraphSession and final-only readback")

// SessionSpeedupSample turns resident graph session evidence into a speedup
// sample (vyre's resident_graph_session_speedup_sample): repetitions are
// avoided host fences + 1 (the run count) and every timed pollution counter
// is 0, because the plan keeps uploads, allocations and fences out of the
// runs.
func SessionSpeedupSample(ev ResidentGraphSessionEvidence) (SpeedupSample, error) {
	if !ev.Plan.GraphTopologyResident || !ev.Plan.ScratchReused || !ev.Plan.FinalOnlyHostReadback {
		return SpeedupSample{}, ErrNonResidentEvidence
	}
	reps, err := checked.Add(ev.Plan.AvoidedHostFences, 1, "repetitions")
	if err != nil {
		return SpeedupSample{}, err
	}
	return SpeedupSample{
		BackendID:              ev.BackendID,
		DeviceOrdinal:          ev.DeviceOrdinal,
		DeviceMemoryBytes:      ev.DeviceMemoryBytes,
		ComputeCapabilityMajor: ev.ComputeCapabilityMajor,
		ComputeCapabilityMinor: ev.ComputeCapabilityMinor,
		GraphNodes:             ev.GraphNodes,
		GraphEdges:             ev.GraphEdges,
		Repetitions:            reps,
		HostOrchestratedNS:     ev.HostOrchestratedNS,
		ResidentMegakernelNS:   ev.ResidentMegakernelNS,
		SetupNS:                ev.SetupNS,
	}, nil
}

// FormatSessionSpeedupCSV maps every session through SessionSpeedupSample
// and formats the result with FormatSpeedupCSV (vyre's
// format_validated_cuda_resident_graph_session_evidence_csv).
func FormatSessionSpeedupCSV(evs []ResidentGraphSessionEvidence, requiredX float64) (SpeedupProof, string, error) {
	samples := make([]SpeedupSample, 0, len(evs))
	for i, ev := range evs {
		s, err := SessionSpeedupSample(ev)
		if err != nil {
			return SpeedupProof{}, "", fmt.Errorf("resident graph evidence %d: %w", i, err)
		}
		samples = append(samples, s)
	}
	return FormatSpeedupCSV(samples, requiredX)
}

// SessionCSVError is a malformed row of the 17-column resident graph
// session CSV. Line counts non-blank lines with the header as line 1;
// Column is 1-based and Field names the column: the bad field, the first
// column where a header differs, or a row's first missing or extra column
// ("(extra)" past the header). Column is 0 and Field empty for a planning
// error, which concerns the whole row; Err then holds it.
type SessionCSVError struct {
	Line   int
	Column int
	Field  string
	Value  string
	Msg    string
	Fix    string
	Err    error
}

// Error describes the failure and ends with a "Fix:" sentence.
func (e *SessionCSVError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "resident graph evidence line %d", e.Line)
	if e.Column > 0 {
		fmt.Fprintf(&b, ", column %d %s", e.Column, columnLabel(e.Field))
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	if e.Err != nil {
		b.WriteString(e.Err.Error())
		return b.String()
	}
	b.WriteString(". Fix: ")
	b.WriteString(e.Fix)
	return b.String()
}

// Unwrap returns the planning error behind the row, if any.
func (e *SessionCSVError) Unwrap() error { return e.Err }

// ParseSessionCSV parses the 17-column resident graph session evidence CSV
// and plans every row with final-only readback, as vyre's CLI does. A
// planning error is reported as "resident graph evidence line N: …".
func ParseSessionCSV(csv string) ([]ResidentGraphSessionEvidence, error) {
	lines := nonBlankLines(csv)
	if len(lines) == 0 {
		return nil, speedupErr(EmptySamples, 0)
	}
	return parseSessionLines(lines)
}

// parseSessionLines is ParseSessionCSV on the CSV's non-blank lines.
func parseSessionLines(lines []string) ([]ResidentGraphSessionEvidence, error) {
	if strings.TrimSpace(lines[0]) != ResidentGraphSessionCSVHeader {
		n, col, field, value := headerGap(lines[0], sessionColumns)
		return nil, &SessionCSVError{Line: 1, Column: col, Field: field, Value: value,
			Msg: fmt.Sprintf("header %s is not the resident graph session header; %s", quote.Echo(lines[0]), headerGapText(n, col, field, value)),
			Fix: "start the file with " + ResidentGraphSessionCSVHeader}
	}
	out := make([]ResidentGraphSessionEvidence, 0, len(lines)-1)
	for i, text := range lines[1:] {
		line := i + 2
		fields := strings.Split(text, ",")
		if len(fields) != len(sessionColumns) {
			col, field := countGap(len(fields), sessionColumns)
			value := ""
			if len(fields) > len(sessionColumns) {
				value = strings.TrimSpace(fields[len(sessionColumns)])
			}
			return nil, &SessionCSVError{Line: line, Column: col, Field: field, Value: value,
				Msg: fmt.Sprintf("row has %d fields but must have 17 fields; %s", len(fields), countGapText(len(fields), len(sessionColumns), value)),
				Fix: "give every row the 17 comma-separated fields of the header"}
		}
		for j := range fields {
			fields[j] = strings.TrimSpace(fields[j])
		}
		if fields[0] != CUDABackendID {
			return nil, &SessionCSVError{Line: line, Column: 1, Field: "backend_id", Value: fields[0],
				Msg: fmt.Sprintf("backend_id %s: release evidence must be produced by the CUDA backend", quote.Echo(fields[0])),
				Fix: "record the session on the CUDA backend (backend_id cuda)"}
		}
		p := rowParser{line: line, fields: fields, columns: sessionColumns}
		ev := ResidentGraphSessionEvidence{
			BackendID:              fields[0],
			DeviceOrdinal:          p.u64(1),
			DeviceMemoryBytes:      p.u64(2),
			ComputeCapabilityMajor: p.u32(3),
			ComputeCapabilityMinor: p.u32(4),
			GraphNodes:             p.u64(5),
			GraphEdges:             p.u64(6),
		}
		profile := planners.ResidentGraphSessionProfile{
			GraphLayoutHash:      p.u64(7),
			GraphBytes:           p.u64(8),
			RunCount:             p.u64(9),
			PerRunFrontierBytes:  p.u64(10),
			ReusableScratchBytes: p.u64(11),
			PerRunOutputBytes:    p.u64(12),
			BudgetBytes:          p.u64(13),
			Readback:             planners.ReadbackFinalOnly,
		}
		ev.HostOrchestratedNS = p.f64(14)
		ev.ResidentMegakernelNS = p.f64(15)
		ev.SetupNS = p.f64(16)
		if p.err != nil {
			se := p.err.(*SpeedupError)
			return nil, &SessionCSVError{Line: line, Column: se.Column, Field: se.Field, Value: se.Value,
				Msg: fmt.Sprintf("invalid %s %s", se.Field, quote.Echo(se.Value)), Fix: fieldFix(se.Field)}
		}
		plan, err := planners.PlanResidentGraphSession(profile)
		if err != nil {
			return nil, &SessionCSVError{Line: line, Err: err}
		}
		ev.Plan = plan
		out = append(out, ev)
	}
	return out, nil
}

// ConvertSessionCSV parses the 17-column session CSV, plans each session,
// validates the resulting speedup samples against requiredX and returns
// vyre's 14-column speedup CSV (vyre's --format-resident-graph-speedup-csv).
// An InvalidTiming error carries the line of the session row and the
// column of its bad time in the session CSV.
func ConvertSessionCSV(csv string, requiredX float64) (SpeedupProof, string, error) {
	if err := ValidateSpeedupRequired(requiredX); err != nil {
		return SpeedupProof{}, "", err
	}
	lines := nonBlankLines(csv)
	if len(lines) == 0 {
		return SpeedupProof{}, "", speedupErr(EmptySamples, 0)
	}
	evs, err := parseSessionLines(lines)
	if err != nil {
		return SpeedupProof{}, "", err
	}
	proof, out, err := FormatSessionSpeedupCSV(evs, requiredX)
	if err != nil {
		return SpeedupProof{}, "", locateTiming(err, lines, sessionColumns, sessionHostColumn, func(i int) (float64, float64, float64) {
			return evs[i].HostOrchestratedNS, evs[i].ResidentMegakernelNS, evs[i].SetupNS
		})
	}
	return proof, out, nil
}
