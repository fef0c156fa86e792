package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/evidence"
	"github.com/gpuplan/gpuplan/examples"
)

// record-all.sh records exactly the example runs the gate fingerprints.
func TestRecordAllListsTheExampleRuns(t *testing.T) {
	script, err := os.ReadFile("../../scripts/record-all.sh")
	require.NoError(t, err)
	var got []string
	for _, m := range regexp.MustCompile(`(?m)^\s*example (\S+) (.*?)(?: \|\| return 1)?$`).FindAllStringSubmatch(string(script), -1) {
		got = append(got, m[1]+" "+strings.TrimSpace(m[2]))
	}
	var want []string
	for _, r := range examples.Records() {
		what := r.Spec
		if what == "" {
			what = r.Path
		}
		want = append(want, strings.Join(append([]string{r.Name, what}, r.Args...), " "))
	}
	require.Equal(t, want, got)
}

// Every recorded run has a fingerprint of its own, which a change to its
// workload file moves.
func TestRunFingerprints(t *testing.T) {
	fp, err := evidence.SourceFingerprints("../..")
	require.NoError(t, err)
	require.NoError(t, addRunFingerprints("../..", fp))
	seen := map[string]bool{}
	for _, r := range examples.Records() {
		f, ok := fp["run "+r.Name]
		require.True(t, ok, r.Name)
		require.False(t, seen[f], "%s shares a fingerprint", r.Name)
		seen[f] = true
	}
	data, ptx, err := recordedInputs("../..", examples.Records()[3])
	require.NoError(t, err)
	base := fp[wavedagWorkload]
	require.Equal(t, fp["run "+examples.Records()[3].Name], evidence.RunFingerprint(base, data, ptx))
	require.NotEqual(t, evidence.RunFingerprint(base, data, ptx), evidence.RunFingerprint(base, append(data, ' '), ptx))
	require.Equal(t, evidence.RunFingerprint(base, data, ptx), evidence.RunFingerprint(base, data, append([]byte("// a comment\n"), ptx...)),
		"a PTX comment leaves the fingerprint as it is")
}
