package partbfs

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/executor/nccl"
	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/internal/gputest"
	"github.com/gpuplan/gpuplan/partition"
	"github.com/gpuplan/gpuplan/planners"
)

// fakeExecutor opens an executor on a fake backend with the kernels
// emulated.
func fakeExecutor(t testing.TB, mem int64, seed uint64) *executor.Executor {
	t.Helper()
	x, _ := gputest.OpenFake(t, "h200", mem, seed, NewFake)
	return x
}

// fakeDevices returns p parts: on p fake executors with the host-staged
// NCCL fake between them, or (simulated) on one fake executor with the
// device-copy exchange.
func fakeDevices(t testing.TB, p int, simulated bool) *Devices {
	t.Helper()
	if simulated {
		d, err := SimulatedDevices(fakeExecutor(t, 1<<30, 7), p, "fake", false)
		require.NoError(t, err)
		return d
	}
	xs := make([]*executor.Executor, p)
	for i := range xs {
		xs[i] = fakeExecutor(t, 1<<30, uint64(i))
	}
	c, err := nccl.NewFake(xs)
	require.NoError(t, err)
	return &Devices{Executors: xs, Transport: c, Driver: "fake"}
}

// testGraphs are one graph of each generator, a star (one hub) and a graph
// smaller than the parts' alignment (empty parts).
func testGraphs(t testing.TB) []*frontier.CSR {
	t.Helper()
	return buildGraphs(t, nil,
		func() (*frontier.CSR, error) { return frontier.Kronecker(11, 16, 3) },
		func() (*frontier.CSR, error) { return frontier.Grid(30) },
		func() (*frontier.CSR, error) { return frontier.Road(25, 2) },
		func() (*frontier.CSR, error) { return frontier.RandomGeometric(3000, 10, 4) },
		func() (*frontier.CSR, error) {
			src, dst := make([]int32, 999), make([]int32, 999)
			for i := range dst {
				dst[i] = int32(i + 1)
			}
			return frontier.BuildUndirected("star", 1000, src, dst)
		},
		func() (*frontier.CSR, error) {
			return frontier.BuildUndirected("tiny", 90, []int32{0, 1, 2, 70, 5}, []int32{1, 2, 70, 89, 6})
		})
}

// buildGraphs appends the graph of every generator in builds to graphs.
func buildGraphs(t testing.TB, graphs []*frontier.CSR, builds ...func() (*frontier.CSR, error)) []*frontier.CSR {
	t.Helper()
	for _, build := range builds {
		g, err := build()
		require.NoError(t, err)
		graphs = append(graphs, g)
	}
	return graphs
}

// runLevels runs from root on s and returns the run and its levels.
func runLevels(t *testing.T, s *Session, root int32) (Run, []int32) {
	t.Helper()
	run, err := s.Run(root)
	require.NoError(t, err)
	levels, err := s.Levels()
	require.NoError(t, err)
	return run, levels
}

// checkSession opens a session of cfg over g on devs, runs checkRuns from
// nroots of its roots (frontier.Roots with seed) and closes it.
func checkSession(t *testing.T, devs *Devices, g *frontier.CSR, cfg Config, nroots int, seed uint64) {
	t.Helper()
	s, err := NewSession(devs, g, cfg)
	require.NoError(t, err, g.Name)
	roots, err := frontier.Roots(g, nroots, seed)
	require.NoError(t, err)
	checkRuns(t, s, roots)
	require.NoError(t, s.Close())
}

// checkRuns runs every root and checks the levels against the CPU
// reference, the decisions against the direction-optimizing BFS, and every
// step's measured exchange against the plan and the planner's prediction.
func checkRuns(t *testing.T, s *Session, roots []int32) {
	t.Helper()
	g := s.Graph()
	for _, root := range roots {
		ref, err := frontier.BFSDirectionOptimizing(g, root, planners.DefaultDirectionParams())
		require.NoError(t, err)
		run, levels := runLevels(t, s, root)
		require.True(t, slices.Equal(ref.Levels, levels), "%s from %d: levels differ (%v)", g.Name, root, frontier.Validate(g, root, levels))
		require.Equal(t, frontier.Stats(g, levels).Levels, run.Levels)
		pred, err := partition.PredictExchange(s.Plan(), partition.Traversal{Offsets: g.Offsets, Targets: g.Targets,
			Levels: ref.Levels, Root: root, Params: planners.DefaultDirectionParams()})
		require.NoError(t, err)
		require.Len(t, run.Steps, len(ref.Decisions))
		var total uint64
		for i, st := range run.Steps {
			require.Equal(t, ref.Decisions[i], st.Exchange.Decision, "step %d", i)
			require.Equal(t, st.Exchange.Bytes, st.MeasuredBytes, "%s step %d: the transport moved what the plan says", g.Name, i)
			require.Equal(t, pred.Levels[i], st.Exchange, "%s step %d: the prediction", g.Name, i)
			total += st.MeasuredBytes
		}
		require.Equal(t, pred.TotalBytes, total)
		require.Equal(t, total, run.ExchangeBytes)
	}
}

func TestRunMatchesReferenceOnEveryTransport(t *testing.T) {
	graphs := testGraphs(t)
	for _, p := range []int{1, 2, 3, 4} {
		for _, simulated := range []bool{false, true} {
			for gi, g := range graphs {
				strategy := partition.Strategy(1 + (p+gi)%2)
				t.Run(fmt.Sprintf("%s/p%d/sim=%v/%s", g.Name, p, simulated, strategy), func(t *testing.T) {
					checkSession(t, fakeDevices(t, p, simulated), g, Config{Strategy: strategy}, 2, uint64(p))
				})
			}
		}
	}
}

// eachForcedRun forces every level bottom-up, then every level top-down:
// with each, it opens a session over g on devs(), runs from every root,
// checks the levels against the CPU reference, calls check with the run,
// and closes the session.
func eachForcedRun(t *testing.T, devs func() *Devices, g *frontier.CSR, roots []int32, check func(Run)) {
	t.Helper()
	for _, dir := range []planners.DirectionParams{{Alpha: 1 << 40, Beta: 1}, {Alpha: 1, Beta: 1, MinAverageDegree: 1 << 20}} {
		s, err := NewSession(devs(), g, Config{Direction: dir})
		require.NoError(t, err)
		for _, root := range roots {
			ref, err := frontier.BFS(g, root)
			require.NoError(t, err)
			run, levels := runLevels(t, s, root)
			require.Equal(t, ref, levels)
			check(run)
		}
		require.NoError(t, s.Close())
	}
}

// TestRunBothDirectionsAndForms forces every level bottom-up, then every
// level top-down, so both collectives and both pair forms run on one graph.
func TestRunBothDirectionsAndForms(t *testing.T) {
	g, err := frontier.Kronecker(12, 16, 9)
	require.NoError(t, err)
	roots, err := frontier.Roots(g, 2, 3)
	require.NoError(t, err)
	seen := map[string]bool{}
	eachForcedRun(t, func() *Devices { return fakeDevices(t, 3, false) }, g, roots, func(run Run) {
		for _, st := range run.Steps {
			seen[st.Exchange.Collective.String()] = true
			if st.Exchange.QueuePairs > 0 {
				seen["queue"] = true
			}
			if st.Exchange.BitmapPairs > 0 {
				seen["bitmap"] = true
			}
		}
	})
	assert.Equal(t, map[string]bool{"all-gather": true, "all-to-all": true, "queue": true, "bitmap": true}, seen)
}

// TestSessionAllocatesThePlan checks that every part holds exactly its
// plan's bytes, and that a part that does not fit is refused with its
// device and numbers before anything is allocated.
func TestSessionAllocatesThePlan(t *testing.T) {
	g, err := frontier.Kronecker(10, 16, 1)
	require.NoError(t, err)
	devs := fakeDevices(t, 2, false)
	s, err := NewSession(devs, g, Config{})
	require.NoError(t, err)
	for i, x := range devs.Executors {
		assert.Equal(t, s.Plan().Parts[i].ResidentBytes, x.ResidentBytes())
	}
	require.NoError(t, s.Close())
	for _, x := range devs.Executors {
		assert.Zero(t, x.ResidentBytes())
	}
	_, err = NewSession(devs, g, Config{MaxResidentBytes: 20000})
	var pe *partition.Error
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, partition.OverBudget, pe.Kind)
	assert.Equal(t, 0, pe.Device)
	assert.ErrorContains(t, err, "partitioned BFS over kron-10: partition: device 0 (NVIDIA H200)")
	assert.ErrorContains(t, err, "above devices[0].budget_bytes 20000")
	for _, x := range devs.Executors {
		assert.Zero(t, x.ResidentBytes(), "nothing allocated")
	}
}

// TestSimulationSharesTheBudget: the parts on one device share its budget.
func TestSimulationSharesTheBudget(t *testing.T) {
	g, err := frontier.Kronecker(10, 16, 1)
	require.NoError(t, err)
	devs := fakeDevices(t, 4, true)
	budget, err := devs.Executors[0].Budget()
	require.NoError(t, err)
	s, err := NewSession(devs, g, Config{})
	require.NoError(t, err)
	defer s.Close()
	var total uint64
	for _, p := range s.Plan().Parts {
		assert.Equal(t, budget/4, p.BudgetBytes)
		total += p.ResidentBytes
	}
	assert.Equal(t, total, devs.Executors[0].ResidentBytes())
}

func TestSessionRefusals(t *testing.T) {
	g, err := frontier.Grid(10)
	require.NoError(t, err)
	devs := fakeDevices(t, 2, false)
	_, err = NewSession(nil, g, Config{})
	assert.ErrorContains(t, err, "Fix:")
	_, err = NewSession(devs, g, Config{BlockThreads: 48})
	assert.ErrorContains(t, err, "BlockThreads = 48")
	c, err := nccl.NewFake(devs.Executors[:1])
	require.NoError(t, err)
	_, err = NewSession(&Devices{Executors: devs.Executors, Transport: c}, g, Config{})
	assert.ErrorContains(t, err, "the exchange has 1 ranks for 2 parts")
	s, err := NewSession(devs, g, Config{})
	require.NoError(t, err)
	defer s.Close()
	_, err = s.Run(100)
	assert.ErrorContains(t, err, "root 100 is not a vertex of grid-10 (100 vertices)")
}
