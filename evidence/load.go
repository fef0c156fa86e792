package evidence

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/gpuplan/gpuplan/internal/checked"
	"github.com/gpuplan/gpuplan/internal/quote"
)

// LoadCSVHeader is the header of load evidence, format version 1: one row
// per setting of a load run against a BFS query server (a graph, serving
// mode, batching window and client count), with its throughput, latency
// percentiles and the batches it formed.
//
// backend is gpu or cpu; mode is batched (queries share multi-source
// passes) or serial (one query at a time through the same server);
// window_ns is the batching window and max_batch the most distinct roots
// of a batch; duration_ns is the run's wall time; answered, refused (429
// or 503) and failed count the queries; qps is answered per second;
// p50_ns, p99_ns, p999_ns and max_ns are the answered queries' latencies;
// mean_batch is the mean distinct roots of the batch that answered a
// query; checked answers were compared with the CPU reference and
// mismatches disagreed.
const LoadCSVHeader = "gpuplan_version,gpuplan_commit,source_fingerprint,device_name,compute_capability,driver_version,date,graph,graph_nodes,graph_edges,backend,mode,window_ns,max_batch,clients,duration_ns,answered,refused,failed,qps,p50_ns,p99_ns,p999_ns,max_ns,mean_batch,checked,mismatches"

var loadColumns = strings.Split(LoadCSVHeader, ",")

// Serving modes of a LoadRow.
const (
	LoadBatched = "batched"
	LoadSerial  = "serial"
)

// LoadRow is one setting of a load run: one row of load evidence.
type LoadRow struct {
	Provenance Provenance
	Graph      string
	Nodes      uint64
	Edges      uint64
	// Backend is "gpu" or "cpu", Mode LoadBatched or LoadSerial.
	Backend string
	Mode    string
	// WindowNS is the batching window, MaxBatch the most distinct roots of
	// a batch and Clients the concurrent clients.
	WindowNS uint64
	MaxBatch uint64
	Clients  uint64
	// DurationNS is the run's wall time.
	DurationNS uint64
	// Answered, Refused and Failed count the queries.
	Answered uint64
	Refused  uint64
	Failed   uint64
	// QPS is Answered per second of DurationNS.
	QPS float64
	// The answered queries' latency percentiles and maximum.
	P50NS  uint64
	P99NS  uint64
	P999NS uint64
	MaxNS  uint64
	// MeanBatch is the mean distinct roots of the batch that answered a
	// query.
	MeanBatch float64
	// Checked answers were compared with the CPU reference; Mismatches
	// disagreed.
	Checked    uint64
	Mismatches uint64
}

// Key names the row's setting: graph, mode, window and clients.
func (r *LoadRow) Key() string {
	return fmt.Sprintf("%s %s window %s clients %d", r.Graph, r.Mode, time.Duration(r.WindowNS), r.Clients)
}

func (r *LoadRow) record() []string {
	p := &r.Provenance
	u := func(v uint64) string { return strconv.FormatUint(v, 10) }
	return []string{p.Version, p.Commit, p.SourceFingerprint, p.DeviceName, computeString(p.ComputeMajor, p.ComputeMinor),
		p.DriverVersion, p.Date.UTC().Format(time.RFC3339Nano), r.Graph, u(r.Nodes), u(r.Edges), r.Backend, r.Mode,
		u(r.WindowNS), u(r.MaxBatch), u(r.Clients), u(r.DurationNS), u(r.Answered), u(r.Refused), u(r.Failed),
		formatFloat(r.QPS), u(r.P50NS), u(r.P99NS), u(r.P999NS), u(r.MaxNS), formatFloat(r.MeanBatch), u(r.Checked), u(r.Mismatches)}
}

// loadError is a *FormatError at a load column.
func loadError(line, col int, value, msg, fix string) *FormatError {
	return &FormatError{Line: line, Column: col + 1, Field: loadColumns[col], Value: value, Msg: msg, Fix: fix}
}

// Column indexes of LoadCSVHeader used by the checks.
const (
	lcVersion = iota
	lcCommit
	lcFingerprint
	lcDevice
	lcCompute
	lcDriver
	lcDate
	lcGraph
	lcNodes
	lcEdges
	lcBackend
	lcMode
	lcWindow
	lcMaxBatch
	lcClients
	lcDuration
	lcAnswered
	lcRefused
	lcFailed
	lcQPS
	lcP50
	lcP99
	lcP999
	lcMax
	lcMeanBatch
	lcChecked
	lcMismatches
	loadColumnCount
)

// checkLoadRow validates one row's values.
func checkLoadRow(line int, r *LoadRow) error {
	p := &r.Provenance
	bad := func(col int, value, msg, fix string) error { return loadError(line, col, value, msg, fix) }
	u := func(v uint64) string { return strconv.FormatUint(v, 10) }
	switch {
	case !isToken(p.Version):
		return bad(lcVersion, p.Version, "gpuplan version must be a non-empty token", `record the version of the gpuplan build ("devel" for a source build)`)
	case !isToken(p.Commit):
		return bad(lcCommit, p.Commit, "commit must be a non-empty token", `record the VCS commit of the build, or "unknown"`)
	case !validFingerprint(p.SourceFingerprint):
		return bad(lcFingerprint, p.SourceFingerprint, "source fingerprint must be sha256: followed by 64 lowercase hex digits", "record the fingerprint of the measured server")
	case !isPrintable(p.DeviceName):
		return bad(lcDevice, p.DeviceName, "device name must be non-empty printable text without surrounding spaces", `record the device, for example "NVIDIA H200"`)
	case !isToken(p.DriverVersion):
		return bad(lcDriver, p.DriverVersion, "driver version must be a non-empty token", `record the driver version, or "none" on the CPU`)
	case p.Date.IsZero():
		return bad(lcDate, "", "date is missing", "record the measurement time in RFC 3339")
	case !isToken(r.Graph):
		return bad(lcGraph, r.Graph, "graph must be a non-empty token", "name the graph, for example kron-22")
	case r.Backend != "gpu" && r.Backend != "cpu":
		return bad(lcBackend, r.Backend, "backend must be gpu or cpu", "record where the server answered")
	case r.Mode != LoadBatched && r.Mode != LoadSerial:
		return bad(lcMode, r.Mode, "mode must be batched or serial", "record how the server served the queries")
	case r.MaxBatch == 0:
		return bad(lcMaxBatch, "0", "max_batch must be 1 or more", "record the most distinct roots of a batch (1 when serial)")
	case r.Mode == LoadSerial && r.MaxBatch != 1:
		return bad(lcMaxBatch, u(r.MaxBatch), "a serial setting serves one root at a time", "record max_batch 1 for mode serial")
	case r.Clients == 0:
		return bad(lcClients, "0", "clients must be 1 or more", "record the concurrent clients")
	case r.DurationNS == 0 || !plausibleNS(float64(r.DurationNS)):
		return bad(lcDuration, u(r.DurationNS), "duration_ns must be from 1 ns to one day", "record the run's wall time in nanoseconds")
	case !checked.Finite(r.QPS) || r.QPS < 0:
		return bad(lcQPS, formatFloat(r.QPS), "qps must be a finite number, 0 or above", "record the answered queries per second")
	case r.P50NS > r.P99NS || r.P99NS > r.P999NS || r.P999NS > r.MaxNS:
		return bad(lcP99, u(r.P99NS), "the percentiles must not decrease: p50 <= p99 <= p99.9 <= max", "record the percentiles of one sorted set of latencies")
	case r.Answered > 0 && r.P50NS == 0:
		return bad(lcP50, "0", "p50_ns is 0 but queries were answered", "record the latencies of the answered queries")
	case !checked.Finite(r.MeanBatch) || r.MeanBatch < 0 || r.MeanBatch > float64(r.MaxBatch):
		return bad(lcMeanBatch, formatFloat(r.MeanBatch), fmt.Sprintf("mean_batch must be from 0 to max_batch (%d)", r.MaxBatch), "record the mean distinct roots of the batches that answered")
	case r.Checked > r.Answered:
		return bad(lcChecked, u(r.Checked), fmt.Sprintf("%d checked of %d answered", r.Checked, r.Answered), "check a sample of the answered queries")
	case r.Mismatches > r.Checked:
		return bad(lcMismatches, u(r.Mismatches), fmt.Sprintf("%d mismatches of %d checked", r.Mismatches, r.Checked), "count the mismatches among the checked answers")
	}
	return nil
}

// WriteLoadCSV validates every row and writes the header and the rows; a
// rejected row is a *FormatError naming the line it would have taken.
func WriteLoadCSV(w io.Writer, rows []LoadRow) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(loadColumns); err != nil {
		return err
	}
	seen := map[string]int{}
	for i := range rows {
		line := i + 2
		if err := checkLoadRows(line, &rows[i], seen); err != nil {
			return err
		}
		if err := cw.Write(rows[i].record()); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// checkLoadRows checks a row and that its setting is new in the file.
func checkLoadRows(line int, r *LoadRow, seen map[string]int) error {
	if err := checkLoadRow(line, r); err != nil {
		return err
	}
	if prev, ok := seen[r.Key()]; ok {
		return loadError(line, lcClients, strconv.FormatUint(r.Clients, 10), fmt.Sprintf("setting %s repeats line %d", r.Key(), prev), "record each setting once per file")
	}
	seen[r.Key()] = line
	return nil
}

// IsLoadHeader reports whether a CSV's first line is the load header.
func IsLoadHeader(line string) bool {
	return strings.TrimRight(line, "\r\n") == LoadCSVHeader
}

// ReadLoadCSV reads load evidence; source names it in errors, which are
// *FormatError with the line, column and a fix.
func ReadLoadCSV(source string, r io.Reader) ([]LoadRow, error) {
	var out []LoadRow
	seen := map[string]int{}
	header, err := eachRecord(source, r, func(line int, rec []string) error {
		row, err := parseLoadRecord(line, rec)
		if err == nil {
			err = checkLoadRows(line, &row, seen)
		}
		out = append(out, row)
		return err
	}, func(line int, rec []string) error {
		if strings.Join(rec, ",") != LoadCSVHeader {
			return &FormatError{Line: line, Msg: "the header is not the load evidence header", Fix: "start the file with the header " + LoadCSVHeader}
		}
		return nil
	})
	if err == nil && !header {
		err = &FormatError{Source: source, Line: 1, Msg: "the file is empty", Fix: "start the file with the header " + LoadCSVHeader}
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// parseLoadRecord parses one record's fields.
func parseLoadRecord(line int, rec []string) (LoadRow, error) {
	if len(rec) != loadColumnCount {
		col, field := countGap(len(rec), loadColumns)
		return LoadRow{}, &FormatError{Line: line, Column: col, Field: field,
			Msg: fmt.Sprintf("row has %d fields, want %d", len(rec), loadColumnCount), Fix: "give every row the fields of the header"}
	}
	var first error
	fail := func(col int, msg, fix string) {
		if first == nil {
			first = loadError(line, col, rec[col], msg, fix)
		}
	}
	u := func(col int) uint64 {
		v, err := strconv.ParseUint(rec[col], 10, 64)
		if err != nil {
			fail(col, fmt.Sprintf("%s %s is not a non-negative integer", loadColumns[col], quote.Echo(rec[col])), "write a decimal integer, 0 or above")
		}
		return v
	}
	f := func(col int) float64 {
		v, err := strconv.ParseFloat(rec[col], 64)
		if err != nil {
			fail(col, fmt.Sprintf("%s %s is not a number", loadColumns[col], quote.Echo(rec[col])), "write a decimal number")
		}
		return v
	}
	r := LoadRow{Provenance: Provenance{Version: rec[lcVersion], Commit: rec[lcCommit], SourceFingerprint: rec[lcFingerprint],
		DeviceName: rec[lcDevice], DriverVersion: rec[lcDriver]}, Graph: rec[lcGraph], Backend: rec[lcBackend], Mode: rec[lcMode]}
	major, minor, ok := strings.Cut(rec[lcCompute], ".")
	a, err1 := strconv.ParseUint(major, 10, 32)
	b, err2 := strconv.ParseUint(minor, 10, 32)
	if !ok || err1 != nil || err2 != nil {
		fail(lcCompute, fmt.Sprintf("compute capability %s is not MAJOR.MINOR", quote.Echo(rec[lcCompute])), "write it as two integers, for example 9.0 (0.0 on the CPU)")
	}
	r.Provenance.ComputeMajor, r.Provenance.ComputeMinor = uint32(a), uint32(b)
	date, err := time.Parse(time.RFC3339, rec[lcDate])
	if err != nil {
		fail(lcDate, fmt.Sprintf("date %s is not RFC 3339", quote.Echo(rec[lcDate])), "write the time as RFC 3339, for example 2026-12-01T02:00:00Z")
	}
	r.Provenance.Date = date
	r.Nodes, r.Edges = u(lcNodes), u(lcEdges)
	r.WindowNS, r.MaxBatch, r.Clients, r.DurationNS = u(lcWindow), u(lcMaxBatch), u(lcClients), u(lcDuration)
	r.Answered, r.Refused, r.Failed = u(lcAnswered), u(lcRefused), u(lcFailed)
	r.QPS = f(lcQPS)
	r.P50NS, r.P99NS, r.P999NS, r.MaxNS = u(lcP50), u(lcP99), u(lcP999), u(lcMax)
	r.MeanBatch = f(lcMeanBatch)
	r.Checked, r.Mismatches = u(lcChecked), u(lcMismatches)
	return r, first
}

// LoadSpeedup is a batched setting's throughput over the serial setting
// of the same graph and client count.
type LoadSpeedup struct {
	Batched, Serial *LoadRow
	Ratio           float64
}

// LoadSpeedups pairs every batched row with the serial row of its graph
// and client count, where the file has one.
func LoadSpeedups(rows []LoadRow) []LoadSpeedup {
	serial := map[string]*LoadRow{}
	for i := range rows {
		if rows[i].Mode == LoadSerial {
			serial[fmt.Sprintf("%s/%d", rows[i].Graph, rows[i].Clients)] = &rows[i]
		}
	}
	var out []LoadSpeedup
	for i := range rows {
		b := &rows[i]
		s := serial[fmt.Sprintf("%s/%d", b.Graph, b.Clients)]
		if b.Mode != LoadBatched || s == nil || s.QPS == 0 {
			continue
		}
		out = append(out, LoadSpeedup{Batched: b, Serial: s, Ratio: b.QPS / s.QPS})
	}
	return out
}

// LoadMarkdown tabulates load rows: one line per setting, then each
// batched setting's throughput over serving one query at a time.
func LoadMarkdown(rows []LoadRow) string {
	var b strings.Builder
	ms := func(ns uint64) string { return strconv.FormatFloat(float64(ns)/1e6, 'f', 3, 64) }
	b.WriteString("| graph | backend | mode | window | clients | queries/s | p50 ms | p99 ms | p99.9 ms | mean batch | checked | mismatches | refused | failed |\n")
	b.WriteString("|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for i := range rows {
		r := &rows[i]
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %d | %.1f | %s | %s | %s | %.1f | %d | %d | %d | %d |\n", mdEscape(r.Graph), r.Backend, r.Mode,
			time.Duration(r.WindowNS), r.Clients, r.QPS, ms(r.P50NS), ms(r.P99NS), ms(r.P999NS), r.MeanBatch, r.Checked, r.Mismatches, r.Refused, r.Failed)
	}
	if sp := LoadSpeedups(rows); len(sp) > 0 {
		b.WriteString("\n| graph | clients | window | batched queries/s | serial queries/s | batched / serial | batched p99 ms |\n|---|---:|---|---:|---:|---:|---:|\n")
		for _, s := range sp {
			fmt.Fprintf(&b, "| %s | %d | %s | %.1f | %.1f | %.2fx | %s |\n", mdEscape(s.Batched.Graph), s.Batched.Clients, time.Duration(s.Batched.WindowNS),
				s.Batched.QPS, s.Serial.QPS, s.Ratio, ms(s.Batched.P99NS))
		}
	}
	return b.String()
}
