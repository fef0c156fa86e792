package main

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/perf/benchfmt"
)

// forgedFileNames is a results directory of valid evidence whose file
// names hold a newline with a forged benchmark line, an escape and '<'.
func forgedFileNames(t *testing.T) string {
	data, err := os.ReadFile(filepath.Join("..", "..", "evidence", "testdata", "results", "grid-demo.csv"))
	require.NoError(t, err)
	dir := t.TempDir()
	for _, name := range []string{"x\nBenchmarkForged 1 5 ns\n.csv", "esc\x1b[2J.csv", "<svg>&.csv"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), data, 0o644))
	}
	return dir
}

// TestReportOfForgedFileNames reports evidence of forged file names: the
// benchfmt output reads back as the real results only and the CSV keeps
// its rows (TestReportChartOfForgedFileNames checks the chart).
func TestReportOfForgedFileNames(t *testing.T) {
	dir := forgedFileNames(t)
	out, errs, code := runCLI(t, "", "report", "--results", dir, "--format", "benchfmt")
	require.Equal(t, exitOK, code, errs)
	assert.NotContains(t, out, "\x1b")
	r := benchfmt.NewReader(strings.NewReader(out), "report")
	names := map[string]bool{}
	for r.Scan() {
		if res, ok := r.Result().(*benchfmt.Result); ok {
			names[string(res.Name.Base())] = true
		}
	}
	require.NoError(t, r.Err())
	assert.NotContains(t, names, "Forged", "no injected benchmark")

	out, errs, code = runCLI(t, "", "report", "--results", dir, "--format", "csv")
	require.Equal(t, exitOK, code, errs)
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	require.NoError(t, err)
	assert.Equal(t, len(rows), strings.Count(out, "\n"), "one row a line")
}
