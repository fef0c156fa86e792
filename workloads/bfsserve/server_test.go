package bfsserve

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/workloads/bfsquery"
)

// TestConcurrentQueriesMatchTheReference sends random queries from many
// clients at once, on the fake GPU and the CPU, over both graphs, and
// checks every answer: the levels against the CPU reference, the parents
// as a BFS tree.
func TestConcurrentQueriesMatchTheReference(t *testing.T) {
	for _, backend := range []string{"gpu", "cpu"} {
		t.Run(backend, func(t *testing.T) {
			f := newFixture(t)
			open := map[string]Opener{"gpu": f.gpu, "cpu": f.cpu}[backend]
			_, url := f.start(Config{Window: 2 * time.Millisecond}, open)
			var wg sync.WaitGroup
			var batched sync.Map
			for c := range 24 {
				wg.Go(func() {
					rng := rand.New(rand.NewPCG(uint64(c), 9))
					for range 6 {
						g := []*frontier.CSR{f.kron, f.dir}[rng.IntN(2)]
						q := bfsquery.Query{Root: int32(rng.IntN(g.NumVertices())), MaxDepth: int32(rng.IntN(5)) - 1, Parents: rng.IntN(2) == 0}
						for range 1 + rng.IntN(20) {
							q.Targets = append(q.Targets, int32(rng.IntN(g.NumVertices())))
						}
						r := post(t, url+"/v1/graphs/"+g.Name+"/bfs", map[string]any{"root": q.Root, "targets": q.Targets, "max_depth": q.MaxDepth, "parents": q.Parents})
						if !assert.Equal(t, http.StatusOK, r.status, "%s", r.body) {
							return
						}
						a := decodeReply[QueryResponse](t, r)
						assert.Equal(t, q.Root, a.Root)
						assert.Equal(t, wantLevels(t, g, q), a.Levels, "graph %s root %d", g.Name, q.Root)
						checkParents(t, g, q, a)
						roots, err := strconv.Atoi(r.header.Get(BatchRootsHeader))
						require.NoError(t, err)
						batched.Store(g.Name+strconv.Itoa(roots), roots)
					}
				})
			}
			wg.Wait()
			most := 0
			batched.Range(func(_, v any) bool { most = max(most, v.(int)); return true })
			assert.Greater(t, most, 1, "concurrent queries share batches")
		})
	}
}

// checkParents checks that each target's parent is one level closer to
// the root along an edge into the target.
func checkParents(t *testing.T, g *frontier.CSR, q bfsquery.Query, a QueryResponse) {
	t.Helper()
	if !q.Parents {
		assert.Nil(t, a.Parents)
		return
	}
	require.Len(t, a.Parents, len(q.Targets))
	for i, v := range q.Targets {
		p, l := a.Parents[i], a.Levels[i]
		if l <= 0 {
			assert.Equal(t, bfsquery.Unreached, p, "target %d", v)
			continue
		}
		all, err := frontier.BFS(g, q.Root)
		require.NoError(t, err)
		assert.Equal(t, l-1, all[p], "target %d's parent %d", v, p)
		assert.Contains(t, g.Neighbors(p), v, "an edge from parent %d to target %d", p, v)
	}
}

// TestBatchReachAndLevels covers the other calls: a batch request, the
// reachability flags and the binary download of every level.
func TestBatchReachAndLevels(t *testing.T) {
	f := newFixture(t)
	_, url := f.start(Config{}, f.gpu)
	all, err := frontier.BFS(f.kron, 3)
	require.NoError(t, err)

	r := post(t, url+"/v1/graphs/kron/batch", map[string]any{"queries": []map[string]any{{"root": 3, "targets": []int{0, 1, 2}}, {"root": 5, "targets": []int{4}, "max_depth": 0}}})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	br := decodeReply[BatchResponse](t, r)
	require.Len(t, br.Answers, 2)
	assert.Equal(t, []int32{all[0], all[1], all[2]}, br.Answers[0].Levels)
	assert.Equal(t, 1, br.Answers[1].Reached, "depth 0 reaches the root alone")

	r = post(t, url+"/v1/graphs/kron/reach", map[string]any{"root": 3, "targets": []int{0, 1, 2, 3}, "max_depth": 2})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	rr := decodeReply[ReachResponse](t, r)
	for i, v := range []int{0, 1, 2, 3} {
		assert.Equal(t, all[v] != -1 && all[v] <= 2, rr.Reachable[i], "target %d", v)
	}

	r = call(t, context.Background(), http.MethodGet, url+"/v1/graphs/kron/levels?root=3&parents=true", "")
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	assert.Equal(t, "application/octet-stream", r.header.Get("Content-Type"))
	set, err := bfsquery.ReadBinary(bytes.NewReader(r.body), int64(len(r.body)))
	require.NoError(t, err)
	require.Len(t, set.Answers, 1)
	assert.Equal(t, all, set.Answers[0].Levels)
	assert.Len(t, set.Answers[0].Parents, f.kron.NumVertices())

	r = call(t, context.Background(), http.MethodGet, url+"/v1/graphs", "")
	require.Equal(t, http.StatusOK, r.status)
	gs := decodeReply[GraphsResponse](t, r)
	require.Len(t, gs.Graphs, 2)
	assert.Equal(t, GraphInfo{Name: "kron", Vertices: f.kron.NumVertices(), Edges: int64(f.kron.NumEdgeEntries() / 2), Backend: "gpu", Resident: 4 * uint64(len(f.kron.Offsets)+len(f.kron.Targets))}, gs.Graphs[0])
	assert.True(t, gs.Graphs[1].Directed)
}

// TestBadRequestsNameTheField sends malformed queries: each gets a 4xx
// that names the field and ends with a fix, and the server keeps serving.
func TestBadRequestsNameTheField(t *testing.T) {
	f := newFixture(t)
	_, url := f.start(Config{MaxBodyBytes: 4096, MaxJSONLevels: 100}, f.cpu)
	bfs := url + "/v1/graphs/kron/bfs"
	n := f.kron.NumVertices()
	cases := []struct {
		name, method, url, body string
		status                  int
		field                   string
	}{
		{"root out of range", "POST", bfs, fmt.Sprintf(`{"root": %d, "targets": [1]}`, n), 400, "root"},
		{"negative root", "POST", bfs, `{"root": -1, "targets": [1]}`, 400, "root"},
		{"huge root", "POST", bfs, `{"root": 99999999999, "targets": [1]}`, 400, "root"},
		{"missing root", "POST", bfs, `{"targets": [1]}`, 400, "root"},
		{"target out of range", "POST", bfs, fmt.Sprintf(`{"root": 0, "targets": [1, %d]}`, n), 400, "targets[1]"},
		{"bad depth", "POST", bfs, `{"root": 0, "targets": [1], "max_depth": -2}`, 400, "max_depth"},
		{"depth not a number", "POST", bfs, `{"root": 0, "targets": [1], "max_depth": "deep"}`, 400, "max_depth"},
		{"bad JSON", "POST", bfs, `{"root": 0,`, 400, "body"},
		{"empty body", "POST", bfs, ``, 400, "body"},
		{"unknown field", "POST", bfs, `{"root": 0, "target": [1]}`, 400, "target"},
		{"every vertex of a large graph", "POST", bfs, `{"root": 0}`, 400, "targets"},
		{"oversized body", "POST", bfs, `{"root": 0, "targets": [` + strings.Repeat("1,", 4000) + `1]}`, 413, "body"},
		{"unknown graph", "POST", url + "/v1/graphs/nope/bfs", `{"root": 0}`, 404, "graph"},
		{"unknown path", "GET", url + "/v2/everything", ``, 404, "path"},
		{"wrong method", "GET", bfs, ``, 405, "method"},
		{"bad batch query", "POST", url + "/v1/graphs/kron/batch", `{"queries": [{"root": 0, "targets": []}, {"targets": [1]}]}`, 400, "queries[1].root"},
		{"empty batch", "POST", url + "/v1/graphs/kron/batch", `{"queries": []}`, 400, "queries"},
		{"levels without a root", "GET", url + "/v1/graphs/kron/levels", ``, 400, "root"},
		{"levels with a bad root", "GET", url + "/v1/graphs/kron/levels?root=x", ``, 400, "root"},
		{"levels with a bad flag", "GET", url + "/v1/graphs/kron/levels?root=0&parents=maybe", ``, 400, "parents"},
		{"reach with a bad target", "POST", url + "/v1/graphs/web/reach", `{"root": 0, "targets": [-5]}`, 400, "targets[0]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := call(t, context.Background(), c.method, c.url, c.body)
			require.Equal(t, c.status, r.status, "%s", r.body)
			e := r.apiError(t)
			assert.Equal(t, c.status, e.Status)
			assert.Equal(t, c.field, e.Field, e.Msg)
			assert.Contains(t, e.Msg, "Fix:")
		})
	}
	r := post(t, bfs, map[string]any{"root": 0, "targets": []int{1}})
	assert.Equal(t, http.StatusOK, r.status, "the server still answers: %s", r.body)
}

// TestAdmission refuses what the queue or the budget cannot hold, at once.
func TestAdmission(t *testing.T) {
	f := newFixture(t)
	budget := f.smallBudget()
	_, url := f.start(Config{QueueDepth: 2, BudgetBytes: budget}, f.cpu)

	r := post(t, url+"/v1/graphs/kron/batch", map[string]any{"queries": []map[string]any{{"root": 0, "targets": []int{}}, {"root": 1, "targets": []int{}}, {"root": 2, "targets": []int{}}}})
	require.Equal(t, http.StatusTooManyRequests, r.status, "%s", r.body)
	assert.Equal(t, CodeQueueFull, r.apiError(t).Code)
	assert.Equal(t, "1", r.header.Get("Retry-After"))

	targets := make([]int, 200)
	r = post(t, url+"/v1/graphs/kron/bfs", map[string]any{"root": 0, "targets": targets, "parents": true})
	require.Equal(t, http.StatusServiceUnavailable, r.status, "%s", r.body)
	e := r.apiError(t)
	assert.Equal(t, CodeOverBudget, e.Code)
	assert.Contains(t, e.Msg, strconv.FormatUint(budget, 10), "the plan's numbers")

	r = post(t, url+"/v1/graphs/kron/bfs", map[string]any{"root": 0, "targets": []int{1}})
	assert.Equal(t, http.StatusOK, r.status, "a query within the budget is answered: %s", r.body)
}

// TestOverBudgetNamesTheQuery refuses a query that the budget cannot hold
// alone by its field: "query" for one query, "queries[i]" for the first
// such query of a batch, in a message that ends with its Fix.
func TestOverBudgetNamesTheQuery(t *testing.T) {
	f := newFixture(t)
	budget := f.smallBudget()
	s, url := f.start(Config{BudgetBytes: budget}, f.cpu)
	fits := map[string]any{"root": 0, "targets": []int{1}}
	over := map[string]any{"root": 1, "targets": make([]int, 200), "parents": true}
	batch := func(qs ...map[string]any) any { return map[string]any{"queries": qs} }
	for _, c := range []struct {
		name  string
		route string
		body  any
		field string
	}{
		{"one query", "bfs", over, "query"},
		{"batch of one", "batch", batch(over), "queries[0]"},
		{"second of two", "batch", batch(fits, over), "queries[1]"},
		{"first of two over", "batch", batch(fits, fits, over, over), "queries[2]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := post(t, url+"/v1/graphs/kron/"+c.route, c.body)
			require.Equal(t, http.StatusServiceUnavailable, r.status, "%s", r.body)
			raw := decodeReply[map[string]any](t, r)
			assert.Equal(t, c.field, raw["field"], "the JSON error names the query")
			e := r.apiError(t)
			assert.Equal(t, CodeOverBudget, e.Code)
			assert.True(t, strings.HasPrefix(e.Msg, c.field+": "), e.Msg)
			assert.Regexp(t, `\. Fix: [^.]+$`, e.Msg, "the message ends with its Fix")
			assert.Contains(t, e.Msg, strconv.FormatUint(budget, 10), "the plan's numbers")
			if c.route == "batch" {
				assert.Contains(t, e.Msg[strings.Index(e.Msg, "Fix:"):], c.field, "the Fix names the query")
			}
		})
	}
	assert.Equal(t, 7.0, counterValue(t, s, "gpuplan_serve_queries_total", "route", "batch"), "the batches' 7 queries, by their route")
	assert.Equal(t, 8.0, counterValue(t, s, "gpuplan_serve_queries_total", "outcome", outcomeRefused), "every query refused")
	r := post(t, url+"/v1/graphs/kron/batch", batch(fits, fits))
	assert.Equal(t, http.StatusOK, r.status, "a batch within the budget is answered: %s", r.body)
}

// TestCancelledQueriesDoNotRun leaves before the batching window ends:
// the query is dropped and no batch runs.
func TestCancelledQueriesDoNotRun(t *testing.T) {
	f := newFixture(t)
	s, url := f.start(Config{Window: 300 * time.Millisecond, WaitAlone: true}, f.gpu)
	before := f.fake().Stats().Launches
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/v1/graphs/kron/bfs", strings.NewReader(`{"root": 1, "targets": [2]}`))
	require.NoError(t, err)
	_, err = http.DefaultClient.Do(req)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	eventually(t, func() bool {
		return counterValue(t, s, "gpuplan_serve_queries_total", "outcome", outcomeCancelled) == 1
	}, "the query is counted as cancelled")
	time.Sleep(400 * time.Millisecond)
	assert.Equal(t, before, f.fake().Stats().Launches, "no kernel ran for the abandoned query")
	assert.Zero(t, histogramCount(t, s, "gpuplan_serve_batch_roots"), "no batch ran")
}

// TestRequestDeadline fails a query not answered within its deadline with
// 504.
func TestRequestDeadline(t *testing.T) {
	f := newFixture(t)
	_, url := f.start(Config{Window: time.Second, WaitAlone: true, Timeout: 50 * time.Millisecond}, f.cpu)
	r := post(t, url+"/v1/graphs/kron/bfs", map[string]any{"root": 0, "targets": []int{1}})
	require.Equal(t, http.StatusGatewayTimeout, r.status, "%s", r.body)
	assert.Equal(t, CodeDeadline, r.apiError(t).Code)
}

// TestALoneQueryDoesNotWait answers a query that finds the graph idle at
// once, whatever the window: the window only gathers overlapping queries.
func TestALoneQueryDoesNotWait(t *testing.T) {
	f := newFixture(t)
	_, url := f.start(Config{Window: MaxWindow, Timeout: MaxWindow / 2}, f.cpu)
	for range 3 {
		r := post(t, url+"/v1/graphs/kron/bfs", map[string]any{"root": 0, "targets": []int{1}})
		require.Equal(t, http.StatusOK, r.status, "answered before the deadline, half the window: %s", r.body)
		assert.Equal(t, "1", r.header.Get(BatchRootsHeader))
	}
}
