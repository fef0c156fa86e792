package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gpuplan/gpuplan/evidence"
	"github.com/gpuplan/gpuplan/workloads/rebuild"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBenchEgraphArgs(t *testing.T) {
	e := &env{stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}}
	o, err := parseBenchEgraphArgs(e, []string{"--egraph", "gen:1e6", "--samples", "12", "-o", "x.csv"})
	require.NoError(t, err)
	assert.Equal(t, "gen:1e6", o.spec)
	assert.Equal(t, 12, o.bench.Samples)
	assert.Equal(t, rebuild.DefaultArms(), o.bench.Arms)
	assert.Equal(t, rebuild.DefaultCPUSamples, o.bench.CPUSamples)
	assert.True(t, o.bench.Structural)
	o, err = parseBenchEgraphArgs(e, []string{"--egraph", "file:d.pre.txt", "--arms", "persistent", "--peer-egg", "/x", "--peer-args", `--iters 7 --expr "(i (ln x) x)"`})
	require.NoError(t, err)
	assert.Equal(t, []rebuild.Arm{rebuild.ArmPersistent}, o.bench.Arms)
	words, err := splitShellWords(o.peerArgs)
	require.NoError(t, err)
	assert.Equal(t, []string{"--iters", "7", "--expr", "(i (ln x) x)"}, words)
	_, err = splitShellWords(`--expr "(a b`)
	require.ErrorContains(t, err, "unclosed")

	bad := map[string][]string{
		"no input":       {},
		"bad input":      {"--egraph", "graph:3"},
		"zero samples":   {"--egraph", "gen:10", "--samples", "0"},
		"cpu samples":    {"--egraph", "gen:10", "--cpu-samples", "-1"},
		"bad arm":        {"--egraph", "gen:10", "--arms", "megakernel"},
		"repeated arm":   {"--egraph", "gen:10", "--arms", "persistent,persistent"},
		"threads":        {"--egraph", "gen:10", "--threads", "100"},
		"blocks per sm":  {"--egraph", "gen:10", "--persistent-blocks-per-sm", "99"},
		"floor":          {"--egraph", "gen:10", "--floor-rounds", "-1"},
		"peer on gen":    {"--egraph", "gen:10", "--peer-egg", "/bin/true"},
		"peer samples":   {"--egraph", "file:x", "--peer-samples", "0"},
		"check every":    {"--egraph", "gen:10", "--check-every", "0"},
		"no e-nodes":     {"--egraph", "gen:0"},
		"bad shape":      {"--egraph", "gen:10:1:weird"},
		"no file":        {"--egraph", "file:"},
		"extra argument": {"--egraph", "gen:10", "more"},
	}
	for name, args := range bad {
		_, err := parseBenchEgraphArgs(e, args)
		var ue *usageError
		require.ErrorAs(t, err, &ue, name)
	}
	assert.Equal(t, "math-1e6", workloadName("/tmp/d/math-1e6.pre.txt"))
	assert.Equal(t, "my-graph", workloadName("my graph.json"))
}

func TestBenchEgraphCommand(t *testing.T) {
	out, _, code := runCLI(t, "", "bench", "egraph", "--help")
	assert.Equal(t, exitOK, code)
	assert.Contains(t, out, "persistent")
	_, errs, code := runCLI(t, "", "bench", "egraph", "--egraph", "gen:100", "--samples", "1")
	if code == exitFailure {
		assertNoGPUSentence(t, errs)
	}
	_, _, code = runCLI(t, "", "bench", "egraph")
	assert.Equal(t, exitUsage, code)
	out, _, code = runCLI(t, "", "bench", "--help")
	assert.Equal(t, exitOK, code)
	assert.Contains(t, out, "gpuplan bench egraph")
}

// fakeEggBench writes a stand-in egg-bench that copies the given dump and
// partition to --out and prints a SUMMARY line.
func fakeEggBench(t *testing.T, dump, post string) string {
	script := `#!/bin/sh
out=""; name=""
while [ $# -gt 0 ]; do
  case "$1" in --out) out="$2"; shift 2;; --name) name="$2"; shift 2;; *) shift;; esac
done
cp "` + dump + `" "$out/$name.pre.txt"
cp "` + post + `" "$out/$name.post.txt"
echo "SUMMARY name=$name reps=1 t1_rebuild_ms_median=0.6 t1_cold_ms=1.1 t2_unions_rebuild_ms_median=1.0"
`
	path := filepath.Join(t.TempDir(), "egg-bench")
	require.NoError(t, os.WriteFile(path, []byte(script), 0o755))
	return path
}

// unpackEgg writes egg's 1e4 dump and partition from egraph's testdata.
func unpackEgg(t *testing.T) (dump, post, sum string) {
	dir := t.TempDir()
	dump, post = unpackSample(t, dir, "math-1e4.pre.txt"), unpackSample(t, dir, "math-1e4.post.txt")
	data, err := os.ReadFile(dump)
	require.NoError(t, err)
	h := sha256.Sum256(data)
	return dump, post, hex.EncodeToString(h[:])
}

// TestBenchEgraphOnFake runs the whole benchmark command over the emulated
// kernels on egg's 1e4 dump with a stand-in egg peer: the evidence CSV it
// writes is valid, every arm's checksum (egg's included) is the
// reference's with the dump's SHA-256, egg is an external arm, and the
// round floor has its own workload.
func TestBenchEgraphOnFake(t *testing.T) {
	var out, errb bytes.Buffer
	e := &env{stdout: &out, stderr: &errb}
	dump, post, sum := unpackEgg(t)
	csv := filepath.Join(t.TempDir(), "egg.csv")
	o, err := parseBenchEgraphArgs(e, []string{"--egraph", "file:" + dump, "--samples", "2", "--cpu-samples", "2", "--floor-rounds", "5",
		"--peer-egg", fakeEggBench(t, dump, post), "--peer-samples", "3", "-o", csv})
	require.NoError(t, err)
	o.open = openFake(t, rebuild.NewFake)
	require.NoError(t, benchEgraph(e, o), errb.String())
	assert.Contains(t, out.String(), "| egg (external, T2) |")
	assert.Contains(t, out.String(), "| persistent |")
	assert.Contains(t, out.String(), "sha256 "+sum)
	data, err := os.ReadFile(csv)
	require.NoError(t, err)
	rows, err := evidence.ReadSamples(csv, bytes.NewReader(data))
	require.NoError(t, err)
	arms := map[string]int{}
	for _, r := range rows {
		arms[r.Workload.Name+"/"+r.Arm]++
		if r.Workload.Name == "math-1e4" {
			assert.Contains(t, r.Checksum, "-in-"+sum[:16], r.Arm)
			assert.Equal(t, rows[0].Checksum, r.Checksum, r.Arm)
			assert.EqualValues(t, 8728, r.Workload.Nodes)
		}
	}
	assert.Equal(t, map[string]int{"math-1e4/host-loop": 2, "math-1e4/device-loop": 2, "math-1e4/persistent": 2, "math-1e4/host-loop-incremental": 2,
		"math-1e4/device-loop-incremental": 2, "math-1e4/persistent-incremental": 2, "math-1e4/go-reference": 2, "math-1e4/egg": 3,
		"math-1e4-round-floor/persistent": 10}, arms)
	assert.True(t, evidence.IsExternalArm("egg"))
	assert.Contains(t, string(data), "# egg sample 2: t2_ms=1.0000 t1_ms=0.6000")
	assert.Contains(t, string(data), "# plans {")
	assert.Contains(t, errb.String(), "correctness: 6 arms give the CPU reference's partition, counts and rounds")
}

// TestBenchEgraphRefusals checks inputs the command refuses: a missing
// file, a file that is neither format, a peer on a snapshot, a failing
// peer.
func TestBenchEgraphRefusals(t *testing.T) {
	e := &env{stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}}
	open := openFake(t, rebuild.NewFake)
	garbage := filepath.Join(t.TempDir(), "g.txt")
	require.NoError(t, os.WriteFile(garbage, []byte("hello\n"), 0o644))
	malformed := filepath.Join(t.TempDir(), "m.pre.txt")
	require.NoError(t, os.WriteFile(malformed, []byte("egg-prerebuild-dump v1\nops 1\n0 2 f\nclasses 1\nnodes 1\n0 0 5\n"), 0o644))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--egraph", "file:/nonexistent/x.pre.txt"}, "nonexistent"},
		{[]string{"--egraph", "file:" + garbage}, "neither an egg dump"},
		{[]string{"--egraph", "file:" + malformed}, "line 6"},
		{[]string{"--egraph", "file:testdata/egraph/snapshot.json", "--peer-egg", "/bin/true"}, "needs an egg dump"},
	} {
		o, err := parseBenchEgraphArgs(e, append(c.args, "--samples", "1"))
		require.NoError(t, err)
		o.open = open
		require.ErrorContains(t, benchEgraph(e, o), c.want)
	}
	dump, _, _ := unpackEgg(t)
	o, err := parseBenchEgraphArgs(e, []string{"--egraph", "file:" + dump, "--samples", "1", "--cpu-samples", "0", "--peer-egg", "/nonexistent/egg-bench"})
	require.NoError(t, err)
	o.open = open
	err = benchEgraph(e, o)
	var pe *rebuild.PeerError
	require.ErrorAs(t, err, &pe, "a missing peer is an error, never a dropped arm")
}

// FuzzSplitShellWords feeds arbitrary --peer-args to splitShellWords: it
// never panics, an unclosed quote is a usage error, and text without
// quotes splits exactly as strings.Fields does on spaces, tabs and
// newlines.
func FuzzSplitShellWords(f *testing.F) {
	f.Add(`--iters 7 --expr "(i (ln x) x)"`)
	f.Add(`--expr '(a "b")' x`)
	f.Add(`"unclosed`)
	f.Fuzz(func(t *testing.T, s string) {
		words, err := splitShellWords(s)
		if err != nil {
			var ue *usageError
			if !errors.As(err, &ue) {
				t.Fatalf("not a usage error: %v", err)
			}
			return
		}
		if !strings.ContainsAny(s, `'"`) {
			want := strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' })
			if !slices.Equal(words, want) {
				t.Fatalf("%q split into %q, want %q", s, words, want)
			}
		}
	})
}
