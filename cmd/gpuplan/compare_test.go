package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fasterRun writes a copy of the report fixture whose megakernel samples
// take 5% less time.
func fasterRun(t *testing.T) string {
	data, err := os.ReadFile(reportFixtureFile)
	require.NoError(t, err)
	var b strings.Builder
	for _, line := range strings.SplitAfter(string(data), "\n") {
		f := strings.Split(line, ",")
		if len(f) == 20 && f[11] == "megakernel" {
			for _, col := range []int{13, 14} {
				v, err := strconv.ParseFloat(f[col], 64)
				require.NoError(t, err)
				f[col] = strconv.FormatFloat(v*0.95, 'f', -1, 64)
			}
			line = strings.Join(f, ",")
		}
		b.WriteString(line)
	}
	path := filepath.Join(t.TempDir(), "faster.csv")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o600))
	return path
}

func TestCompareText(t *testing.T) {
	faster := fasterRun(t)
	out, errs, code := runCLI(t, "", "compare", reportFixtureFile, faster)
	require.Equal(t, exitOK, code, errs)
	assert.Contains(t, out, "old: "+reportFixtureFile+"\nnew: "+filepath.ToSlash(faster)+"\n")
	assert.Regexp(t, `grid-512\s+megakernel\s+1\.169 ms ± 2%\s+1\.110 ms ± 2%\s+-5\.00%\s+0\.000\s+12\+12`, out)
	assert.Regexp(t, `grid-512\s+host-loop\s+11\.941 ms ± 1%\s+11\.941 ms ± 1%\s+~\s+1\.000\s+12\+12`, out)

	// Standard input as either side.
	data, err := os.ReadFile(reportFixtureFile)
	require.NoError(t, err)
	out, errs, code = runCLI(t, string(data), "compare", "-", faster, "--json")
	require.Equal(t, exitOK, code, errs)
	var rep compareReportJSON
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Equal(t, "<stdin>", rep.Old)
	require.Len(t, rep.Rows, 6)
	for _, r := range rep.Rows {
		assert.Equal(t, r.Arm == "megakernel", r.Significant, r.Arm)
		assert.NotNil(t, r.Warnings)
		if r.Arm == "copy-ceiling" {
			assert.Equal(t, "bandwidth", r.Kind)
		}
	}
	assert.Empty(t, rep.OnlyOld)
}

func TestCompareErrors(t *testing.T) {
	tmp := t.TempDir()
	empty := filepath.Join(tmp, "empty.csv")
	require.NoError(t, os.WriteFile(empty, nil, 0o600))
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"one file", []string{reportFixtureFile}, exitUsage, "want two evidence files"},
		{"three files", []string{reportFixtureFile, reportFixtureFile, reportFixtureFile}, exitUsage, "got 3 arguments"},
		{"both stdin", []string{"-", "-"}, exitUsage, "both inputs are standard input"},
		{"metric", []string{"--metric", "cycles", reportFixtureFile, reportFixtureFile}, exitUsage, "unknown"},
		{"missing", []string{reportFixtureFile, filepath.Join(tmp, "none.csv")}, exitFailure, "no such file. Fix:"},
		{"empty", []string{empty, reportFixtureFile}, exitFailure, "the file is empty. Fix:"},
		{"directory", []string{tmp, reportFixtureFile}, exitFailure, "not a regular file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, errs, code := runCLI(t, "", append([]string{"compare"}, tc.args...)...)
			assert.Equal(t, tc.code, code, errs)
			assert.Contains(t, errs, tc.want)
		})
	}
}
