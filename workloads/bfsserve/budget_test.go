package bfsserve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/internal/syncbuf"
	"github.com/gpuplan/gpuplan/workloads/bfsquery"
)

// tinyGraphs are graphs of 2 to 4 vertices, undirected and directed, each
// opened on the CPU.
func tinyGraphs(t *testing.T) map[string]Opener {
	t.Helper()
	grid, err := frontier.Grid(2)
	require.NoError(t, err)
	undirected := func(text string) *frontier.CSR {
		g, err := frontier.ParseEdgeList([]byte(text), "t", frontier.Limits{})
		require.NoError(t, err)
		return g
	}
	dir, err := bfsquery.ReadDirected(strings.NewReader("0 1\n1 2\n"), "dir", 8, frontier.Limits{})
	require.NoError(t, err)
	open := func(name string, g *frontier.CSR, directed bool) Opener {
		g.Name = name
		return func(context.Context) (*Residency, error) {
			r, err := bfsquery.OpenCPU(g, bfsquery.Options{Directed: directed})
			return &Residency{Graphs: []*bfsquery.Graph{r}}, err
		}
	}
	return map[string]Opener{"pair": open("pair", undirected("0 1\n"), false), "grid2": open("grid2", grid, false),
		"path": open("path", undirected("0 1\n1 2\n"), false), "dir": open("dir", dir, true)}
}

// TestDefaultBudgetHoldsAQueryOnTinyGraphs serves graphs of 2 to 4
// vertices one query at a time (MaxBatch 1) and in full batches: the
// default budget holds a query of 16 targets with parents (what gpuplan
// load sends), one of BudgetTargets, and one over every vertex, where it
// held only the last and refused the load's every query with 503.
func TestDefaultBudgetHoldsAQueryOnTinyGraphs(t *testing.T) {
	queries := []struct {
		name    string
		targets int // -1: every vertex
	}{
		{"16 targets", 16},
		{"BudgetTargets targets", BudgetTargets},
		{"every vertex", -1},
	}
	for name, open := range tinyGraphs(t) {
		for _, maxBatch := range []int{1, DefaultMaxBatch} {
			t.Run(fmt.Sprintf("%s, max batch %d", name, maxBatch), func(t *testing.T) {
				f := &fixture{t: t}
				_, url := f.start(Config{MaxBatch: maxBatch}, open)
				for _, q := range queries {
					body := map[string]any{"root": 0, "parents": true}
					if q.targets >= 0 {
						body["targets"] = make([]int, q.targets)
					}
					r := post(t, url+"/v1/graphs/"+name+"/bfs", body)
					assert.Equal(t, http.StatusOK, r.status, "%s: %s", q.name, r.body)
				}
			})
		}
	}
}

// TestBudgetBelowOneQueryIsRefused starts servers whose budget does not
// hold the graph and one query of one target: New refuses them, naming
// the bytes one query needs, where the server started and refused every
// query.
func TestBudgetBelowOneQueryIsRefused(t *testing.T) {
	graphs := tinyGraphs(t)
	for _, c := range []struct {
		name   string
		budget uint64
		ok     bool
	}{
		{"1 byte", 1, false},
		{"100 bytes", 100, false},
		{"1 MiB", 1 << 20, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := New(context.Background(), Config{BudgetBytes: c.budget}, graphs["grid2"])
			if c.ok {
				require.NoError(t, err)
				require.NoError(t, s.Shutdown(context.Background()))
				return
			}
			var ce *ConfigError
			require.True(t, errors.As(err, &ce), "%v", err)
			assert.Equal(t, "BudgetBytes", ce.Field)
			assert.Contains(t, err.Error(), fmt.Sprintf("%d bytes do not hold graph grid2 and one query of one target", c.budget))
			assert.Contains(t, err.Error(), "Fix: give at least")
		})
	}
}

// TestRefusalWarningsAreBounded sends queries the budget refuses: the
// first warnBurst are logged at WARN, and Shutdown logs how many more were
// not, where every refusal wrote a line.
func TestRefusalWarningsAreBounded(t *testing.T) {
	for _, c := range []struct {
		queries, logged, skipped int
	}{
		{3, 3, 0},
		{warnBurst, warnBurst, 0},
		{40, warnBurst, 40 - warnBurst},
	} {
		t.Run(fmt.Sprintf("%d refused", c.queries), func(t *testing.T) {
			var log syncbuf.Buffer
			cfg := Config{MaxBatch: 1, Logger: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelWarn}))}
			s, err := New(context.Background(), cfg, tinyGraphs(t)["grid2"])
			require.NoError(t, err)
			h := s.Handler()
			for range c.queries {
				r := httpPost(t, h, "/v1/graphs/grid2/bfs", fmt.Sprintf(`{"root": 0, "parents": true, "targets": [%s0]}`, strings.Repeat("0,", 4*BudgetTargets)))
				require.Equal(t, http.StatusServiceUnavailable, r, "over the budget")
			}
			require.NoError(t, s.Shutdown(context.Background()))
			out := log.String()
			assert.Equal(t, c.logged, strings.Count(out, "msg=request "), out)
			if c.skipped == 0 {
				assert.NotContains(t, out, "not logged")
				return
			}
			assert.Contains(t, out, fmt.Sprintf(`msg="failed or refused requests not logged" requests=%d`, c.skipped))
		})
	}
}

// httpPost serves a POST of body to path by h and returns the status.
func httpPost(t *testing.T, h http.Handler, path, body string) int {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, path, strings.NewReader(body)))
	return w.Code
}

// TestWarnLimitPeriods checks the limit over time: warnBurst lines a
// period, and the first line of a period counts those not logged before.
func TestWarnLimitPeriods(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var w warnLimit
	for i, c := range []struct {
		at      time.Duration
		ok      bool
		skipped int64
	}{
		{0, true, 0}, {1, true, 0}, {2, true, 0}, {3, true, 0}, {4, true, 0},
		{5, false, 0}, {6, false, 0},
		{warnPeriod, true, 2}, {warnPeriod + 1, true, 0},
	} {
		ok, skipped := w.allow(t0.Add(c.at))
		assert.Equal(t, c.ok, ok, "warning %d", i)
		assert.Equal(t, c.skipped, skipped, "warning %d", i)
	}
	assert.Zero(t, w.flush())
}

// TestRunLoadKeepsTheFirstRefusal drives a server that refuses every
// query over its budget: the run counts them refused and keeps the first
// refusal's message.
func TestRunLoadKeepsTheFirstRefusal(t *testing.T) {
	f := newFixture(t)
	_, url := f.start(Config{BudgetBytes: f.smallBudget()}, f.cpu)
	cfg := f.loadConfig(url)
	cfg.Queries, cfg.Duration, cfg.CheckEvery, cfg.Targets = 0, 100*time.Millisecond, 0, 400
	res, err := RunLoad(context.Background(), cfg)
	require.NoError(t, err)
	assert.Zero(t, res.Answered)
	assert.Positive(t, res.Refused)
	assert.Contains(t, res.FirstRefusal, `refused with 503: "query: the query alone needs`)
	assert.Empty(t, res.FirstFailure)
}
