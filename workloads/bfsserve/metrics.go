package bfsserve

import (
	"net/http"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
)

// metrics are the server's own Prometheus metrics; the executor's
// telemetry is gathered beside them.
type metrics struct {
	reg        *prometheus.Registry
	requests   *prometheus.HistogramVec // route, code
	queries    *prometheus.CounterVec   // graph, outcome
	batchRoots *prometheus.HistogramVec // graph
	queueWait  *prometheus.HistogramVec // graph
	passTime   *prometheus.HistogramVec // graph
	recoveries prometheus.Counter
	faults     prometheus.Counter
}

// Query outcomes, the outcome label of gpuplan_serve_queries_total.
const (
	outcomeAnswered  = "answered"
	outcomeRefused   = "refused"
	outcomeFailed    = "failed"
	outcomeCancelled = "cancelled"
)

// latencyBuckets span 10 µs to about 40 s.
var latencyBuckets = prometheus.ExponentialBuckets(10e-6, 2, 22)

func newMetrics(reg *prometheus.Registry, s *Server) *metrics {
	if reg == nil {
		reg = prometheus.NewRegistry()
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	m := &metrics{
		reg: reg,
		requests: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "gpuplan_serve_request_duration_seconds",
			Help: "Time from a request's arrival to its response, by route and status code.", Buckets: latencyBuckets}, []string{"route", "code"}),
		queries: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gpuplan_serve_queries_total",
			Help: "BFS queries by graph and outcome: answered, refused (bad input, full queue, over budget, recovering), failed (a GPU fault) or cancelled (the client left or the deadline passed)."}, []string{"graph", "outcome"}),
		batchRoots: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "gpuplan_serve_batch_roots",
			Help: "Distinct roots of each batch run on a graph.", Buckets: prometheus.ExponentialBuckets(1, 2, 13)}, []string{"graph"}),
		queueWait: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "gpuplan_serve_queue_wait_seconds",
			Help: "Time a query waits queued before its batch runs.", Buckets: latencyBuckets}, []string{"graph"}),
		passTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "gpuplan_serve_batch_seconds",
			Help: "Time a batch takes to traverse and answer.", Buckets: latencyBuckets}, []string{"graph"}),
		recoveries: prometheus.NewCounter(prometheus.CounterOpts{Name: "gpuplan_serve_recoveries_total",
			Help: "Times the graphs were reopened after a GPU fault."}),
		faults: prometheus.NewCounter(prometheus.CounterOpts{Name: "gpuplan_serve_device_faults_total",
			Help: "Batches the GPU failed."}),
	}
	healthy := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "gpuplan_serve_healthy",
		Help: "1 while the server answers, 0 while it reopens its graphs after a fault or shuts down."},
		func() float64 {
			if s.Health().Status == StatusOK {
				return 1
			}
			return 0
		})
	reg.MustRegister(m.requests, m.queries, m.batchRoots, m.queueWait, m.passTime, m.recoveries, m.faults, healthy, &stateCollector{s: s})
	return m
}

// handler serves the server's metrics and the current executor's
// telemetry in the Prometheus exposition format.
func (m *metrics) handler(s *Server) http.Handler {
	telemetry := prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
		if r := s.cur.Load(); r != nil && r.Executor != nil {
			return r.Executor.Telemetry().MetricFamilies(), nil
		}
		return nil, nil
	})
	return promhttp.HandlerFor(prometheus.Gatherers{m.reg, telemetry}, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// stateCollector exports what changes without an event: each graph's
// queue depth, and the device memory the executor holds and has free.
type stateCollector struct{ s *Server }

var (
	queuedDesc   = prometheus.NewDesc("gpuplan_serve_queued_queries", "Queries queued on a graph, not yet in a batch.", []string{"graph"}, nil)
	residentDesc = prometheus.NewDesc("gpuplan_serve_device_resident_bytes", "Device bytes the executor holds allocated (the graphs and their buffers).", nil, nil)
	freeDesc     = prometheus.NewDesc("gpuplan_serve_device_free_bytes", "Device memory free, as the driver reports it.", nil, nil)
	genDesc      = prometheus.NewDesc("gpuplan_serve_residency_generation", "How many times the graphs have been opened: 1, plus one per recovery.", nil, nil)
)

// Describe sends the collector's descriptors.
func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- queuedDesc
	ch <- residentDesc
	ch <- freeDesc
	ch <- genDesc
}

// Collect sends the current values.
func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	for _, b := range c.s.order {
		ch <- prometheus.MustNewConstMetric(queuedDesc, prometheus.GaugeValue, float64(b.reserved.Load()), b.info.Name)
	}
	ch <- prometheus.MustNewConstMetric(genDesc, prometheus.GaugeValue, float64(c.s.generation.Load()))
	r := c.s.cur.Load()
	if r == nil || r.Executor == nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(residentDesc, prometheus.GaugeValue, float64(r.Executor.ResidentBytes()))
	if free, _, err := r.Executor.MemInfo(); err == nil {
		ch <- prometheus.MustNewConstMetric(freeDesc, prometheus.GaugeValue, float64(free))
	}
}

// code is a status code as a label.
func code(status int) string { return strconv.Itoa(status) }
