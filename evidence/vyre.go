package evidence

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/gpuplan/gpuplan/internal/checked"
	"github.com/gpuplan/gpuplan/internal/quote"
)

// Release thresholds of vyre's megakernel speedup gate (vyre-driver-cuda
// 0.6.1, megakernel_speedup_gate).
const (
	MinReleaseGraphNodes         = 10_000
	MinReleaseGraphEdges         = 80_000
	MinReleaseRepetitions        = 64
	MinReleaseSampleCount        = 2
	MinReleaseDeviceMemoryBytes  = 16 << 30 // 17,179,869,184
	MinReleaseComputeMajor       = 8
	MinReleaseComputeMinor       = 0
	CUDABackendID                = "cuda"
	DefaultRequiredSpeedupX      = 100.0
	speedupCSVBytesPerSampleHint = 128
)

// MegakernelSpeedupCSVHeader is vyre 0.6.1's 14-column header of the
// megakernel speedup evidence CSV.
const MegakernelSpeedupCSVHeader = "backend_id,device_ordinal,device_memory_bytes,compute_capability_major,compute_capability_minor,graph_nodes,graph_edges,repetitions,host_orchestrated_ns,resident_megakernel_ns,setup_ns,timed_graph_uploads,timed_host_allocations,timed_host_syncs"

// MegakernelSpeedupCSVHeader15 is the later 15-column header, which appends
// resident_borrowed_fallback_dispatches (it must be 0 on every row).
const MegakernelSpeedupCSVHeader15 = MegakernelSpeedupCSVHeader + ",resident_borrowed_fallback_dispatches"

// SpeedupSample is one row of vyre's megakernel speedup evidence
// (CudaMegakernelSpeedupSample). Times are nanoseconds.
type SpeedupSample struct {
	BackendID              string
	DeviceOrdinal          uint64
	DeviceMemoryBytes      uint64
	ComputeCapabilityMajor uint32
	ComputeCapabilityMinor uint32
	GraphNodes             uint64
	GraphEdges             uint64
	Repetitions            uint64
	HostOrchestratedNS     float64
	ResidentMegakernelNS   float64
	SetupNS                float64
	TimedGraphUploads      uint64
	TimedHostAllocations   uint64
	TimedHostSyncs         uint64
	// BorrowedFallbackDispatches is the 15th column of the later format;
	// it is 0 for 14-column input and must be 0 to pass.
	BorrowedFallbackDispatches uint64
}

// SpeedupProof summarises validated speedup evidence
// (CudaMegakernelSpeedupProof).
type SpeedupProof struct {
	MinSpeedupX      float64
	MaxSpeedupX      float64
	SampleCount      uint64
	TotalRepetitions uint64
}

// SummaryLine returns vyre's CLI summary line:
// validated_cuda_megakernel_speedup,min_x=%.3f,max_x=%.3f,samples=N,repetitions=N.
func (p SpeedupProof) SummaryLine() string {
	return fmt.Sprintf("validated_cuda_megakernel_speedup,min_x=%.3f,max_x=%.3f,samples=%d,repetitions=%d",
		p.MinSpeedupX, p.MaxSpeedupX, p.SampleCount, p.TotalRepetitions)
}

// SpeedupErrorKind names a speedup gate failure with vyre's variant name.
type SpeedupErrorKind int

// The speedup gate failures. The per-sample checks run in the order
// NonCudaEvidence … RepetitionCountOverflow; the first failing one wins.
const (
	EmptySamples SpeedupErrorKind = iota + 1
	InvalidRequiredSpeedup
	NonCudaEvidence
	InsufficientCudaDevice
	NotRepeatedFixedGraph
	InsufficientScale
	PollutedTimedRegion
	InvalidTiming
	SpeedupBelowThreshold
	RepetitionCountOverflow
	InsufficientSampleCount
	InvalidEvidenceHeader
	InvalidEvidenceRow
	InvalidEvidenceValue
	EvidenceCSVCapacityOverflow
)

var speedupKindNames = map[SpeedupErrorKind]string{
	EmptySamples:                "EmptySamples",
	InvalidRequiredSpeedup:      "InvalidRequiredSpeedup",
	NonCudaEvidence:             "NonCudaEvidence",
	InsufficientCudaDevice:      "InsufficientCudaDevice",
	NotRepeatedFixedGraph:       "NotRepeatedFixedGraph",
	InsufficientScale:           "InsufficientScale",
	PollutedTimedRegion:         "PollutedTimedRegion",
	InvalidTiming:               "InvalidTiming",
	SpeedupBelowThreshold:       "SpeedupBelowThreshold",
	RepetitionCountOverflow:     "RepetitionCountOverflow",
	InsufficientSampleCount:     "InsufficientSampleCount",
	InvalidEvidenceHeader:       "InvalidEvidenceHeader",
	InvalidEvidenceRow:          "InvalidEvidenceRow",
	InvalidEvidenceValue:        "InvalidEvidenceValue",
	EvidenceCSVCapacityOverflow: "EvidenceCsvCapacityOverflow",
}

// String returns vyre's name of the kind.
func (k SpeedupErrorKind) String() string {
	if n, ok := speedupKindNames[k]; ok {
		return n
	}
	return fmt.Sprintf("SpeedupErrorKind(%d)", int(k))
}

// SpeedupError is a rejected piece of vyre speedup evidence. Kind says
// which check failed; only the fields vyre's variant carries are set:
//
//   - Index (0-based sample or data-row index): NonCudaEvidence (BackendID),
//     InsufficientCudaDevice (DeviceMemoryBytes, Major, Minor),
//     NotRepeatedFixedGraph, InsufficientScale (Nodes, Edges, Repetitions),
//     PollutedTimedRegion (GraphUploads, HostAllocations, HostSyncs,
//     BorrowedFallbackDispatches), InvalidTiming, SpeedupBelowThreshold
//     (ObservedX, RequiredX), RepetitionCountOverflow;
//   - N: InsufficientSampleCount;
//   - Observed: InvalidEvidenceHeader (the untrimmed header line);
//   - Line (header = 1, blank lines not counted, as in vyre), Column
//     (1-based), Field (the column's header name, "(extra)" past the end of
//     the header) and Value (the field's trimmed text): InvalidEvidenceValue;
//     InvalidEvidenceHeader at its first column that differs (Fields: the
//     header's column count); InvalidEvidenceRow at its first missing or
//     extra column (Fields: the row's field count, WantFields: the
//     header's); every other per-sample kind that comes from a CSV gets the
//     row's Line (its message then starts "line N: "); InvalidTiming when it
//     comes from a CSV, at the first time
//     that fails (Index is then the 0-based data row);
//   - RequiredX: InvalidRequiredSpeedup.
type SpeedupError struct {
	Kind                       SpeedupErrorKind
	Index                      int
	BackendID                  string
	DeviceMemoryBytes          uint64
	Major, Minor               uint32
	Nodes, Edges, Repetitions  uint64
	GraphUploads               uint64
	HostAllocations            uint64
	HostSyncs                  uint64
	BorrowedFallbackDispatches uint64
	ObservedX, RequiredX       float64
	N                          int
	Observed                   string
	Line                       int
	Column                     int // 1-based column in the CSV
	Field                      string
	Value                      string
	Fields, WantFields         int
}

// position is "line N" or, with a column, "line N, column C (field)".
func (e *SpeedupError) position() string {
	if e.Column == 0 {
		return fmt.Sprintf("line %d", e.Line)
	}
	return fmt.Sprintf("line %d, column %d %s", e.Line, e.Column, columnLabel(e.Field))
}

// Error describes the failure and ends with a "Fix:" sentence. A
// per-sample failure located in a CSV row starts with the row's line.
func (e *SpeedupError) Error() string {
	if e.Line > 0 && e.Column == 0 && perSampleKind(e.Kind) {
		return fmt.Sprintf("line %d: %s", e.Line, e.message())
	}
	return e.message()
}

// perSampleKind reports whether k is one of the checks run on each sample.
func perSampleKind(k SpeedupErrorKind) bool {
	switch k {
	case NonCudaEvidence, InsufficientCudaDevice, NotRepeatedFixedGraph, InsufficientScale, PollutedTimedRegion,
		InvalidTiming, SpeedupBelowThreshold, RepetitionCountOverflow:
		return true
	}
	return false
}

func (e *SpeedupError) message() string {
	switch e.Kind {
	case EmptySamples:
		return "speedup evidence is empty. Fix: record at least two repeated samples"
	case InvalidRequiredSpeedup:
		return fmt.Sprintf("required speedup %v is not a finite positive number. Fix: pass a required speedup greater than 0, such as 100", e.RequiredX)
	case NonCudaEvidence:
		return fmt.Sprintf("sample %d: backend_id %s is not %q. Fix: record release evidence on the CUDA backend", e.Index, quote.Echo(e.BackendID), CUDABackendID)
	case InsufficientCudaDevice:
		return fmt.Sprintf("sample %d: device with %d bytes and compute capability %d.%d is below the release floor of %d bytes and 8.0. Fix: measure on a device with at least 16 GiB and compute capability 8.0", e.Index, e.DeviceMemoryBytes, e.Major, e.Minor, uint64(MinReleaseDeviceMemoryBytes))
	case NotRepeatedFixedGraph:
		return fmt.Sprintf("sample %d: graph_nodes and graph_edges must be non-zero and repetitions above 1. Fix: repeat runs over one fixed, non-empty graph", e.Index)
	case InsufficientScale:
		return fmt.Sprintf("sample %d: %d nodes, %d edges and %d repetitions are below the release scale of %d nodes, %d edges and %d repetitions. Fix: measure a larger graph with more repetitions", e.Index, e.Nodes, e.Edges, e.Repetitions, MinReleaseGraphNodes, MinReleaseGraphEdges, MinReleaseRepetitions)
	case PollutedTimedRegion:
		return fmt.Sprintf("sample %d: timed region has %d graph uploads, %d host allocations, %d host syncs and %d borrowed fallback dispatches. Fix: keep uploads, allocations, host syncs and fallback dispatches out of the timed region", e.Index, e.GraphUploads, e.HostAllocations, e.HostSyncs, e.BorrowedFallbackDispatches)
	case InvalidTiming:
		if e.Column > 0 {
			if e.Field == "setup_ns" {
				return fmt.Sprintf("%s: sample %d: setup_ns %s is not a finite number, 0 or above. Fix: re-measure the sample; NaN, infinite and negative setup times are not evidence", e.position(), e.Index, quote.Echo(e.Value))
			}
			return fmt.Sprintf("%s: sample %d: %s %s is not a finite number above 0. Fix: re-measure the sample; NaN, infinite, zero and negative times are not evidence", e.position(), e.Index, e.Field, quote.Echo(e.Value))
		}
		return fmt.Sprintf("sample %d: host and resident times must be finite and above 0 and setup finite and not negative. Fix: re-measure the sample", e.Index)
	case SpeedupBelowThreshold:
		return fmt.Sprintf("sample %d: observed speedup %vx is below the required %vx. Fix: improve the resident megakernel or lower the claim", e.Index, e.ObservedX, e.RequiredX)
	case RepetitionCountOverflow:
		return fmt.Sprintf("sample %d: total repetitions overflow 64 bits. Fix: check the repetitions column", e.Index)
	case InsufficientSampleCount:
		return fmt.Sprintf("only %d accepted samples; at least %d are required. Fix: record more samples", e.N, MinReleaseSampleCount)
	case InvalidEvidenceHeader:
		if e.Column > 0 {
			return fmt.Sprintf("%s: evidence header %s is not the megakernel speedup header; %s. Fix: start the file with %s", e.position(), quote.Echo(e.Observed),
				headerGapText(e.Fields, e.Column, e.Field, e.Value), MegakernelSpeedupCSVHeader)
		}
		return fmt.Sprintf("evidence header %s is not the megakernel speedup header. Fix: start the file with %s", quote.Echo(e.Observed), MegakernelSpeedupCSVHeader)
	case InvalidEvidenceRow:
		if e.Column > 0 {
			return fmt.Sprintf("%s: row has %d fields but the header has %d; %s. Fix: give every row exactly the %d comma-separated fields of the header",
				e.position(), e.Fields, e.WantFields, countGapText(e.Fields, e.WantFields, e.Value), e.WantFields)
		}
		return fmt.Sprintf("line %d: wrong number of fields. Fix: give every row exactly as many comma-separated fields as the header", e.Line)
	case InvalidEvidenceValue:
		return fmt.Sprintf("%s: invalid value %s. Fix: %s", e.position(), quote.Echo(e.Value), fieldFix(e.Field))
	case EvidenceCSVCapacityOverflow:
		return "evidence CSV size overflows. Fix: format fewer samples at once"
	}
	return fmt.Sprintf("speedup evidence: %v. Fix: check the evidence", e.Kind)
}

func fieldFix(field string) string {
	switch field {
	case "backend_id":
		return "release evidence must be produced by the CUDA backend (backend_id cuda)"
	case "host_orchestrated_ns", "resident_megakernel_ns", "setup_ns":
		return "write a decimal number of nanoseconds"
	}
	return "write a non-negative decimal integer"
}

func speedupErr(kind SpeedupErrorKind, index int) *SpeedupError {
	return &SpeedupError{Kind: kind, Index: index}
}

// ValidateSpeedupRequired reports whether requiredX is usable: finite and
// greater than zero. vyre skips this check on its CSV path; gpuplan runs it
// on every path.
func ValidateSpeedupRequired(requiredX float64) error {
	if !checked.Finite(requiredX) || requiredX <= 0 {
		return &SpeedupError{Kind: InvalidRequiredSpeedup, RequiredX: requiredX}
	}
	return nil
}

// speedupAccumulator runs the per-sample checks and accumulates the proof.
type speedupAccumulator struct {
	requiredX float64
	proof     SpeedupProof
}

func (a *speedupAccumulator) add(index int, s SpeedupSample) error {
	if s.BackendID != CUDABackendID {
		return &SpeedupError{Kind: NonCudaEvidence, Index: index, BackendID: s.BackendID}
	}
	if s.DeviceMemoryBytes < MinReleaseDeviceMemoryBytes ||
		s.ComputeCapabilityMajor < MinReleaseComputeMajor ||
		(s.ComputeCapabilityMajor == MinReleaseComputeMajor && s.ComputeCapabilityMinor < MinReleaseComputeMinor) {
		return &SpeedupError{Kind: InsufficientCudaDevice, Index: index, DeviceMemoryBytes: s.DeviceMemoryBytes,
			Major: s.ComputeCapabilityMajor, Minor: s.ComputeCapabilityMinor}
	}
	if s.GraphNodes == 0 || s.GraphEdges == 0 || s.Repetitions <= 1 {
		return speedupErr(NotRepeatedFixedGraph, index)
	}
	if s.GraphNodes < MinReleaseGraphNodes || s.GraphEdges < MinReleaseGraphEdges || s.Repetitions < MinReleaseRepetitions {
		return &SpeedupError{Kind: InsufficientScale, Index: index, Nodes: s.GraphNodes, Edges: s.GraphEdges, Repetitions: s.Repetitions}
	}
	if s.TimedGraphUploads != 0 || s.TimedHostAllocations != 0 || s.TimedHostSyncs != 0 || s.BorrowedFallbackDispatches != 0 {
		return &SpeedupError{Kind: PollutedTimedRegion, Index: index, GraphUploads: s.TimedGraphUploads,
			HostAllocations: s.TimedHostAllocations, HostSyncs: s.TimedHostSyncs, BorrowedFallbackDispatches: s.BorrowedFallbackDispatches}
	}
	if badTiming(s.HostOrchestratedNS, s.ResidentMegakernelNS, s.SetupNS) >= 0 {
		return speedupErr(InvalidTiming, index)
	}
	speedup := s.HostOrchestratedNS / s.ResidentMegakernelNS
	if speedup < a.requiredX {
		return &SpeedupError{Kind: SpeedupBelowThreshold, Index: index, ObservedX: speedup, RequiredX: a.requiredX}
	}
	total, err := checked.Add(a.proof.TotalRepetitions, s.Repetitions, "total repetitions")
	if err != nil {
		return speedupErr(RepetitionCountOverflow, index)
	}
	if a.proof.SampleCount == 0 {
		a.proof.MinSpeedupX, a.proof.MaxSpeedupX = speedup, speedup
	} else {
		a.proof.MinSpeedupX = math.Min(a.proof.MinSpeedupX, speedup)
		a.proof.MaxSpeedupX = math.Max(a.proof.MaxSpeedupX, speedup)
	}
	a.proof.TotalRepetitions = total
	a.proof.SampleCount++
	return nil
}

// badTiming returns which of the host, resident and setup times (0, 1 or
// 2) is the first to break InvalidTiming's rule, or -1 when all hold: host
// and resident times finite and above 0, setup finite and not negative.
func badTiming(hostNS, residentNS, setupNS float64) int {
	switch {
	case !checked.Finite(hostNS) || hostNS <= 0:
		return 0
	case !checked.Finite(residentNS) || residentNS <= 0:
		return 1
	case !checked.Finite(setupNS) || setupNS < 0:
		return 2
	}
	return -1
}

// locateTiming gives a per-sample error from data row Index of a CSV the
// row's line (vyre's numbering: Index + 2) and, for InvalidTiming, the
// column of the first bad time and that field's text. lines are the CSV's
// non-blank lines, header first; columns name the CSV's columns and
// firstTime is the 0-based column of its first time (the host time;
// resident and setup follow). times returns the parsed times of a data
// row. Other errors pass unchanged.
func locateTiming(err error, lines, columns []string, firstTime int, times func(index int) (hostNS, residentNS, setupNS float64)) error {
	var se *SpeedupError
	if !errors.As(err, &se) || !perSampleKind(se.Kind) || se.Index < 0 || se.Index+1 >= len(lines) {
		return err
	}
	if se.Kind != InvalidTiming {
		se.Line = se.Index + 2
		return err
	}
	k := badTiming(times(se.Index))
	fields := strings.Split(lines[se.Index+1], ",")
	if k < 0 || firstTime+k >= len(fields) {
		return err
	}
	col := firstTime + k
	se.Line, se.Column, se.Field, se.Value = se.Index+2, col+1, columns[col], strings.TrimSpace(fields[col])
	return err
}

func (a *speedupAccumulator) finish() (SpeedupProof, error) {
	if a.proof.SampleCount < MinReleaseSampleCount {
		return SpeedupProof{}, &SpeedupError{Kind: InsufficientSampleCount, N: int(a.proof.SampleCount)}
	}
	return a.proof, nil
}

// ValidateSpeedupSamples is vyre's validate_cuda_megakernel_speedup_gate:
// empty input, then the required speedup, then the per-sample checks in
// vyre's order, then the sample count. Errors are *SpeedupError.
func ValidateSpeedupSamples(samples []SpeedupSample, requiredX float64) (SpeedupProof, error) {
	if len(samples) == 0 {
		return SpeedupProof{}, speedupErr(EmptySamples, 0)
	}
	if err := ValidateSpeedupRequired(requiredX); err != nil {
		return SpeedupProof{}, err
	}
	return checkSpeedupSamples(samples, requiredX)
}

// checkSpeedupSamples runs the per-sample checks in order and then the
// sample count; requiredX has been validated.
func checkSpeedupSamples(samples []SpeedupSample, requiredX float64) (SpeedupProof, error) {
	acc := speedupAccumulator{requiredX: requiredX}
	for i, s := range samples {
		if err := acc.add(i, s); err != nil {
			return SpeedupProof{}, err
		}
	}
	return acc.finish()
}

// nonBlankLines drops whitespace-only lines, as vyre does before numbering.
func nonBlankLines(csv string) []string {
	var out []string
	for line := range strings.Lines(csv) {
		if strings.TrimSpace(line) != "" {
			out = append(out, strings.TrimRight(line, "\r\n"))
		}
	}
	return out
}

var speedupColumns = strings.Split(MegakernelSpeedupCSVHeader15, ",")

// speedupHostColumn is the 0-based column of host_orchestrated_ns in the
// speedup CSV; resident_megakernel_ns and setup_ns follow it.
const speedupHostColumn = 8

// ParseSpeedupCSV parses vyre's 14-column (or the later 15-column) speedup
// evidence CSV without judging the samples. Blank lines are dropped first;
// line numbers count the remaining lines with the header as line 1, as in
// vyre. Errors are *SpeedupError.
func ParseSpeedupCSV(csv string) ([]SpeedupSample, error) {
	lines := nonBlankLines(csv)
	if len(lines) == 0 {
		return nil, speedupErr(EmptySamples, 0)
	}
	return parseSpeedupLines(lines)
}

func parseSpeedupLines(lines []string) ([]SpeedupSample, error) {
	width := 0
	switch strings.TrimSpace(lines[0]) {
	case MegakernelSpeedupCSVHeader:
		width = 14
	case MegakernelSpeedupCSVHeader15:
		width = 15
	default:
		n, col, field, value := headerGap(lines[0], speedupColumns)
		return nil, &SpeedupError{Kind: InvalidEvidenceHeader, Observed: lines[0],
			Line: 1, Column: col, Field: field, Value: value, Fields: n}
	}
	samples := make([]SpeedupSample, 0, len(lines)-1)
	for i, line := range lines[1:] {
		s, err := parseSpeedupRow(i+2, line, width)
		if err != nil {
			return nil, err
		}
		samples = append(samples, s)
	}
	return samples, nil
}

// rowParser parses trimmed fields of one CSV row, remembering the first
// failure as an InvalidEvidenceValue.
type rowParser struct {
	line    int
	fields  []string
	columns []string
	err     error
}

func (p *rowParser) fail(i int) {
	if p.err == nil {
		p.err = &SpeedupError{Kind: InvalidEvidenceValue, Line: p.line, Column: i + 1, Field: p.columns[i], Value: p.fields[i]}
	}
}

// rustUint strips the single leading '+' that Rust's integer parser accepts.
func rustUint(s string) string {
	if len(s) > 1 && s[0] == '+' && s[1] != '+' && s[1] != '-' {
		return s[1:]
	}
	return s
}

// unsigned parses field i as an unsigned integer of the given bit size,
// recording the first failure.
func (p *rowParser) unsigned(i, bits int) uint64 {
	if p.err != nil {
		return 0
	}
	v, err := strconv.ParseUint(rustUint(p.fields[i]), 10, bits)
	if err != nil {
		p.fail(i)
	}
	return v
}

func (p *rowParser) u64(i int) uint64 { return p.unsigned(i, 64) }

func (p *rowParser) u32(i int) uint32 { return uint32(p.unsigned(i, 32)) }

func (p *rowParser) f64(i int) float64 {
	if p.err != nil {
		return 0
	}
	v, ok := parseRustFloat(p.fields[i])
	if !ok {
		p.fail(i)
	}
	return v
}

// parseRustFloat parses a decimal float the way Rust's f64::from_str does:
// decimal digits with an optional exponent, inf, infinity and NaN (any
// case), an optional sign; no hexadecimal floats and no underscores. Out
// of range values become ±Inf or 0 instead of an error.
func parseRustFloat(s string) (float64, bool) {
	body := strings.TrimLeft(s, "+-")
	if len(s)-len(body) > 1 || body == "" {
		return 0, false
	}
	if strings.ContainsAny(body, "_xXpP") {
		if !strings.EqualFold(body, "infinity") {
			return 0, false
		}
	}
	if strings.EqualFold(body, "nan") {
		return math.NaN(), true // Rust accepts a signed NaN; Go does not
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return v, true
		}
		return 0, false
	}
	return v, true
}

func parseSpeedupRow(line int, text string, width int) (SpeedupSample, error) {
	fields := strings.Split(text, ",")
	if len(fields) != width {
		col, field := countGap(len(fields), speedupColumns[:width])
		value := ""
		if len(fields) > width {
			value = strings.TrimSpace(fields[width])
		}
		return SpeedupSample{}, &SpeedupError{Kind: InvalidEvidenceRow, Line: line, Column: col, Field: field, Value: value,
			Fields: len(fields), WantFields: width}
	}
	for i := range fields {
		fields[i] = strings.TrimSpace(fields[i])
	}
	p := rowParser{line: line, fields: fields, columns: speedupColumns}
	if fields[0] != CUDABackendID {
		p.fail(0)
		return SpeedupSample{}, p.err
	}
	s := SpeedupSample{
		BackendID:              fields[0],
		DeviceOrdinal:          p.u64(1),
		DeviceMemoryBytes:      p.u64(2),
		ComputeCapabilityMajor: p.u32(3),
		ComputeCapabilityMinor: p.u32(4),
		GraphNodes:             p.u64(5),
		GraphEdges:             p.u64(6),
		Repetitions:            p.u64(7),
		HostOrchestratedNS:     p.f64(8),
		ResidentMegakernelNS:   p.f64(9),
		SetupNS:                p.f64(10),
		TimedGraphUploads:      p.u64(11),
		TimedHostAllocations:   p.u64(12),
		TimedHostSyncs:         p.u64(13),
	}
	if width == 15 {
		s.BorrowedFallbackDispatches = p.u64(14)
	}
	return s, p.err
}

// ValidateSpeedupCSV is vyre's validate_cuda_megakernel_speedup_evidence_csv
// with its quirk fixed: a NaN, infinite, zero or negative requiredX is
// rejected (InvalidRequiredSpeedup) right after the empty-input check,
// before the header is read. The sample index in per-sample errors is the
// 0-based data-row index; an InvalidTiming error also carries the row's
// line and the column of the bad time. Errors are *SpeedupError.
func ValidateSpeedupCSV(csv string, requiredX float64) (SpeedupProof, error) {
	lines := nonBlankLines(csv)
	if len(lines) == 0 {
		return SpeedupProof{}, speedupErr(EmptySamples, 0)
	}
	if err := ValidateSpeedupRequired(requiredX); err != nil {
		return SpeedupProof{}, err
	}
	samples, err := parseSpeedupLines(lines)
	if err != nil {
		return SpeedupProof{}, err
	}
	proof, err := checkSpeedupSamples(samples, requiredX)
	if err != nil {
		return SpeedupProof{}, locateTiming(err, lines, speedupColumns, speedupHostColumn, func(i int) (float64, float64, float64) {
			return samples[i].HostOrchestratedNS, samples[i].ResidentMegakernelNS, samples[i].SetupNS
		})
	}
	return proof, nil
}

// SpeedupCSVCapacity is the byte capacity vyre reserves for n formatted
// samples: header length + 1 + 128 × n. Overflow is an
// EvidenceCsvCapacityOverflow *SpeedupError.
func SpeedupCSVCapacity(n uint64) (uint64, error) {
	perSamples, err := checked.Mul(n, speedupCSVBytesPerSampleHint, "evidence CSV capacity")
	if err != nil {
		return 0, speedupErr(EvidenceCSVCapacityOverflow, 0)
	}
	total, err := checked.Add(uint64(len(MegakernelSpeedupCSVHeader))+1, perSamples, "evidence CSV capacity")
	if err != nil {
		return 0, speedupErr(EvidenceCSVCapacityOverflow, 0)
	}
	return total, nil
}

// FormatSpeedupCSV validates samples against requiredX and writes them as
// vyre's 14-column CSV (header, then one line per sample, each ending in a
// newline). Floats are written in shortest round-trip form without an
// exponent, as Rust's Display does. Validated samples never carry borrowed
// fallback dispatches, so the 14-column form loses nothing.
func FormatSpeedupCSV(samples []SpeedupSample, requiredX float64) (SpeedupProof, string, error) {
	proof, err := ValidateSpeedupSamples(samples, requiredX)
	if err != nil {
		return SpeedupProof{}, "", err
	}
	capacity, err := SpeedupCSVCapacity(uint64(len(samples)))
	if err != nil {
		return SpeedupProof{}, "", err
	}
	var b strings.Builder
	if capacity <= math.MaxInt32 {
		b.Grow(int(capacity))
	}
	b.WriteString(MegakernelSpeedupCSVHeader)
	b.WriteByte('\n')
	for _, s := range samples {
		b.WriteString(s.BackendID)
		for _, u := range []uint64{s.DeviceOrdinal, s.DeviceMemoryBytes, uint64(s.ComputeCapabilityMajor), uint64(s.ComputeCapabilityMinor), s.GraphNodes, s.GraphEdges, s.Repetitions} {
			b.WriteByte(',')
			b.WriteString(strconv.FormatUint(u, 10))
		}
		for _, f := range []float64{s.HostOrchestratedNS, s.ResidentMegakernelNS, s.SetupNS} {
			b.WriteByte(',')
			b.WriteString(strconv.FormatFloat(f, 'f', -1, 64))
		}
		for _, u := range []uint64{s.TimedGraphUploads, s.TimedHostAllocations, s.TimedHostSyncs} {
			b.WriteByte(',')
			b.WriteString(strconv.FormatUint(u, 10))
		}
		b.WriteByte('\n')
	}
	return proof, b.String(), nil
}
