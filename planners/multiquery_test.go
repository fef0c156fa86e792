package planners

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/internal/memcheck"
)

func mq(id uint32, hash, key, graph, frontier, scratch, output uint64) MultiQuery {
	return MultiQuery{Query: id, GraphLayoutHash: hash, TraversalKey: key, GraphUploadBytes: graph,
		FrontierBytes: frontier, ScratchBytes: scratch, OutputBytes: output}
}

func requireMultiQueryError(t *testing.T, err error, kind MultiQueryErrorKind) *MultiQueryError {
	t.Helper()
	return requireKindError(t, err, kind, func(e *MultiQueryError) MultiQueryErrorKind { return e.Kind })
}

func TestPlanMultiQuerySharesOneLaunch(t *testing.T) {
	plan, err := PlanMultiQueryExecution([]MultiQuery{
		mq(3, 0xabc, 0x10, 4096, 256, 128, 64), mq(1, 0xabc, 0x10, 4096, 256, 64, 64), mq(2, 0xabc, 0x10, 4096, 256, 32, 64),
	}, 8192)
	require.NoError(t, err)
	assert.Equal(t, uint64(1), plan.LaunchCount)
	assert.Equal(t, uint64(2), plan.AvoidedLaunches)
	assert.Equal(t, uint64(2), plan.AvoidedHostFences)
	assert.Equal(t, uint64(8192), plan.AvoidedGraphUploadBytes)
	assert.Equal(t, GraphReuseTelemetry{ColdUploads: 1, WarmReuses: 2, UploadBytes: 4096, AvoidedUploadBytes: 8192}, plan.GraphReuse)
	require.Len(t, plan.Groups, 1)
	g := plan.Groups[0]
	assert.Equal(t, []uint32{1, 2, 3}, g.Queries)
	assert.Equal(t, uint64(4096+768+128+192), g.ResidentBytes)
	assert.Equal(t, uint64(128), g.PeakScratchBytes)
	assert.True(t, plan.FinalOnlyHostFencePerGroup)
}

func TestPlanMultiQuerySplitsByBudget(t *testing.T) {
	three := []MultiQuery{
		mq(1, 0xabc, 0x10, 100, 100, 10, 10), mq(2, 0xabc, 0x10, 100, 100, 10, 10), mq(3, 0xabc, 0x10, 100, 100, 10, 10),
	}
	plan, err := PlanMultiQueryExecution(three, 350)
	require.NoError(t, err)
	require.Len(t, plan.Groups, 2)
	assert.Equal(t, []uint32{1, 2}, plan.Groups[0].Queries)
	assert.Equal(t, uint64(330), plan.Groups[0].ResidentBytes)
	assert.Equal(t, uint64(100), plan.Groups[0].GraphUploadBytes)
	assert.Equal(t, []uint32{3}, plan.Groups[1].Queries)
	assert.Equal(t, uint64(220), plan.Groups[1].ResidentBytes)
	assert.Equal(t, uint64(0), plan.Groups[1].GraphUploadBytes)
	assert.Equal(t, uint64(100), plan.Groups[1].AvoidedGraphUploadBytes)
	assert.Equal(t, uint64(1), plan.AvoidedLaunches)
	assert.Equal(t, uint64(200), plan.AvoidedGraphUploadBytes)
	assert.Equal(t, GraphReuseTelemetry{ColdUploads: 1, WarmReuses: 2, UploadBytes: 100, AvoidedUploadBytes: 200}, plan.GraphReuse)
	assert.Equal(t, uint64(330), plan.PeakResidentBytes)

	_, err = PlanMultiQueryExecution(three[:2], 150)
	me := requireMultiQueryError(t, err, MultiQueryOverBudget)
	assert.Equal(t, uint64(0xabc), me.GraphLayoutHash)
	assert.Equal(t, uint64(0x10), me.TraversalKey)
	assert.Equal(t, uint64(220), me.RequiredBytes)
	assert.Equal(t, uint64(150), me.BudgetBytes)

	four := append(slices.Clone(three), mq(4, 0xabc, 0x10, 100, 100, 10, 10))
	plan, err = PlanMultiQueryExecution(four, 220)
	require.NoError(t, err)
	assert.Equal(t, uint64(4), plan.LaunchCount)
	assert.Equal(t, uint64(0), plan.AvoidedLaunches)
	assert.Equal(t, uint64(300), plan.AvoidedGraphUploadBytes)
}

func TestPlanMultiQueryOrdersGroupsByKey(t *testing.T) {
	plan, err := PlanMultiQueryExecution([]MultiQuery{
		mq(1, 0xdef, 0x10, 1024, 8, 8, 8), mq(2, 0xabc, 0x20, 1024, 8, 8, 8), mq(3, 0xabc, 0x10, 1024, 8, 8, 8),
	}, 1<<20)
	require.NoError(t, err)
	require.Len(t, plan.Groups, 3)
	type key struct{ hash, traversal, upload uint64 }
	var got []key
	for _, g := range plan.Groups {
		got = append(got, key{g.GraphLayoutHash, g.TraversalKey, g.GraphUploadBytes})
	}
	assert.Equal(t, []key{{0xabc, 0x10, 1024}, {0xabc, 0x20, 0}, {0xdef, 0x10, 1024}}, got)
	assert.Equal(t, GraphReuseTelemetry{ColdUploads: 2, WarmReuses: 1, UploadBytes: 2048, AvoidedUploadBytes: 1024}, plan.GraphReuse)
}

func TestPlanMultiQuerySixtyFourQueriesReuseScratch(t *testing.T) {
	queries := make([]MultiQuery, 64)
	for i := range queries {
		queries[i] = mq(uint32(63-i), 7, 9, 1<<16, 64, uint64(i)*16, 32)
	}
	plan, err := PlanMultiQueryExecution(queries, 1<<20)
	require.NoError(t, err)
	require.Len(t, plan.Groups, 1)
	g := plan.Groups[0]
	assert.Equal(t, uint64(63*16), g.PeakScratchBytes)
	assert.Equal(t, uint64(1<<16+64*64+63*16+64*32), g.ResidentBytes)
	assert.Equal(t, uint64(63), plan.AvoidedLaunches)
	assert.Equal(t, uint32(0), g.Queries[0])
	assert.Equal(t, uint64(63<<16), plan.AvoidedGraphUploadBytes)
}

func TestPlanMultiQuerySingleAndEmpty(t *testing.T) {
	plan, err := PlanMultiQueryExecution(nil, 1)
	require.NoError(t, err)
	assert.Equal(t, MultiQueryExecutionPlan{Groups: []MultiQueryGroup{}, FinalOnlyHostFencePerGroup: true}, plan)

	plan, err = PlanMultiQueryExecution([]MultiQuery{mq(5, 1, 2, 100, 10, 20, 30)}, 160)
	require.NoError(t, err)
	require.Len(t, plan.Groups, 1)
	assert.Equal(t, uint64(160), plan.Groups[0].ResidentBytes)
	assert.Equal(t, GraphReuseTelemetry{ColdUploads: 1, UploadBytes: 100}, plan.Groups[0].GraphReuse)
	assert.Equal(t, plan.Groups[0].GraphReuse, plan.GraphReuse)
	assert.Equal(t, uint64(1), plan.LaunchCount)

	_, err = PlanMultiQueryExecution([]MultiQuery{mq(5, 1, 2, 100, 10, 20, 30)}, 159)
	requireMultiQueryError(t, err, MultiQueryOverBudget)
	_, err = PlanMultiQueryExecution([]MultiQuery{mq(5, 0, 2, 100, 10, 20, 30)}, 159)
	requireMultiQueryError(t, err, MultiQueryZeroGraphHash)
	_, err = PlanMultiQueryExecution([]MultiQuery{mq(5, 1, 0, 100, 10, 20, 30)}, 159)
	requireMultiQueryError(t, err, MultiQueryZeroTraversalKey)
	_, err = PlanMultiQueryExecution([]MultiQuery{mq(5, 1, 2, 0, 10, 20, 30)}, 159)
	requireMultiQueryError(t, err, MultiQueryZeroGraphUploadBytes)
}

func TestPlanMultiQueryErrors(t *testing.T) {
	ok := mq(1, 0xabc, 0x10, 100, 1, 1, 1)
	tests := []struct {
		name    string
		queries []MultiQuery
		budget  uint64
		kind    MultiQueryErrorKind
		index   int
	}{
		{"zero budget", []MultiQuery{mq(1, 0, 0, 0, 0, 0, 0)}, 0, MultiQueryZeroBudget, 0},
		{"zero budget empty", nil, 0, MultiQueryZeroBudget, 0},
		{"duplicate", []MultiQuery{ok, mq(2, 0xabc, 0x10, 100, 1, 1, 1), mq(1, 0xabc, 0x10, 100, 1, 1, 1)}, 1000, MultiQueryDuplicateQuery, 2},
		{"duplicate before zero hash", []MultiQuery{ok, mq(1, 0, 0, 0, 1, 1, 1)}, 1000, MultiQueryDuplicateQuery, 1},
		{"zero hash", []MultiQuery{ok, mq(2, 0, 0, 0, 1, 1, 1)}, 1000, MultiQueryZeroGraphHash, 1},
		{"zero key", []MultiQuery{ok, mq(2, 0xabc, 0, 0, 1, 1, 1)}, 1000, MultiQueryZeroTraversalKey, 1},
		{"zero graph bytes", []MultiQuery{ok, mq(2, 0xabc, 0x10, 0, 1, 1, 1)}, 1000, MultiQueryZeroGraphUploadBytes, 1},
		{"mismatch", []MultiQuery{ok, mq(2, 0xabc, 0x20, 200, 1, 1, 1)}, 1000, MultiQueryGraphUploadBytesMismatch, 1},
		// Input order decides: the invalid second query wins over the
		// over-budget first one.
		{"validation before budget", []MultiQuery{mq(1, 0xabc, 0x10, 100, 5000, 1, 1), mq(2, 0xabc, 0, 100, 1, 1, 1)}, 1000, MultiQueryZeroTraversalKey, 1},
		{"over budget", []MultiQuery{ok, mq(2, 0xabc, 0x20, 100, 5000, 1, 1)}, 1000, MultiQueryOverBudget, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := PlanMultiQueryExecution(tc.queries, tc.budget)
			me := requireMultiQueryError(t, err, tc.kind)
			assert.Equal(t, tc.index, me.Index)
		})
	}
	_, err := PlanMultiQueryExecution([]MultiQuery{ok, mq(2, 0xabc, 0x20, 200, 1, 1, 1)}, 1000)
	me := requireMultiQueryError(t, err, MultiQueryGraphUploadBytesMismatch)
	assert.Equal(t, MultiQueryError{Kind: MultiQueryGraphUploadBytesMismatch, Index: 1, Query: 2, GraphLayoutHash: 0xabc, ExpectedBytes: 100, ActualBytes: 200}, *me)
	assert.Equal(t, "GraphUploadBytesMismatch", MultiQueryGraphUploadBytesMismatch.String())
	assert.Equal(t, "MultiQueryErrorKind(0)", MultiQueryErrorKind(0).String())
}

func TestPlanMultiQueryOverflow(t *testing.T) {
	const max = math.MaxUint64
	tests := []struct {
		name    string
		queries []MultiQuery
		field   string
	}{
		{"resident", []MultiQuery{mq(1, 1, 1, max, 1, 0, 0)}, "group resident bytes"},
		{"frontier", []MultiQuery{mq(1, 1, 1, 1, max-1, 0, 0), mq(2, 1, 1, 1, 2, 0, 0)}, "group frontier bytes"},
		{"output", []MultiQuery{mq(1, 1, 1, 1, 0, 0, max-1), mq(2, 1, 1, 1, 0, 0, 2)}, "group output bytes"},
		// Many warm reuses of a huge graph: the avoided bytes overflow.
		{"avoided", []MultiQuery{mq(1, 1, 1, max/2, 0, 0, 0), mq(2, 1, 2, max/2, 0, 0, 0), mq(3, 1, 3, max/2, 0, 0, 0), mq(4, 1, 4, max/2, 0, 0, 0)}, "avoided graph upload bytes"},
		{"upload", []MultiQuery{mq(1, 1, 1, max/2, 0, 0, 0), mq(2, 2, 1, max/2, 0, 0, 0), mq(3, 3, 1, max/2, 0, 0, 0)}, "graph upload bytes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := PlanMultiQueryExecution(tc.queries, max)
			requireOverflow(t, err, tc.field)
		})
	}
}

func randomMultiQueries(r *rand.Rand) ([]MultiQuery, uint64) {
	n := 1 + r.IntN(32)
	graphs := []uint64{0, 64 + r.Uint64N(256), 64 + r.Uint64N(256), 64 + r.Uint64N(256)}
	queries := make([]MultiQuery, n)
	for i, id := range r.Perm(n) {
		h := 1 + r.Uint64N(3)
		queries[i] = mq(uint32(id)*5, h, 1+r.Uint64N(3), graphs[h], r.Uint64N(64), r.Uint64N(64), r.Uint64N(64))
	}
	return queries, 256 + r.Uint64N(512)
}

// checkMultiQueryPlan checks grouping, budget and identity: every query
// appears once, in a launch of its own key, groups are sorted, budgets hold,
// the greedy split is maximal, and the totals and telemetry add up.
func checkMultiQueryPlan(t *testing.T, queries []MultiQuery, budget uint64, plan MultiQueryExecutionPlan) {
	t.Helper()
	byID := make(map[uint32]MultiQuery, len(queries))
	for _, q := range queries {
		byID[q.Query] = q
	}
	seen := make(map[uint32]bool)
	seenGraph := make(map[uint64]bool)
	var sum MultiQueryExecutionPlan
	var peak uint64
	for gi, g := range plan.Groups {
		require.NotEmpty(t, g.Queries)
		assert.True(t, slices.IsSorted(g.Queries))
		if gi > 0 {
			prev := plan.Groups[gi-1]
			assert.True(t, prev.GraphLayoutHash < g.GraphLayoutHash ||
				prev.GraphLayoutHash == g.GraphLayoutHash && prev.TraversalKey <= g.TraversalKey)
		}
		var frontier, scratch, output uint64
		var graph uint64
		for _, id := range g.Queries {
			q := byID[id]
			assert.False(t, seen[id])
			seen[id] = true
			assert.Equal(t, g.GraphLayoutHash, q.GraphLayoutHash)
			assert.Equal(t, g.TraversalKey, q.TraversalKey)
			graph = q.GraphUploadBytes
			frontier += q.FrontierBytes
			scratch = max(scratch, q.ScratchBytes)
			output += q.OutputBytes
		}
		assert.Equal(t, graph+frontier+scratch+output, g.ResidentBytes)
		assert.LessOrEqual(t, g.ResidentBytes, budget)
		n := uint64(len(g.Queries))
		assert.Equal(t, n-1, g.AvoidedLaunches)
		assert.Equal(t, n-1, g.AvoidedHostFences)
		if !seenGraph[g.GraphLayoutHash] {
			assert.Equal(t, graph, g.GraphUploadBytes)
			assert.Equal(t, (n-1)*graph, g.AvoidedGraphUploadBytes)
		} else {
			assert.Equal(t, uint64(0), g.GraphUploadBytes)
			assert.Equal(t, n*graph, g.AvoidedGraphUploadBytes)
		}
		seenGraph[g.GraphLayoutHash] = true
		// Maximal: the next query of the same key did not fit.
		if gi+1 < len(plan.Groups) {
			next := plan.Groups[gi+1]
			if next.GraphLayoutHash == g.GraphLayoutHash && next.TraversalKey == g.TraversalKey {
				q := byID[next.Queries[0]]
				assert.Greater(t, graph+frontier+q.FrontierBytes+max(scratch, q.ScratchBytes)+output+q.OutputBytes, budget)
			}
		}
		sum.AvoidedLaunches += g.AvoidedLaunches
		sum.AvoidedGraphUploadBytes += g.AvoidedGraphUploadBytes
		sum.GraphReuse.ColdUploads += g.GraphReuse.ColdUploads
		sum.GraphReuse.WarmReuses += g.GraphReuse.WarmReuses
		sum.GraphReuse.UploadBytes += g.GraphReuse.UploadBytes
		peak = max(peak, g.ResidentBytes)
	}
	assert.Len(t, seen, len(queries))
	assert.Equal(t, uint64(len(plan.Groups)), plan.LaunchCount)
	assert.Equal(t, uint64(len(queries))-plan.LaunchCount, plan.AvoidedLaunches)
	assert.Equal(t, sum.AvoidedLaunches, plan.AvoidedHostFences)
	assert.Equal(t, sum.AvoidedGraphUploadBytes, plan.AvoidedGraphUploadBytes)
	assert.Equal(t, uint64(len(seenGraph)), plan.GraphReuse.ColdUploads)
	assert.Equal(t, uint64(len(queries))-plan.GraphReuse.ColdUploads, plan.GraphReuse.WarmReuses)
	assert.Equal(t, sum.GraphReuse.UploadBytes, plan.GraphReuse.UploadBytes)
	assert.Equal(t, plan.AvoidedGraphUploadBytes, plan.GraphReuse.AvoidedUploadBytes)
	assert.Equal(t, peak, plan.PeakResidentBytes)
	assert.True(t, plan.FinalOnlyHostFencePerGroup)
}

func TestPlanMultiQueryGeneratedProperties(t *testing.T) {
	planned := 0
	for seed := uint64(0); seed < 2048; seed++ {
		r := rand.New(rand.NewPCG(seed, 0x3a))
		queries, budget := randomMultiQueries(r)
		plan, err := PlanMultiQueryExecution(queries, budget)
		if err != nil {
			requireMultiQueryError(t, err, MultiQueryOverBudget)
			continue
		}
		planned++
		checkMultiQueryPlan(t, queries, budget, plan)
	}
	assert.Greater(t, planned, 1000)
}

func FuzzPlanMultiQueryExecution(f *testing.F) {
	f.Add([]byte{3, 1, 1, 16, 4, 4, 4, 1, 1, 1, 16, 4, 4, 4}, uint64(350), uint8(0))
	f.Add([]byte{1, 0, 0, 0, 0, 0, 0}, uint64(0), uint8(63))
	f.Fuzz(func(t *testing.T, data []byte, budget uint64, shift uint8) {
		// No input makes memory grow faster than the input itself.
		memcheck.Check(t, memcheck.Bound{Base: 1 << 20, PerByte: 256}, len(data)+16, func() {
			var queries []MultiQuery
			for ; len(data) >= 7; data = data[7:] {
				queries = append(queries, mq(uint32(data[0]), uint64(data[1]%4), uint64(data[2]%4), uint64(data[3])<<(shift%64),
					uint64(data[4]), uint64(data[5]), uint64(data[6])))
			}
			plan, err := PlanMultiQueryExecution(queries, budget)
			if err != nil {
				if !strings.Contains(err.Error(), "Fix:") {
					t.Fatalf("error without a fix: %v", err)
				}
				return
			}
			total := 0
			for _, g := range plan.Groups {
				require.LessOrEqual(t, g.ResidentBytes, budget)
				total += len(g.Queries)
			}
			require.Equal(t, len(queries), total)
		})
	})
}

func BenchmarkPlanMultiQueryExecution(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		r := rand.New(rand.NewPCG(uint64(n), 3))
		queries := make([]MultiQuery, n)
		for i, id := range r.Perm(n) {
			h := 1 + r.Uint64N(64)
			queries[i] = mq(uint32(id), h, 1+r.Uint64N(16), h<<20, r.Uint64N(1<<16), r.Uint64N(1<<16), r.Uint64N(1<<12))
		}
		b.Run(benchName(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := PlanMultiQueryExecution(queries, 1<<30); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
