package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpuplan/gpuplan/evidence"
	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/occupancy"
	"github.com/gpuplan/gpuplan/workloads/bfs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBenchArgs(t *testing.T) {
	e := &env{stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}}
	o, err := parseBenchArgs(e, []string{"frontier", "--graph", "grid:2048", "--roots", "16", "--samples", "30", "-o", "x.csv"})
	require.NoError(t, err)
	assert.Equal(t, "grid-2048", o.spec.Name())
	assert.Equal(t, 16, o.roots)
	assert.Equal(t, 30, o.bench.Samples)
	assert.Equal(t, "x.csv", o.out)
	assert.Equal(t, bfs.DefaultArms(), o.bench.Arms)
	assert.False(t, o.progress, "a buffer is not a terminal")
	assert.EqualValues(t, 1<<30, o.bench.CopyBytes)
	assert.Equal(t, bfs.DefaultCheckEvery, o.bench.Session.CheckEvery)

	assert.Equal(t, bfs.DirectionAuto, o.bench.Session.Direction)
	assert.Zero(t, o.bench.Batch)
	assert.Nil(t, o.bench.Peers)
	assert.True(t, o.bench.Tune, "the megakernel is tuned unless its setting is given")
	assert.Zero(t, o.bench.Session.MegakernelKeep)

	tuning := map[string]struct {
		args []string
		tune bool
	}{
		"keep given":         {[]string{"--mega-keep", "512"}, false},
		"ahead given":        {[]string{"--mega-ahead", "4"}, false},
		"fixed given":        {[]string{"--mega-fixed-ahead"}, false},
		"top-down given":     {[]string{"--mega-top-down"}, false},
		"async given":        {[]string{"--mega-async", "--direction", "top-down"}, false},
		"tune asked as well": {[]string{"--mega-keep", "256", "--mega-tune"}, true},
		"tune off":           {[]string{"--mega-tune=false"}, false},
	}
	for name, c := range tuning {
		o, err := parseBenchArgs(e, append([]string{"frontier", "--graph", "road:64"}, c.args...))
		require.NoError(t, err, name)
		assert.Equal(t, c.tune, o.bench.Tune, name)
	}
	o, err = parseBenchArgs(e, []string{"frontier", "--graph", "road:64", "--mega-keep", "512"})
	require.NoError(t, err)
	assert.Equal(t, bfs.MaxMegakernelKeep, o.bench.Session.MegakernelKeep)
	assert.False(t, o.bench.Session.MegakernelTopDown)
	o, err = parseBenchArgs(e, []string{"frontier", "--graph", "rgg:1000", "--mega-top-down"})
	require.NoError(t, err)
	assert.True(t, o.bench.Session.MegakernelTopDown)

	o, err = parseBenchArgs(e, []string{"frontier", "--graph", "kron:22", "--batch", "64", "--batch-width", "32", "--direction", "top-down",
		"--mega-fixed-ahead", "--peer-gunrock", "/opt/bfs", "--peer-dir", "/tmp/peer"})
	require.NoError(t, err)
	assert.Equal(t, 64, o.roots, "--batch K measures K roots")
	assert.Equal(t, 64, o.bench.Batch)
	assert.Equal(t, 32, o.bench.BatchWidth)
	assert.Equal(t, bfs.DirectionTopDown, o.bench.Session.Direction)
	assert.True(t, o.bench.Session.MegakernelFixedAhead)
	require.Len(t, o.bench.Peers, 1, "--peer-gunrock PATH is --peer gunrock=PATH")
	assert.Equal(t, bfs.PeerConfig{Kind: "gunrock", Binary: "/opt/bfs", Dir: "/tmp/peer", Timeout: bfs.DefaultPeerTimeout}, o.bench.Peers[0])

	o, err = parseBenchArgs(e, []string{"frontier", "--graph", "kron:22", "--peer", "gapbs=/g/bfs_roots", "--peer-gunrock", "/opt/bfs",
		"--peer", "blest=/b/blest_roots", "--peer-samples", "3", "--peer-timeout", "1m"})
	require.NoError(t, err)
	var kinds []string
	for _, p := range o.bench.Peers {
		kinds = append(kinds, p.Kind+"="+p.Binary)
		assert.Equal(t, 3, p.Samples)
		assert.Equal(t, time.Minute, p.Timeout)
	}
	assert.Equal(t, []string{"gunrock=/opt/bfs", "gapbs=/g/bfs_roots", "blest=/b/blest_roots"}, kinds)

	o, err = parseBenchArgs(e, []string{"frontier", "--graph", "kron:10", "--root-ids", "3, 5", "--arms", "megakernel,host-loop-scan"})
	require.NoError(t, err)
	assert.Equal(t, []int64{3, 5}, o.rootIDs)
	assert.Equal(t, 2, o.roots)
	assert.Equal(t, []bfs.Arm{bfs.ArmMegakernel, bfs.ArmHostLoopScan}, o.bench.Arms)

	bad := map[string][]string{
		"no benchmark":   {},
		"flags first":    {"--graph", "grid:4"},
		"unknown bench":  {"pagerank", "--graph", "grid:4"},
		"no graph":       {"frontier"},
		"bad graph":      {"frontier", "--graph", "cube:3"},
		"zero roots":     {"frontier", "--graph", "grid:4", "--roots", "0"},
		"bad root id":    {"frontier", "--graph", "grid:4", "--root-ids", "1,x"},
		"zero samples":   {"frontier", "--graph", "grid:4", "--samples", "0"},
		"bad arm":        {"frontier", "--graph", "grid:4", "--arms", "host-loop,warp-drive"},
		"repeated arm":   {"frontier", "--graph", "grid:4", "--arms", "host-loop,host-loop"},
		"check every":    {"frontier", "--graph", "grid:4", "--check-every", "0"},
		"chunk":          {"frontier", "--graph", "grid:4", "--chunk", "0"},
		"mega per sm":    {"frontier", "--graph", "grid:4", "--mega-blocks-per-sm", "-1"},
		"mega threads":   {"frontier", "--graph", "grid:4", "--mega-threads", "100"},
		"mega ahead":     {"frontier", "--graph", "grid:4", "--mega-ahead", "-1"},
		"mega ahead big": {"frontier", "--graph", "grid:4", "--mega-ahead", "65537"},
		"mega keep":      {"frontier", "--graph", "grid:4", "--mega-keep", "300"},
		"mega keep low":  {"frontier", "--graph", "grid:4", "--mega-keep", "-256"},
		"copy":           {"frontier", "--graph", "grid:4", "--copy-mib", "-1"},
		"device":         {"frontier", "--graph", "grid:4", "--device", "-1"},
		"extra argument": {"frontier", "--graph", "grid:4", "more"},
		"zero limit":     {"frontier", "--graph", "grid:4", "--vertices-per-byte", "0"},
		"direction":      {"frontier", "--graph", "grid:4", "--direction", "sideways"},
		"batch":          {"frontier", "--graph", "grid:4", "--batch", "-1"},
		"batch big":      {"frontier", "--graph", "grid:4", "--batch", "5000"},
		"batch roots":    {"frontier", "--graph", "grid:4", "--batch", "64", "--roots", "16"},
		"batch ids":      {"frontier", "--graph", "grid:4", "--batch", "3", "--root-ids", "1,2"},
		"batch width":    {"frontier", "--graph", "grid:4", "--batch", "4", "--batch-width", "16"},
		"width alone":    {"frontier", "--graph", "grid:4", "--batch-width", "32"},
		"peer dir alone": {"frontier", "--graph", "grid:4", "--peer-dir", "x"},
		"peer timeout":   {"frontier", "--graph", "grid:4", "--peer-gunrock", "x", "--peer-timeout", "0s"},
		"peer samples":   {"frontier", "--graph", "grid:4", "--peer-samples", "3"},
		"peer unknown":   {"frontier", "--graph", "grid:4", "--peer", "ligra=/x"},
		"peer no path":   {"frontier", "--graph", "grid:4", "--peer", "gapbs"},
		"peer twice":     {"frontier", "--graph", "grid:4", "--peer", "gunrock=/x", "--peer-gunrock", "/y"},
	}
	for name, args := range bad {
		_, err := parseBenchArgs(e, args)
		var ue *usageError
		require.ErrorAs(t, err, &ue, name)
	}
}

// assertNoGPUSentence checks the error of a GPU command that could not
// run: the pure-Go build names the CUDA build as the fix; the CUDA build,
// on a machine without a GPU or without the driver, says which is missing.
func assertNoGPUSentence(t *testing.T, errs string) {
	t.Helper()
	if !buildHasCUDA {
		assert.Contains(t, errs, "built without CUDA support")
		return
	}
	assert.Regexp(t, `no CUDA-capable GPU|NVIDIA driver library|NVIDIA driver`, errs)
}

func TestBenchCommand(t *testing.T) {
	out, _, code := runCLI(t, "", "bench", "--help")
	assert.Equal(t, exitOK, code)
	assert.Contains(t, out, "host-loop")
	_, errs, code := runCLI(t, "", "bench", "frontier", "--graph", "grid:8")
	if code == exitFailure {
		assertNoGPUSentence(t, errs)
		if !buildHasCUDA {
			assert.Contains(t, errs, "Fix: make build-cuda")
		}
	}
	_, _, code = runCLI(t, "", "bench", "frontier")
	assert.Equal(t, exitUsage, code)
}

func TestBenchHelpers(t *testing.T) {
	assert.Equal(t, "580.159.04", driverVersionFromProc("NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Release Build"))
	assert.Equal(t, "580.82.07", driverVersionFromProc("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.82.07  Release Build"))
	assert.Equal(t, "", driverVersionFromProc("garbage"))
	root, err := findModuleRoot(".")
	require.NoError(t, err)
	assert.FileExists(t, root+"/go.mod")
	var b bytes.Buffer
	p := &progressBar{w: &b, on: true}
	p.update(1, 2, "one")
	assert.Contains(t, b.String(), " 50% one")
	p.update(2, 2, "two")
	assert.Contains(t, b.String(), "100%")
	q := &progressBar{w: &b, on: false}
	b.Reset()
	q.update(1, 2, "x")
	assert.Empty(t, b.String())
	assert.False(t, isTerminal(&b))
}

// TestBenchOnFake runs the whole benchmark command over the emulated
// kernels: the evidence CSV it writes is valid, every arm's checksum is
// the reference's, the plans and the session checks are in it, and the
// session plan's predictions equal the telemetry.
func TestBenchOnFake(t *testing.T) {
	csv := filepath.Join(t.TempDir(), "grid.csv")
	metrics := filepath.Join(t.TempDir(), "bench.prom")
	out, log := runFakeBench(t, "frontier", "--graph", "grid:24", "--roots", "3", "--samples", "2", "--copy-mib", "1", "-o", csv, "--metrics", metrics)
	assert.Contains(t, out, "| megakernel |")
	assert.Contains(t, out, "arm plan: megakernel (topology WarpSparseFrontier)")
	assert.NotContains(t, out, "does not match", "the session plans hold on the fake")
	assert.Contains(t, log, "session megakernel, predicted/measured")
	data, err := os.ReadFile(csv)
	require.NoError(t, err)
	rows, err := evidence.ReadSamples(csv, bytes.NewReader(data))
	require.NoError(t, err)
	assert.Len(t, rows, 3*2+10, "two samples per arm and ten copies")
	assert.Contains(t, string(data), "# plans {")
	assert.Contains(t, string(data), "# sessions [")
	assert.Regexp(t, `# roots \[\{"root":\d+,"levels":\d+,"reached":\d+,"edges":[1-9]\d*\}`, string(data), "each root's traversed edges")
	assert.Contains(t, log, "megakernel tuning from root", "the megakernel is tuned by default")
	assert.Contains(t, out, "megakernel setting: ")
	assert.Contains(t, out, "tuned from root")
	assert.Contains(t, string(data), "# megakernel-tuning {\"root\":")
	// The tuning times the emulation on the wall clock: it may pick an
	// asynchronous setting or a barrier one.
	assert.Regexp(t, `# megakernel-setting \{("async":true,)?"ahead":\d+`, string(data))
	prom, err := os.ReadFile(metrics)
	require.NoError(t, err)
	assert.Contains(t, string(prom), "gpuplan_kernel_launches_total")
	requirePromtoolAccepts(t, prom)
}

// runFakeBench runs "gpuplan bench" with args over the BFS workload's
// emulated kernels and returns what it printed and logged.
func runFakeBench(t *testing.T, args ...string) (stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	e := &env{stdout: &out, stderr: &errb}
	o, err := parseBenchArgs(e, args)
	require.NoError(t, err)
	o.open = openFake(t, bfs.NewFake)
	require.NoError(t, benchFrontier(e, o), errb.String())
	return out.String(), errb.String()
}

// openFake returns an opener of executors over a workload's emulated
// kernels (its NewFake) on an H100 profile, for a command's open hook.
func openFake(t *testing.T, newFake func(occupancy.Device, uint64) *executor.Fake) func(int) (*executor.Executor, error) {
	return func(int) (*executor.Executor, error) {
		dev, err := occupancy.Lookup("h100")
		require.NoError(t, err)
		return executor.New(newFake(dev, 1), executor.Options{})
	}
}

// gunrockScript writes a stand-in for Gunrock's BFS binary that prints
// what the real one would for g from roots, samples times each: its graph
// line and one run line per source, from the CPU BFS.
func gunrockScript(t *testing.T, g *frontier.CSR, roots []int32, samples int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "#!/bin/sh\ncat <<'EOF'\nGUNROCK_BFS_GRAPH file=g.mtx vertices=%d csr_edges=%d mtx_symmetric=1 advance=2 filter=0\n", g.NumVertices(), g.NumEdgeEntries())
	for s := range samples {
		for i, r := range roots {
			lv, err := frontier.BFS(g, r)
			require.NoError(t, err)
			st := frontier.Stats(g, lv)
			fmt.Fprintf(&b, "GUNROCK_BFS run=%d src=%d time_ms=0.5 reached=%d depth=%d csr_edges=%d self_loops=0 input_edges=%d undirected=1\n",
				s*len(roots)+i, r, st.Reached, st.Levels-1, 2*st.Edges, st.Edges)
		}
	}
	b.WriteString("EOF\n")
	p := filepath.Join(t.TempDir(), "bfs")
	require.NoError(t, os.WriteFile(p, []byte(b.String()), 0o755))
	return p
}

// benchGraphAndRoots builds the graph kron:8 and draws the n roots that
// the benchmark command draws for it with its default seed, 1.
func benchGraphAndRoots(t *testing.T, n int) (*frontier.CSR, []int32) {
	t.Helper()
	spec, err := frontier.ParseSpec("kron:8")
	require.NoError(t, err)
	g, err := spec.Build(1, frontier.DefaultLimits())
	require.NoError(t, err)
	roots, err := frontier.Roots(g, n, 1)
	require.NoError(t, err)
	return g, roots
}

// TestBenchBatchAndPeerOnFake runs the benchmark command with a multi-
// source batch and a stand-in Gunrock binary over the emulated kernels:
// the evidence holds the multi-source and gunrock arms with the
// reference's checksum, the directions, and the summary lines.
func TestBenchBatchAndPeerOnFake(t *testing.T) {
	g, roots := benchGraphAndRoots(t, 5)
	csv := filepath.Join(t.TempDir(), "kron.csv")
	table, _ := runFakeBench(t, "frontier", "--graph", "kron:8", "--batch", "5", "--samples", "2", "--copy-mib", "1", "--mega-tune=false",
		"--peer-gunrock", gunrockScript(t, g, roots, 3), "--peer-samples", "3", "-o", csv)
	assert.Contains(t, table, "| multi-source |")
	assert.Contains(t, table, "| gunrock |")
	assert.Contains(t, table, "bottom-up (planners.PlanBFSDirection)")
	assert.Contains(t, table, "multi-source: 5 roots in 1 passes of 32")
	assert.Contains(t, table, "gunrock (external")
	assert.Contains(t, table, "megakernel: 1.00 levels per grid barrier")
	data, err := os.ReadFile(csv)
	require.NoError(t, err)
	rows, err := evidence.ReadSamples(csv, bytes.NewReader(data))
	require.NoError(t, err)
	arms := map[string]int{}
	for _, r := range rows {
		arms[r.Arm]++
		if r.Arm != "copy-ceiling" {
			assert.Equal(t, rows[0].Checksum, r.Checksum, r.Arm)
		}
	}
	assert.Equal(t, map[string]int{"host-loop": 2, "device-loop": 2, "megakernel": 2, "multi-source": 2, "gunrock": 3, "copy-ceiling": 10}, arms)
	assert.True(t, evidence.IsExternalArm("gunrock"))
	for _, line := range []string{"# directions [", "# multi-source {", "# peers [", "# megakernel {"} {
		assert.Contains(t, string(data), line)
	}
}

// TestBenchMegakernelTopDownOnFake runs the benchmark command with the
// megakernel set top-down on a direction-optimizing graph: it runs ahead,
// the setting line says top-down, and the directions line says whose
// decisions were held to the reference's.
func TestBenchMegakernelTopDownOnFake(t *testing.T) {
	table, _ := runFakeBench(t, "frontier", "--graph", "kron:8", "--roots", "3", "--samples", "1", "--copy-mib", "1",
		"--arms", "device-loop,megakernel", "--mega-top-down", "--mega-ahead", "4", "--mega-fixed-ahead")
	assert.Contains(t, table, "megakernel setting: top-down, fixed 4, keep 256 (as configured)")
	assert.Contains(t, table, "every arm's but the top-down megakernel's decisions equal the CPU reference's")
	assert.NotContains(t, table, "megakernel: 1.00 levels per grid barrier", "a top-down megakernel runs ahead")
}

// TestPeersAreExternalArms holds the BFS peers the benchmark knows to the
// arms the evidence treats as peer tools.
func TestPeersAreExternalArms(t *testing.T) {
	for _, name := range bfs.PeerNames() {
		assert.True(t, evidence.IsExternalArm(name), name)
	}
}
