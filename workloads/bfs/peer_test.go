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
	"time"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/frontier"
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

const gapbsSample = `== OMP_NUM_THREADS=16
GAPBS_BFS_GRAPH file=/tmp/g.mtx vertices=100 graph_edges=190 undirected=1 input_edges_total=190 threads=16
GAPBS_BFS_WARMUP src=3 time_s=0.000400000
GAPBS_BFS run=0 src=3 time_s=0.000120000 reached=90 depth=6 input_edges=180 graph_edges=180 verify=-
GAPBS_BFS run=1 src=3 time_s=0.000110000 reached=90 depth=6 input_edges=180 graph_edges=180 verify=-
`

const blestSample = `BLEST_BFS_GRAPH file=/tmp/g.mtx vertices=100 input_lines=190 csc_entries=380 undirected=1 csc_s=22.3 reorder_s=44.6 bvss_s=4.4
BLEST_BFS run=0 src=3 time_ms=0.303000 reached=90 depth=6 input_edges=180 graph_edges=380 verify=-
`

func mustPeer(t *testing.T, name string) PeerKind {
	k, err := LookupPeer(name)
	require.NoError(t, err)
	return k
}

func TestParsePeerOutput(t *testing.T) {
	o, err := ParsePeerOutput(mustPeer(t, "gunrock"), strings.NewReader(gunrockSample))
	require.NoError(t, err)
	assert.Equal(t, "/tmp/g.mtx", o.Graph.File)
	assert.EqualValues(t, 100, o.Graph.Vertices)
	assert.Equal(t, "380", o.Graph.Fields["csr_edges"])
	require.Len(t, o.Runs, 2)
	assert.Equal(t, PeerRun{Run: 1, Src: 7, TimeMs: 0.11, Reached: 90, Depth: 5, InputEdges: 181}, o.Runs[1])

	o, err = ParsePeerOutput(mustPeer(t, "gapbs"), strings.NewReader(gapbsSample))
	require.NoError(t, err)
	require.Len(t, o.Runs, 2)
	assert.InDelta(t, 0.12, o.Runs[0].TimeMs, 1e-9, "time_s is read as seconds")
	assert.Empty(t, o.Graph.Preprocessing)

	o, err = ParsePeerOutput(mustPeer(t, "blest"), strings.NewReader(blestSample))
	require.NoError(t, err)
	assert.Equal(t, map[string]float64{"csc": 22.3, "reorder": 44.6, "bvss": 4.4}, o.Graph.Preprocessing)
	r := PeerResult{Output: o.Graph}
	assert.InDelta(t, 71.3e9, r.PreprocessingNs(), 1)

	_, err = ParsePeerOutput(mustPeer(t, "gswitch"), strings.NewReader(gapbsSample))
	require.ErrorContains(t, err, "gswitch output has no GSWITCH_BFS run line", "another peer's lines are not this one's")
}

func TestParsePeerOutputRefuses(t *testing.T) {
	graph := "GUNROCK_BFS_GRAPH file=f vertices=1 csr_edges=0 mtx_symmetric=1 advance=2 filter=0\n"
	run := "GUNROCK_BFS run=0 src=0 time_ms=1 reached=1 depth=0 csr_edges=0 self_loops=0 input_edges=0 undirected=1\n"
	bad := map[string]struct {
		in          string
		line        int
		field, text string
	}{
		"no runs":           {graph, 0, "", "no GUNROCK_BFS run line"},
		"run first":         {run + graph, 1, "GUNROCK_BFS", "before the graph"},
		"two graphs":        {graph + graph + run, 2, "GUNROCK_BFS_GRAPH", "second graph"},
		"missing field":     {graph + strings.Replace(run, " depth=0", "", 1), 2, "depth", "missing"},
		"missing vertices":  {strings.Replace(graph, " vertices=1", "", 1) + run, 1, "vertices", "missing"},
		"bad number":        {graph + strings.Replace(run, "reached=1", "reached=x", 1), 2, "reached", "not a non-negative"},
		"negative time":     {graph + strings.Replace(run, "time_ms=1", "time_ms=-1", 1), 2, "time_ms", "finite"},
		"nan time":          {graph + strings.Replace(run, "time_ms=1", "time_ms=NaN", 1), 2, "time_ms", "finite"},
		"two times":         {graph + strings.Replace(run, "time_ms=1", "time_ms=1 time_s=1", 1), 2, "time_s", "beside time_ms"},
		"no time":           {graph + strings.Replace(run, " time_ms=1", "", 1), 2, "time_ms", "missing"},
		"bad preprocessing": {strings.Replace(graph, "filter=0", "filter=0 reorder_s=-3", 1) + run, 1, "reorder_s", "finite"},
		"not key=value":     {graph + strings.Replace(run, "src=0", "src", 1), 2, "src", "key=value"},
		"repeated key":      {graph + strings.Replace(run, "src=0", "src=0 src=1", 1), 2, "src", "repeated"},
		"edges disagree":    {graph + strings.Replace(run, "input_edges=0", "input_edges=5", 1), 2, "input_edges", "does not follow"},
		"huge run":          {graph + strings.Replace(run, "run=0", "run=99999999999", 1), 2, "run", "too large"},
	}
	for name, c := range bad {
		_, err := ParsePeerOutput(mustPeer(t, "gunrock"), strings.NewReader(c.in))
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), c.text, name)
		assert.Contains(t, err.Error(), "Fix:", name)
		var le *PeerLineError
		if c.line > 0 {
			require.ErrorAs(t, err, &le, name)
			assert.Equal(t, c.line, le.Line, name)
			assert.Equal(t, c.field, le.Field, name)
			assert.Equal(t, "gunrock", le.Peer, name)
		}
	}
	_, err := ParsePeerOutput(mustPeer(t, "gunrock"), strings.NewReader(graph+strings.Repeat("x", 2<<20)+"\n"+run))
	assert.Error(t, err, "a line over the scanner's limit")
}

func TestLookupPeer(t *testing.T) {
	for _, name := range []string{"gunrock", "gapbs", "gswitch", "blest"} {
		k := mustPeer(t, name)
		assert.Equal(t, name, k.Name)
		assert.True(t, strings.HasSuffix(k.Prefix, "_BFS"), k.Prefix)
		assert.NotEmpty(t, k.Build)
	}
	_, err := LookupPeer("ligra")
	require.ErrorContains(t, err, `unknown peer "ligra". Fix: use one of gunrock, gapbs, gswitch, blest`)
	_, err = LookupPeer("\x1b[2J" + strings.Repeat("a", 1000))
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "\x1b", "the escape is quoted")
	assert.Less(t, len(err.Error()), 300, "the name is cut")
}

func FuzzParsePeerOutput(f *testing.F) {
	f.Add("gunrock", []byte(gunrockSample))
	f.Add("gapbs", []byte(gapbsSample))
	f.Add("blest", []byte(blestSample))
	f.Add("gunrock", []byte("GUNROCK_BFS_GRAPH file=f vertices=1\nGUNROCK_BFS run=0"))
	f.Add("gswitch", []byte("GSWITCH_BFS run=0 src=1\n"))
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		k, err := LookupPeer(name)
		if err != nil {
			return
		}
		o, err := ParsePeerOutput(k, strings.NewReader(string(data)))
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
		for key, v := range o.Graph.Preprocessing {
			if v < 0 || v != v {
				t.Fatalf("accepted preprocessing %s=%v", key, v)
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

// benchInput returns a benchmark's input on a fake executor of 8 GiB
// (newFakeExecutor with seed): a Kronecker graph of scale and edge factor
// 16 (generator seed gseed) and nroots of its roots (frontier.Roots with
// rseed).
func benchInput(t *testing.T, seed uint64, scale int, gseed uint64, nroots int, rseed uint64) (*executor.Executor, *frontier.CSR, []int32) {
	t.Helper()
	x, _ := newFakeExecutor(t, 8<<30, seed)
	g, err := frontier.Kronecker(scale, 16, gseed)
	require.NoError(t, err)
	roots, err := frontier.Roots(g, nroots, rseed)
	require.NoError(t, err)
	return x, g, roots
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
	x, g, roots := benchInput(t, 31, 9, 4, 3, 2)
	dir := t.TempDir()
	cfg := BenchConfig{Samples: 2, Arms: []Arm{ArmMegakernel}, Peers: []PeerConfig{{Binary: executable(t), Dir: dir, exec: fakeGunrock(t, g, nil)}}, Tune: true}
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
	require.Len(t, res.Peers, 1)
	assert.Equal(t, 6, res.Peers[0].Runs)
	assert.Equal(t, "gunrock", res.Peers[0].Peer)
	assert.Positive(t, res.Summary.GunrockSpeedup)
	assert.FileExists(t, filepath.Join(dir, g.Name+".mtx"), "--peer-dir keeps the input")
	assert.FileExists(t, filepath.Join(dir, g.Name+".roots"))

	failures := map[string]PeerConfig{
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
		cfg.Peers = []PeerConfig{pc}
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
	x, g, roots := benchInput(t, 32, 10, 5, 40, 2)
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
	need := multiSourceNeed(t, x, g, 40, 32)
	_, err = Bench(x, g, roots, BenchConfig{Samples: 1, Batch: 40, Session: Config{MaxResidentBytes: need.ResidentBytes - 1}})
	require.ErrorContains(t, err, "multi-source BFS over")
	require.ErrorContains(t, err, fmt.Sprint(need.ResidentBytes))
}

// fakeRootMajor returns an exec that prints what a root-major peer driver
// (gapbs, gswitch, blest) would for g: it reads the graph and the roots
// file from its arguments, runs each root -n times in a row from the CPU
// BFS, and reports preprocessing when pre is set.
func fakeRootMajor(t *testing.T, g *frontier.CSR, k PeerKind, pre bool, edit func(j int, f map[string]string)) func(context.Context, string, []string, []string, io.Writer) error {
	return func(_ context.Context, _ string, args, _ []string, out io.Writer) error {
		graph := args[0]
		if args[0] == "-f" {
			graph = args[1]
		}
		var rootsFile string
		repeat := 0
		for i := range args[:len(args)-1] {
			switch args[i] {
			case "-R":
				rootsFile = strings.TrimPrefix(args[i+1], "@")
			case "-n":
				repeat, _ = strconv.Atoi(args[i+1])
			}
		}
		require.FileExists(t, graph)
		data, err := os.ReadFile(rootsFile)
		require.NoError(t, err)
		extra := ""
		if pre {
			extra = " csc_s=1.5 reorder_s=2.5"
		}
		fmt.Fprintf(out, "%s_GRAPH file=%s vertices=%d undirected=1%s\n", k.Prefix, graph, g.NumVertices(), extra)
		j := 0
		for _, line := range strings.Fields(string(data)) {
			src, err := strconv.Atoi(line)
			require.NoError(t, err)
			lv, err := frontier.BFS(g, int32(src))
			require.NoError(t, err)
			st := frontier.Stats(g, lv)
			for range repeat {
				f := map[string]string{"run": strconv.Itoa(j), "src": line, "reached": strconv.Itoa(st.Reached),
					"depth": strconv.Itoa(st.Levels - 1), "input_edges": strconv.FormatUint(st.Edges, 10)}
				if edit != nil {
					edit(j, f)
				}
				fmt.Fprintf(out, "%s run=%s src=%s time_s=0.0005 reached=%s depth=%s input_edges=%s verify=-\n", k.Prefix, f["run"], f["src"], f["reached"], f["depth"], f["input_edges"])
				j++
			}
		}
		return nil
	}
}

// TestBenchPeersOnFake runs three peers in one benchmark, root-major ones
// beside Gunrock's sample-major runs: each is its own external arm with
// its speedup, BLEST's preprocessing is kept, and a second peer of one
// kind, an unknown kind, a root-major run out of order or a timeout is an
// error naming the peer.
func TestBenchPeersOnFake(t *testing.T) {
	x, g, roots := benchInput(t, 33, 8, 5, 3, 4)
	gap, blest := mustPeer(t, "gapbs"), mustPeer(t, "blest")
	cfg := BenchConfig{Samples: 2, Arms: []Arm{ArmDeviceLoop}, Peers: []PeerConfig{
		{Binary: executable(t), exec: fakeGunrock(t, g, nil)},
		{Kind: "gapbs", Binary: executable(t), Samples: 3, exec: fakeRootMajor(t, g, gap, false, nil)},
		{Kind: "blest", Binary: executable(t), exec: fakeRootMajor(t, g, blest, true, nil)},
	}}
	res, err := Bench(x, g, roots, cfg)
	require.NoError(t, err)
	rows := map[string]int{}
	for _, s := range res.Samples {
		rows[s.Arm]++
		if s.Arm == "gapbs" || s.Arm == "blest" {
			assert.InDelta(t, 3*0.5e6, s.WallNs, 1, "a sample is every root once")
		}
	}
	assert.Equal(t, map[string]int{"device-loop": 2, "gunrock": 2, "gapbs": 3, "blest": 2}, rows)
	require.Len(t, res.Peers, 3)
	assert.Equal(t, []string{"gunrock", "gapbs", "blest"}, []string{res.Peers[0].Peer, res.Peers[1].Peer, res.Peers[2].Peer})
	assert.InDelta(t, 4e9, res.Peers[2].PreprocessingNs(), 1)
	assert.Zero(t, res.Peers[1].PreprocessingNs())
	for _, name := range []string{"gunrock", "gapbs", "blest"} {
		assert.Positive(t, res.Summary.PeerSpeedups[name], name)
	}
	assert.Equal(t, res.Summary.PeerSpeedups["gunrock"], res.Summary.GunrockSpeedup)
	assert.Equal(t, "device-loop", res.Summary.FastestArm, "a peer is never the fastest arm")
	for _, p := range res.Peers[1:] {
		assert.Equal(t, res.Peers[0].Graph, p.Graph, "%s reads the graph file written once for every peer", p.Peer)
		assert.Equal(t, res.Peers[0].Roots, p.Roots, p.Peer)
	}
	assert.NoFileExists(t, res.Peers[0].Graph, "the temporary input is removed after the peers ran")

	failures := map[string]struct {
		peers []PeerConfig
		want  string
	}{
		"twice":   {[]PeerConfig{{Kind: "gapbs", Binary: executable(t)}, {Kind: "gapbs", Binary: executable(t)}}, "peer gapbs is given twice"},
		"unknown": {[]PeerConfig{{Kind: "ligra", Binary: executable(t)}}, `unknown peer "ligra"`},
		"order": {[]PeerConfig{{Kind: "gapbs", Binary: executable(t), exec: fakeRootMajor(t, g, gap, false, func(j int, f map[string]string) {
			if j == 1 {
				f["src"] = strconv.Itoa(int(roots[1]))
			}
		})}}, "run 1 started from"},
		"timeout": {[]PeerConfig{{Kind: "blest", Binary: executable(t), Timeout: time.Millisecond, exec: func(ctx context.Context, _ string, _, _ []string, _ io.Writer) error {
			<-ctx.Done()
			return ctx.Err()
		}}}, "ran past its timeout of 1ms"},
	}
	for name, c := range failures {
		cfg.Peers = c.peers
		_, err := Bench(x, g, roots, cfg)
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), c.want, name)
		assert.Contains(t, err.Error(), "Fix:", name)
	}
}

// PeerGAPEnv names the GAP driver binary (the gapbs bundle's bfs_roots) a
// test runs for real beside the emulated arms; unset, that test skips.
const PeerGAPEnv = "GPUPLAN_PEER_GAPBS"

// TestBenchWithTheGAPBinary runs the real GAP CPU BFS as a peer when
// GPUPLAN_PEER_GAPBS names its binary: its runs are checked against the
// CPU reference like any peer's.
func TestBenchWithTheGAPBinary(t *testing.T) {
	bin := os.Getenv(PeerGAPEnv)
	if bin == "" {
		t.Skip(PeerGAPEnv + " is not set: build the gapbs peer bundle (./run.sh build) and point it at bfs_roots")
	}
	x, g, roots := benchInput(t, 34, 12, 6, 4, 7)
	res, err := Bench(x, g, roots, BenchConfig{Samples: 2, Arms: []Arm{ArmDeviceLoop}, Peers: []PeerConfig{{Kind: "gapbs", Binary: bin, Samples: 3}}})
	require.NoError(t, err)
	require.Len(t, res.Peers, 1)
	assert.Equal(t, 12, res.Peers[0].Runs)
	assert.Positive(t, res.Summary.PeerSpeedups["gapbs"])
}
