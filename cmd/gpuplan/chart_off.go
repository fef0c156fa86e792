//go:build !chart

package main

import (
	"io"

	"github.com/gpuplan/gpuplan/evidence"
)

// buildHasCharts reports whether this build draws charts (-tags chart):
// report --chart and load --chart. This one does not, so it links no
// plotting library (evidence/chart, gonum.org/v1/plot and its fonts); the
// commands refuse --chart with errNoCharts before reading their inputs.
const buildHasCharts = false

// chartFlagNote ends the help of the --chart flags: where they work.
const chartFlagNote = "; needs a build with charts (make build-chart)"

// writeEvidenceChart fails: this build draws no charts.
func writeEvidenceChart(io.Writer, []evidence.WorkloadSummary, string) error {
	return errNoCharts
}

// writeLoadChart fails: this build draws no charts.
func writeLoadChart(io.Writer, []evidence.LoadRow, string) error {
	return errNoCharts
}
