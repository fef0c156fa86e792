package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuplan/gpuplan/evidence"
	"github.com/gpuplan/gpuplan/workloads/bfs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBenchCheckFlag reads --check: auto by default, each mode by name;
// an unknown mode, and --check with the partitioned BFS, are usage errors
// naming the flag, with a fix.
func TestBenchCheckFlag(t *testing.T) {
	e := &env{stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}}
	good := map[string]struct {
		args []string
		want bfs.CheckMode
	}{
		"default":   {nil, bfs.CheckAuto},
		"auto":      {[]string{"--check", "auto"}, bfs.CheckAuto},
		"reference": {[]string{"--check", "reference"}, bfs.CheckReference},
		"graph500":  {[]string{"--check=graph500"}, bfs.CheckGraph500},
	}
	for name, c := range good {
		o, err := parseBenchArgs(e, append([]string{"frontier", "--graph", "grid:4"}, c.args...))
		require.NoError(t, err, name)
		assert.Equal(t, c.want, o.bench.Check, name)
	}
	bad := map[string]struct {
		args []string
		want string
	}{
		"unknown":     {[]string{"--check", "cpu"}, `--check: unknown BFS check mode "cpu"`},
		"empty":       {[]string{"--check="}, `--check: unknown BFS check mode ""`},
		"case":        {[]string{"--check", "Graph500"}, `--check: unknown BFS check mode "Graph500"`},
		"partitioned": {[]string{"--check", "graph500", "--simulate-devices", "2"}, "--check does not apply with --simulate-devices 2"},
	}
	for name, c := range bad {
		_, err := parseBenchArgs(e, append([]string{"frontier", "--graph", "grid:4"}, c.args...))
		var ue *usageError
		require.ErrorAs(t, err, &ue, name)
		assert.Contains(t, err.Error(), c.want, name)
		assert.Contains(t, err.Error(), "Fix:", name)
	}
	out, _, code := runCLI(t, "", "bench", "frontier", "--help")
	assert.Equal(t, exitOK, code)
	assert.Contains(t, out, "--check")
	assert.Contains(t, out, "graph500")
}

// checkLines returns the roots' checks an evidence CSV's "# check" comment
// lines carry, each line parsed as JSON.
func checkLines(t *testing.T, data []byte) []bfs.RootCheck {
	var out []bfs.RootCheck
	for _, line := range strings.Split(string(data), "\n") {
		rest, ok := strings.CutPrefix(line, "# check ")
		if !ok {
			continue
		}
		var c bfs.RootCheck
		require.NoError(t, json.Unmarshal([]byte(rest), &c), line)
		out = append(out, c)
	}
	return out
}

// TestBenchCheckOnFake runs the benchmark command over the emulated
// kernels in each check mode: the evidence CSV is still valid, has one
// "# check" line per root naming the check that ran, and the same
// checksums in both modes; the log and the summary say which check ran.
func TestBenchCheckOnFake(t *testing.T) {
	_, roots := benchGraphAndRoots(t, 3)
	cases := []struct {
		flag string
		want bfs.RootCheck
		log  string
		says string
	}{
		{"auto", bfs.RootCheck{Check: bfs.CheckReference}, "check reference (auto: ", "decisions equal the CPU reference's"},
		{"reference", bfs.RootCheck{Check: bfs.CheckReference}, "check reference (as configured): the CPU reference BFS", "decisions equal the CPU reference's"},
		{"graph500", bfs.RootCheck{Check: bfs.CheckGraph500, Arm: bfs.ArmHostLoop}, "check graph500 (as configured): no CPU BFS", "decisions equal each root's validated first traversal's (check graph500, arm host-loop)"},
	}
	checksums := map[string]string{}
	for _, c := range cases {
		csv := filepath.Join(t.TempDir(), "kron.csv")
		table, log := runFakeBench(t, "frontier", "--graph", "kron:8", "--roots", "3", "--samples", "2", "--copy-mib", "1", "--mega-tune=false",
			"--check", c.flag, "-o", csv)
		assert.Contains(t, log, c.log, c.flag)
		assert.Contains(t, table, c.says, c.flag)
		data, err := os.ReadFile(csv)
		require.NoError(t, err)
		rows, err := evidence.ReadSamples(csv, bytes.NewReader(data))
		require.NoError(t, err, c.flag)
		for _, r := range rows {
			if r.Arm != "copy-ceiling" {
				checksums[c.flag] = r.Checksum
				assert.Equal(t, rows[0].Checksum, r.Checksum, "%s: %s", c.flag, r.Arm)
			}
		}
		got := checkLines(t, data)
		require.Len(t, got, len(roots), c.flag)
		for i, r := range roots {
			want := c.want
			want.Root = r
			assert.Equal(t, want, got[i], c.flag)
		}
	}
	assert.Equal(t, checksums["reference"], checksums["graph500"])
	assert.Equal(t, checksums["auto"], checksums["graph500"])
}
