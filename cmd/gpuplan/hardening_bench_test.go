package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/internal/quote"
	"github.com/gpuplan/gpuplan/workloads/rebuild"
)

// TestBenchRefusalsHaveFix walks every usage error of 'gpuplan bench' that
// a machine without a GPU can reach: each exits 2 with a "Fix:" sentence.
func TestBenchRefusalsHaveFix(t *testing.T) {
	dump, _, _ := unpackEgg(t)
	f := func(args ...string) []string { return append([]string{"frontier", "--graph", "grid:4"}, args...) }
	g := func(args ...string) []string { return append([]string{"egraph", "--egraph", "gen:10"}, args...) }
	tests := map[string][]string{
		"no benchmark":              {},
		"flags first":               {"--graph", "grid:4"},
		"unknown benchmark":         {"pagerank", "--graph", "grid:4"},
		"no graph":                  {"frontier"},
		"bad graph":                 {"frontier", "--graph", "cube:3"},
		"unknown flag":              f("--bogus"),
		"bad flag value":            f("--roots", "x"),
		"extra argument":            f("more"),
		"zero roots":                f("--roots", "0"),
		"bad root id":               f("--root-ids", "1,x"),
		"zero samples":              f("--samples", "0"),
		"check every":               f("--check-every", "0"),
		"chunk":                     f("--chunk", "0"),
		"mega threads":              f("--mega-threads", "100"),
		"mega blocks per sm":        f("--mega-blocks-per-sm", "-1"),
		"mega ahead":                f("--mega-ahead", "-1"),
		"mega ahead big":            f("--mega-ahead", "65537"),
		"barrier levels":            f("--barrier-levels", "-1"),
		"max graph bytes":           f("--max-graph-bytes", "0"),
		"max load bytes":            f("--max-load-bytes", "0"),
		"vertices per byte":         f("--vertices-per-byte", "0"),
		"copy":                      f("--copy-mib", "-1"),
		"device":                    f("--device", "-1"),
		"bad arm":                   f("--arms", "host-loop,warp-drive"),
		"repeated arm":              f("--arms", "host-loop,host-loop"),
		"direction":                 f("--direction", "sideways"),
		"mega keep":                 f("--mega-keep", "300"),
		"batch":                     f("--batch", "-1"),
		"batch roots":               f("--batch", "64", "--roots", "16"),
		"batch width":               f("--batch", "4", "--batch-width", "16"),
		"batch width alone":         f("--batch-width", "32"),
		"peer timeout":              f("--peer-gunrock", "x", "--peer-timeout", "0s"),
		"peer dir alone":            f("--peer-dir", "x"),
		"peer samples alone":        f("--peer-samples", "3"),
		"peer samples range":        f("--peer-gunrock", "x", "--peer-samples", "-1"),
		"zero devices":              f("--devices", "0"),
		"many devices":              f("--devices", "65"),
		"negative simulate":         f("--simulate-devices", "-2"),
		"devices and simulate":      f("--devices", "2", "--simulate-devices", "2"),
		"bad partition":             f("--devices", "2", "--partition", "random"),
		"partitioned ignores arms":  f("--devices", "2", "--arms", "host-loop"),
		"egraph no input":           {"egraph"},
		"egraph unknown flag":       g("--bogus"),
		"egraph extra argument":     g("more"),
		"egraph bad input":          {"egraph", "--egraph", "graph:3"},
		"egraph no e-nodes":         {"egraph", "--egraph", "gen:0"},
		"egraph no file":            {"egraph", "--egraph", "file:"},
		"egraph zero samples":       g("--samples", "0"),
		"egraph cpu samples":        g("--cpu-samples", "-1"),
		"egraph check every":        g("--check-every", "0"),
		"egraph threads":            g("--threads", "100"),
		"egraph persistent threads": g("--persistent-threads", "2048"),
		"egraph blocks per sm":      g("--persistent-blocks-per-sm", "99"),
		"egraph floor":              g("--floor-rounds", "-1"),
		"egraph peer samples":       {"egraph", "--egraph", "file:x", "--peer-samples", "0"},
		"egraph peer on gen":        g("--peer-egg", "/bin/true"),
		"egraph peer args alone":    g("--peer-args", "--iters 7"),
		"egraph peer samples alone": g("--peer-samples", "5"),
		"egraph max input":          g("--max-input-bytes", "0"),
		"egraph device":             g("--device", "-1"),
		"egraph bad arm":            g("--arms", "megakernel"),
		"egraph repeated arm":       g("--arms", "persistent,persistent"),
		"egraph peer on snapshot":   {"egraph", "--egraph", "file:testdata/egraph/snapshot.json", "--peer-egg", "/bin/true", "--samples", "1"},
		"egraph unclosed peer args": {"egraph", "--egraph", "file:" + dump, "--peer-egg", "/bin/true", "--peer-args", `--expr "(a b`},
	}
	for name, args := range tests {
		t.Run(name, func(t *testing.T) {
			_, errs, code := runCLI(t, "", append([]string{"bench"}, args...)...)
			require.Equal(t, exitUsage, code, errs)
			lines := strings.Split(strings.TrimSpace(errs), "\n")
			last := lines[len(lines)-1]
			assert.True(t, strings.HasPrefix(last, "gpuplan bench"), "the error is the last line: %q", errs)
			assert.Contains(t, last, "Fix:")
		})
	}
}

// TestBenchEgraphOutsideACheckout runs 'gpuplan bench egraph' from a
// directory with no go.mod above it: flags are parsed and checked first;
// the module root is needed only for the fingerprint -o records, and its
// absence is then an error naming --source-root.
func TestBenchEgraphOutsideACheckout(t *testing.T) {
	repo, err := filepath.Abs("../..")
	require.NoError(t, err)
	noWorkload := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(noWorkload, "go.mod"), []byte("module example.com/m\n"), 0o644))
	t.Chdir(t.TempDir())
	if _, err := findModuleRoot("."); err == nil {
		t.Skip("the temporary directory is inside a Go module")
	}
	for _, c := range []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"help", []string{"--help"}, exitOK, nil},
		{"unknown flag", []string{"--bogus"}, exitUsage, []string{"-bogus", "Fix:"}},
		{"bad value", []string{"--egraph", "gen:10", "--samples", "0"}, exitUsage, []string{"--samples 0", "Fix:"}},
		{"no module root", []string{"--egraph", "gen:10", "-o", "x.csv"}, exitFailure, []string{"holds go.mod", "--source-root", "Fix:"}},
		{"source root without go.mod", []string{"--egraph", "gen:10", "-o", "x.csv", "--source-root", "."}, exitFailure, []string{`--source-root "." holds no go.mod`, "Fix:"}},
		{"source root without the workload", []string{"--egraph", "gen:10", "-o", "x.csv", "--source-root", noWorkload}, exitFailure,
			[]string{"--source-root " + quote.Echo(noWorkload) + " has no workloads/rebuild", "Fix:"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, errs, code := runCLI(t, "", append([]string{"bench", "egraph"}, c.args...)...)
			require.Equal(t, c.code, code, "stdout: %s\nstderr: %s", out, errs)
			for _, w := range c.want {
				assert.Contains(t, errs, w)
			}
		})
	}
	for _, args := range [][]string{{"egraph", "--egraph", "gen:10", "--samples", "1"}, {"frontier", "--graph", "grid:4", "--samples", "1"}} {
		_, errs, code := runCLI(t, "", append([]string{"bench"}, args...)...)
		assert.Equal(t, exitFailure, code)
		assert.NotContains(t, errs, "go.mod", "without -o no module root is needed")
		assertNoGPUSentence(t, errs)
		_, errs, code = runCLI(t, "", append(append([]string{"bench"}, args...), "-o", "x.csv")...)
		assert.Equal(t, exitFailure, code)
		assert.Contains(t, errs, "--source-root DIR")
	}

	for _, args := range [][]string{{}, {"-o", "x.csv", "--source-root", repo}} {
		var out, errb bytes.Buffer
		e := &env{stdout: &out, stderr: &errb}
		o, err := parseBenchEgraphArgs(e, append([]string{"--egraph", "gen:200", "--samples", "1", "--cpu-samples", "0", "--floor-rounds", "0"}, args...))
		require.NoError(t, err)
		o.open = openFake(t, rebuild.NewFake)
		require.NoError(t, benchEgraph(e, o), errb.String())
		assert.Contains(t, out.String(), "| persistent |")
	}
	assert.FileExists(t, "x.csv")
}

// TestBenchPartitionedRefusesIgnoredFlags checks that the partitioned BFS
// refuses the flags of the single-GPU arms, which it would ignore, naming
// them, and accepts its own.
func TestBenchPartitionedRefusesIgnoredFlags(t *testing.T) {
	e := &env{stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"metrics", []string{"--devices", "2", "--metrics", "m.prom"}, "--metrics does not apply with --devices 2"},
		{"arms", []string{"--devices", "4", "--arms", "megakernel"}, "--arms does not apply with --devices 4"},
		{"mega ahead", []string{"--devices", "2", "--mega-ahead", "4"}, "--mega-ahead does not apply with --devices 2"},
		{"mega tune off", []string{"--devices", "2", "--mega-tune=false"}, "--mega-tune does not apply"},
		{"every mega flag", []string{"--devices", "2", "--mega-threads", "256", "--mega-blocks-per-sm", "1", "--mega-fixed-ahead", "--mega-keep", "512", "--mega-top-down", "--mega-async"},
			"--mega-async, --mega-blocks-per-sm, --mega-fixed-ahead, --mega-keep, --mega-threads, --mega-top-down do not apply with --devices 2"},
		{"several", []string{"--devices", "2", "--metrics", "-", "--arms", "host-loop", "--mega-keep", "256"}, "--arms, --mega-keep, --metrics do not apply with --devices 2"},
		{"device with devices", []string{"--devices", "2", "--device", "1"}, "--device does not apply with --devices 2"},
		{"simulated", []string{"--simulate-devices", "3", "--arms", "host-loop", "--batch", "4"}, "--arms, --batch do not apply with --simulate-devices 3"},
		{"direction", []string{"--devices", "2", "--direction", "top-down"}, "--direction does not apply"},
		{"peer", []string{"--devices", "2", "--peer-gunrock", "/opt/bfs"}, "--peer-gunrock does not apply"},
		{"copy ceiling", []string{"--simulate-devices", "2", "--copy-mib", "1024"}, "--copy-mib does not apply with --simulate-devices 2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseBenchArgs(e, append([]string{"frontier", "--graph", "kron:10"}, tc.args...))
			var ue *usageError
			require.ErrorAs(t, err, &ue)
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), "Fix: drop")
		})
	}
	for _, args := range [][]string{
		{"--devices", "2", "--roots", "4", "--samples", "3", "--partition", "blocked", "--seed", "7", "-o", "x.csv", "--summary", "x.md"},
		{"--simulate-devices", "2", "--device", "1"},
		{"--arms", "host-loop", "--metrics", "m.prom", "--mega-ahead", "4", "--device", "1"},
	} {
		_, err := parseBenchArgs(e, append([]string{"frontier", "--graph", "kron:10"}, args...))
		assert.NoError(t, err, args)
	}
}
