package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/gpuplan/gpuplan/evidence"
)

const reportAbout = `Summarise recorded evidence: for each workload of each run (each file is
one run, labelled by its file name), the median time of every arm with its
95% confidence interval, the time per iteration (BFS level) beside it, and
the speedup over the baseline arm (host-loop unless --baseline says
otherwise; the slowest of gpuplan's arms where the baseline is missing),
computed as the gate does. Bandwidth arms (copy-ceiling) are reported as
bandwidth, never as a speedup; peer tools (gunrock, egg) are marked
external.

Inputs are evidence CSV files, - for standard input, or directories (every
*.csv under them); with none, the files under --results.

--format picks the table: markdown (default), csv (one row per arm, the
numbers unrounded), benchfmt (every sample in Go's benchmark format, for
benchstat) or json. It goes to standard output, or to --output FILE.
--chart FILE.png or FILE.svg also draws the chart: a panel per workload of
each run, with the medians on a log axis of the panel's range with their
intervals, and every interval as a percentage of its median on an axis of
the panel's own scale, so that a sub-percent interval is a bar. Charts need
a build with charts (make build-chart, or go build -tags chart); the
default build refuses --chart.

A run is stale when its source fingerprint is none of the current tree's
(as gpuplan gate judges it, and gate --list-stale lists): the table marks it
"(stale: measured on other code)" and the chart tags it STALE and greys it.
The fingerprints are computed from --root (default: the current directory);
where the default names no module with GPU workloads, as when reading
evidence outside the repository, staleness is not checked and the outputs
say so.

Examples:
  gpuplan report
  gpuplan report evidence/results/kron-22.csv --format csv
  gpuplan report --chart out/report.png --output out/report.md
  gpuplan report --format benchfmt evidence/results/grid-2048.csv > grid.txt && benchstat -col /arm grid.txt`

// Report output formats.
const (
	formatMarkdown = "markdown"
	formatCSV      = "csv"
	formatBenchfmt = "benchfmt"
	formatJSON     = "json"
)

type reportOptions struct {
	results, metric, baseline, chart, format, output, markdown, root string
	limit                                                            *int64
}

func runReport(e *env, args []string) error {
	f := e.newFlags("report", "report [--format markdown|csv|benchfmt|json] [--output FILE] [--chart FILE.png|FILE.svg] [--metric wall_ns|device_ns] [--baseline ARM] [FILE.csv | DIR | -]...", reportAbout)
	var o reportOptions
	f.StringVar(&o.results, "results", filepath.Join("evidence", "results"), "read the evidence CSVs under `DIR` when no input is named")
	f.StringVar(&o.metric, "metric", evidence.MetricWallNS, "time to report: wall_ns or device_ns")
	f.StringVar(&o.baseline, "baseline", "host-loop", "`ARM` speedups are relative to")
	f.StringVar(&o.chart, "chart", "", "also draw a chart to `FILE` (.png or .svg)"+chartFlagNote)
	f.StringVar(&o.format, "format", formatMarkdown, "table format: markdown, csv, benchfmt or json")
	f.StringVar(&o.output, "output", "-", "write the table to `FILE` (- for standard output)")
	f.StringVar(&o.markdown, "markdown", "", "same as --format markdown --output `FILE`")
	f.StringVar(&o.root, "root", ".", "module root `DIR` whose measured code decides which runs are stale, as for gpuplan gate")
	o.limit = evidenceLimitFlag(f)
	if err := f.parse(args); err != nil {
		return err
	}
	if err := o.check(f); err != nil {
		return err
	}
	if loads, err := loadEvidenceArgs(f.Args()); err != nil || loads != nil {
		if err != nil {
			return err
		}
		return o.reportLoad(e, loads, *o.limit)
	}
	files, err := o.load(e, f)
	if err != nil {
		return err
	}
	summaries, err := evidence.Summarize(files, o.metric, o.baseline)
	if err != nil {
		return err
	}
	current, err := reportFingerprints(o.root, setFlags(f)["root"])
	if err != nil {
		return err
	}
	evidence.MarkFreshness(summaries, files, current)
	if err := o.writeChart(summaries); err != nil {
		return err
	}
	return o.writeTable(e, files, summaries)
}

// check validates the flags and resolves --json and --markdown into
// --format and --output.
func (o *reportOptions) check(f *flags) error {
	set := setFlags(f)
	if o.metric != evidence.MetricWallNS && o.metric != evidence.MetricDeviceNS {
		return usagef("gpuplan report: --metric %q is unknown. Fix: use wall_ns or device_ns", o.metric)
	}
	if o.markdown != "" {
		if set["format"] || set["output"] {
			return usagef("gpuplan report: --markdown FILE is --format markdown --output FILE. Fix: give either --markdown or --format and --output")
		}
		o.format, o.output = formatMarkdown, o.markdown
	}
	if f.json {
		if set["format"] && o.format != formatJSON {
			return usagef("gpuplan report: --json and --format %s disagree. Fix: drop one of them", o.format)
		}
		o.format = formatJSON
	}
	switch o.format {
	case formatMarkdown, formatCSV, formatBenchfmt, formatJSON:
	default:
		return usagef("gpuplan report: --format %q is unknown. Fix: use markdown, csv, benchfmt or json", o.format)
	}
	if o.chart != "" {
		if ext := chartFormat(o.chart); ext != "png" && ext != "svg" {
			return usagef("gpuplan report: --chart %q must end in .png or .svg. Fix: name the chart file with a .png or .svg extension", o.chart)
		}
		if !buildHasCharts {
			return errNoCharts
		}
	}
	if set["results"] && f.NArg() > 0 {
		return usagef("gpuplan report: --results and input arguments both name the evidence. Fix: give either --results DIR or the inputs")
	}
	return nil
}

// errNoCharts is the error of --chart in a build without charts
// (buildHasCharts), which links no plotting library.
var errNoCharts = errors.New("--chart needs a build with charts, and this gpuplan was built without them. Fix: make build-chart (go build -tags chart ./cmd/gpuplan)")

// chartFormat is the format a --chart file's extension names: png or svg
// (anything else is refused).
func chartFormat(path string) string {
	return strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
}

// load reads the inputs named on the command line, or the results directory.
func (o *reportOptions) load(e *env, f *flags) ([]evidence.ResultFile, error) {
	if f.NArg() > 0 {
		return e.loadEvidence("report", f.Args(), *o.limit)
	}
	if setFlags(f)["results"] {
		if err := existingDir("--results", o.results); err != nil {
			return nil, err
		}
	}
	return evidence.LoadResultsLimit(o.results, *o.limit)
}

// reportFingerprints returns the current source fingerprints of root's GPU
// workloads and recorded example runs, computed as gpuplan gate computes
// them, to tell the stale runs. Where root was not named on the command
// line and is no module with workloads (a report read outside the
// repository), it returns none: freshness stays unknown, and the outputs
// say that staleness was not checked. A root named with --root must be
// one.
func reportFingerprints(root string, named bool) (evidence.Fingerprints, error) {
	if named {
		if err := checkGateRoot(root); err != nil {
			return nil, err
		}
	}
	fp, err := rootFingerprints(root)
	if err == nil {
		err = addRunFingerprints(root, fp)
	}
	if err != nil && !named {
		return nil, nil
	}
	return fp, err
}

func (o *reportOptions) writeChart(summaries []evidence.WorkloadSummary) error {
	if o.chart == "" {
		return nil
	}
	if len(summaries) == 0 {
		return fmt.Errorf("no evidence recorded in the inputs, so there is nothing to chart. Fix: run the benchmark first, or leave out --chart")
	}
	var buf bytes.Buffer
	if err := writeEvidenceChart(&buf, summaries, chartFormat(o.chart)); err != nil {
		return err
	}
	if err := os.WriteFile(o.chart, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("--chart: %w", writeError(o.chart, err, "check that the directory exists and is writable"))
	}
	return nil
}

// writeTable writes the table in the chosen format to the output, and says
// what it wrote when that is a file.
func (o *reportOptions) writeTable(e *env, files []evidence.ResultFile, summaries []evidence.WorkloadSummary) error {
	var buf bytes.Buffer
	var err error
	switch o.format {
	case formatCSV:
		err = evidence.WriteReportCSV(&buf, summaries)
	case formatBenchfmt:
		err = evidence.WriteBenchfmt(&buf, files)
	case formatJSON:
		err = writeJSON(&buf, reportJSON(summaries))
	default:
		buf.WriteString(evidence.MarkdownTable(summaries))
	}
	if err != nil {
		return err
	}
	if o.output == "-" {
		_, err := e.stdout.Write(buf.Bytes())
		if err == nil && o.chart != "" {
			fmt.Fprintf(e.stderr, "wrote %s\n", o.chart)
		}
		return err
	}
	if err := os.WriteFile(o.output, buf.Bytes(), 0o644); err != nil {
		return writeError(o.output, err, "check that the directory exists and is writable")
	}
	wrote(e.stdout, o.output, o.chart)
	return nil
}

func wrote(w io.Writer, table, chart string) {
	fmt.Fprintf(w, "wrote %s", table)
	if chart != "" {
		fmt.Fprintf(w, " and %s", chart)
	}
	fmt.Fprintln(w)
}

// existingDir fails when a directory named on the command line is missing:
// evidence.LoadResults reads a missing directory as "no evidence" (right for
// the default in a fresh checkout), which would hide a mistyped --results.
func existingDir(flagName, dir string) error {
	info, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s %s: no such directory. Fix: check the path, or leave the flag out for evidence/results", flagName, dir)
	case err != nil:
		return fmt.Errorf("%s %s: %w. Fix: check the path", flagName, dir, err)
	case !info.IsDir():
		return fmt.Errorf("%s %s is not a directory. Fix: name the directory that holds the evidence CSVs", flagName, dir)
	}
	return nil
}

type armJSON struct {
	Arm          string        `json:"arm"`
	Kind         string        `json:"kind"`
	N            int           `json:"n"`
	MedianNS     *float64      `json:"median_ns"`
	MedianLoNS   *float64      `json:"median_ci_lo_ns"`
	MedianHiNS   *float64      `json:"median_ci_hi_ns"`
	PerIteration *intervalJSON `json:"per_iteration_ns,omitempty"`
	Speedup      *intervalJSON `json:"speedup,omitempty"`
	Bandwidth    *intervalJSON `json:"bandwidth_gb_s,omitempty"`
}

// intervalJSON is an estimate with its 95% interval; an infinite bound
// (too few samples) is null.
type intervalJSON struct {
	Value *float64 `json:"value"`
	Lo    *float64 `json:"ci_lo"`
	Hi    *float64 `json:"ci_hi"`
}

func intervalOf(iv *evidence.Interval) *intervalJSON {
	if iv == nil {
		return nil
	}
	return &intervalJSON{Value: finitePtr(iv.Center), Lo: finitePtr(iv.Lo), Hi: finitePtr(iv.Hi)}
}

type workloadJSON struct {
	File       string    `json:"file"`
	Run        string    `json:"run"`
	Workload   string    `json:"workload"`
	Nodes      uint64    `json:"graph_nodes"`
	Edges      uint64    `json:"graph_edges"`
	Iterations uint64    `json:"iterations"`
	Device     string    `json:"device"`
	Compute    string    `json:"compute_capability"`
	Driver     string    `json:"driver_version"`
	Commit     string    `json:"commit"`
	Metric     string    `json:"metric"`
	Baseline   string    `json:"baseline"`
	Freshness  string    `json:"freshness"`
	Arms       []armJSON `json:"arms"`
}

func reportJSON(summaries []evidence.WorkloadSummary) []workloadJSON {
	out := []workloadJSON{}
	for _, ws := range summaries {
		wj := workloadJSON{File: ws.File, Run: ws.Run, Workload: ws.Workload.Name, Nodes: ws.Workload.Nodes, Edges: ws.Workload.Edges,
			Iterations: ws.Workload.Iterations, Device: ws.Device, Compute: ws.Compute, Driver: ws.Driver, Commit: ws.Commit,
			Metric: ws.Metric, Baseline: ws.Baseline, Freshness: ws.Freshness.String()}
		for _, a := range ws.Arms {
			wj.Arms = append(wj.Arms, armJSON{Arm: a.Arm, Kind: a.Kind.String(), N: a.N, MedianNS: finitePtr(a.Median.Center),
				MedianLoNS: finitePtr(a.Median.Lo), MedianHiNS: finitePtr(a.Median.Hi), PerIteration: intervalOf(a.PerIteration),
				Speedup: intervalOf(a.Speedup), Bandwidth: intervalOf(a.Bandwidth)})
		}
		out = append(out, wj)
	}
	return out
}
