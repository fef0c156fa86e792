package bfs

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/internal/kernelabi"
	"github.com/gpuplan/gpuplan/internal/kernelabi/abitest"
	"github.com/gpuplan/gpuplan/workloads/harness"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// levelHistogram is the CPU answer of a level count: the vertices of
// each level, up to the largest.
func levelHistogram(levels []int32) []uint64 {
	var h []uint64
	for _, l := range levels {
		if l < 0 {
			continue
		}
		for int(l) >= len(h) {
			h = append(h, 0)
		}
		h[l]++
	}
	return h
}

// pick is the CPU answer of a gather: levels[v] for each v of vertices.
func pick(levels, vertices []int32) []int32 {
	out := make([]int32, len(vertices))
	for i, v := range vertices {
		out[i] = levels[v]
	}
	return out
}

// randomTargets returns k random vertices of n (with repeats) and the
// extra ones, shuffled together.
func randomTargets(r *rand.Rand, n, k int, extra ...int32) []int32 {
	out := append([]int32(nil), extra...)
	for range k {
		out = append(out, int32(r.IntN(n)))
	}
	r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// unreachedOf returns the vertices levels leaves unreached, at most k.
func unreachedOf(levels []int32, k int) []int32 {
	var out []int32
	for v, l := range levels {
		if l == frontier.Unreached && len(out) < k {
			out = append(out, int32(v))
		}
	}
	return out
}

// checkSessionAnswers runs every arm from roots of the session's graph and
// checks LevelsOf and LevelCounts against the full level download and the
// CPU reference: random targets with the root and unreached vertices among
// them, every vertex in a random order, a level bound below the levels (a
// prefix of the counts) and one past them and past the shared histogram
// (zeros after the levels, counted with global atomics). It returns how
// many unreached targets it asked for.
func checkSessionAnswers(t *testing.T, s *Session, roots []int32, seed uint64) int {
	g := s.Graph()
	n := g.NumVertices()
	rng := rand.New(rand.NewPCG(seed, 7))
	unreached := 0
	for _, root := range roots {
		want, err := frontier.BFS(g, root)
		require.NoError(t, err)
		hist := levelHistogram(want)
		for _, arm := range Arms() {
			name := fmt.Sprintf("%s/%s/root %d/%s", g.Name, s.Config().Direction, root, arm)
			r, full := runLevels(t, s, arm, root, name)
			require.Equal(t, want, full, name)
			extra := append([]int32{root}, unreachedOf(want, 3)...)
			unreached += len(extra) - 1
			targets := randomTargets(rng, n, 200, extra...)
			got, err := s.LevelsOf(targets)
			require.NoError(t, err, name)
			require.Equal(t, pick(full, targets), got, name)
			counts, err := s.LevelCounts(r.Levels)
			require.NoError(t, err, name)
			require.Equal(t, hist, counts, name)
			checkRunAnswer(t, s, r, targets, pick(full, targets), hist, name)
		}
		all := make([]int32, n)
		for i, v := range rng.Perm(n) {
			all[i] = int32(v)
		}
		got, err := s.LevelsOf(all)
		require.NoError(t, err)
		require.Equal(t, pick(want, all), got, "%s root %d: every vertex", g.Name, root)
		half := len(hist)/2 + 1
		prefix, err := s.LevelCounts(half)
		require.NoError(t, err)
		require.Equal(t, hist[:half], prefix, "%s root %d: the levels below %d", g.Name, root, half)
		wide := min(n, CountSharedBins+len(hist))
		padded, err := s.LevelCounts(wide)
		require.NoError(t, err)
		require.Equal(t, append(append([]uint64(nil), hist...), make([]uint64, wide-len(hist))...), padded, "%s root %d: %d levels", g.Name, root, wide)
	}
	return unreached
}

// checkRunAnswer runs RunAnswer with r's arm from r's root and checks its
// answer (levels and counts) and its run (levels, decisions) against the
// ones Run, LevelsOf and LevelCounts gave, and that where the traversal is
// at most AnswerLevels deep it waits at least four times less than they do
// together (the result words, both answer launches and both reads share one
// wait).
func checkRunAnswer(t *testing.T, s *Session, r Run, targets, levels []int32, hist []uint64, name string) {
	before := s.x.Telemetry()
	_, err := s.Run(r.Arm, r.Root)
	require.NoError(t, err, name)
	_, err = s.LevelsOf(targets)
	require.NoError(t, err, name)
	_, err = s.LevelCounts(r.Levels)
	require.NoError(t, err, name)
	mid := s.x.Telemetry()
	got, ans, err := s.RunAnswer(r.Arm, r.Root, targets)
	require.NoError(t, err, name)
	separate, fused := mid.Sub(before).SyncPoints, s.x.Telemetry().Sub(mid).SyncPoints
	require.Equal(t, levels, ans.Levels, name)
	require.Equal(t, hist, ans.Counts, name)
	assert.Equal(t, r.Root, ans.Root, name)
	assert.Equal(t, r.Levels, got.Levels, name)
	assert.Equal(t, r.Decisions, got.Decisions, name)
	if r.Levels <= AnswerLevels {
		assert.LessOrEqual(t, fused+4, separate, "%s: host waits", name)
	}
}

// checkAnswers runs checkSessionAnswers over each graph in a session of
// each config, checks the kernels' own guards, and that closing the
// session frees the answer buffers with the rest.
func checkAnswers(t *testing.T, x *executor.Executor, graphs []*frontier.CSR, configs []Config) {
	before := x.ResidentBytes()
	eachSession(t, x, graphs, configs, 3, 11, func(s *Session, g *frontier.CSR, _ Config, roots []int32) {
		unreached := checkSessionAnswers(t, s, roots, uint64(len(g.Offsets)))
		if strings.HasPrefix(g.Name, "kron") {
			assert.Positive(t, unreached, "%s: some targets are unreached", g.Name)
		}
		checkIsolatedRoot(t, s)
		checkAnswerKernelGuards(t, s)
		require.NoError(t, s.Close())
		assert.Equal(t, before, x.ResidentBytes(), "%s: Close frees the answer buffers", g.Name)
	})
}

// checkIsolatedRoot runs every arm from a vertex without edges, when the
// graph has one: one level (the root's), which LevelCounts counts and
// LevelsOf reads, the rest unreached.
func checkIsolatedRoot(t *testing.T, s *Session) {
	g := s.Graph()
	for v := range g.NumVertices() {
		if g.Degree(int32(v)) != 0 {
			continue
		}
		other := int32((v + 1) % g.NumVertices())
		for _, arm := range Arms() {
			name := fmt.Sprintf("%s/isolated root %d/%s", g.Name, v, arm)
			r, err := s.Run(arm, int32(v))
			require.NoError(t, err, name)
			assert.Equal(t, 1, r.Levels, name)
			counts, err := s.LevelCounts(r.Levels)
			require.NoError(t, err, name)
			assert.Equal(t, []uint64{1}, counts, name)
			got, err := s.LevelsOf([]int32{int32(v), other})
			require.NoError(t, err, name)
			assert.Equal(t, []int32{0, -1}, got, name)
			checkRunAnswer(t, s, r, []int32{int32(v), other}, []int32{0, -1}, []uint64{1}, name)
		}
		return
	}
}

// checkAnswerKernelGuards launches the gather kernels directly with
// indices past the graph (and, after a pass, a root past the pass): they
// read as unreached instead of out of bounds.
func checkAnswerKernelGuards(t *testing.T, s *Session) {
	n := uint32(s.g.NumVertices())
	_, err := s.LevelsOf([]int32{0, 0, 0})
	require.NoError(t, err)
	require.NoError(t, s.x.UploadAt(s.ans.in, 0, bytesOf([]uint32{n, 0, ^uint32(0)})))
	p := GatherParams[executor.Buffer]{Level: s.buf.level, Idx: s.ans.in, Out: s.ans.out, N: uint64(n), Count: 3}
	_, err = s.x.Launch(s.k.gather, answerLaunch(s.x, 3, 1), kernelabi.MustArgs(p)...)
	require.NoError(t, err)
	full, err := s.Levels()
	require.NoError(t, err)
	got, err := download[int32](s.x, s.ans.out, 3)
	require.NoError(t, err)
	assert.Equal(t, []int32{-1, full[0], -1}, got, "indices past the graph read as unreached")

	m, err := s.NewMultiSource(2, 32)
	require.NoError(t, err)
	defer func() { require.NoError(t, m.Close()) }()
	roots, err := frontier.Roots(s.g, 2, 3)
	require.NoError(t, err)
	_, ans, err := m.RunAnswers(roots, [][]int32{{roots[0]}, {roots[0], roots[1]}})
	require.NoError(t, err)
	require.Equal(t, []int32{0}, ans[0].Levels)
	// Pairs past the pass's roots and the graph, then a good pair.
	require.NoError(t, s.x.UploadAt(m.ans.in, 0, bytesOf([]uint32{2, uint32(roots[0]), 0, n, 1, uint32(roots[1])})))
	mp := MSGatherParams[executor.Buffer]{Seen: m.buf.seen, Planes: m.buf.planes, Pairs: m.ans.in, Out: m.ans.out,
		N: uint64(n), NRoots: 2, Width: 32, Bits: 1, Count: 3}
	_, err = s.x.Launch(s.k.msGather, answerLaunch(s.x, 3, 1), kernelabi.MustArgs(mp)...)
	require.NoError(t, err)
	got, err = download[int32](s.x, m.ans.out, 3)
	require.NoError(t, err)
	assert.Equal(t, []int32{-1, -1, 0}, got, "pairs past the pass read as unreached")
}

// pathGraph is a path of n vertices and, apart from it, an edge of two
// more: from an end, n levels (past the shared histogram when n is more
// than CountSharedBins) and two unreached vertices.
func pathGraph(t testing.TB, n int) *frontier.CSR {
	src, dst := make([]int32, n), make([]int32, n)
	for i := range n - 1 {
		src[i], dst[i] = int32(i), int32(i+1)
	}
	src[n-1], dst[n-1] = int32(n), int32(n+1)
	g, err := frontier.BuildUndirected("path", n+2, src, dst)
	require.NoError(t, err)
	return g
}

// TestAnswersOnFake checks LevelsOf and LevelCounts over the emulated
// kernels on every generator, direction-optimizing and top-down, and on a
// path of more levels than the shared histogram holds.
func TestAnswersOnFake(t *testing.T) {
	x, _ := newFakeExecutor(t, 8<<30, 31)
	optimizing, topDown := directionGraphs(t)
	checkAnswers(t, x, append(optimizing[:3], topDown...), []Config{{}, {Direction: DirectionTopDown, CheckEvery: 3}})
	checkAnswers(t, x, []*frontier.CSR{pathGraph(t, CountSharedBins+500)}, []Config{{CheckEvery: 64}})
}

// checkMultiSourceAnswers runs RunAnswers over the session's graph from
// counts of roots (the last repeating the first) at each width, with
// random targets per root (none for some), and checks every root's levels
// and counts against frontier.BFS from it, the passes against the plan,
// and that the timed regions stay clean.
func checkMultiSourceAnswers(t *testing.T, s *Session, counts, widths []int) {
	g := s.Graph()
	n := g.NumVertices()
	rng := rand.New(rand.NewPCG(uint64(n), 5))
	eachMultiSource(t, s, counts, widths, func(name string, roots []int32, _ int, m *MultiSource) {
		k := len(roots)
		targets := make([][]int32, k)
		for i := range targets {
			if i%4 != 3 {
				targets[i] = randomTargets(rng, n, rng.IntN(40), roots[i])
			}
		}
		// The first host loop of an executor may allocate its pinned
		// staging memory; the measured run is the second.
		_, _, err := m.RunAnswers(roots, targets)
		require.NoError(t, err, name)
		run, ans, err := m.RunAnswers(roots, targets)
		require.NoError(t, err, name)
		assert.Equal(t, len(m.Plan().Batches), run.Passes, name)
		assert.Zero(t, run.TimedUploads+run.TimedAllocations+run.TimedHostSyncs, name)
		require.Len(t, ans, k, name)
		for i, r := range roots {
			want, err := frontier.BFS(g, r)
			require.NoError(t, err)
			require.Equal(t, r, ans[i].Root, name)
			require.Equal(t, pick(want, targets[i]), ans[i].Levels, "%s root %d (%d)", name, i, r)
			require.Equal(t, levelHistogram(want), ans[i].Counts, "%s root %d (%d)", name, i, r)
		}
	})
}

// checkMultiSourceAnswersOn runs checkMultiSourceAnswers over each graph
// in a session of its own, and checks that closing the multi-source runs
// frees their answer buffers.
func checkMultiSourceAnswersOn(t *testing.T, x *executor.Executor, graphs []*frontier.CSR, counts, widths []int) {
	for _, g := range graphs {
		s, err := NewSession(x, g, Config{})
		require.NoError(t, err)
		resident := x.ResidentBytes()
		checkMultiSourceAnswers(t, s, counts, widths)
		assert.Equal(t, resident, x.ResidentBytes(), "%s: a closed multi-source run frees its answer buffers", g.Name)
		require.NoError(t, s.Close())
	}
}

// TestMultiSourceAnswersOnFake runs RunAnswers over the emulated kernels
// on every generator and on a grid with hubs; a grid from 64 roots, 32 or
// 64 a pass, has more roots x levels than the shared histogram holds.
func TestMultiSourceAnswersOnFake(t *testing.T) {
	x, _ := newFakeExecutor(t, 8<<30, 32)
	optimizing, topDown := directionGraphs(t)
	checkMultiSourceAnswersOn(t, x, append(append(optimizing[:3], topDown...), gridWithHubs(t, 60, 2, 2*msHubEdges)), []int{1, 33, 70}, []int{0, 32, 64})
	grid, err := frontier.Grid(100)
	require.NoError(t, err)
	checkMultiSourceAnswersOn(t, x, []*frontier.CSR{grid}, []int{64}, []int{32, 64})
}

// answerRefusal is one bad answer request and what its error says.
type answerRefusal struct {
	name, want string
	call       func() error
}

// answerRefusals are bad requests to s and to m, a multi-source run of
// len(roots) roots over s.
func answerRefusals(s *Session, m *MultiSource, roots []int32) []answerRefusal {
	g := s.Graph()
	n := int32(g.NumVertices())
	return []answerRefusal{
		{"vertex past the graph", fmt.Sprintf("LevelsOf vertices[2] = %d is not a vertex of %s (%d vertices). Fix: pass vertex ids from 0 to %d", n, g.Name, n, n-1),
			func() error { _, err := s.LevelsOf([]int32{0, 1, n}); return err }},
		{"negative vertex", "LevelsOf vertices[0] = -1 is not a vertex", func() error { _, err := s.LevelsOf([]int32{-1}); return err }},
		{"no levels", "LevelCounts levels = 0", func() error { _, err := s.LevelCounts(0); return err }},
		{"negative levels", "LevelCounts levels = -3", func() error { _, err := s.LevelCounts(-3); return err }},
		{"more levels than vertices", fmt.Sprintf("LevelCounts levels = %d", n+1), func() error { _, err := s.LevelCounts(int(n) + 1); return err }},
		{"RunAnswer target past the graph", fmt.Sprintf("RunAnswer targets[1] = %d is not a vertex of %s", n, g.Name),
			func() error { _, _, err := s.RunAnswer(ArmDeviceLoop, 0, []int32{0, n}); return err }},
		{"RunAnswer root past the graph", "root", func() error { _, _, err := s.RunAnswer(ArmDeviceLoop, n, []int32{0}); return err }},
		{"RunAnswer unknown arm", "arm", func() error { _, _, err := s.RunAnswer("fast", 0, []int32{0}); return err }},
		{"fewer target lists than roots", "RunAnswers targets: 2 lists for 3 roots. Fix: pass one list of targets per root",
			func() error { _, _, err := m.RunAnswers(roots, [][]int32{{0}, {1}}); return err }},
		{"more target lists than roots", "RunAnswers targets: 4 lists for 3 roots",
			func() error { _, _, err := m.RunAnswers(roots, make([][]int32, 4)); return err }},
		{"target past the graph", fmt.Sprintf("RunAnswers targets[1][1] = %d is not a vertex", n),
			func() error { _, _, err := m.RunAnswers(roots, [][]int32{{0}, {1, n}, nil}); return err }},
		{"negative target", "RunAnswers targets[2][0] = -7 is not a vertex",
			func() error { _, _, err := m.RunAnswers(roots, [][]int32{nil, nil, {-7}}); return err }},
		{"roots not planned", "plan the run", func() error { _, _, err := m.RunAnswers(roots[:2], make([][]int32, 2)); return err }},
		{"root past the graph", "roots[1]", func() error { _, _, err := m.RunAnswers([]int32{0, n, 1}, make([][]int32, 3)); return err }},
	}
}

// checkAnswerRefusals checks that bad answer requests are refused with the
// field and a Fix, before anything is allocated, uploaded or launched, and
// that empty requests launch nothing (a multi-source run without targets
// still counts).
func checkAnswerRefusals(t *testing.T, x *executor.Executor, g *frontier.CSR) {
	s, err := NewSession(x, g, Config{})
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Close()) }()
	_, err = s.LevelsOf([]int32{0})
	require.ErrorContains(t, err, "LevelsOf over "+g.Name+" before any traversal")
	assert.Contains(t, err.Error(), "Fix: call Run")
	_, err = s.LevelCounts(1)
	require.ErrorContains(t, err, "LevelCounts over "+g.Name+" before any traversal")
	roots, err := frontier.Roots(g, 3, 2)
	require.NoError(t, err)
	_, err = s.Run(ArmHostLoop, roots[0])
	require.NoError(t, err)
	m, err := s.NewMultiSource(3, 0)
	require.NoError(t, err)
	defer func() { require.NoError(t, m.Close()) }()
	resident, tel := x.ResidentBytes(), x.Telemetry()
	for _, c := range answerRefusals(s, m, roots) {
		err := c.call()
		require.Error(t, err, c.name)
		assert.Contains(t, err.Error(), c.want, c.name)
		assert.Contains(t, err.Error(), "Fix:", c.name)
	}
	got, err := s.LevelsOf(nil)
	require.NoError(t, err)
	assert.NotNil(t, got, "an empty list gives an empty slice")
	assert.Empty(t, got)
	after := x.Telemetry()
	assert.Equal(t, resident, x.ResidentBytes(), "refused before any allocation")
	assert.Equal(t, tel.ResidentAllocationBytesRequested, after.ResidentAllocationBytesRequested)
	assert.Equal(t, tel.KernelLaunches, after.KernelLaunches, "refused (or empty) before any launch")
	assert.Equal(t, tel.HostUploadOperations, after.HostUploadOperations, "refused before any upload")
	_, ans, err := m.RunAnswers(roots, make([][]int32, 3))
	require.NoError(t, err)
	for i, a := range ans {
		want, err := frontier.BFS(g, roots[i])
		require.NoError(t, err)
		assert.Equal(t, []int32{}, a.Levels, "root %d: no targets", i)
		assert.Equal(t, levelHistogram(want), a.Counts, "root %d", i)
	}
	assert.Zero(t, m.ans.in.ID, "no targets: no pairs buffer")
}

// TestAnswerRefusalsOnFake checks the refusals over the emulated kernels.
func TestAnswerRefusalsOnFake(t *testing.T) {
	x, _ := newFakeExecutor(t, 8<<30, 33)
	g, err := frontier.Kronecker(9, 8, 2)
	require.NoError(t, err)
	checkAnswerRefusals(t, x, g)
}

// TestGrowAnswerBuffers checks the answer buffers' growth: a buffer large
// enough stays, a larger request doubles it (or takes what it asks), and a
// request past the budget leaves nothing allocated.
func TestGrowAnswerBuffers(t *testing.T) {
	x, _ := newFakeExecutor(t, 1<<30, 34)
	var b answerBuffers
	require.NoError(t, b.grow(x, 100, 0, 8))
	assert.EqualValues(t, 100, b.in.Len)
	assert.Zero(t, b.out.ID, "0 bytes: not allocated")
	assert.EqualValues(t, 8, b.counts.Len)
	id := b.in.ID
	require.NoError(t, b.grow(x, 60, 0, 0))
	assert.Equal(t, id, b.in.ID, "large enough: kept")
	require.NoError(t, b.grow(x, 120, 0, 0))
	assert.EqualValues(t, 200, b.in.Len, "twice the old size")
	require.NoError(t, b.grow(x, 1000, 0, 0))
	assert.EqualValues(t, 1000, b.in.Len, "the request, past twice the old size")
	require.Error(t, b.grow(x, 1<<40, 0, 0))
	assert.Zero(t, b.in.ID, "the old buffer is freed first")
	require.NoError(t, harness.Free(x, harness.Buffers(&b)))
	assert.Zero(t, x.ResidentBytes())
}

// TestAnswerKernelsResources holds the emulated answer kernels' registers
// and shared memory equal to ptxas's report (bfs.resources, which make ptx
// writes), so the occupancy model sizes their launches on the fake as on
// the GPU.
func TestAnswerKernelsResources(t *testing.T) {
	fakes := NewEmulation(1).Kernels()
	require.Len(t, fakes, len(ABI.Kernels), "every kernel is emulated")
	abitest.CheckResources(t, "bfs.resources", fakes, []string{KernelGather, KernelLevelCounts, KernelMSGather, KernelMSLevelCounts})
}

// TestReserveAnswersOnFake checks that reserved answer buffers serve
// LevelsOf, LevelCounts and RunAnswers within the reservation without a
// device allocation, and that negative reservations are refused before
// anything is allocated.
func TestReserveAnswersOnFake(t *testing.T) {
	g := mustGraph(t)(frontier.Kronecker(10, 8, 4))
	x, s := fakeSession(t, 8<<30, 35, g, Config{})
	roots, err := frontier.Roots(g, 5, 1)
	require.NoError(t, err)
	m, err := s.NewMultiSource(len(roots), 0)
	require.NoError(t, err)
	defer func() { require.NoError(t, m.Close()) }()
	resident := x.ResidentBytes()
	for _, bad := range []func() error{func() error { return s.ReserveAnswers(-1, 0) }, func() error { return s.ReserveAnswers(0, -2) },
		func() error { return m.ReserveAnswers(-3, 1) }} {
		err := bad()
		require.ErrorContains(t, err, "is not negative. Fix:")
		assert.Equal(t, resident, x.ResidentBytes(), "refused before any allocation")
	}
	n := g.NumVertices()
	require.NoError(t, s.ReserveAnswers(300, n))
	require.NoError(t, m.ReserveAnswers(300, n))
	reserved := x.Telemetry().ResidentAllocationBytesRequested
	rng := rand.New(rand.NewPCG(3, 4))
	targets := make([][]int32, len(roots))
	for i := range targets {
		targets[i] = randomTargets(rng, n, 60)
	}
	for _, root := range roots {
		r, err := s.Run(ArmDeviceLoop, root)
		require.NoError(t, err)
		want, err := frontier.BFS(g, root)
		require.NoError(t, err)
		got, err := s.LevelsOf(targets[0])
		require.NoError(t, err)
		require.Equal(t, pick(want, targets[0]), got)
		counts, err := s.LevelCounts(r.Levels)
		require.NoError(t, err)
		require.Equal(t, levelHistogram(want), counts)
	}
	_, ans, err := m.RunAnswers(roots, targets)
	require.NoError(t, err)
	require.Len(t, ans, len(roots))
	assert.Equal(t, reserved, x.Telemetry().ResidentAllocationBytesRequested, "no device allocation within the reservation")
}
