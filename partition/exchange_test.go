package partition

import (
	"github.com/gpuplan/gpuplan/planners"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPairExchange(t *testing.T) {
	tests := []struct {
		count, words uint64
		form         ExchangeForm
		bytes        uint64
	}{
		{0, 10, ExchangeQueue, 0},
		{20, 10, ExchangeQueue, 80},
		{21, 10, ExchangeBitmap, 80},
		{640, 10, ExchangeBitmap, 80},
		{0, 0, ExchangeQueue, 0},
	}
	for _, tc := range tests {
		f, b := PairExchange(tc.count, tc.words)
		assert.Equal(t, tc.form, f, "%d in %d words", tc.count, tc.words)
		assert.Equal(t, tc.bytes, b)
		assert.LessOrEqual(t, b, 8*tc.words, "never more than the slice")
	}
	assert.Equal(t, "queue", ExchangeQueue.String())
	assert.Equal(t, "bitmap", ExchangeBitmap.String())
	assert.Equal(t, "all-gather", CollectiveAllGather.String())
	assert.Equal(t, "all-to-all", CollectiveAllToAll.String())
}

func threeParts(t *testing.T) Plan {
	t.Helper()
	plan, err := New(Request{Offsets: offsetsOf(make([]uint64, 300)), Devices: devices(3, 1<<30), Strategy: Blocked})
	require.NoError(t, err)
	require.Equal(t, []uint64{0, 128, 256, 300}, plan.Bounds())
	return plan
}

func TestLevelExchange(t *testing.T) {
	plan := threeParts(t)
	bu, err := plan.LevelExchange(planners.BFSDirectionDecision{Level: 3, Direction: planners.DirectionBottomUp}, nil)
	require.NoError(t, err)
	assert.Equal(t, LevelExchange{Decision: planners.BFSDirectionDecision{Level: 3, Direction: planners.DirectionBottomUp},
		Collective: CollectiveAllGather, GatherBytes: 6 * 16, Bytes: 6 * 16}, bu)

	// Devices 0 and 1 have 2-word slices (a queue of up to 4 vertices),
	// device 2 a 1-word slice (up to 2).
	counts := [][]uint64{{0, 4, 3}, {9, 0, 2}, {0, 40, 0}}
	td, err := plan.LevelExchange(planners.BFSDirectionDecision{Level: 1, Direction: planners.DirectionTopDown}, counts)
	require.NoError(t, err)
	assert.Equal(t, LevelExchange{Decision: planners.BFSDirectionDecision{Level: 1, Direction: planners.DirectionTopDown},
		Collective: CollectiveAllToAll, QueuePairs: 3, BitmapPairs: 3, CountBytes: 6 * 24,
		QueueBytes: 4 * (4 + 2 + 0), BitmapBytes: 8 + 16 + 16, Bytes: 6*24 + 24 + 40}, td)
	forms, err := plan.Forms(counts)
	require.NoError(t, err)
	assert.Equal(t, [][]ExchangeForm{{0, ExchangeQueue, ExchangeBitmap}, {ExchangeBitmap, 0, ExchangeQueue}, {ExchangeQueue, ExchangeBitmap, 0}}, forms)

	for _, bad := range []struct {
		counts [][]uint64
		msg    string
	}{
		{[][]uint64{{0}}, "1 rows for 3 devices"},
		{[][]uint64{{0, 0, 0}, {0, 0}, {0, 0, 0}}, "row 1 has 2 entries"},
		{[][]uint64{{0, 0, 45}, {0, 0, 0}, {0, 0, 0}}, "counts[0][2] is 45, above the 44 vertices of device 2"},
	} {
		_, err := plan.LevelExchange(planners.BFSDirectionDecision{Direction: planners.DirectionTopDown}, bad.counts)
		assert.ErrorContains(t, err, bad.msg)
		assert.ErrorContains(t, err, "Fix:")
	}
}

// testGraph builds the CSR of an undirected graph from an edge list
// (sorted, deduplicated neighbours, no self loops).
func testGraph(n int, edges [][2]int32) (offsets []uint64, targets []int32) {
	adj := make([][]int32, n)
	for _, e := range edges {
		if e[0] != e[1] {
			adj[e[0]] = append(adj[e[0]], e[1])
			adj[e[1]] = append(adj[e[1]], e[0])
		}
	}
	offsets = make([]uint64, n+1)
	for v := range adj {
		slices.Sort(adj[v])
		adj[v] = slices.Compact(adj[v])
		targets = append(targets, adj[v]...)
		offsets[v+1] = uint64(len(targets))
	}
	return offsets, targets
}

// testLevels is a plain queue BFS.
func testLevels(offsets []uint64, targets []int32, root int32) []int32 {
	levels := make([]int32, len(offsets)-1)
	for i := range levels {
		levels[i] = -1
	}
	levels[root] = 0
	queue := []int32{root}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		for _, v := range targets[offsets[u]:offsets[u+1]] {
			if levels[v] == -1 {
				levels[v] = levels[u] + 1
				queue = append(queue, v)
			}
		}
	}
	return levels
}

// TestPredictExchangePath: a path over two parts crosses the
// boundary once each way, so every top-down step moves the counts and
// two steps move one queued vertex each.
func TestPredictExchangePath(t *testing.T) {
	var edges [][2]int32
	for v := range int32(199) {
		edges = append(edges, [2]int32{v, v + 1})
	}
	off, tgt := testGraph(200, edges)
	plan, err := New(Request{Offsets: off, Devices: devices(2, 1<<30), Strategy: Blocked})
	require.NoError(t, err)
	require.Equal(t, []uint64{0, 128, 200}, plan.Bounds())
	pred, err := PredictExchange(plan, Traversal{Offsets: off, Targets: tgt, Levels: testLevels(off, tgt, 0), Root: 0, Params: planners.DefaultDirectionParams()})
	require.NoError(t, err)
	require.Len(t, pred.Levels, 200, "199 steps discover a level, the last finds nothing")
	for i, l := range pred.Levels {
		assert.Equal(t, planners.ReasonLowAverageDegree, l.Decision.Reason)
		assert.EqualValues(t, i+1, l.Decision.Level)
		want := uint64(0)
		if i == 127 || i == 128 { // frontiers {127} and {128}
			want = 4
		}
		assert.Equal(t, want, l.QueueBytes, "step %d", i)
	}
	assert.EqualValues(t, 200*32+8, pred.TotalBytes)
}

// TestPredictExchangeMatchesBruteForce compares every top-down
// step's counts with sets built edge by edge, over random graphs, roots,
// device counts and thresholds (some steps go bottom-up).
func TestPredictExchangeMatchesBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 9))
	for range 60 {
		n := 2 + r.IntN(900)
		var edges [][2]int32
		for range r.IntN(8 * n) {
			edges = append(edges, [2]int32{int32(r.IntN(n)), int32(r.IntN(n))})
		}
		off, tgt := testGraph(n, edges)
		root := int32(r.IntN(n))
		levels := testLevels(off, tgt, root)
		strategy := Strategy(1 + r.IntN(2))
		plan, err := New(Request{Offsets: off, Devices: devices(1+r.IntN(6), 1<<30), Strategy: strategy})
		require.NoError(t, err)
		params := planners.DirectionParams{Alpha: 1 + r.Uint64N(20), Beta: 1 + r.Uint64N(30), MinAverageDegree: r.Uint64N(3)}
		pred, err := PredictExchange(plan, Traversal{Offsets: off, Targets: tgt, Levels: levels, Root: root, Params: params})
		require.NoError(t, err)
		checkAgainstBruteForce(t, plan, off, tgt, levels, pred)
	}
}

func checkAgainstBruteForce(t *testing.T, plan Plan, off []uint64, tgt []int32, levels []int32, pred ExchangePrediction) {
	t.Helper()
	maxLevel := slices.Max(levels)
	require.Len(t, pred.Levels, int(maxLevel)+1, "one step per level and the final one")
	var total uint64
	for i, l := range pred.Levels {
		total += l.Bytes
		if l.Decision.Direction == planners.DirectionBottomUp {
			require.Equal(t, plan.Exchange.AllGatherBytes, l.Bytes)
			continue
		}
		parts := len(plan.Parts)
		sets := make([]map[[2]int]bool, parts)
		for u, lu := range levels {
			if lu != int32(i) {
				continue
			}
			d := plan.Owner(uint64(u))
			for _, v := range tgt[off[u]:off[u+1]] {
				if e := plan.Owner(uint64(v)); e != d {
					if sets[d] == nil {
						sets[d] = map[[2]int]bool{}
					}
					sets[d][[2]int{e, int(v)}] = true
				}
			}
		}
		counts := make([][]uint64, parts)
		for d := range counts {
			counts[d] = make([]uint64, parts)
			for k := range sets[d] {
				counts[d][k[0]]++
			}
		}
		want, err := plan.LevelExchange(l.Decision, counts)
		require.NoError(t, err)
		require.Equal(t, want, l, "step %d", i)
	}
	require.Equal(t, total, pred.TotalBytes)
}

func TestPredictExchangeRefusesBadTraversals(t *testing.T) {
	off, tgt := testGraph(100, [][2]int32{{0, 1}, {1, 2}, {2, 70}})
	plan, err := New(Request{Offsets: off, Devices: devices(2, 1<<30), Strategy: Blocked})
	require.NoError(t, err)
	good := Traversal{Offsets: off, Targets: tgt, Levels: testLevels(off, tgt, 0), Params: planners.DefaultDirectionParams()}
	tests := []struct {
		name string
		edit func(*Traversal)
		msg  string
	}{
		{"offsets", func(tr *Traversal) { tr.Offsets = tr.Offsets[:50] }, "describe 49 vertices, the plan 100"},
		{"targets", func(tr *Traversal) { tr.Targets = tr.Targets[1:] }, "5 targets for 6 edge entries"},
		{"levels", func(tr *Traversal) { tr.Levels = tr.Levels[:99] }, "99 levels for 100 vertices"},
		{"root", func(tr *Traversal) { tr.Root = 1 }, "root 1 is not a vertex at level 0"},
		{"negative", func(tr *Traversal) { tr.Levels[5] = -2 }, "levels[5] is -2"},
		{"huge", func(tr *Traversal) { tr.Levels[5] = 1 << 30 }, "levels[5] is 1073741824"},
		{"gap", func(tr *Traversal) { tr.Levels[5] = 9 }, "no vertex at level 4"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := good
			tr.Levels = slices.Clone(good.Levels)
			tc.edit(&tr)
			_, err := PredictExchange(plan, tr)
			assert.ErrorContains(t, err, tc.msg)
			assert.ErrorContains(t, err, "Fix:")
		})
	}
	_, err = PredictExchange(plan, good)
	assert.NoError(t, err)
}
