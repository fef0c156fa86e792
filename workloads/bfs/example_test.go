package bfs_test

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/occupancy"
	"github.com/gpuplan/gpuplan/workloads/bfs"
)

// DirectionOptimizing says whether the planner's degree gate lets a
// graph's levels go bottom-up: not on a grid (degree 4), yes on a
// Kronecker graph.
func ExampleDirectionOptimizing() {
	grid, _ := frontier.Grid(64)
	kron, _ := frontier.Kronecker(10, 16, 1)
	fmt.Println(bfs.DirectionOptimizing(grid), bfs.DirectionOptimizing(kron))
	// Output: false true
}

// A multi-source run over a resident graph: 40 roots in one pass of 64
// (the planner's pick), here on the emulated kernels, each root's levels
// those of a BFS from it.
func ExampleSession_NewMultiSource() {
	dev, _ := occupancy.Lookup("h100")
	x, _ := executor.New(bfs.NewFake(dev, 1), executor.Options{})
	defer x.Close()
	g, _ := frontier.Kronecker(10, 16, 1)
	s, _ := bfs.NewSession(x, g, bfs.Config{})
	defer s.Close()
	roots, _ := frontier.Roots(g, 40, 1)
	m, err := s.NewMultiSource(len(roots), 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer m.Close()
	run, levels, err := m.Run(roots, true)
	want, _ := frontier.BFS(g, roots[7])
	fmt.Println(m.Plan().Width, run.Passes, slices.Equal(levels[7], want), err)
	// Output: 64 1 true <nil>
}

// ParsePeerOutput reads a peer's driver output: here GAP's CPU BFS, its
// graph line and per-run lines (the warm-up line is ignored).
func ExampleParsePeerOutput() {
	k, err := bfs.LookupPeer("gapbs")
	if err != nil {
		fmt.Println(err)
		return
	}
	out, err := bfs.ParsePeerOutput(k, strings.NewReader(`GAPBS_BFS_GRAPH file=g.mtx vertices=4 graph_edges=3 undirected=1 input_edges_total=3 threads=16
GAPBS_BFS_WARMUP src=0 time_s=0.000070000
GAPBS_BFS run=0 src=0 time_s=0.000050000 reached=4 depth=2 input_edges=3 graph_edges=3 verify=-
`))
	fmt.Println(out.Graph.Vertices, len(out.Runs), out.Runs[0].Reached, out.Runs[0].InputEdges, out.Runs[0].TimeMs, err)
	// Output: 4 1 4 3 0.05 <nil>
}

// ExamplePickSetting chooses a megakernel setting from measured trials: the
// fastest trial that lowers at most TuneMaxRelabels labels per vertex,
// unless the configured setting is within TuneMargin of it.
func ExamplePickSetting() {
	base := bfs.MegakernelSetting{Ahead: bfs.DefaultMaxRunAhead, Keep: bfs.DefaultMegakernelKeep}
	trials := []bfs.TuneTrial{
		{Setting: base, WallNs: 8_262_000, RelabelsPerVertex: 0.82},
		{Setting: bfs.MegakernelSetting{Ahead: 16, Fixed: true, Keep: bfs.MaxMegakernelKeep}, WallNs: 3_291_000, RelabelsPerVertex: 0.39},
		{Setting: bfs.MegakernelSetting{Ahead: 8, Fixed: true, Keep: bfs.DefaultMegakernelKeep}, WallNs: 3_000_000, RelabelsPerVertex: 2.4},
	}
	m, err := bfs.PickSetting(base, trials)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(m)
	// Output: fixed 16, keep 512
}

// Example is the shortest library path: a graph kept resident in one
// session, a BFS from a root in each arm, the levels downloaded and checked
// against the CPU reference. Here the executor runs on the CPU fake backend
// with the kernels emulated; on a GPU, open it with executor.Open(0,
// executor.Options{}) in the CUDA build instead: the levels are the same.
func Example() {
	dev, err := occupancy.Lookup("h100")
	if err != nil {
		fmt.Println(err)
		return
	}
	x, err := executor.New(bfs.NewFake(dev, 1), executor.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer x.Close()
	g, err := frontier.Grid(4) // vertex (r, c) is r*4+c
	if err != nil {
		fmt.Println(err)
		return
	}
	s, err := bfs.NewSession(x, g, bfs.Config{}) // uploads the graph once
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	want, _ := frontier.BFS(g, 0)
	for _, arm := range bfs.Arms() {
		run, err := s.Run(arm, 0)
		if err != nil {
			fmt.Println(err)
			return
		}
		levels, err := s.Levels()
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(arm, run.Levels, levels[:4], levels[15], slices.Equal(levels, want))
	}
	// Output:
	// host-loop 7 [0 1 2 3] 6 true
	// device-loop 7 [0 1 2 3] 6 true
	// megakernel 7 [0 1 2 3] 6 true
	// host-loop-scan 7 [0 1 2 3] 6 true
}

// RunAnswer answers a query in one traversal and one answer dispatch: the
// levels of a few targets and the vertices of each level, without
// downloading the level array. Here on the emulated kernels, over a 4x4
// grid from its corner.
func ExampleSession_RunAnswer() {
	dev, _ := occupancy.Lookup("h100")
	x, _ := executor.New(bfs.NewFake(dev, 1), executor.Options{})
	defer x.Close()
	g, _ := frontier.Grid(4) // vertex (r, c) is r*4+c
	s, _ := bfs.NewSession(x, g, bfs.Config{})
	defer s.Close()
	run, ans, err := s.RunAnswer(bfs.ArmDeviceLoop, 0, []int32{5, 15, 3})
	fmt.Println(run.Levels, ans.Levels, ans.Counts, err)
	// Output: 7 [2 6 3] [1 2 3 4 3 2 1] <nil>
}
