package bfsserve

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/proto"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/workloads/bfs"
	"github.com/gpuplan/gpuplan/workloads/bfsquery"
)

// metrics are the server's own Prometheus metrics; the executor's
// telemetry is gathered beside them. A graph's series carry its series
// labels (graph, backend, device); the route and outcome labels take the
// server's own constants, never a request's input.
type metrics struct {
	reg        *prometheus.Registry
	requests   *prometheus.HistogramVec // series, route, code
	queries    *prometheus.CounterVec   // series, route, outcome
	batchRoots *prometheus.HistogramVec // series
	queueWait  *prometheus.HistogramVec // series
	passTime   *prometheus.HistogramVec // series
	phaseTime  *prometheus.HistogramVec // series, phase
	gpuRuns    *prometheus.CounterVec   // series, kind
	faults     *prometheus.CounterVec   // series
	recoveries prometheus.Counter
}

// Label names of the server's metrics.
const (
	labelGraph   = "graph"
	labelBackend = "backend"
	labelDevice  = "device"
	labelRoute   = "route"
	labelCode    = "code"
	labelOutcome = "outcome"
	labelPhase   = "phase"
	labelKind    = "kind"
	labelArm     = "arm"
)

// GPU run kinds, the kind label of gpuplan_serve_gpu_runs_total
// (bfsquery.Phases' Passes and Singles).
const (
	runPass   = "pass"
	runSingle = "single"
)

// Batch phases, the phase label of gpuplan_serve_batch_phase_seconds
// (bfsquery.Phases).
const (
	phaseTraverse = "traverse"
	phaseSetup    = "setup"
	phaseRead     = "read"
	phaseAnswer   = "answer"
)

// Query outcomes, the outcome label of gpuplan_serve_queries_total.
const (
	outcomeAnswered  = "answered"
	outcomeRefused   = "refused"
	outcomeFailed    = "failed"
	outcomeCancelled = "cancelled"
)

// Backends, the backend label.
const (
	backendGPU = "gpu"
	backendCPU = "cpu"
)

// series are the label values that say which graph a series counts and
// where it answers: the graph's configured name, its backend ("gpu" or
// "cpu") and its device (the GPU's name, or "cpu"). The zero value labels
// a request that names no loaded graph.
type series struct{ graph, backend, device string }

// seriesLabels are the label names of series, in values' order.
func seriesLabels(extra ...string) []string {
	return append([]string{labelGraph, labelBackend, labelDevice}, extra...)
}

// values returns the label values in seriesLabels' order, then extra.
func (l series) values(extra ...string) []string {
	return append([]string{l.graph, l.backend, l.device}, extra...)
}

// seriesOf returns the series labels of a resident graph.
func seriesOf(g *bfsquery.Graph) series {
	if !g.OnGPU() {
		return series{graph: g.Name(), backend: backendCPU, device: backendCPU}
	}
	return series{graph: g.Name(), backend: backendGPU, device: deviceName(g.Executor())}
}

// deviceName is the executor's device name, "unknown" when the driver
// gives none.
func deviceName(x *executor.Executor) string {
	if x == nil || x.Device().Name == "" {
		return "unknown"
	}
	return x.Device().Name
}

// latencyBuckets span 10 µs to about 40 s.
func latencyBuckets() []float64 { return prometheus.ExponentialBuckets(10e-6, 2, 22) }

func newMetrics(reg *prometheus.Registry, s *Server) *metrics {
	if reg == nil {
		reg = prometheus.NewRegistry()
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	m := &metrics{
		reg: reg,
		requests: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "gpuplan_serve_request_duration_seconds",
			Help: "Time from a request's arrival to its response, by graph (empty for requests naming no loaded graph), route and status code.", Buckets: latencyBuckets()},
			seriesLabels(labelRoute, labelCode)),
		queries: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gpuplan_serve_queries_total",
			Help: "BFS queries by graph, route and outcome: answered, refused (bad input, full queue, over budget, recovering), failed (a GPU fault) or cancelled (the client left or the deadline passed)."},
			seriesLabels(labelRoute, labelOutcome)),
		batchRoots: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "gpuplan_serve_batch_roots",
			Help: "Distinct roots of each batch run on a graph.", Buckets: prometheus.ExponentialBuckets(1, 2, 13)}, seriesLabels()),
		queueWait: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "gpuplan_serve_queue_wait_seconds",
			Help: "Time a query waits queued before its batch runs.", Buckets: latencyBuckets()}, seriesLabels()),
		passTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "gpuplan_serve_batch_seconds",
			Help: "Time a batch takes to traverse and answer.", Buckets: latencyBuckets()}, seriesLabels()),
		phaseTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "gpuplan_serve_batch_phase_seconds",
			Help: "Where a batch's time goes: traverse (the traversals' timed regions), setup (placing the roots and reading the result words, on the GPU), read (reading back the levels the answers need) and answer (building the answers).", Buckets: latencyBuckets()},
			seriesLabels(labelPhase)),
		gpuRuns: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gpuplan_serve_gpu_runs_total",
			Help: "GPU traversals the batches ran, by graph, kind and arm: pass (one multi-source pass for a chunk of roots, arm multi-source) or single (one root, by the arm the graph picked), as the graph's policies picked the cheaper from the costs they measured."},
			seriesLabels(labelKind, labelArm)),
		faults: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gpuplan_serve_device_faults_total",
			Help: "Batches the GPU failed, by graph."}, seriesLabels()),
		recoveries: prometheus.NewCounter(prometheus.CounterOpts{Name: "gpuplan_serve_recoveries_total",
			Help: "Times the graphs were reopened after a GPU fault."}),
	}
	reg.MustRegister(m.requests, m.queries, m.batchRoots, m.queueWait, m.passTime, m.phaseTime, m.gpuRuns, m.faults, m.recoveries, healthGauge(s), newStateCollector(s))
	return m
}

// healthGauge is 1 while s answers: 0 while it recovers, once it has
// failed, and while it shuts down.
func healthGauge(s *Server) prometheus.GaugeFunc {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "gpuplan_serve_healthy",
		Help: "1 while the server answers, 0 while it reopens its graphs after a fault, once it has failed (given up reopening them), or while it shuts down."},
		func() float64 {
			if s.Health().Status == StatusOK {
				return 1
			}
			return 0
		})
}

// handler serves the server's metrics and the current executor's
// telemetry in the Prometheus exposition format.
func (m *metrics) handler(s *Server) http.Handler {
	telemetry := prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
		r := s.cur.Load()
		if r == nil || r.Executor == nil {
			return nil, nil
		}
		return servedTelemetry(r.Executor.Telemetry().MetricFamilies(), r.Executor), nil
	})
	return promhttp.HandlerFor(prometheus.Gatherers{m.reg, telemetry}, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// servedTelemetry drops the executor's families that the query path never
// moves and labels the others with the executor's backend and device.
func servedTelemetry(fams []*dto.MetricFamily, x *executor.Executor) []*dto.MetricFamily {
	labels := []*dto.LabelPair{
		{Name: proto.String(labelBackend), Value: proto.String(backendGPU)},
		{Name: proto.String(labelDevice), Value: proto.String(deviceName(x))},
	}
	out := fams[:0]
	for _, mf := range fams {
		if idleTelemetry(mf.GetName()) {
			continue
		}
		for _, m := range mf.GetMetric() {
			m.Label = append(m.Label, labels...)
		}
		out = append(out, mf)
	}
	return out
}

// idleTelemetry reports whether the executor's metric name can never move
// on this server: a query runs kernel launches, never a CUDA graph, so
// the CUDA-graph counters stay zero.
func idleTelemetry(name string) bool {
	switch strings.TrimPrefix(name, executor.MetricPrefix) {
	case "graph_launches_total", "graph_materialized_cache_hits_total",
		"graph_batched_replay_chunks_total", "graph_batched_replay_lanes_total":
		return true
	}
	return false
}

// stateCollector exports what changes without an event: each graph's
// queue depth, and the device memory the executor holds and has free.
type stateCollector struct {
	s                           *Server
	queued, resident, free, gen *prometheus.Desc
}

func newStateCollector(s *Server) *stateCollector {
	device := []string{labelBackend, labelDevice}
	return &stateCollector{s: s,
		queued:   prometheus.NewDesc("gpuplan_serve_queued_queries", "Queries queued on a graph, not yet in a batch.", seriesLabels(), nil),
		resident: prometheus.NewDesc("gpuplan_serve_device_resident_bytes", "Device bytes the executor holds allocated (the graphs and their buffers).", device, nil),
		free:     prometheus.NewDesc("gpuplan_serve_device_free_bytes", "Device memory free, as the driver reports it.", device, nil),
		gen:      prometheus.NewDesc("gpuplan_serve_residency_generation", "How many times the graphs have been opened: 1, plus one per recovery.", nil, nil),
	}
}

// Describe sends the collector's descriptors.
func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.queued
	ch <- c.resident
	ch <- c.free
	ch <- c.gen
}

// Collect sends the current values.
func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	for _, b := range c.s.order {
		ch <- prometheus.MustNewConstMetric(c.queued, prometheus.GaugeValue, float64(b.reserved.Load()), b.labels().values()...)
	}
	ch <- prometheus.MustNewConstMetric(c.gen, prometheus.GaugeValue, float64(c.s.generation.Load()))
	r := c.s.cur.Load()
	if r == nil || r.Executor == nil {
		return
	}
	x := r.Executor
	ch <- prometheus.MustNewConstMetric(c.resident, prometheus.GaugeValue, float64(x.ResidentBytes()), backendGPU, deviceName(x))
	if free, _, err := x.MemInfo(); err == nil {
		ch <- prometheus.MustNewConstMetric(c.free, prometheus.GaugeValue, float64(free), backendGPU, deviceName(x))
	}
}

// code is a status code as a label.
func code(status int) string { return strconv.Itoa(status) }

// countRuns adds a batch's GPU runs to gpuplan_serve_gpu_runs_total: its
// passes, then its single-root runs by arm.
func (m *metrics) countRuns(at []string, ph bfsquery.Phases) {
	if ph.Passes > 0 {
		m.gpuRuns.WithLabelValues(append(at, runPass, bfs.ArmMultiSource)...).Add(float64(ph.Passes))
	}
	for arm, n := range ph.Arms {
		m.gpuRuns.WithLabelValues(append(at, runSingle, string(arm))...).Add(float64(n))
	}
}
