package bfsserve

import (
	"bytes"
	"context"
	"maps"
	"net/http"
	"runtime"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/workloads/bfs"
)

// scrape reads the server's /metrics over HTTP and parses it.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	r := call(t, context.Background(), http.MethodGet, url+"/metrics", "")
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(r.body))
	require.NoError(t, err)
	return fams
}

// labelsOf returns a sample's labels, leaving out empty values (which
// Prometheus reads as absent).
func labelsOf(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		if l.GetValue() != "" {
			out[l.GetName()] = l.GetValue()
		}
	}
	return out
}

// sample returns the sample of family name whose labels are exactly want,
// or nil.
func sample(fams map[string]*dto.MetricFamily, name string, want map[string]string) *dto.Metric {
	for _, m := range fams[name].GetMetric() {
		if maps.Equal(labelsOf(m), want) {
			return m
		}
	}
	return nil
}

// labelSets lists the label sets of family name, for a failure's message.
func labelSets(fams map[string]*dto.MetricFamily, name string) []map[string]string {
	var out []map[string]string
	for _, m := range fams[name].GetMetric() {
		out = append(out, labelsOf(m))
	}
	return out
}

// with returns at's labels plus the extra name, value pairs.
func with(at map[string]string, kv ...string) map[string]string {
	out := maps.Clone(at)
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// TestMetricsLabels scrapes /metrics on a loopback server, on a fake GPU
// and on the CPU: each graph's series carry its graph, backend and device
// (and route where one applies), a graph name that is not loaded makes no
// series, and the executor's CUDA-graph counters, which the query path
// never moves, are not exported.
func TestMetricsLabels(t *testing.T) {
	for _, c := range []struct {
		name    string
		gpu     bool
		backend string
	}{
		{"gpu", true, "gpu"},
		{"cpu", false, "cpu"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			open := f.cpu
			if c.gpu {
				open = f.gpu
			}
			s, url := f.start(Config{}, open)
			device := "cpu"
			if c.gpu {
				device = s.cur.Load().Executor.Device().Name
				require.NotEmpty(t, device)
			}
			exerciseRoutes(t, url)
			fams := scrape(t, url)
			kron := map[string]string{"graph": "kron", "backend": c.backend, "device": device}
			web := with(kron, "graph", "web")
			checkServeSeries(t, fams, kron, web)
			checkBoundedGraphs(t, fams)
			if c.gpu {
				checkTelemetry(t, fams, map[string]string{"backend": c.backend, "device": device})
				// The automatic arm policy tries the default arms in order, a warm-up
				// and trials each, so three queries all run on the first.
				m := sample(fams, "gpuplan_serve_gpu_runs_total", with(kron, "kind", "single", "arm", string(bfs.DefaultArms()[0])))
				require.NotNil(t, m, "%v", labelSets(fams, "gpuplan_serve_gpu_runs_total"))
				assert.Equal(t, 3.0, m.GetCounter().GetValue(), "kron's three one-root queries ran singly")
				st, err := ScrapeBatchStats(context.Background(), nil, url)
				require.NoError(t, err)
				runs := st.Runs
				assert.Positive(t, st.Phases["traverse"])
				for _, kind := range []string{"single", "pass"} {
					assert.Equal(t, kindSum(fams, kind), runs[kind], "%s runs summed over the graphs", kind)
				}
				assert.GreaterOrEqual(t, runs["single"], 3.0)
				arms := 0.0
				for arm, n := range st.Arms {
					assert.Contains(t, bfs.DefaultArms(), bfs.Arm(arm), "single runs are counted by their arm")
					arms += n
				}
				assert.Equal(t, runs["single"], arms, "every single run has its arm")
				return
			}
			st, err := ScrapeBatchStats(context.Background(), nil, url)
			require.NoError(t, err)
			assert.Empty(t, st.Runs, "no GPU runs on the CPU")
			assert.Positive(t, st.Phases["traverse"])
			assert.Nil(t, fams["gpuplan_serve_gpu_runs_total"], "no GPU runs on the CPU")
			assert.Nil(t, fams["gpuplan_kernel_launches_total"], "no executor on the CPU")
			assert.Nil(t, fams["gpuplan_serve_device_resident_bytes"])
		})
	}
}

// exerciseRoutes sends one request of each query route, and one to a graph
// that is not loaded.
func exerciseRoutes(t *testing.T, url string) {
	t.Helper()
	require.Equal(t, http.StatusOK, post(t, url+"/v1/graphs/kron/bfs", map[string]any{"root": 1, "targets": []int{2}}).status)
	require.Equal(t, http.StatusOK, post(t, url+"/v1/graphs/kron/reach", map[string]any{"root": 1, "targets": []int{2}}).status)
	require.Equal(t, http.StatusOK, post(t, url+"/v1/graphs/web/batch", map[string]any{"queries": []map[string]any{{"root": 0, "targets": []int{1}}, {"root": 3, "targets": []int{1}}}}).status)
	require.Equal(t, http.StatusOK, call(t, context.Background(), http.MethodGet, url+"/v1/graphs/kron/levels?root=0", "").status)
	require.Equal(t, http.StatusOK, call(t, context.Background(), http.MethodGet, url+"/v1/graphs", "").status)
	require.Equal(t, http.StatusNotFound, post(t, url+"/v1/graphs/nosuch/bfs", map[string]any{"root": 0}).status)
}

// checkServeSeries checks the server's own series and their labels.
func checkServeSeries(t *testing.T, fams map[string]*dto.MetricFamily, kron, web map[string]string) {
	t.Helper()
	for _, c := range []struct {
		family string
		labels map[string]string
		value  float64 // of a counter; 0: not checked
	}{
		{"gpuplan_serve_request_duration_seconds", with(kron, "route", "bfs", "code", "200"), 0},
		{"gpuplan_serve_request_duration_seconds", with(web, "route", "batch", "code", "200"), 0},
		{"gpuplan_serve_request_duration_seconds", map[string]string{"route": "graphs", "code": "200"}, 0},
		{"gpuplan_serve_request_duration_seconds", map[string]string{"route": "bfs", "code": "404"}, 0},
		{"gpuplan_serve_queries_total", with(kron, "route", "bfs", "outcome", "answered"), 1},
		{"gpuplan_serve_queries_total", with(kron, "route", "reach", "outcome", "answered"), 1},
		{"gpuplan_serve_queries_total", with(kron, "route", "levels", "outcome", "answered"), 1},
		{"gpuplan_serve_queries_total", with(web, "route", "batch", "outcome", "answered"), 2},
		{"gpuplan_serve_batch_roots", kron, 0},
		{"gpuplan_serve_batch_seconds", web, 0},
		{"gpuplan_serve_batch_phase_seconds", with(kron, "phase", "traverse"), 0},
		{"gpuplan_serve_batch_phase_seconds", with(kron, "phase", "read"), 0},
		{"gpuplan_serve_batch_phase_seconds", with(web, "phase", "answer"), 0},
		{"gpuplan_serve_queue_wait_seconds", web, 0},
		{"gpuplan_serve_queued_queries", kron, 0},
		{"gpuplan_serve_queued_queries", web, 0},
		{"gpuplan_serve_healthy", map[string]string{}, 0},
		{"gpuplan_serve_residency_generation", map[string]string{}, 0},
	} {
		m := sample(fams, c.family, c.labels)
		if !assert.NotNil(t, m, "%s%v among %v", c.family, c.labels, labelSets(fams, c.family)) {
			continue
		}
		if c.value != 0 {
			assert.Equal(t, c.value, m.GetCounter().GetValue(), "%s%v", c.family, c.labels)
		}
	}
}

// checkBoundedGraphs checks that every graph label names a loaded graph:
// the request for "nosuch" made no series.
func checkBoundedGraphs(t *testing.T, fams map[string]*dto.MetricFamily) {
	t.Helper()
	for name, mf := range fams {
		for _, m := range mf.GetMetric() {
			if g, ok := labelsOf(m)["graph"]; ok {
				assert.Contains(t, []string{"kron", "web"}, g, "%s%v", name, labelsOf(m))
			}
		}
	}
}

// checkTelemetry checks the executor's families: labelled with the
// backend and device, all there but the CUDA-graph counters.
func checkTelemetry(t *testing.T, fams map[string]*dto.MetricFamily, at map[string]string) {
	t.Helper()
	idle := []string{"gpuplan_graph_launches_total", "gpuplan_graph_materialized_cache_hits_total",
		"gpuplan_graph_batched_replay_chunks_total", "gpuplan_graph_batched_replay_lanes_total"}
	exported := map[string]bool{}
	for _, mf := range (executor.TelemetrySnapshot{}).MetricFamilies() {
		exported[mf.GetName()] = true
	}
	for _, name := range idle {
		assert.True(t, exported[name], "the executor exports %s: the filter names a real metric", name)
		assert.Nil(t, fams[name], "the query path never moves %s", name)
		delete(exported, name)
	}
	for name := range exported {
		assert.NotNil(t, sample(fams, name, at), "%s%v among %v", name, at, labelSets(fams, name))
	}
	assert.Positive(t, sample(fams, "gpuplan_kernel_launches_total", at).GetCounter().GetValue())
	for _, name := range []string{"gpuplan_serve_device_resident_bytes", "gpuplan_serve_device_free_bytes"} {
		assert.NotNil(t, sample(fams, name, at), "%s%v among %v", name, at, labelSets(fams, name))
	}
	assert.NotNil(t, fams["go_goroutines"])
	if runtime.GOOS == "linux" {
		assert.NotNil(t, fams["process_open_fds"])
	}
}

// TestIdleTelemetry names the executor's metrics the server leaves out.
func TestIdleTelemetry(t *testing.T) {
	for name, idle := range map[string]bool{
		"gpuplan_graph_launches_total":                        true,
		"gpuplan_graph_batched_replay_lanes_total":            true,
		"gpuplan_kernel_launches_total":                       false,
		"gpuplan_resident_borrowed_fallback_dispatches_total": false,
		"gpuplan_timed_dispatches_total":                      false,
	} {
		assert.Equal(t, idle, idleTelemetry(name), name)
	}
}

// kindSum is the sum of gpuplan_serve_gpu_runs_total over the series of
// one kind.
func kindSum(fams map[string]*dto.MetricFamily, kind string) float64 {
	var sum float64
	for _, m := range fams["gpuplan_serve_gpu_runs_total"].GetMetric() {
		if labelsOf(m)["kind"] == kind {
			sum += m.GetCounter().GetValue()
		}
	}
	return sum
}
