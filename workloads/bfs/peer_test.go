package bfs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/planners"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const gunrockSample = `== some banner
GUNROCK_BFS_GRAPH file=/tmp/g.mtx vertices=100 csr_edges=380 mtx_symmetric=1 advance=2 filter=0
GUNROCK_BFS_WARMUP src=3 time_ms=0.500000
GUNROCK_BFS run=0 src=3 time_ms=0.120000 reached=90 depth=6 csr_edges=360 self_loops=0 input_edges=180 undirected=1
GUNROCK_BFS run=1 src=7 time_ms=0.110000 reached=90 depth=5 csr_edges=361 self_loops=1 input_edges=181 undirected=1
Source : 7
GPU Elapsed Time : 0.11 (ms)
`

func TestParseGunrockOutput(t *testing.T) {
	o, err := ParseGunrockOutput(strings.NewReader(gunrockSample))
	require.NoError(t, err)
	assert.Equal(t, GunrockGraph{File: "/tmp/g.mtx", Vertices: 100, CSREdges: 380, Symmetric: true, Advance: 2}, o.Graph)
	require.Len(t, o.Runs, 2)
	assert.Equal(t, GunrockRun{Run: 1, Src: 7, TimeMs: 0.11, Reached: 90, Depth: 5, CSREdges: 361, SelfLoops: 1, InputEdges: 181}, o.Runs[1])
	graph := "GUNROCK_BFS_GRAPH file=f vertices=1 csr_edges=0 mtx_symmetric=1 advance=2 filter=0\n"
	run := "GUNROCK_BFS run=0 src=0 time_ms=1 reached=1 depth=0 csr_edges=0 self_loops=0 input_edges=0 undirected=1\n"
	bad := map[string]struct {
		in          string
		line        int
		field, text string
	}{
		"no runs":        {graph, 0, "", "no GUNROCK_BFS run line"},
		"run first":      {run + graph, 1, "GUNROCK_BFS", "before the graph"},
		"two graphs":     {graph + graph + run, 2, "GUNROCK_BFS_GRAPH", "second graph"},
		"missing field":  {graph + strings.Replace(run, " depth=0", "", 1), 2, "depth", "missing"},
		"bad number":     {graph + strings.Replace(run, "reached=1", "reached=x", 1), 2, "reached", "not a non-negative"},
		"negative time":  {graph + strings.Replace(run, "time_ms=1", "time_ms=-1", 1), 2, "time_ms", "finite"},
		"nan time":       {graph + strings.Replace(run, "time_ms=1", "time_ms=NaN", 1), 2, "time_ms", "finite"},
		"bad flag":       {strings.Replace(graph, "mtx_symmetric=1", "mtx_symmetric=2", 1) + run, 1, "mtx_symmetric", "0 or 1"},
		"not key=value":  {graph + strings.Replace(run, "src=0", "src", 1), 2, "src", "key=value"},
		"repeated key":   {graph + strings.Replace(run, "src=0", "src=0 src=1", 1), 2, "src", "repeated"},
		"edges disagree": {graph + strings.Replace(run, "input_edges=0", "input_edges=5", 1), 2, "input_edges", "does not follow"},
		"huge run":       {graph + strings.Replace(run, "run=0", "run=99999999999", 1), 2, "run", "too large"},
	}
	for name, c := range bad {
		_, err := ParseGunrockOutput(strings.NewReader(c.in))
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), c.text, name)
		assert.Contains(t, err.Error(), "Fix:", name)
		var le *GunrockLineError
		if c.line > 0 {
			require.ErrorAs(t, err, &le, name)
			assert.Equal(t, c.line, le.Line, name)
			assert.Equal(t, c.field, le.Field, name)
		}
	}
	_, err = ParseGunrockOutput(strings.NewReader(graph + strings.Repeat("x", 2<<20) + "\n" + run))
	assert.Error(t, err, "a line over the scanner's limit")
}

func FuzzParseGunrockOutput(f *testing.F) {
	f.Add([]byte(gunrockSample))
	f.Add([]byte("GUNROCK_BFS_GRAPH file=f vertices=1\nGUNROCK_BFS run=0"))
	f.Add([]byte("GUNROCK_BFS run=0 src=1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		o, err := ParseGunrockOutput(strings.NewReader(string(data)))
		if err != nil {
			return
		}
		if len(o.Runs) == 0 {
			t.Fatalf("accepted output without runs: %q", data)
		}
		for _, r := range o.Runs {
			if r.TimeMs < 0 || r.TimeMs != r.TimeMs {
				t.Fatalf("accepted time %v", r.TimeMs)
			}
		}
	})
}

// fakeGunrock returns an exec that prints what the patched Gunrock binary
// would for g: the graph line and one run line per source, from the CPU
// BFS, with edit applied to each run's fields (nil: none).
func fakeGunrock(t *testing.T, g *frontier.CSR, edit func(k int, fields map[string]string)) func(context.Context, string, []string, []string, io.Writer) error {
	return func(_ context.Context, _ string, args, env []string, out io.Writer) error {
		require.Equal(t, []string{"GUNROCK_WARMUP=1"}, env)
		require.Len(t, args, 4)
		require.Equal(t, "-m", args[0])
		data, err := os.ReadFile(args[1])
		require.NoError(t, err)
		back, err := frontier.ParseMatrixMarket(data, g.Name, frontier.DefaultLimits())
		require.NoError(t, err)
		require.Equal(t, g.Offsets, back.Offsets, "the .mtx file is the graph")
		fmt.Fprintf(out, "GUNROCK_BFS_GRAPH file=%s vertices=%d csr_edges=%d mtx_symmetric=1 advance=2 filter=0\n", args[1], g.NumVertices(), g.NumEdgeEntries())
		for k, s := range strings.Split(args[3], ",") {
			src, err := strconv.Atoi(s)
			require.NoError(t, err)
			lv, err := frontier.BFS(g, int32(src))
			require.NoError(t, err)
			st := frontier.Stats(g, lv)
			f := map[string]string{"run": strconv.Itoa(k), "src": s, "time_ms": "0.25", "reached": strconv.Itoa(st.Reached),
				"depth": strconv.Itoa(st.Levels - 1), "csr_edges": strconv.FormatUint(2*st.Edges, 10), "self_loops": "0",
				"input_edges": strconv.FormatUint(st.Edges, 10), "undirected": "1"}
			if edit != nil {
				edit(k, f)
			}
			fmt.Fprintf(out, "GUNROCK_BFS run=%s src=%s time_ms=%s reached=%s depth=%s csr_edges=%s self_loops=%s input_edges=%s undirected=%s\n",
				f["run"], f["src"], f["time_ms"], f["reached"], f["depth"], f["csr_edges"], f["self_loops"], f["input_edges"], f["undirected"])
		}
		return nil
	}
}

// executable writes an empty executable file.
func executable(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "bfs")
	require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755))
	return p
}

// TestBenchPeerOnFake runs the benchmark with the Gunrock arm over a stand-
// in for the binary: its samples are recorded as the external arm with the
// reference's checksum; a binary that is missing, fails, or whose runs
// disagree with the reference is an error, never a dropped arm.
func TestBenchPeerOnFake(t *testing.T) {
	x, _ := newFakeExecutor(t, 8<<30, 31)
	g, err := frontier.Kronecker(9, 16, 4)
	require.NoError(t, err)
	roots, err := frontier.Roots(g, 3, 2)
	require.NoError(t, err)
	dir := t.TempDir()
	cfg := BenchConfig{Samples: 2, Arms: []Arm{ArmMegakernel}, Peer: &PeerConfig{Binary: executable(t), Dir: dir, exec: fakeGunrock(t, g, nil)}, Tune: true}
	res, err := Bench(x, g, roots, cfg)
	require.NoError(t, err)
	require.NotNil(t, res.Tuning, "the megakernel was tuned")
	require.Len(t, res.Tuning.Trials, 18, "a direction-optimizing session: both keep budgets level-synchronous, then 16 top-down settings")
	for i, tr := range res.Tuning.Trials {
		assert.Equal(t, i >= 2, tr.Setting.TopDown, tr.Setting.String())
		if !tr.Setting.TopDown {
			assert.Equal(t, tr.Levels, tr.Barriers, "level-synchronous: one barrier per level")
		}
	}
	assert.Equal(t, res.Tuning.Chosen, res.Megakernel)
	cfg.Tune = false
	var rows int
	for _, s := range res.Samples {
		if s.Arm == PeerArm {
			rows++
			assert.Equal(t, res.ReferenceChecksum, s.Checksum)
			assert.InDelta(t, 3*0.25e6, s.WallNs, 1)
		}
	}
	assert.Equal(t, 2, rows)
	require.NotNil(t, res.Peer)
	assert.Equal(t, 6, res.Peer.Runs)
	assert.Positive(t, res.Summary.GunrockSpeedup)
	assert.FileExists(t, filepath.Join(dir, g.Name+".mtx"), "--peer-dir keeps the input")
	assert.FileExists(t, filepath.Join(dir, g.Name+".roots"))

	failures := map[string]*PeerConfig{
		"missing binary": {Binary: filepath.Join(t.TempDir(), "nope")},
		"not executable": {Binary: func() string {
			p := filepath.Join(t.TempDir(), "bfs")
			require.NoError(t, os.WriteFile(p, nil, 0o644))
			return p
		}()},
		"fails": {Binary: executable(t), exec: func(context.Context, string, []string, []string, io.Writer) error {
			return errors.New("exit status 1")
		}},
		"reached": {Binary: executable(t), exec: fakeGunrock(t, g, func(k int, f map[string]string) {
			if k == 4 {
				f["reached"] = "1"
			}
		})},
		"source": {Binary: executable(t), exec: fakeGunrock(t, g, func(k int, f map[string]string) { f["src"] = "0" })},
		"no runs": {Binary: executable(t), exec: func(_ context.Context, _ string, _, _ []string, out io.Writer) error {
			_, err := io.WriteString(out, "Error: Invalid source\n")
			return err
		}},
		"too much output": {Binary: executable(t), MaxOutputBytes: 100, exec: fakeGunrock(t, g, nil)},
	}
	for name, pc := range failures {
		cfg.Peer = pc
		_, err := Bench(x, g, roots, cfg)
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), "gunrock", name)
		assert.Contains(t, err.Error(), "Fix:", name)
	}
}

// TestBenchBatchOnFake runs the benchmark with multi-source passes: the
// arm's samples carry the reference's checksum, the summary its speedup,
// and a batch that differs from the roots or does not fit is refused.
func TestBenchBatchOnFake(t *testing.T) {
	x, _ := newFakeExecutor(t, 8<<30, 32)
	g, err := frontier.Kronecker(10, 16, 5)
	require.NoError(t, err)
	roots, err := frontier.Roots(g, 40, 2)
	require.NoError(t, err)
	res, err := Bench(x, g, roots, BenchConfig{Samples: 2, Arms: []Arm{ArmHostLoop}, Batch: 40, BatchWidth: 32})
	require.NoError(t, err)
	n := 0
	for _, s := range res.Samples {
		if s.Arm == ArmMultiSource {
			n++
			assert.Equal(t, res.ReferenceChecksum, s.Checksum)
			assert.Zero(t, s.TimedUploads+s.TimedAllocations+s.TimedHostSyncs)
		}
	}
	assert.Equal(t, 2, n)
	require.NotNil(t, res.MultiSource)
	assert.Equal(t, 2, res.MultiSource.Run.Passes)
	assert.Positive(t, res.Summary.MultiSourceSpeedup)
	assert.Positive(t, res.Summary.BottomUpLevels, "Kronecker levels go bottom-up")
	assert.Len(t, res.Directions, len(roots))
	require.NotEmpty(t, res.Sessions)
	for _, a := range res.Sessions {
		assert.Empty(t, a.Check.Mismatches(), "the session plan of %s holds without the multi-source buffers", a.Arm)
	}
	_, err = Bench(x, g, roots, BenchConfig{Samples: 1, Batch: 39})
	require.ErrorContains(t, err, "a batch of 39 roots but 40 roots")
	probe, err := NewSession(x, g, Config{})
	require.NoError(t, err)
	req, err := probe.multiSourceRequest(40, 32, msHubCount(g))
	require.NoError(t, err)
	need, err := planners.PlanMultiSourceBFS(req)
	require.NoError(t, err)
	require.NoError(t, probe.Close())
	_, err = Bench(x, g, roots, BenchConfig{Samples: 1, Batch: 40, Session: Config{MaxResidentBytes: need.ResidentBytes - 1}})
	require.ErrorContains(t, err, "multi-source BFS over")
	require.ErrorContains(t, err, fmt.Sprint(need.ResidentBytes))
}
