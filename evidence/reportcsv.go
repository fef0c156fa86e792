package evidence

import (
	"encoding/csv"
	"io"
	"strconv"
	"strings"

	"github.com/gpuplan/gpuplan/internal/quote"
)

// ReportCSVHeader is the header of the report's CSV form (WriteReportCSV):
// one row per arm of each workload of each run.
const ReportCSVHeader = "run,file,workload,graph_nodes,graph_edges,iterations,device_name,compute_capability,driver_version,commit,metric,baseline," +
	"arm,kind,n,median_ns,median_ci_lo_ns,median_ci_hi_ns,per_iteration_ns,per_iteration_ci_lo_ns,per_iteration_ci_hi_ns," +
	"speedup,speedup_ci_lo,speedup_ci_hi,bandwidth_gb_s,bandwidth_ci_lo_gb_s,bandwidth_ci_hi_gb_s"

// WriteReportCSV writes summaries as CSV with ReportCSVHeader: the numbers
// of MarkdownTable, unrounded, one row per arm. kind is timed, external or
// bandwidth. A value that does not apply (the speedup of the baseline or of
// a bandwidth arm, the time per iteration of a workload without
// iterations) or an interval bound that is infinite (too few samples) is an
// empty field.
//
// Every row is one line of printable UTF-8. A name (run, file, workload,
// device, driver, commit, baseline, arm) that is not plain printable text,
// such as a file name with a line break, an escape character or invalid
// UTF-8, is written as a Go string literal, which strconv.Unquote reads
// back; names of valid evidence are written unchanged, and an empty name
// (no baseline) stays empty.
func WriteReportCSV(w io.Writer, summaries []WorkloadSummary) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(strings.Split(ReportCSVHeader, ",")); err != nil {
		return err
	}
	for _, ws := range summaries {
		wl := ws.Workload
		head := []string{csvName(ws.Run), csvName(ws.File), csvName(wl.Name), u64(wl.Nodes), u64(wl.Edges), u64(wl.Iterations),
			csvName(ws.Device), ws.Compute, csvName(ws.Driver), csvName(ws.Commit), ws.Metric, csvName(ws.Baseline)}
		for _, a := range ws.Arms {
			rec := append(append([]string(nil), head...), csvName(a.Arm), a.Kind.String(), strconv.Itoa(a.N))
			rec = append(rec, intervalFields(&a.Median)...)
			rec = append(rec, intervalFields(a.PerIteration)...)
			rec = append(rec, intervalFields(a.Speedup)...)
			rec = append(rec, intervalFields(a.Bandwidth)...)
			if err := cw.Write(rec); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// csvName is a name as the report CSV writes it: quote.Text of it, or
// empty when it is empty.
func csvName(s string) string {
	if s == "" {
		return ""
	}
	return quote.Text(s)
}

func u64(v uint64) string { return strconv.FormatUint(v, 10) }

// intervalFields renders an interval as its center, low and high bound,
// each empty when not finite; a nil interval is three empty fields.
func intervalFields(iv *Interval) []string {
	if iv == nil {
		return []string{"", "", ""}
	}
	f := func(x float64) string {
		if !finite(x) {
			return ""
		}
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return []string{f(iv.Center), f(iv.Lo), f(iv.Hi)}
}
