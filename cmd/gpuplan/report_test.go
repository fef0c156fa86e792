package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const reportFixture = "../../evidence/testdata/report"

func TestReportMarkdownMatchesGolden(t *testing.T) {
	out, errs, code := runCLI(t, "", "report", "--results", reportFixture)
	require.Equal(t, exitOK, code, errs)
	want, err := os.ReadFile("../../evidence/testdata/report.golden.md")
	require.NoError(t, err)
	assert.Equal(t, string(want), out)
}

func TestReportFiles(t *testing.T) {
	dir := t.TempDir()
	md := filepath.Join(dir, "report.md")
	for _, chart := range []string{"chart.png", "chart.svg"} {
		path := filepath.Join(dir, chart)
		out, errs, code := runCLI(t, "", "report", "--results", reportFixture, "--chart", path, "--markdown", md)
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
}

func TestReportJSONAndErrors(t *testing.T) {
	out, errs, code := runCLI(t, "", "report", "--results", reportFixture, "--json", "--metric", "device_ns")
	require.Equal(t, exitOK, code, errs)
	var got []map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	require.Len(t, got, 2)
	assert.Equal(t, "grid-512", got[0]["workload"])
	assert.Equal(t, "device_ns", got[0]["metric"])

	out, _, code = runCLI(t, "", "report", "--results", t.TempDir())
	require.Equal(t, exitOK, code)
	assert.Equal(t, "No evidence recorded.\n", out)

	_, errs, code = runCLI(t, "", "report", "--results", t.TempDir(), "--chart", filepath.Join(t.TempDir(), "c.png"))
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, errs, "nothing to chart. Fix:")

	_, errs, code = runCLI(t, "", "report", "--chart", "c.gif")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errs, "must end in .png or .svg")
	_, errs, code = runCLI(t, "", "report", "--metric", "cycles")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errs, "unknown")
	_, errs, code = runCLI(t, "", "report", "--results", filepath.Join(t.TempDir(), "typo"))
	require.Equal(t, exitFailure, code)
	assert.Contains(t, errs, "no such directory. Fix: check the path")
	_, errs, code = runCLI(t, "", "report", "--results", filepath.Join(reportFixture, "..", "report.golden.md"))
	require.Equal(t, exitFailure, code)
	assert.Contains(t, errs, "is not a directory. Fix:")
	_, errs, code = runCLI(t, "", "report", "--results", reportFixture, "--markdown", filepath.Join(t.TempDir(), "no", "such", "dir.md"))
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, errs, "Fix:")
}
