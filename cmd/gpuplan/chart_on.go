//go:build chart

package main

import (
	"io"

	"github.com/gpuplan/gpuplan/evidence"
	"github.com/gpuplan/gpuplan/evidence/chart"
)

// buildHasCharts reports whether this build draws charts (-tags chart):
// report --chart and load --chart.
const buildHasCharts = true

// chartFlagNote ends the help of the --chart flags: empty where the build
// draws charts.
const chartFlagNote = ""

// writeEvidenceChart draws the report's chart of summaries in format (png
// or svg).
func writeEvidenceChart(w io.Writer, summaries []evidence.WorkloadSummary, format string) error {
	return chart.WriteEvidence(w, summaries, format)
}

// writeLoadChart draws the throughput-latency curve of load rows in format
// (png or svg).
func writeLoadChart(w io.Writer, rows []evidence.LoadRow, format string) error {
	return chart.WriteLoad(w, rows, format)
}
