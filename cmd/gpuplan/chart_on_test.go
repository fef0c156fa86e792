//go:build chart

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The tests of --chart in a build with charts (-tags chart; make test runs
// them); chart_off_test.go has those of the default build, which refuses
// --chart.

func TestReportChartFiles(t *testing.T) {
	dir := t.TempDir()
	md := filepath.Join(dir, "report.md")
	for _, chart := range []string{"chart.png", "chart.svg"} {
		path := filepath.Join(dir, chart)
		out, errs, code := runCLI(t, "", "report", "--results", reportFixture, "--chart", path, "--output", md)
		require.Equal(t, exitOK, code, errs)
		assert.Equal(t, "wrote "+md+" and "+path+"\n", out)
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		if strings.HasSuffix(chart, ".png") {
			assert.Equal(t, "\x89PNG", string(data[:4]))
		} else {
			assert.Contains(t, string(data), "<svg")
		}
	}
	data, err := os.ReadFile(md)
	require.NoError(t, err)
	assert.Contains(t, string(data), "| megakernel | 12 |")

	// A chart with the table on standard output: the table is the output,
	// the note about the chart goes to standard error.
	svg := filepath.Join(dir, "c.svg")
	out, errs, code := runCLI(t, "", "report", reportFixtureFile, "--chart", svg, "--format", "csv")
	require.Equal(t, exitOK, code, errs)
	assert.True(t, strings.HasPrefix(out, "run,file,"))
	assert.Equal(t, "wrote "+svg+"\n", errs)
}

func TestReportChartErrors(t *testing.T) {
	tmp := t.TempDir()
	_, errs, code := runCLI(t, "", "report", "--results", tmp, "--chart", filepath.Join(tmp, "c.png"))
	assert.Equal(t, exitFailure, code, errs)
	assert.Contains(t, errs, "nothing to chart. Fix:")
}

// The chart tags and greys the runs the table marks stale.
func TestReportChartStaleness(t *testing.T) {
	for _, tc := range reportStalenessCases(t) {
		if tc.code != exitOK {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			svg := filepath.Join(t.TempDir(), "c.svg")
			_, errs, code := runCLI(t, "", append([]string{"report", "--chart", svg, "--output", filepath.Join(t.TempDir(), "r.md")}, tc.args...)...)
			require.Equal(t, exitOK, code, errs)
			data, err := os.ReadFile(svg)
			require.NoError(t, err)
			assert.Equal(t, tc.freshness == "stale", strings.Contains(string(data), ">STALE: measured on other code<"))
		})
	}
}

// The SVG chart of evidence with forged file names is well-formed text.
func TestReportChartOfForgedFileNames(t *testing.T) {
	dir := forgedFileNames(t)
	chart := filepath.Join(t.TempDir(), "c.svg")
	_, errs, code := runCLI(t, "", "report", "--results", dir, "--chart", chart)
	require.Equal(t, exitOK, code, errs)
	svg, err := os.ReadFile(chart)
	require.NoError(t, err)
	assert.False(t, bytes.ContainsAny(svg, "\x1b\x00"), "no control bytes in the SVG")
	assert.NotContains(t, string(svg), "<svg>&", "'<' and '&' are escaped")
}
