//go:build cuda

package bfs

import (
	"testing"

	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/internal/gputest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGPUArms runs every BFS arm from several roots on one graph of each
// generator (and a star, whose hub splits into many queue items) and checks
// that the levels equal the CPU reference and that the device counted the
// reference's levels. Small chunks exercise the item splitting; a check
// interval of 3 makes the device loop overshoot the last level. Larger
// graphs pass a megakernel block's keep budget, so items spill to the
// global queue and come back.
func TestGPUArms(t *testing.T) {
	x := gputest.Open(t)
	var graphs []*frontier.CSR
	for _, build := range []func() (*frontier.CSR, error){
		func() (*frontier.CSR, error) { return frontier.Kronecker(12, 16, 7) },
		func() (*frontier.CSR, error) { return frontier.Grid(40) },
		func() (*frontier.CSR, error) { return frontier.Road(50, 3) },
		func() (*frontier.CSR, error) { return frontier.Grid(300) },
		func() (*frontier.CSR, error) { return frontier.Kronecker(16, 16, 9) },
	} {
		g, err := build()
		require.NoError(t, err)
		graphs = append(graphs, g)
	}
	graphs = append(graphs, star(t, 5000))
	configs := []Config{{CheckEvery: 3}, {Chunk: 5, CheckEvery: 3, MegakernelAhead: 1},
		{CheckEvery: 3, MegakernelBlocksPerSM: 2, MegakernelAhead: 64}, {MegakernelAhead: 1},
		{MegakernelAhead: 4, MegakernelFixedAhead: true, MegakernelKeep: MaxMegakernelKeep}}
	checkArms(t, x, graphs, configs)
	checkOverflowAndRefusals(t, x, graphs[3])
}

// TestGPUSessionPlan runs a resident session batch per arm on the GPU and
// checks that the session plan's predictions equal the telemetry, and that
// the plans' memory is what the session holds.
func TestGPUSessionPlan(t *testing.T) {
	x := gputest.Open(t)
	g, err := frontier.Grid(200)
	require.NoError(t, err)
	checkSessionPlans(t, x, g)
}

// TestGPUPlanRefusesOversize checks that a graph over the memory budget is
// refused by the memory plan before anything is allocated.
func TestGPUPlanRefusesOversize(t *testing.T) {
	x := gputest.Open(t)
	checkOversizeRefused(t, x)
	assert.Zero(t, x.ResidentBytes())
}

// TestGPUDirectionOptimizing runs every arm of direction-optimizing
// sessions on the GPU (Kronecker graphs and random geometric graphs past
// the degree gate, a grid under it) and checks the levels against the CPU
// reference and every arm's decisions against the CPU direction-optimizing
// BFS's, the device rule's logged decisions against the planner included.
func TestGPUDirectionOptimizing(t *testing.T) {
	x := gputest.Open(t)
	optimizing, topDown := directionGraphs(t)
	k16, err := frontier.Kronecker(16, 16, 9)
	require.NoError(t, err)
	configs := []Config{{CheckEvery: 3}, {Chunk: 5, MegakernelBlocksPerSM: 2}}
	eachSession(t, x, append(append(optimizing, k16), topDown...), configs, 3, 5, func(s *Session, _ *frontier.CSR, _ Config, roots []int32) {
		eachDirectionRun(t, s, roots, measuredRun, func(ref *frontier.DirectionBFS, arm Arm, name string, r Run) {
			if s.Optimizing() && arm != ArmHostLoopScan {
				require.Equal(t, ref.Decisions, r.Decisions, name)
			}
		})
	})
}

// TestGPUAdaptiveRunAhead runs the adaptive megakernel top-down on graphs
// whose shortest paths are straight, wind, or cross everywhere, and checks
// the levels and that it lowers fewer than one label per vertex on average
// over the roots. A single root may lower more: the controller bounds the
// lowered labels step by step from counts that a label lowered again later
// does not revise, and the blocks' races differ from run to run (one root of
// a random geometric graph of 10^5 vertices lowered 1.49 per vertex, while
// the mean of its four roots was 0.99).
func TestGPUAdaptiveRunAhead(t *testing.T) {
	x := gputest.Open(t)
	for _, spec := range []string{"grid:300", "road:300", "rgg:1000000:8"} {
		sp, err := frontier.ParseSpec(spec)
		require.NoError(t, err)
		g, err := sp.Build(1, frontier.DefaultLimits())
		require.NoError(t, err)
		s, err := NewSession(x, g, Config{Direction: DirectionTopDown})
		require.NoError(t, err)
		roots, err := frontier.Roots(g, 8, 2)
		require.NoError(t, err)
		var sum float64
		for _, root := range roots {
			want, err := frontier.BFS(g, root)
			require.NoError(t, err)
			r, err := s.Run(ArmMegakernel, root)
			require.NoError(t, err, spec)
			got, err := s.Levels()
			require.NoError(t, err)
			require.Equal(t, want, got, spec)
			perVertex := float64(r.Relabels) / float64(g.NumVertices())
			sum += perVertex
			t.Logf("%s root %d: %d levels in %d barriers, %.3f labels lowered per vertex, deepest run-ahead %d", spec, root, r.Levels, r.Barriers, perVertex, r.MaxAhead)
		}
		mean := sum / float64(len(roots))
		t.Logf("%s: %.3f labels lowered per vertex on average", spec, mean)
		assert.Less(t, mean, 1.0, spec)
		require.NoError(t, s.Close())
	}
}

// TestGPUTuneMegakernel tunes the megakernel on the GPU and checks that
// the chosen setting is one of the candidates, bounds its lowered labels
// and gives the reference levels from every root.
func TestGPUTuneMegakernel(t *testing.T) {
	x := gputest.Open(t)
	for _, spec := range []string{"grid:300", "road:300"} {
		sp, err := frontier.ParseSpec(spec)
		require.NoError(t, err)
		g, err := sp.Build(1, frontier.DefaultLimits())
		require.NoError(t, err)
		s, err := NewSession(x, g, Config{})
		require.NoError(t, err)
		roots, err := frontier.Roots(g, 4, 2)
		require.NoError(t, err)
		want, err := frontier.BFS(g, roots[0])
		require.NoError(t, err)
		tu, err := s.TuneMegakernel(roots[0], frontier.Stats(g, want).Reached, DefaultTuneRuns)
		require.NoError(t, err, spec)
		t.Logf("%s tuning:\n%s", spec, tu.Table())
		require.Len(t, tu.Trials, len(TuneCandidates(MegakernelSetting{Ahead: DefaultMaxRunAhead, Keep: DefaultMegakernelKeep}, false, s.canAsync())))
		assert.Equal(t, tu.Chosen, s.MegakernelSetting())
		for _, root := range roots {
			want, err := frontier.BFS(g, root)
			require.NoError(t, err)
			_, err = s.Run(ArmMegakernel, root)
			require.NoError(t, err, spec)
			got, err := s.Levels()
			require.NoError(t, err)
			require.Equal(t, want, got, spec)
		}
		require.NoError(t, s.Close())
	}
}

// TestGPUMultiSource runs multi-source passes on the GPU and checks every
// root's levels against frontier.MultiSourceBFS and frontier.BFS, on the
// generators' graphs and on graphs whose pushed frontiers hold hubs.
func TestGPUMultiSource(t *testing.T) {
	x := gputest.Open(t)
	optimizing, topDown := directionGraphs(t)
	for _, g := range append(optimizing[:3], topDown...) {
		s, err := NewSession(x, g, Config{})
		require.NoError(t, err)
		checkMultiSource(t, s, []int{1, 33, 70}, []int{0, 32, 64})
		require.NoError(t, s.Close())
	}
	kron, err := frontier.Kronecker(18, 16, 5)
	require.NoError(t, err)
	checkMultiSourceHubs(t, x, []*frontier.CSR{kron, gridWithHubs(t, 400, 5, 3*msHubEdges)}, []int{7, 64}, []int{0, 32})
}

// TestGPUAnswers checks LevelsOf and LevelCounts on the GPU against the
// full level download and the CPU reference, every arm from several roots
// of each generator's graph (direction-optimizing and top-down), a large
// Kronecker graph, and a path of more levels than the shared histogram
// holds (its counts past the histogram go to global atomics); then the
// refusals of bad requests, before anything is allocated or launched.
func TestGPUAnswers(t *testing.T) {
	x := gputest.Open(t)
	optimizing, topDown := directionGraphs(t)
	k16, err := frontier.Kronecker(16, 16, 9)
	require.NoError(t, err)
	grid, err := frontier.Grid(300)
	require.NoError(t, err)
	checkAnswers(t, x, append(append(optimizing, k16, grid), topDown...), []Config{{}, {Direction: DirectionTopDown, CheckEvery: 3}})
	checkAnswers(t, x, []*frontier.CSR{pathGraph(t, 3*CountSharedBins)}, []Config{{CheckEvery: 64}})
	checkAnswerRefusals(t, x, optimizing[0])
}

// TestGPUMultiSourceAnswers runs RunAnswers on the GPU and checks every
// root's target levels and level counts against frontier.BFS from it, on
// the generators' graphs, on graphs whose pushed frontiers hold hubs, and
// on a grid whose roots x levels pass the shared histogram at both widths,
// and on a path deeper than 2^16 levels.
func TestGPUMultiSourceAnswers(t *testing.T) {
	x := gputest.Open(t)
	optimizing, topDown := directionGraphs(t)
	checkMultiSourceAnswersOn(t, x, append(optimizing[:3], topDown...), []int{1, 33, 70}, []int{0, 32, 64})
	kron, err := frontier.Kronecker(18, 16, 5)
	require.NoError(t, err)
	grid, err := frontier.Grid(200)
	require.NoError(t, err)
	checkMultiSourceAnswersOn(t, x, []*frontier.CSR{kron, gridWithHubs(t, 400, 5, 3*msHubEdges)}, []int{7, 64}, []int{0, 32})
	checkMultiSourceAnswersOn(t, x, []*frontier.CSR{grid}, []int{64}, []int{32, 64})
	// A path deeper than 2^16 levels: its labels take 17 planes, which the
	// count kernel reads one vertex at a time instead of in tiles.
	checkMultiSourceAnswersOn(t, x, []*frontier.CSR{pathGraph(t, 1<<16+100)}, []int{2}, []int{32})
}

// TestGPUWideOffsets runs the 64-bit kernels' sessions on the GPU over
// graphs of each kind, direction-optimizing and top-down, against the CPU
// reference and the 32-bit kernels (checkWideSessions).
func TestGPUWideOffsets(t *testing.T) {
	checkGPUWide(t, []func() (*frontier.CSR, error){
		func() (*frontier.CSR, error) { return frontier.Kronecker(16, 16, 9) },
		func() (*frontier.CSR, error) { return frontier.RandomGeometric(200000, 8, 3) },
		func() (*frontier.CSR, error) { return frontier.Grid(300) },
		func() (*frontier.CSR, error) { return frontier.Road(200, 3) },
	}, 5000, []Config{{CheckEvery: 3}, {Chunk: 5, CheckEvery: 16}})
}

// TestGPUWideSmall is TestGPUWideOffsets on small graphs, small enough for
// compute-sanitizer's memcheck, racecheck and synccheck.
func TestGPUWideSmall(t *testing.T) {
	checkGPUWide(t, []func() (*frontier.CSR, error){
		func() (*frontier.CSR, error) { return frontier.Kronecker(10, 16, 3) },
		func() (*frontier.CSR, error) { return frontier.Grid(24) },
	}, 600, []Config{{Chunk: 5, CheckEvery: 3}})
}

// checkGPUWide runs checkWideSessions on the GPU over the graphs builds
// make and a star of starN vertices.
func checkGPUWide(t *testing.T, builds []func() (*frontier.CSR, error), starN int, configs []Config) {
	x := gputest.Open(t)
	var graphs []*frontier.CSR
	for _, build := range builds {
		g, err := build()
		require.NoError(t, err)
		graphs = append(graphs, g)
	}
	graphs = append(graphs, star(t, starN))
	checkWideSessions(t, graphs, configs, func(g *frontier.CSR, cfg Config) *Session {
		s, err := NewSession(x, g, cfg)
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, s.Close()) })
		return s
	})
}
