package main

import (
	"encoding/csv"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gpuplan/gpuplan/evidence"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	reportFixture     = "../../evidence/testdata/report"
	reportFixtureFile = reportFixture + "/run.csv"
)

func TestReportMarkdownMatchesGolden(t *testing.T) {
	out, errs, code := runCLI(t, "", "report", "--results", reportFixture)
	require.Equal(t, exitOK, code, errs)
	want, err := os.ReadFile("../../evidence/testdata/report.golden.md")
	require.NoError(t, err)
	assert.Equal(t, string(want), out)
}

// A file argument, standard input and a directory argument read the same
// evidence; the label of each run is its file name.
func TestReportInputs(t *testing.T) {
	data, err := os.ReadFile(reportFixtureFile)
	require.NoError(t, err)
	tests := []struct {
		name, stdin string
		args        []string
		file, run   string
	}{
		{"file", "", []string{reportFixtureFile}, reportFixtureFile, "run"},
		{"stdin", string(data), []string{"-"}, "<stdin>", "<stdin>"},
		{"directory", "", []string{reportFixture}, reportFixtureFile, "run"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, errs, code := runCLI(t, tc.stdin, append([]string{"report", "--json"}, tc.args...)...)
			require.Equal(t, exitOK, code, errs)
			var got []workloadJSON
			require.NoError(t, json.Unmarshal([]byte(out), &got))
			require.Len(t, got, 2)
			assert.Equal(t, filepath.ToSlash(tc.file), got[0].File)
			assert.Equal(t, tc.run, got[0].Run)
			assert.Equal(t, "grid-512", got[0].Workload)
		})
	}
	// Two runs named alike get labels of their own.
	out, errs, code := runCLI(t, string(data), "report", reportFixtureFile, "-")
	require.Equal(t, exitOK, code, errs)
	assert.Contains(t, out, "### grid-512 · run run\n")
	assert.Contains(t, out, "### grid-512 · run &lt;stdin>\n")
}

func TestReportFormats(t *testing.T) {
	out, errs, code := runCLI(t, "", "report", reportFixtureFile, "--format", "csv")
	require.Equal(t, exitOK, code, errs)
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	require.NoError(t, err)
	assert.Equal(t, strings.Split(evidence.ReportCSVHeader, ","), recs[0])
	assert.Len(t, recs, 7)

	out, errs, code = runCLI(t, "", "report", reportFixtureFile, "--format", "benchfmt")
	require.Equal(t, exitOK, code, errs)
	assert.True(t, strings.HasPrefix(out, "run: run\ndevice: Test GPU X\n"), out[:40])
	assert.Equal(t, 72, strings.Count(out, "\nBenchmarkEvidence/workload="))

	out, errs, code = runCLI(t, "", "report", reportFixtureFile, "--format", "json")
	require.Equal(t, exitOK, code, errs)
	var got []workloadJSON
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	rmat := got[1]
	assert.Equal(t, "copy-ceiling", rmat.Arms[2].Arm)
	assert.Equal(t, "bandwidth", rmat.Arms[2].Kind)
	assert.Nil(t, rmat.Arms[2].Speedup, "a copy ceiling is no speedup")
	require.NotNil(t, rmat.Arms[2].Bandwidth)
	require.NotNil(t, rmat.Arms[1].PerIteration)
	assert.InDelta(t, *rmat.Arms[1].MedianNS/9, *rmat.Arms[1].PerIteration.Value, 1e-6)
}

// TestReportFiles writes the table to --output and --markdown
// (TestReportChartFiles adds the chart).
func TestReportFiles(t *testing.T) {
	dir := t.TempDir()
	md := filepath.Join(dir, "report.md")
	out, errs, code := runCLI(t, "", "report", "--results", reportFixture, "--output", md)
	require.Equal(t, exitOK, code, errs)
	assert.Equal(t, "wrote "+md+"\n", out)
	data, err := os.ReadFile(md)
	require.NoError(t, err)
	assert.Contains(t, string(data), "| megakernel | 12 |")

	// --markdown FILE is --format markdown --output FILE.
	legacy := filepath.Join(dir, "legacy.md")
	out, errs, code = runCLI(t, "", "report", reportFixtureFile, "--markdown", legacy)
	require.Equal(t, exitOK, code, errs)
	assert.Equal(t, "wrote "+legacy+"\n", out)
	again, err := os.ReadFile(legacy)
	require.NoError(t, err)
	assert.Equal(t, string(data), strings.ReplaceAll(string(again), "file ../../evidence/testdata/report/run.csv", "file run.csv"))
}

func TestReportErrors(t *testing.T) {
	tmp := t.TempDir()
	bad := filepath.Join(t.TempDir(), "bad.csv")
	require.NoError(t, os.WriteFile(bad, []byte(evidence.SampleCSVHeader+"\nnot,a,row\n"), 0o600))
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"empty", []string{"--results", tmp}, exitOK, ""},
		{"chart extension", []string{"--chart", "c.gif"}, exitUsage, "must end in .png or .svg"},
		{"metric", []string{"--metric", "cycles"}, exitUsage, "unknown"},
		{"format", []string{"--format", "xml"}, exitUsage, `--format "xml" is unknown. Fix:`},
		{"json and format", []string{"--json", "--format", "csv"}, exitUsage, "disagree. Fix:"},
		{"markdown and output", []string{"--markdown", "a.md", "--output", "b.md"}, exitUsage, "Fix:"},
		{"results and inputs", []string{"--results", reportFixture, reportFixtureFile}, exitUsage, "both name the evidence. Fix:"},
		{"stdin twice", []string{"-", "-"}, exitUsage, "named 2 times. Fix:"},
		{"typo dir", []string{"--results", filepath.Join(tmp, "typo")}, exitFailure, "no such directory. Fix: check the path"},
		{"not a dir", []string{"--results", reportFixtureFile}, exitFailure, "is not a directory. Fix:"},
		{"missing file", []string{filepath.Join(tmp, "none.csv")}, exitFailure, "no such file. Fix:"},
		{"malformed", []string{bad}, exitFailure, "bad.csv:2:"},
		{"too large", []string{reportFixtureFile, "--max-input-bytes", "100"}, exitFailure, "above the limit of 100 bytes"},
		{"unwritable", []string{reportFixtureFile, "--output", filepath.Join(tmp, "no", "dir.md")}, exitFailure, "Fix:"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, errs, code := runCLI(t, "", append([]string{"report"}, tc.args...)...)
			assert.Equal(t, tc.code, code, errs)
			assert.Contains(t, errs, tc.want)
			if tc.name == "empty" {
				assert.Equal(t, "No evidence recorded.\n", out)
			}
		})
	}
}

// freshFixture writes the report fixture measured, as its fingerprints
// say, on this tree's code.
func freshFixture(t *testing.T) string {
	fp, err := rootFingerprints("../..")
	require.NoError(t, err)
	data, err := os.ReadFile(reportFixtureFile)
	require.NoError(t, err)
	current := fp[slices.Sorted(maps.Keys(fp))[0]]
	fresh := regexp.MustCompile(`sha256:[0-9a-f]{64}`).ReplaceAllString(string(data), current)
	path := filepath.Join(t.TempDir(), "run.csv")
	require.NoError(t, os.WriteFile(path, []byte(fresh), 0o600))
	return path
}

// reportStalenessCase is a report of the fixture against a --root, and
// what it says about the runs' freshness.
type reportStalenessCase struct {
	name      string
	args      []string
	code      int
	want      []string
	freshness string
}

func reportStalenessCases(t *testing.T) []reportStalenessCase {
	return []reportStalenessCase{
		{"outside the repository", []string{reportFixtureFile}, exitOK,
			[]string{"Staleness not checked: no source fingerprints of the current tree were given"}, "unknown"},
		{"measured on other code", []string{"--root", "../..", reportFixtureFile}, exitOK,
			[]string{"### grid-512 · run run (stale: measured on other code)\n", "### rmat-16 · run run (stale: measured on other code)\n", "2 of 2 sections are marked"}, "stale"},
		{"measured on this tree", []string{"--root", "../..", freshFixture(t)}, exitOK, []string{"No run is stale"}, "fresh"},
		{"a root without workloads", []string{"--root", t.TempDir(), reportFixtureFile}, exitFailure, []string{"has no workloads directory", "Fix:"}, ""},
		{"a missing root", []string{"--root", filepath.Join(t.TempDir(), "none"), reportFixtureFile}, exitFailure, []string{"no such directory. Fix:"}, ""},
	}
}

// gpuplan report marks the runs measured on other code than --root's, in
// the table and the JSON (TestReportChartStaleness: and the chart), and
// says so where it has no fingerprints to compare with.
func TestReportStaleness(t *testing.T) {
	for _, tc := range reportStalenessCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			out, errs, code := runCLI(t, "", append([]string{"report"}, tc.args...)...)
			require.Equal(t, tc.code, code, errs)
			if code != exitOK {
				for _, w := range tc.want {
					assert.Contains(t, errs, w)
				}
				return
			}
			for _, w := range tc.want {
				assert.Contains(t, out, w)
			}
			out, errs, code = runCLI(t, "", append([]string{"report", "--json"}, tc.args...)...)
			require.Equal(t, exitOK, code, errs)
			var got []workloadJSON
			require.NoError(t, json.Unmarshal([]byte(out), &got))
			require.Len(t, got, 2)
			for _, w := range got {
				assert.Equal(t, tc.freshness, w.Freshness, w.Workload)
			}
		})
	}
}

// On the committed evidence, the runs the report marks stale are the
// files gpuplan gate --list-stale lists.
func TestReportStaleMatchesGate(t *testing.T) {
	out, errs, code := runCLI(t, "", "gate", "--list-stale", "--root", "../..", "--json")
	require.Equal(t, exitOK, code, errs)
	var gate struct {
		Stale []string `json:"stale"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &gate))
	out, errs, code = runCLI(t, "", "report", "--root", "../..", "--results", "../../evidence/results", "--json")
	require.Equal(t, exitOK, code, errs)
	var got []workloadJSON
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	stale := []string{}
	for _, w := range got {
		require.NotEqual(t, "unknown", w.Freshness, w.File)
		if name := strings.TrimSuffix(filepath.Base(w.File), ".csv"); w.Freshness == "stale" && !slices.Contains(stale, name) {
			stale = append(stale, name)
		}
	}
	slices.Sort(stale)
	assert.Equal(t, gate.Stale, stale)
}

// A --chart file that is not .png or .svg is a usage error, in a build with
// charts and without.
func TestChartExtension(t *testing.T) {
	_, errs, code := runCLI(t, "", "report", "--chart", "c.gif")
	assert.Equal(t, exitUsage, code, errs)
	assert.Contains(t, errs, "must end in .png or .svg")
}
