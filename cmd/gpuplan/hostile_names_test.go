package main

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/perf/benchfmt"
)

// TestReportOfForgedFileNames reports evidence whose file names hold a
// newline with a forged benchmark line, an escape and '<': the benchfmt
// output reads back as the real results only, the CSV keeps its rows, and
// the SVG chart is well-formed text.
func TestReportOfForgedFileNames(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "evidence", "testdata", "results", "grid-demo.csv"))
	require.NoError(t, err)
	dir := t.TempDir()
	for _, name := range []string{"x\nBenchmarkForged 1 5 ns\n.csv", "esc\x1b[2J.csv", "<svg>&.csv"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), data, 0o644))
	}
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

	chart := filepath.Join(t.TempDir(), "c.svg")
	_, errs, code = runCLI(t, "", "report", "--results", dir, "--chart", chart)
	require.Equal(t, exitOK, code, errs)
	svg, err := os.ReadFile(chart)
	require.NoError(t, err)
	assert.False(t, bytes.ContainsAny(svg, "\x1b\x00"), "no control bytes in the SVG")
	assert.NotContains(t, string(svg), "<svg>&", "'<' and '&' are escaped")
}
