package partbfs

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/executor/nccl"
	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/partition"
	"github.com/gpuplan/gpuplan/planners"
)

// rankBudget caps every part's budget in the rank tests, so that the
// one-process session and the ranks plan from the same budgets.
const rankBudget = 256 << 20

// fastTimeouts make a rank that fails show within a second.
var fastTimeouts = nccl.Options{InitTimeout: time.Second, CollectiveTimeout: time.Second}

// onRanks runs fn on p ranks of one fake communicator, each a goroutine
// with a fake executor of its own, and returns every rank's error; a rank
// whose communicator does not open returns that error.
func onRanks(t *testing.T, p int, opts nccl.Options, fn func(r Rank, x *executor.Executor) error) []error {
	t.Helper()
	xs := make([]*executor.Executor, p)
	for rank := range xs {
		xs[rank] = fakeExecutor(t, 1<<30, uint64(100+rank))
	}
	return onRanksOf(xs, fakeRanks(opts), nccl.NewFakeUniqueID(), fn)
}

// rankOpener opens rank of ranks of the communicator id on x.
type rankOpener func(x *executor.Executor, id nccl.UniqueID, rank, ranks int) (nccl.RankCollectives, error)

// fakeRanks opens fake ranks (nccl.OpenFakeRank) with opts.
func fakeRanks(opts nccl.Options) rankOpener {
	return func(x *executor.Executor, id nccl.UniqueID, rank, ranks int) (nccl.RankCollectives, error) {
		c, err := nccl.OpenFakeRank(x, id, rank, ranks, opts)
		if err != nil {
			return nil, err
		}
		return c, nil
	}
}

// onRanksOf runs fn on one rank per executor of xs (goroutines; an
// executor may appear more than once), their communicators opened with
// open and id, and returns every rank's error.
func onRanksOf(xs []*executor.Executor, open rankOpener, id nccl.UniqueID, fn func(r Rank, x *executor.Executor) error) []error {
	p := len(xs)
	errs := make([]error, p)
	var wg sync.WaitGroup
	for rank, x := range xs {
		wg.Go(func() {
			c, err := open(x, id, rank, p)
			if err != nil {
				errs[rank] = err
				return
			}
			defer c.Close()
			errs[rank] = fn(Rank{Rank: rank, Ranks: p, Comm: c}, x)
		})
	}
	wg.Wait()
	return errs
}

// rankRun is what one rank saw of one traversal.
type rankRun struct {
	run    Run
	levels []int32
}

// runRanks opens a RankSession of g on p ranks, runs every root on all of
// them and gathers the levels; it returns every rank's plan and runs, by
// rank and root.
func runRanks(t *testing.T, p int, g *frontier.CSR, cfg Config, roots []int32) ([]partition.Plan, [][]rankRun) {
	t.Helper()
	xs := make([]*executor.Executor, p)
	for rank := range xs {
		xs[rank] = fakeExecutor(t, 1<<30, uint64(100+rank))
	}
	return runRanksOf(t, xs, fakeRanks(nccl.Options{}), nccl.NewFakeUniqueID(), g, cfg, roots)
}

// runRanksOf is runRanks with one rank per executor of xs, their
// communicators opened with open and id.
func runRanksOf(t *testing.T, xs []*executor.Executor, open rankOpener, id nccl.UniqueID, g *frontier.CSR, cfg Config, roots []int32) ([]partition.Plan, [][]rankRun) {
	t.Helper()
	p := len(xs)
	plans := make([]partition.Plan, p)
	runs := make([][]rankRun, p)
	errs := onRanksOf(xs, open, id, func(r Rank, x *executor.Executor) error {
		s, err := NewRankSession(x, g, r, cfg)
		if err != nil {
			return err
		}
		defer s.Close()
		plans[r.Rank] = s.Plan()
		for _, root := range roots {
			run, err := s.Run(root)
			if err != nil {
				return err
			}
			levels, err := s.GatherLevels()
			if err != nil {
				return err
			}
			runs[r.Rank] = append(runs[r.Rank], rankRun{run: run, levels: levels})
		}
		return nil
	})
	for rank, err := range errs {
		require.NoError(t, err, "rank %d", rank)
	}
	return plans, runs
}

// rankGraphs are one graph of each generator and a graph whose first
// vertices are isolated, with an edgeless root among them.
func rankGraphs(t *testing.T) []*frontier.CSR {
	t.Helper()
	return buildGraphs(t, nil,
		func() (*frontier.CSR, error) { return frontier.Kronecker(10, 16, 5) },
		func() (*frontier.CSR, error) { return frontier.Grid(24) },
		func() (*frontier.CSR, error) { return frontier.RandomGeometric(2000, 10, 6) },
		func() (*frontier.CSR, error) { return frontier.Road(20, 3) },
		func() (*frontier.CSR, error) {
			src := []int32{300, 301, 302, 303, 310, 320, 250, 251}
			dst := []int32{301, 302, 303, 304, 311, 321, 251, 252}
			return frontier.BuildUndirected("isolated", 400, src, dst)
		})
}

// rankRoots are two roots with edges and, on graphs with one, an
// edgeless vertex.
func rankRoots(t *testing.T, g *frontier.CSR, seed uint64) []int32 {
	t.Helper()
	roots, err := frontier.Roots(g, 2, seed)
	require.NoError(t, err)
	for v := range int32(g.NumVertices()) {
		if g.Degree(v) == 0 {
			return append(roots, v)
		}
	}
	return roots
}

// TestRankSessionsMatchTheSession runs P ranks (goroutines on the fake
// communicator) over every test graph: the levels gathered on rank 0 equal
// the CPU reference's and the one-process session's; every rank takes the
// session's steps (the decisions and exchanges); and every step's bytes,
// summed over the ranks, are the session's and the planner's prediction.
func TestRankSessionsMatchTheSession(t *testing.T) {
	graphs := rankGraphs(t)
	for _, p := range []int{2, 3, 4} {
		for gi, g := range graphs {
			strategy := partition.Strategy(1 + (p+gi)%2)
			t.Run(fmt.Sprintf("%s/p%d/%s", g.Name, p, strategy), func(t *testing.T) {
				cfg := Config{Strategy: strategy, MaxResidentBytes: rankBudget}
				roots := rankRoots(t, g, uint64(p))
				plans, runs := runRanks(t, p, g, cfg, roots)
				checkRanksAgainstSession(t, fakeDevices(t, p, false), g, cfg, roots, plans, runs)
			})
		}
	}
}

// checkRanksAgainstSession opens the one-process session of g on devs
// and holds the ranks' plans and runs from roots against it.
func checkRanksAgainstSession(t *testing.T, devs *Devices, g *frontier.CSR, cfg Config, roots []int32, plans []partition.Plan, runs [][]rankRun) {
	t.Helper()
	s, err := NewSession(devs, g, cfg)
	require.NoError(t, err)
	defer s.Close()
	for rank := range plans {
		assert.Equal(t, s.Plan(), plans[rank], "rank %d plans the session's partition", rank)
	}
	for i, root := range roots {
		checkRankRun(t, s, root, runs, i)
	}
}

// checkRankRun holds the ranks' i-th run, from root, against the CPU
// reference, the session's run and the prediction.
func checkRankRun(t *testing.T, s *Session, root int32, runs [][]rankRun, i int) {
	t.Helper()
	g := s.Graph()
	ref, err := frontier.BFS(g, root)
	require.NoError(t, err)
	want, levels := runLevels(t, s, root)
	require.Equal(t, ref, levels)
	require.Equal(t, ref, runs[0][i].levels, "%s from %d: the levels gathered on rank 0 (%v)", g.Name, root, frontier.Validate(g, root, runs[0][i].levels))
	pred, err := partition.PredictExchange(s.Plan(), partition.Traversal{Offsets: g.Offsets, Targets: g.Targets,
		Levels: ref, Root: root, Params: planners.DefaultDirectionParams()})
	require.NoError(t, err)
	for rank := range runs {
		if rank > 0 {
			assert.Nil(t, runs[rank][i].levels, "only rank 0 returns the gathered levels")
		}
		require.Len(t, runs[rank][i].run.Steps, len(want.Steps), "rank %d", rank)
		require.Equal(t, want.Levels, runs[rank][i].run.Levels)
	}
	var total uint64
	for k, st := range want.Steps {
		var bytes uint64
		for rank := range runs {
			got := runs[rank][i].run.Steps[k]
			require.Equal(t, st.Exchange, got.Exchange, "%s from %d, rank %d step %d: the session's step", g.Name, root, rank, k)
			require.Equal(t, st.Found, got.Found)
			bytes += got.MeasuredBytes
		}
		require.Equal(t, st.MeasuredBytes, bytes, "step %d: the ranks received what the session moved", k)
		require.Equal(t, pred.Levels[k].Bytes, bytes, "step %d: the prediction", k)
		total += bytes
	}
	require.Equal(t, pred.TotalBytes, total)
}

// TestRankSessionRunsBothDirections forces every level bottom-up, then
// every level top-down, on three ranks: both collectives run and the
// levels are the reference's.
func TestRankSessionRunsBothDirections(t *testing.T) {
	g, err := frontier.Kronecker(11, 16, 9)
	require.NoError(t, err)
	roots, err := frontier.Roots(g, 2, 3)
	require.NoError(t, err)
	seen := map[string]bool{}
	for _, dir := range []planners.DirectionParams{{Alpha: 1 << 40, Beta: 1}, {Alpha: 1, Beta: 1, MinAverageDegree: 1 << 20}} {
		_, runs := runRanks(t, 3, g, Config{Direction: dir}, roots)
		for i, root := range roots {
			ref, err := frontier.BFS(g, root)
			require.NoError(t, err)
			require.Equal(t, ref, runs[0][i].levels)
			for _, st := range runs[0][i].run.Steps {
				seen[st.Exchange.Collective.String()] = true
			}
		}
	}
	assert.Equal(t, map[string]bool{"all-gather": true, "all-to-all": true}, seen)
}

// TestRankSessionRefusals: bad ranks and communicators are refused with
// the field named and a fix, before any exchange.
func TestRankSessionRefusals(t *testing.T) {
	g, err := frontier.Grid(10)
	require.NoError(t, err)
	x := fakeExecutor(t, 1<<30, 1)
	c, err := nccl.OpenFakeRank(x, nccl.NewFakeUniqueID(), 0, 1, nccl.Options{})
	require.NoError(t, err)
	defer c.Close()
	cases := []struct {
		name string
		x    *executor.Executor
		r    Rank
		cfg  Config
		want string
	}{
		{"no communicator", x, Rank{Rank: 0, Ranks: 1}, Config{}, "Rank.Comm is nil"},
		{"no executor", nil, Rank{Rank: 0, Ranks: 1, Comm: c}, Config{}, "needs an executor and a graph"},
		{"rank past the world", x, Rank{Rank: 2, Ranks: 2, Comm: c}, Config{}, "Rank.Rank = 2 is outside 0..1 (a world of 2 ranks)"},
		{"negative rank", x, Rank{Rank: -1, Ranks: 1, Comm: c}, Config{}, "Rank.Rank = -1 is outside 0..0"},
		{"too many ranks", x, Rank{Rank: 0, Ranks: MaxParts + 1, Comm: c}, Config{}, "Rank.Ranks = 65 is outside 1..64"},
		{"world size not the communicator's", x, Rank{Rank: 0, Ranks: 2, Comm: c}, Config{}, "the communicator has 1 ranks but Rank.Ranks is 2"},
		{"bad block size", x, Rank{Rank: 0, Ranks: 1, Comm: c}, Config{BlockThreads: 48}, "BlockThreads = 48"},
		{"part over budget", x, Rank{Rank: 0, Ranks: 1, Comm: c}, Config{MaxResidentBytes: 2000}, "above devices[0].budget_bytes 2000"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewRankSession(tc.x, g, tc.r, tc.cfg)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), "Fix:")
			assert.Zero(t, x.ResidentBytes(), "nothing stays allocated")
		})
	}
	s, err := NewRankSession(x, g, Rank{Rank: 0, Ranks: 1, Comm: c}, Config{})
	require.NoError(t, err)
	assert.Equal(t, s.Plan().Parts[0].ResidentBytes, x.ResidentBytes(), "the part holds exactly its plan's bytes")
	_, err = s.Run(100)
	assert.ErrorContains(t, err, "root 100 is not a vertex of grid-10 (100 vertices)")
	require.NoError(t, s.Close())
	assert.Zero(t, x.ResidentBytes())
}

// TestRankFailuresReachEveryRank: when one rank fails, every other rank
// returns an error (naming the failing rank where it can tell) well within
// the communicator's timeout, and none hangs.
func TestRankFailuresReachEveryRank(t *testing.T) {
	g, err := frontier.Kronecker(9, 16, 2)
	require.NoError(t, err)
	other, err := frontier.Kronecker(9, 16, 3)
	require.NoError(t, err)
	const bad = 1
	cases := []struct {
		name string
		// rank runs the failing rank's part; the others open a session
		// of g and run from root 5.
		rank    func(r Rank, x *executor.Executor) error
		own     string
		others  string
		timeout bool
	}{
		{"a bad root", func(r Rank, x *executor.Executor) error { return runFrom(x, g, r, -3) },
			"root -3 is not a vertex", "rank 1 was given a root that is not a vertex", false},
		{"another root", func(r Rank, x *executor.Executor) error { return runFrom(x, g, r, 7) },
			"runs from root", "runs from root", false},
		{"another graph", func(r Rank, x *executor.Executor) error { return runFrom(x, other, r, 5) },
			"holds another graph", "holds another graph", false},
		{"a rank that never opens its session", func(Rank, *executor.Executor) error { return nil }, "", "did not complete within 1s (rank 1 never joined it)", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, p := range []int{2, 3} {
				t0 := time.Now()
				errs := onRanks(t, p, fastTimeouts, func(r Rank, x *executor.Executor) error {
					if r.Rank == bad {
						return tc.rank(r, x)
					}
					return runFrom(x, g, r, 5)
				})
				elapsed := time.Since(t0)
				for rank, err := range errs {
					if rank == bad {
						if tc.own != "" {
							require.ErrorContains(t, err, tc.own)
						}
						continue
					}
					require.Error(t, err, "rank %d of %d", rank, p)
					assert.Contains(t, err.Error(), tc.others, "rank %d of %d", rank, p)
					assert.Contains(t, err.Error(), "Fix:")
				}
				if tc.timeout {
					assert.Less(t, elapsed, 5*time.Second, "bounded by the collective timeout")
				} else {
					assert.Less(t, elapsed, 900*time.Millisecond, "the ranks learn of the failure before any timeout")
				}
			}
		})
	}
}

// TestRankThatNeverJoins: a rank that never opens its communicator makes
// every other rank's open fail with a timeout naming it.
func TestRankThatNeverJoins(t *testing.T) {
	id := nccl.NewFakeUniqueID()
	x := fakeExecutor(t, 1<<30, 1)
	t0 := time.Now()
	_, err := nccl.OpenFakeRank(x, id, 0, 2, fastTimeouts)
	var te *nccl.TimeoutError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, []int{1}, te.Missing)
	assert.Less(t, time.Since(t0), 3*time.Second)
}

// runFrom opens a RankSession of g on x and runs from root.
func runFrom(x *executor.Executor, g *frontier.CSR, r Rank, root int32) error {
	s, err := NewRankSession(x, g, r, Config{})
	if err != nil {
		return err
	}
	defer s.Close()
	_, err = s.Run(root)
	return err
}

// TestGatherWordsChunks: words past a chunk are gathered in several
// all-gathers, and the chunk's words are zero again after.
func TestGatherWordsChunks(t *testing.T) {
	got := make([][][]uint64, 3)
	errs := onRanks(t, 3, nccl.Options{}, func(r Rank, x *executor.Executor) error {
		buf, err := x.Alloc(8 * 2 * 4)
		if err != nil {
			return err
		}
		words := []uint64{uint64(10 * r.Rank), uint64(10*r.Rank + 1), uint64(10*r.Rank + 2), uint64(10*r.Rank + 3), uint64(10*r.Rank + 4)}
		if got[r.Rank], err = gatherWords(r.Comm, x, buf, 2, words); err != nil {
			return err
		}
		row, err := x.DownloadRange(buf, 0, 16)
		if err == nil && fmt.Sprint(row) != fmt.Sprint(make([]byte, 16)) {
			err = fmt.Errorf("rank %d: the chunk's words are %v after the gather", r.Rank, row)
		}
		return err
	})
	for _, err := range errs {
		require.NoError(t, err)
	}
	want := [][]uint64{{0, 1, 2, 3, 4}, {10, 11, 12, 13, 14}, {20, 21, 22, 23, 24}}
	for rank := range got {
		assert.Equal(t, want, got[rank])
	}
}
