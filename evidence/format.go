package evidence

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/gpuplan/gpuplan/internal/checked"
	"github.com/gpuplan/gpuplan/internal/quote"
)

// SampleCSVHeader is the header of gpuplan's evidence CSV, format version 1.
// See the package documentation for the meaning of every column.
const SampleCSVHeader = "gpuplan_version,gpuplan_commit,source_fingerprint,device_name,compute_capability,driver_version,date,workload,graph_nodes,graph_edges,iterations,arm,sample,wall_ns,device_ns,checksum,timed_uploads,timed_allocations,timed_host_syncs,bytes_moved"

// Column indexes of SampleCSVHeader.
const (
	colVersion = iota
	colCommit
	colFingerprint
	colDevice
	colCompute
	colDriver
	colDate
	colWorkload
	colNodes
	colEdges
	colIterations
	colArm
	colSample
	colWallNS
	colDeviceNS
	colChecksum
	colUploads
	colAllocations
	colHostSyncs
	colBytesMoved
	sampleColumnCount
)

var sampleColumns = strings.Split(SampleCSVHeader, ",")

// The plausible range of a recorded time. No timer resolves less than a
// nanosecond, and no benchmark sample runs for more than a day: a time
// outside [MinPlausibleNS, MaxPlausibleNS] is a recording error, not
// evidence (a denormal such as 1e-320 would otherwise reach the charts'
// log scale as 0).
const (
	MinPlausibleNS = 1.0
	MaxPlausibleNS = 86400e9
)

// plausibleNS reports whether ns is a time a sample can record.
func plausibleNS(ns float64) bool { return ns >= MinPlausibleNS && ns <= MaxPlausibleNS }

// Provenance says where and on what a sample was measured. Every row of one
// evidence file carries the same provenance (Date may differ).
type Provenance struct {
	Version           string    // gpuplan version ("devel" for a source build)
	Commit            string    // VCS commit of the gpuplan build ("unknown" when not embedded)
	SourceFingerprint string    // SourceFingerprint of the tree that was measured
	DeviceName        string    // for example "NVIDIA H200"
	ComputeMajor      uint32    // compute capability, major
	ComputeMinor      uint32    // compute capability, minor
	DriverVersion     string    // for example "580.159.04"
	Date              time.Time // when the sample was measured (written in UTC, RFC 3339)
}

// Workload names the measured input and its size.
type Workload struct {
	Name       string // for example "grid-2048" or "rmat-20"
	Nodes      uint64 // graph nodes
	Edges      uint64 // graph edges
	Iterations uint64 // BFS levels, or iterations of a fixed-point loop
}

// Sample is one measured repetition of one arm on one workload: one row of
// gpuplan's evidence CSV.
type Sample struct {
	Provenance Provenance
	Workload   Workload
	// Arm is the execution strategy, a lowercase token such as host-loop,
	// device-loop, megakernel or copy-ceiling. The set is open.
	Arm string
	// Index numbers the samples of one arm on one workload from 0.
	Index uint64
	// WallNS is the host wall-clock time of the timed region.
	WallNS float64
	// DeviceNS is the CUDA-event time of the timed region; 0 means it was
	// not recorded.
	DeviceNS float64
	// Checksum identifies the result (for example hex of a 64-bit hash of
	// the output). Compared arms must agree.
	Checksum string
	// Pollution counters: work inside the timed region that the arm should
	// not do. TimedUploads counts host-to-device copies of inputs that should
	// already be resident, TimedAllocations device or pinned allocations,
	// TimedHostSyncs host synchronisations beyond the arm's own control flow
	// (the host loop's per-level readback of its continue flag is the arm,
	// not pollution).
	TimedUploads     uint64
	TimedAllocations uint64
	TimedHostSyncs   uint64
	// BytesMoved is the number of device-memory bytes the timed region moves
	// when the arm measures a bandwidth (copy-ceiling); 0 otherwise.
	BytesMoved uint64
}

// FormatError is a malformed row of an evidence file. Line is the 1-based
// line in the file (the header is line 1), Column the 1-based field number
// and Field the header name of that field. A row with too few or too many
// fields is reported at its first missing column, or at its first extra
// column with Field "(extra)". Column is 0 when no field can be named: an
// empty file, a CSV syntax error or a read error.
type FormatError struct {
	Source string
	Line   int
	Column int
	Field  string
	Value  string
	Msg    string
	Fix    string
}

// Error describes the failure and ends with a "Fix:" sentence.
func (e *FormatError) Error() string {
	var b strings.Builder
	if e.Source != "" {
		b.WriteString(quote.Text(e.Source))
		b.WriteString(":")
	}
	fmt.Fprintf(&b, "%d", e.Line)
	if e.Column > 0 {
		fmt.Fprintf(&b, ":%d %s", e.Column, columnLabel(e.Field))
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	b.WriteString(". Fix: ")
	b.WriteString(e.Fix)
	return b.String()
}

func fieldError(line, col int, value, msg, fix string) *FormatError {
	return &FormatError{Line: line, Column: col + 1, Field: sampleColumns[col], Value: value, Msg: msg, Fix: fix}
}

// isToken reports whether s is a non-empty run of letters, digits, '.',
// '_', '-', ':' and '+': the names and identifiers of the format.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case r == '.', r == '_', r == '-', r == ':', r == '+':
		default:
			return false
		}
	}
	return true
}

func isArm(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '-' {
			return false
		}
	}
	return true
}

func isPrintable(s string) bool {
	if strings.TrimSpace(s) != s || s == "" {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}

// checkSample validates the values of one sample; line is used in errors.
func checkSample(line int, s *Sample) error {
	p := &s.Provenance
	switch {
	case !isToken(p.Version):
		return fieldError(line, colVersion, p.Version, "gpuplan version must be a non-empty token", `record the version of the gpuplan build ("devel" for a source build)`)
	case !isToken(p.Commit):
		return fieldError(line, colCommit, p.Commit, "commit must be a non-empty token", `record the VCS commit of the build, or "unknown"`)
	case !validFingerprint(p.SourceFingerprint):
		return fieldError(line, colFingerprint, p.SourceFingerprint, "source fingerprint must be sha256: followed by 64 lowercase hex digits", "record evidence.SourceFingerprint of the measured tree")
	case !isPrintable(p.DeviceName):
		return fieldError(line, colDevice, p.DeviceName, "device name must be non-empty printable text without surrounding spaces", `record the name the driver reports, for example "NVIDIA H200"`)
	case !isToken(p.DriverVersion):
		return fieldError(line, colDriver, p.DriverVersion, "driver version must be a non-empty token", `record the driver version, for example "580.159.04"`)
	case p.Date.IsZero():
		return fieldError(line, colDate, "", "date is missing", "record the measurement time in RFC 3339, for example 2026-11-22T02:00:00Z")
	case !isToken(s.Workload.Name):
		return fieldError(line, colWorkload, s.Workload.Name, "workload must be a non-empty token of letters, digits, '.', '_', '-', ':' or '+'", "name the input, for example grid-2048")
	case !isArm(s.Arm):
		return fieldError(line, colArm, s.Arm, "arm must be a non-empty token of lowercase letters, digits and '-'", "name the arm, for example host-loop, device-loop or megakernel")
	case !checked.Finite(s.WallNS) || s.WallNS <= 0:
		return fieldError(line, colWallNS, formatFloat(s.WallNS), "wall_ns must be a finite number above 0", "record the wall-clock nanoseconds of the timed region")
	case !plausibleNS(s.WallNS):
		return implausibleError(line, colWallNS, s.WallNS)
	case !checked.Finite(s.DeviceNS) || s.DeviceNS < 0:
		return fieldError(line, colDeviceNS, formatFloat(s.DeviceNS), "device_ns must be a finite number, 0 or above", "record the CUDA-event nanoseconds of the timed region, or 0 when not recorded")
	case s.DeviceNS != 0 && !plausibleNS(s.DeviceNS):
		return implausibleError(line, colDeviceNS, s.DeviceNS)
	case !isToken(s.Checksum):
		return fieldError(line, colChecksum, s.Checksum, "checksum must be a non-empty token", "record a hash of the result, for example 16 hex digits")
	}
	return nil
}

func implausibleError(line, col int, ns float64) *FormatError {
	where := "below 1 ns, which no timer resolves"
	if ns > MaxPlausibleNS {
		where = "above one day (86400000000000 ns)"
	}
	return fieldError(line, col, strconv.FormatFloat(ns, 'g', -1, 64), fmt.Sprintf("%s %g is %s", sampleColumns[col], ns, where),
		"record the time in nanoseconds (not seconds or milliseconds), and re-measure a sample that is not plausible")
}

func validFingerprint(s string) bool {
	hex, ok := strings.CutPrefix(s, "sha256:")
	if !ok || len(hex) != 64 {
		return false
	}
	for _, r := range hex {
		if (r < '0' || r > '9') && (r < 'a' || r > 'f') {
			return false
		}
	}
	return true
}

func formatFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// fileState carries the checks that span rows of one file: one provenance,
// one size per workload, no duplicate sample.
type fileState struct {
	first     *Sample
	firstLine int
	sizes     map[string]workloadAt
	seen      map[sampleKey]int
}

type workloadAt struct {
	w    Workload
	line int
}

type sampleKey struct {
	workload, arm string
	index         uint64
}

func (st *fileState) add(line int, s *Sample) error {
	if st.first == nil {
		c := *s
		st.first, st.firstLine = &c, line
		st.sizes = map[string]workloadAt{}
		st.seen = map[sampleKey]int{}
	} else if err := st.sameProvenance(line, s); err != nil {
		return err
	}
	if prev, ok := st.sizes[s.Workload.Name]; ok && prev.w != s.Workload {
		col, have, want := colNodes, s.Workload.Nodes, prev.w.Nodes
		if s.Workload.Nodes == prev.w.Nodes {
			col, have, want = colEdges, s.Workload.Edges, prev.w.Edges
			if s.Workload.Edges == prev.w.Edges {
				col, have, want = colIterations, s.Workload.Iterations, prev.w.Iterations
			}
		}
		return fieldError(line, col, strconv.FormatUint(have, 10),
			fmt.Sprintf("workload %s has %s %d here but %d on line %d", s.Workload.Name, sampleColumns[col], have, want, prev.line),
			"measure one workload at one size per file, or give different sizes different workload names")
	} else if !ok {
		st.sizes[s.Workload.Name] = workloadAt{s.Workload, line}
	}
	k := sampleKey{s.Workload.Name, s.Arm, s.Index}
	if prev, dup := st.seen[k]; dup {
		return fieldError(line, colSample, strconv.FormatUint(s.Index, 10),
			fmt.Sprintf("duplicate sample %d of arm %s on workload %s (first on line %d)", s.Index, s.Arm, s.Workload.Name, prev),
			"number the samples of each arm and workload 0, 1, 2, ... without repeats")
	}
	st.seen[k] = line
	return nil
}

func (st *fileState) sameProvenance(line int, s *Sample) error {
	a, b := &st.first.Provenance, &s.Provenance
	type diff struct {
		col       int
		have, was string
	}
	var d *diff
	switch {
	case a.Version != b.Version:
		d = &diff{colVersion, b.Version, a.Version}
	case a.Commit != b.Commit:
		d = &diff{colCommit, b.Commit, a.Commit}
	case a.SourceFingerprint != b.SourceFingerprint:
		d = &diff{colFingerprint, b.SourceFingerprint, a.SourceFingerprint}
	case a.DeviceName != b.DeviceName:
		d = &diff{colDevice, b.DeviceName, a.DeviceName}
	case a.ComputeMajor != b.ComputeMajor || a.ComputeMinor != b.ComputeMinor:
		d = &diff{colCompute, computeString(b.ComputeMajor, b.ComputeMinor), computeString(a.ComputeMajor, a.ComputeMinor)}
	case a.DriverVersion != b.DriverVersion:
		d = &diff{colDriver, b.DriverVersion, a.DriverVersion}
	default:
		return nil
	}
	return fieldError(line, d.col, d.have,
		fmt.Sprintf("%s %s differs from %s on line %d: one file mixes devices or builds", sampleColumns[d.col], quote.Echo(d.have), quote.Echo(d.was), st.firstLine),
		"write one evidence file per run, measured with one build on one device")
}

func computeString(major, minor uint32) string { return fmt.Sprintf("%d.%d", major, minor) }

func (s *Sample) record() []string {
	p := &s.Provenance
	return []string{
		p.Version, p.Commit, p.SourceFingerprint, p.DeviceName, computeString(p.ComputeMajor, p.ComputeMinor),
		p.DriverVersion, p.Date.UTC().Format(time.RFC3339Nano),
		s.Workload.Name, strconv.FormatUint(s.Workload.Nodes, 10), strconv.FormatUint(s.Workload.Edges, 10),
		strconv.FormatUint(s.Workload.Iterations, 10),
		s.Arm, strconv.FormatUint(s.Index, 10), formatFloat(s.WallNS), formatFloat(s.DeviceNS), s.Checksum,
		strconv.FormatUint(s.TimedUploads, 10), strconv.FormatUint(s.TimedAllocations, 10),
		strconv.FormatUint(s.TimedHostSyncs, 10), strconv.FormatUint(s.BytesMoved, 10),
	}
}

// Writer writes samples in gpuplan's evidence CSV format. It validates
// every sample with the same rules ReadSamples applies, so whatever it
// writes reads back. The header is written before the first sample.
type Writer struct {
	w      *csv.Writer
	line   int
	header bool
	state  fileState
}

// NewWriter returns a Writer that writes to w. Call Flush when done.
func NewWriter(w io.Writer) *Writer {
	return &Writer{w: csv.NewWriter(w), line: 1}
}

// WriteHeader writes the header if it has not been written yet. Write calls
// it; an evidence file with no samples is only a header.
func (w *Writer) WriteHeader() error {
	if w.header {
		return nil
	}
	w.header = true
	return w.w.Write(sampleColumns)
}

// Write validates s and writes it as one row. A rejected sample is a
// *FormatError naming the line it would have taken and its column; nothing
// is written for it.
func (w *Writer) Write(s Sample) error {
	if err := w.WriteHeader(); err != nil {
		return err
	}
	line := w.line + 1
	if err := checkSample(line, &s); err != nil {
		return err
	}
	if err := w.state.add(line, &s); err != nil {
		return err
	}
	w.line = line
	return w.w.Write(s.record())
}

// Flush writes buffered data and reports any write error.
func (w *Writer) Flush() error {
	w.w.Flush()
	return w.w.Error()
}

// WriteSamples writes the header and every sample to w.
func WriteSamples(w io.Writer, samples []Sample) error {
	cw := NewWriter(w)
	if err := cw.WriteHeader(); err != nil {
		return err
	}
	for _, s := range samples {
		if err := cw.Write(s); err != nil {
			return err
		}
	}
	return cw.Flush()
}

// ReadSamples reads one evidence file in gpuplan's format. source names the
// input in errors. Lines starting with '#' and empty lines are skipped. The
// result is every row in file order; an error is a *FormatError with the
// line, column and a fix. Besides per-value checks, one file must have one
// provenance (version, commit, fingerprint, device, compute capability,
// driver), one size per workload and no duplicate (workload, arm, sample).
func ReadSamples(source string, r io.Reader) ([]Sample, error) {
	var (
		out   []Sample
		state fileState
	)
	header, err := eachRecord(source, r, func(line int, rec []string) error {
		s, err := parseSampleRecord(line, rec)
		if err == nil {
			err = state.add(line, &s)
		}
		out = append(out, s)
		return err
	}, checkHeader)
	if err == nil && !header {
		err = &FormatError{Source: source, Line: 1, Msg: "the file is empty", Fix: "start the file with the header " + SampleCSVHeader}
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// eachRecord reads a CSV evidence file ('#' lines are comments): header
// checks its first record, row every later one, each with its line; the
// first error stops it, with source set. It reports whether the file had
// a header.
func eachRecord(source string, r io.Reader, row, header func(line int, rec []string) error) (bool, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.Comment = '#'
	cr.ReuseRecord = true
	first := true
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return !first, nil
		}
		if err != nil {
			return !first, withSource(source, csvError(err))
		}
		line, _ := cr.FieldPos(0)
		check := row
		if first {
			first, check = false, header
		}
		if err := check(line, rec); err != nil {
			return true, withSource(source, err)
		}
	}
}

func withSource(source string, err error) error {
	var fe *FormatError
	if errors.As(err, &fe) {
		fe.Source = source
	}
	return err
}

func csvError(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &FormatError{Line: pe.Line, Msg: fmt.Sprintf("CSV syntax error at byte column %d: %v", pe.Column, pe.Err),
			Fix: "quote fields that contain commas or quotes, and double quotes inside quoted fields"}
	}
	return &FormatError{Msg: "reading: " + err.Error(), Fix: "check that the file is readable"}
}

func checkHeader(line int, rec []string) error {
	switch strings.Join(rec, ",") {
	case MegakernelSpeedupCSVHeader, MegakernelSpeedupCSVHeader15, ResidentGraphSessionCSVHeader:
		return &FormatError{Line: line, Column: 1, Field: sampleColumns[0], Value: rec[0],
			Msg: "this is a vyre evidence CSV, not gpuplan's evidence format",
			Fix: "check it with gpuplan gate --vyre FILE (or --vyre-session FILE) and keep it out of evidence/results/"}
	}
	if strings.Join(rec, ",") == LoadCSVHeader {
		return &FormatError{Line: line, Column: 1, Field: sampleColumns[0], Value: rec[0],
			Msg: "this is load evidence (gpuplan load), not a benchmark's samples",
			Fix: "read it with gpuplan report FILE, and keep it out of evidence/results/ (under evidence/load/)"}
	}
	for i, name := range sampleColumns {
		if i >= len(rec) {
			return &FormatError{Line: line, Column: i + 1, Field: name,
				Msg: fmt.Sprintf("header has %d columns, want %d", len(rec), sampleColumnCount),
				Fix: "start the file with the header " + SampleCSVHeader}
		}
		if strings.TrimSpace(rec[i]) != name {
			return &FormatError{Line: line, Column: i + 1, Field: name, Value: rec[i],
				Msg: fmt.Sprintf("header column %d is %s, want %q", i+1, quote.Echo(rec[i]), name),
				Fix: "start the file with the header " + SampleCSVHeader}
		}
	}
	if len(rec) != sampleColumnCount {
		return &FormatError{Line: line, Column: sampleColumnCount + 1, Field: extraColumn, Value: rec[sampleColumnCount],
			Msg: fmt.Sprintf("header has %d columns, want %d", len(rec), sampleColumnCount),
			Fix: "start the file with the header " + SampleCSVHeader}
	}
	return nil
}

// sampleParser parses the fields of one record, keeping the first error.
type sampleParser struct {
	line int
	rec  []string
	err  error
}

func (p *sampleParser) fail(col int, msg, fix string) {
	if p.err == nil {
		p.err = fieldError(p.line, col, p.rec[col], msg, fix)
	}
}

func (p *sampleParser) u64(col int) uint64 {
	v, err := strconv.ParseUint(p.rec[col], 10, 64)
	if err != nil {
		p.fail(col, fmt.Sprintf("%s %s is not a non-negative integer", sampleColumns[col], quote.Echo(p.rec[col])), "write a decimal integer, 0 or above, without sign or separators")
	}
	return v
}

func (p *sampleParser) f64(col int) float64 {
	v, ok := parseRustFloat(p.rec[col])
	switch {
	case !ok:
		p.fail(col, fmt.Sprintf("%s %s is not a number", sampleColumns[col], quote.Echo(p.rec[col])), "write a decimal number of nanoseconds, such as 125000 or 1250.5")
	case !checked.Finite(v):
		p.fail(col, fmt.Sprintf("%s %s is not finite", sampleColumns[col], quote.Echo(p.rec[col])), "re-measure the sample; NaN and infinite times are not evidence")
	case v < 0:
		p.fail(col, fmt.Sprintf("%s %s is negative", sampleColumns[col], quote.Echo(p.rec[col])), "re-measure the sample; a time cannot be negative")
	}
	return v
}

func (p *sampleParser) compute(col int) (uint32, uint32) {
	a, b, ok := strings.Cut(p.rec[col], ".")
	major, err1 := strconv.ParseUint(a, 10, 32)
	minor, err2 := strconv.ParseUint(b, 10, 32)
	if !ok || err1 != nil || err2 != nil {
		p.fail(col, fmt.Sprintf("compute capability %s is not MAJOR.MINOR", quote.Echo(p.rec[col])), "write the compute capability as two integers, for example 9.0")
	}
	return uint32(major), uint32(minor)
}

func (p *sampleParser) date(col int) time.Time {
	t, err := time.Parse(time.RFC3339, p.rec[col])
	if err != nil {
		p.fail(col, fmt.Sprintf("date %s is not RFC 3339", quote.Echo(p.rec[col])), "write the time as RFC 3339, for example 2026-11-22T02:00:00Z")
	}
	return t
}

// fieldCountError reports a record without sampleColumnCount fields at its
// first missing or extra column.
func fieldCountError(line int, rec []string) *FormatError {
	col, field := countGap(len(rec), sampleColumns)
	value := ""
	if len(rec) > sampleColumnCount {
		value = rec[sampleColumnCount]
	}
	return &FormatError{Line: line, Column: col, Field: field, Value: value,
		Msg: fmt.Sprintf("row has %d fields, want %d; %s", len(rec), sampleColumnCount, countGapText(len(rec), sampleColumnCount, value)),
		Fix: "give every row the " + strconv.Itoa(sampleColumnCount) + " fields of the header, quoting fields that contain commas"}
}

func parseSampleRecord(line int, rec []string) (Sample, error) {
	if len(rec) != sampleColumnCount {
		return Sample{}, fieldCountError(line, rec)
	}
	p := sampleParser{line: line, rec: rec}
	s := Sample{Provenance: Provenance{
		Version: rec[colVersion], Commit: rec[colCommit], SourceFingerprint: rec[colFingerprint],
		DeviceName: rec[colDevice], DriverVersion: rec[colDriver],
	}}
	s.Provenance.ComputeMajor, s.Provenance.ComputeMinor = p.compute(colCompute)
	s.Provenance.Date = p.date(colDate)
	s.Workload = Workload{Name: rec[colWorkload], Nodes: p.u64(colNodes), Edges: p.u64(colEdges), Iterations: p.u64(colIterations)}
	s.Arm = rec[colArm]
	s.Index = p.u64(colSample)
	s.WallNS = p.f64(colWallNS)
	s.DeviceNS = p.f64(colDeviceNS)
	s.Checksum = rec[colChecksum]
	s.TimedUploads = p.u64(colUploads)
	s.TimedAllocations = p.u64(colAllocations)
	s.TimedHostSyncs = p.u64(colHostSyncs)
	s.BytesMoved = p.u64(colBytesMoved)
	if p.err != nil {
		return Sample{}, p.err
	}
	// Value rules in column order (text columns first, as checkSample does).
	if err := checkSample(line, &s); err != nil {
		return Sample{}, err
	}
	return s, nil
}
