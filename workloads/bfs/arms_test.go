package bfs

import (
	"fmt"
	"testing"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/internal/gputest"
	"github.com/gpuplan/gpuplan/megakernel"
	"github.com/gpuplan/gpuplan/planners"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newFakeExecutor opens an executor over the emulated BFS kernels on an
// H100 profile with mem bytes of device memory.
func newFakeExecutor(t testing.TB, mem int64, seed uint64) (*executor.Executor, *executor.Fake) {
	t.Helper()
	return gputest.OpenFake(t, "h100", mem, seed, NewFake)
}

// fakeSession opens a session of cfg over g on a fake executor of mem
// bytes (newFakeExecutor), and closes it when t ends (a close error fails
// t).
func fakeSession(t *testing.T, mem int64, seed uint64, g *frontier.CSR, cfg Config) (*executor.Executor, *Session) {
	t.Helper()
	x, _ := newFakeExecutor(t, mem, seed)
	s, err := NewSession(x, g, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	return x, s
}

// mustGraph returns a function that passes a generator's graph on and
// fails the test on its error: must(frontier.Grid(16)).
func mustGraph(t testing.TB) func(*frontier.CSR, error) *frontier.CSR {
	return func(g *frontier.CSR, err error) *frontier.CSR {
		t.Helper()
		require.NoError(t, err)
		return g
	}
}

// star returns a star of n vertices: its hub splits into many queue items.
func star(t testing.TB, n int) *frontier.CSR {
	src, dst := make([]int32, n-1), make([]int32, n-1)
	for i := range dst {
		dst[i] = int32(i + 1)
	}
	g, err := frontier.BuildUndirected("star", n, src, dst)
	require.NoError(t, err)
	return g
}

// eachSession runs check on a session of every config over every graph in
// turn, with nroots roots of the graph (frontier.Roots with seed), and
// closes the session after it (check may close it first).
func eachSession(t *testing.T, x *executor.Executor, graphs []*frontier.CSR, configs []Config, nroots int, seed uint64,
	check func(s *Session, g *frontier.CSR, cfg Config, roots []int32)) {
	t.Helper()
	for _, g := range graphs {
		for _, cfg := range configs {
			s, err := NewSession(x, g, cfg)
			require.NoError(t, err, g.Name)
			roots, err := frontier.Roots(g, nroots, seed)
			require.NoError(t, err)
			check(s, g, cfg, roots)
			require.NoError(t, s.Close())
		}
	}
}

// runLevels runs arm from root on s and returns the run and its levels.
func runLevels(t *testing.T, s *Session, arm Arm, root int32, name string) (Run, []int32) {
	t.Helper()
	r, err := s.Run(arm, root)
	require.NoError(t, err, name)
	got, err := s.Levels()
	require.NoError(t, err, name)
	return r, got
}

// measuredRun is runLevels after an untimed run (the first run of an
// executor may allocate pinned staging memory; the measured run is the
// second), and checks that nothing polluted the measured run's timed
// region.
func measuredRun(t *testing.T, s *Session, arm Arm, root int32, name string) (Run, []int32) {
	t.Helper()
	_, err := s.Run(arm, root)
	require.NoError(t, err, name)
	r, got := runLevels(t, s, arm, root, name)
	assert.Zero(t, r.TimedUploads+r.TimedAllocations+r.TimedHostSyncs, name)
	return r, got
}

// checkArms runs every arm from several roots of each graph under each
// config and checks that the levels equal the CPU reference, that the
// device counted the reference's levels, that nothing polluted the timed
// region and that the megakernel's barriers and relabels are consistent.
func checkArms(t *testing.T, x *executor.Executor, graphs []*frontier.CSR, configs []Config) {
	eachSession(t, x, graphs, configs, 3, 1, func(s *Session, g *frontier.CSR, cfg Config, roots []int32) {
		for _, root := range roots {
			want, err := frontier.BFS(g, root)
			require.NoError(t, err)
			st := frontier.Stats(g, want)
			for _, arm := range Arms() {
				name := fmt.Sprintf("%s/chunk%d/persm%d/ahead%d/root%d/%s", g.Name, cfg.Chunk, cfg.MegakernelBlocksPerSM, cfg.MegakernelAhead, root, arm)
				r, got := measuredRun(t, s, arm, root, name)
				require.Equal(t, want, got, name)
				assert.Equal(t, st.Levels, r.Levels, name)
				assert.Zero(t, r.Reruns, name)
				if arm == ArmMegakernel {
					assert.LessOrEqual(t, r.Barriers, r.Levels, name)
					if s.Config().MegakernelAhead == 1 {
						assert.Equal(t, r.Levels, r.Barriers, name)
						assert.Zero(t, r.Relabels, name)
					}
				}
			}
		}
		_, err := s.Run(ArmMegakernel, int32(g.NumVertices()))
		var re *frontier.RootError
		require.ErrorAs(t, err, &re)
	})
}

// checkOverflowAndRefusals drives the megakernel's rerun path and the
// session's refusals: a queue that overflows under run-ahead is run again
// level-synchronously, and with a capacity too small for that too the
// overflow is reported (the buffers hold exactly the cut capacity, which
// the kernels never write past).
func checkOverflowAndRefusals(t *testing.T, x *executor.Executor, bigGrid *frontier.CSR) {
	s, err := NewSession(x, bigGrid, Config{MegakernelAhead: 8, queueCap: 8})
	require.NoError(t, err)
	r, err := s.Run(ArmMegakernel, 0)
	require.ErrorContains(t, err, "overflowed")
	assert.Equal(t, 1, r.Reruns)
	assert.Zero(t, r.TimedHostSyncs, "the rerun's reset and launch are expected syncs")
	require.NoError(t, s.Close())
	_, err = NewSession(x, bigGrid, Config{MegakernelAhead: -1})
	require.ErrorContains(t, err, "MegakernelAhead")
	_, err = NewSession(x, bigGrid, Config{MegakernelKeep: 300})
	require.ErrorContains(t, err, "MegakernelKeep = 300")
	// A malformed graph is refused before anything is allocated.
	_, err = NewSession(x, &frontier.CSR{Name: "bad", Offsets: []uint64{0, 1}, Targets: []int32{5}}, Config{})
	var se *frontier.StructureError
	require.ErrorAs(t, err, &se)
	assert.Zero(t, x.ResidentBytes())
}

// TestArmsOnFake runs the whole session, every arm and config, over the
// emulated kernels.
func TestArmsOnFake(t *testing.T) {
	x, _ := newFakeExecutor(t, 8<<30, 1)
	must := mustGraph(t)
	kron, grid, road := must(frontier.Kronecker(10, 16, 7)), must(frontier.Grid(30)), must(frontier.Road(30, 3))
	// A grid whose levels pass a megakernel block's keep budget, so items
	// spill to the global queue and come back.
	bigGrid := must(frontier.Grid(120))
	configs := []Config{{CheckEvery: 3}, {Chunk: 5, CheckEvery: 3, MegakernelAhead: 1},
		{CheckEvery: 3, MegakernelBlocksPerSM: 2, MegakernelAhead: 64},
		{CheckEvery: 3, MegakernelAhead: 4, MegakernelFixedAhead: true, MegakernelKeep: MaxMegakernelKeep}}
	checkArms(t, x, []*frontier.CSR{kron, grid, road, star(t, 2000), bigGrid}, configs)
	checkOverflowAndRefusals(t, x, bigGrid)
}

// checkSessionPlans runs a batch per arm from every root of g and checks
// the resident session plan against the telemetry and the last root's
// levels against the reference.
func checkSessionPlans(t *testing.T, x *executor.Executor, g *frontier.CSR) {
	s, err := NewSession(x, g, Config{})
	require.NoError(t, err)
	defer s.Close()
	assert.Equal(t, s.Plans().Memory.RequiredBytes, x.ResidentBytes(), "the session holds exactly its memory plan")
	roots, err := frontier.Roots(g, 4, 3)
	require.NoError(t, err)
	want, err := frontier.BFS(g, roots[len(roots)-1])
	require.NoError(t, err)
	for _, arm := range Arms() {
		res, err := s.Batch(arm, roots)
		require.NoError(t, err, arm)
		assert.Empty(t, res.Check.Mismatches(), arm)
		assert.Equal(t, want, res.Levels, arm)
		assert.Len(t, res.Runs, len(roots))
		assert.EqualValues(t, 1, res.Check.Measured.OutputReadbacks, arm)
		assert.EqualValues(t, 3*(len(roots)-1), res.Check.Plan.AvoidedDeviceAllocations, arm)
	}
}

// checkOversizeRefused asks for a session over a graph larger than the
// budget it may use, and one within it.
func checkOversizeRefused(t *testing.T, x *executor.Executor) {
	g, err := frontier.Grid(100)
	require.NoError(t, err)
	before := x.Telemetry()
	// One frontier queue alone passes 100,000 bytes: the queue plan
	// refuses; two of them and the graph pass 200,000: the memory plan does.
	_, err = NewSession(x, g, Config{MaxResidentBytes: 100_000})
	var qe *planners.WorkQueueError
	require.ErrorAs(t, err, &qe)
	_, err = NewSession(x, g, Config{MaxResidentBytes: 200_000})
	assert.Zero(t, x.Telemetry().Sub(before).ResidentAllocationBytesRequested, "refused before any allocation")
	var ob *megakernel.OverBudgetError
	require.ErrorAs(t, err, &ob)
	assert.Contains(t, err.Error(), "BFS over grid-100")
	assert.EqualValues(t, 200_000, ob.BudgetBytes)
	assert.Greater(t, ob.RequiredBytes, ob.BudgetBytes)
	assert.Zero(t, x.ResidentBytes())
	s, err := NewSession(x, g, Config{MaxResidentBytes: ob.RequiredBytes})
	require.NoError(t, err, "exactly the planned bytes fit")
	require.NoError(t, s.Close())
}

// TestSessionPlanOnFake checks the session plan and the memory refusal on
// the emulated kernels.
func TestSessionPlanOnFake(t *testing.T) {
	x, _ := newFakeExecutor(t, 8<<30, 2)
	g, err := frontier.Grid(40)
	require.NoError(t, err)
	checkSessionPlans(t, x, g)
	checkOversizeRefused(t, x)
}

// TestLowDegree checks which graphs take the kernels' low-degree path:
// grids, road networks and random geometric graphs of degree 8 do,
// Kronecker graphs and denser geometric ones do not, nor does a graph
// without vertices.
func TestLowDegree(t *testing.T) {
	must := mustGraph(t)
	for _, tc := range []struct {
		name string
		g    *frontier.CSR
		want bool
	}{
		{"grid", must(frontier.Grid(30)), true},
		{"road", must(frontier.Road(30, 1)), true},
		{"rgg degree 8", must(frontier.RandomGeometric(20000, 8, 1)), true},
		{"rgg degree 16", must(frontier.RandomGeometric(20000, 16, 1)), false},
		{"kronecker", must(frontier.Kronecker(10, 16, 7)), false},
		{"empty", &frontier.CSR{Offsets: []uint64{0}}, false},
	} {
		assert.Equal(t, tc.want, LowDegree(tc.g), tc.name)
	}
}

// TestMegakernelEntryPoint checks which megakernel a session launches: the
// narrow one for blocks of up to MegakernelNarrowThreads threads (the
// default on graphs of low degree), the other for larger blocks; the
// narrow one's registers leave room for one 512-thread block per SM.
func TestMegakernelEntryPoint(t *testing.T) {
	x, _ := newFakeExecutor(t, 8<<30, 2)
	must := mustGraph(t)
	grid, kron := must(frontier.Grid(40)), must(frontier.Kronecker(10, 16, 7))
	for _, tc := range []struct {
		name    string
		g       *frontier.CSR
		cfg     Config
		want    string
		perSM   int
		threads uint32
	}{
		{"low degree default", grid, Config{MegakernelBlocksPerSM: 2}, KernelMegakernelNarrow, 1, 512},
		{"256 threads", grid, Config{MegakernelThreads: 256, MegakernelBlocksPerSM: 2}, KernelMegakernelNarrow, 2, 256},
		{"544 threads", grid, Config{MegakernelThreads: 544}, KernelMegakernel, 1, 544},
		{"kronecker default", kron, Config{}, KernelMegakernel, 1, 1024},
	} {
		s, err := NewSession(x, tc.g, tc.cfg)
		require.NoError(t, err, tc.name)
		assert.Equal(t, tc.want, s.k.mega.Name(), tc.name)
		assert.Equal(t, tc.perSM, s.plans.MegakernelGrid.BlocksPerSM, tc.name)
		assert.Equal(t, tc.threads, s.plans.MegakernelGrid.Config().Block[0], tc.name)
		require.NoError(t, s.Close())
	}
	assert.Equal(t, KernelMegakernelNarrow, megakernelFor(MegakernelNarrowThreads))
	assert.Equal(t, KernelMegakernel, megakernelFor(MegakernelNarrowThreads+32))
}

// TestDeviceLoopBatches checks the device loop's batches of levels: the
// first traversal enqueues CheckEvery levels per host check, later ones as
// many as the deepest traversal so far took (so a shallow graph launches no
// empty levels past its end, and a deeper root takes one more batch), and
// every traversal's levels stay the reference's.
func TestDeviceLoopBatches(t *testing.T) {
	x, _ := newFakeExecutor(t, 8<<30, 5)
	must := mustGraph(t)
	for _, tc := range []struct {
		name       string
		g          *frontier.CSR
		checkEvery int
	}{
		{"kronecker, direction-optimizing", must(frontier.Kronecker(10, 16, 3)), 16},
		{"grid, top-down", must(frontier.Grid(12)), 40},
		{"grid past the batch bound", must(frontier.Grid(12)), 5},
	} {
		s, err := NewSession(x, tc.g, Config{CheckEvery: tc.checkEvery})
		require.NoError(t, err, tc.name)
		roots, err := frontier.Roots(tc.g, 6, 9)
		require.NoError(t, err, tc.name)
		deepest := 0
		for i, root := range roots {
			r, err := s.Run(ArmDeviceLoop, root)
			require.NoError(t, err, tc.name)
			want, err := frontier.BFS(tc.g, root)
			require.NoError(t, err, tc.name)
			got, err := s.Levels()
			require.NoError(t, err, tc.name)
			require.Equal(t, want, got, "%s root %d", tc.name, root)
			batch := tc.checkEvery
			if i > 0 {
				batch = min(deepest, tc.checkEvery)
			}
			// The launch of a traversal's last level finds the next
			// frontier empty.
			batches := (r.Levels + batch - 1) / batch
			if r.Levels > 1 {
				assert.EqualValues(t, batches*batch, r.Launches, "%s root %d (%d levels, batches of %d)", tc.name, root, r.Levels, batch)
			}
			deepest = max(deepest, r.Levels)
		}
		require.NoError(t, s.Close())
	}
}
