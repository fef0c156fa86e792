package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/gpuplan/gpuplan/evidence"
)

const reportAbout = `Summarise the evidence under evidence/results/: for each workload of each
run, the median time of every arm with its 95% confidence interval and the
speedup over the baseline arm (host-loop unless --baseline says otherwise;
the slowest arm where the baseline is missing), computed as the gate does.

Writes a Markdown table (to standard output unless --markdown names a file)
and, with --chart, a PNG or SVG chart (by the file's extension): medians on
a log scale with confidence-interval bars and the speedups written above.`

func runReport(e *env, args []string) error {
	f := e.newFlags("report", "report [--results DIR] [--metric wall_ns|device_ns] [--baseline ARM] [--chart FILE.png|FILE.svg] [--markdown FILE] [--json]", reportAbout)
	results := f.String("results", filepath.Join("evidence", "results"), "evidence `DIR`")
	metric := f.String("metric", evidence.MetricWallNS, "time to report: wall_ns or device_ns")
	baseline := f.String("baseline", "host-loop", "`ARM` speedups are relative to")
	chart := f.String("chart", "", "write a chart to `FILE` (.png or .svg)")
	markdown := f.String("markdown", "-", "write the Markdown table to `FILE` (- for standard output)")
	f.readsInput()
	if err := f.parse(args); err != nil {
		return err
	}
	if err := f.noArgs(); err != nil {
		return err
	}
	if *metric != evidence.MetricWallNS && *metric != evidence.MetricDeviceNS {
		return usagef("gpuplan report: --metric %q is unknown. Fix: use wall_ns or device_ns", *metric)
	}
	format := ""
	if *chart != "" {
		format = strings.TrimPrefix(strings.ToLower(filepath.Ext(*chart)), ".")
		if format != evidence.ChartPNG && format != evidence.ChartSVG {
			return usagef("gpuplan report: --chart %q must end in .png or .svg. Fix: name the chart file with a .png or .svg extension", *chart)
		}
	}
	if setFlags(f)["results"] {
		if err := existingDir("--results", *results); err != nil {
			return err
		}
	}
	files, err := evidence.LoadResultsLimit(*results, e.inputLimit)
	if err != nil {
		return err
	}
	summaries, err := evidence.Summarize(files, *metric, *baseline)
	if err != nil {
		return err
	}
	if format != "" {
		if len(summaries) == 0 {
			return fmt.Errorf("no evidence recorded in %s, so there is nothing to chart. Fix: run the benchmark first, or leave out --chart", *results)
		}
		var buf bytes.Buffer
		if err := evidence.WriteChart(&buf, summaries, format); err != nil {
			return err
		}
		if err := os.WriteFile(*chart, buf.Bytes(), 0o644); err != nil {
			return fmt.Errorf("writing chart: %w. Fix: check that the directory exists and is writable", err)
		}
	}
	if f.json {
		return writeJSON(e.stdout, reportJSON(summaries))
	}
	table := evidence.MarkdownTable(summaries)
	if *markdown == "-" {
		_, err = fmt.Fprint(e.stdout, table)
		return err
	}
	if err := os.WriteFile(*markdown, []byte(table), 0o644); err != nil {
		return fmt.Errorf("writing Markdown: %w. Fix: check that the directory exists and is writable", err)
	}
	fmt.Fprintf(e.stdout, "wrote %s", *markdown)
	if *chart != "" {
		fmt.Fprintf(e.stdout, " and %s", *chart)
	}
	fmt.Fprintln(e.stdout)
	return nil
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
	Arm          string   `json:"arm"`
	N            int      `json:"n"`
	MedianNS     *float64 `json:"median_ns"`
	MedianLoNS   *float64 `json:"median_ci_lo_ns"`
	MedianHiNS   *float64 `json:"median_ci_hi_ns"`
	Speedup      *float64 `json:"speedup,omitempty"`
	SpeedupLo    *float64 `json:"speedup_ci_lo,omitempty"`
	SpeedupHi    *float64 `json:"speedup_ci_hi,omitempty"`
	BandwidthGBs float64  `json:"bandwidth_gb_s,omitempty"`
}

type workloadJSON struct {
	File       string    `json:"file"`
	Workload   string    `json:"workload"`
	Nodes      uint64    `json:"graph_nodes"`
	Edges      uint64    `json:"graph_edges"`
	Iterations uint64    `json:"iterations"`
	Device     string    `json:"device"`
	Compute    string    `json:"compute_capability"`
	Commit     string    `json:"commit"`
	Metric     string    `json:"metric"`
	Baseline   string    `json:"baseline"`
	Arms       []armJSON `json:"arms"`
}

func reportJSON(summaries []evidence.WorkloadSummary) []workloadJSON {
	out := []workloadJSON{}
	for _, ws := range summaries {
		wj := workloadJSON{File: ws.File, Workload: ws.Workload.Name, Nodes: ws.Workload.Nodes, Edges: ws.Workload.Edges,
			Iterations: ws.Workload.Iterations, Device: ws.Device, Compute: ws.Compute, Commit: ws.Commit,
			Metric: ws.Metric, Baseline: ws.Baseline}
		for _, a := range ws.Arms {
			aj := armJSON{Arm: a.Arm, N: a.N, MedianNS: finitePtr(a.Median.Center), MedianLoNS: finitePtr(a.Median.Lo),
				MedianHiNS: finitePtr(a.Median.Hi), BandwidthGBs: a.BandwidthGBs}
			if a.Speedup != nil {
				aj.Speedup, aj.SpeedupLo, aj.SpeedupHi = finitePtr(a.Speedup.Center), finitePtr(a.Speedup.Lo), finitePtr(a.Speedup.Hi)
			}
			wj.Arms = append(wj.Arms, aj)
		}
		out = append(out, wj)
	}
	return out
}
