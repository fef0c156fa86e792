package bfsserve

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/workloads/bfsquery"
)

// TestGPUFaultsFailInFlightQueriesAndRecover injects a fault on the fake
// GPU while a query is in flight: it fails with 500 and the reason, the
// server reports "recovering" and refuses queries until a new residency
// is open (a new context, the graphs uploaded again), and then answers
// correctly again, the failed context's memory released.
func TestGPUFaultsFailInFlightQueriesAndRecover(t *testing.T) {
	faults := []struct {
		name   string
		inject func(*executor.Fake)
	}{
		{"launch error", func(f *executor.Fake) { f.Fail("cuLaunchKernel", 719) }},
		{"copy error", func(f *executor.Fake) { f.Fail("cuMemcpyDtoHAsync", 700) }},
		{"lost context", func(f *executor.Fake) { _ = f.Close() }},
	}
	for _, fault := range faults {
		t.Run(fault.name, func(t *testing.T) {
			f := newFixture(t)
			f.hold = make(chan struct{})
			f.failOpens = 1
			s, url := f.start(Config{RecoverBackoff: time.Millisecond}, f.gpu)
			q := map[string]any{"root": 3, "targets": []int{0, 1, 2, 3}}
			require.Equal(t, http.StatusOK, post(t, url+"/v1/graphs/kron/bfs", q).status)
			failed := f.fake()
			fault.inject(failed)

			r := post(t, url+"/v1/graphs/kron/bfs", q)
			require.Equal(t, http.StatusInternalServerError, r.status, "%s", r.body)
			e := r.apiError(t)
			assert.Equal(t, CodeDeviceFault, e.Code)
			assert.Contains(t, e.Msg, `graph "kron": the GPU failed the batch`)
			assert.Contains(t, e.Msg, "Fix:")

			h := call(t, context.Background(), http.MethodGet, url+"/healthz", "")
			require.Equal(t, http.StatusServiceUnavailable, h.status)
			health := decodeReply[Health](t, h)
			assert.Equal(t, StatusRecovering, health.Status)
			assert.NotEmpty(t, health.Reason)
			r = post(t, url+"/v1/graphs/web/bfs", q)
			require.Equal(t, http.StatusServiceUnavailable, r.status, "%s", r.body)
			assert.Equal(t, CodeRecovering, r.apiError(t).Code)

			close(f.hold)
			eventually(t, func() bool { return s.Health().Status == StatusOK }, "the server recovers")
			assert.Equal(t, uint64(2), s.Health().Generation)
			assert.Equal(t, 3, f.opens, "one failed reopening, then one that worked")
			assert.Zero(t, failed.Stats().DeviceAllocations, "the failed context holds no memory")
			r = post(t, url+"/v1/graphs/kron/bfs", q)
			require.Equal(t, http.StatusOK, r.status, "%s", r.body)
			a := decodeReply[QueryResponse](t, r)
			assert.Equal(t, wantLevels(t, f.kron, bfsquery.Query{Root: 3, Targets: []int32{0, 1, 2, 3}, MaxDepth: -1}), a.Levels)
			assert.Equal(t, 1.0, counterValue(t, s, "gpuplan_serve_recoveries_total", "", ""))
		})
	}
}

// TestRecoveryGivesUp fails every reopening after a fault: the server
// gives up after Config.RecoverAttempts attempts, or at once on a lost
// context, which no retry in the process recovers. It then reports
// "failed", closes Failed, refuses queries with 503 and the restart Fix,
// and its healthy gauge says 0.
func TestRecoveryGivesUp(t *testing.T) {
	lost := &executor.DriverError{Call: "cuCtxCreate", Code: 700, Name: "CUDA_ERROR_ILLEGAL_ADDRESS", Fix: "Fix: restart the process."}
	for _, c := range []struct {
		name     string
		attempts int
		openErr  error
		opens    int // after the first
		why      string
	}{
		{"every attempt fails", 3, nil, 3, "reopening the graphs failed 3 times, the last with: no device yet"},
		{"default attempts", 0, nil, DefaultRecoverAttempts, "failed 5 times"},
		{"context lost", 5, lost, 1, "found the GPU context lost"},
		{"wrapped context lost", 5, fmt.Errorf("open device 0: %w", lost), 1, "found the GPU context lost"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			f.failOpens, f.openErr = 1000, c.openErr
			s, url := f.start(Config{RecoverBackoff: time.Microsecond, RecoverAttempts: c.attempts}, f.gpu)
			q := map[string]any{"root": 3, "targets": []int{0, 1}}
			f.fake().Fail("cuLaunchKernel", 719)
			require.Equal(t, http.StatusInternalServerError, post(t, url+"/v1/graphs/kron/bfs", q).status)
			select {
			case <-s.Failed():
			case <-time.After(10 * time.Second):
				require.FailNow(t, "the server never gave up", "%+v", s.Health())
			}
			f.mu.Lock()
			assert.Equal(t, 1+c.opens, f.opens, "the first opening, then the attempts")
			f.mu.Unlock()
			checkFailed(t, s, url, c.why)

			_, _, err := s.batch(context.Background(), s.order[0], []bfsquery.Query{{Root: 0, MaxDepth: -1}})
			require.ErrorIs(t, err, errStopped, "the batcher fails a queued batch, counting no fault")
			assert.Equal(t, CodeFailed, asError(err).Code)
			s.fault(s.generation.Load(), errors.New("another fault"))
			assert.Equal(t, StatusFailed, s.Health().Status, "no recovery starts again")

			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			require.NoError(t, s.Shutdown(ctx))
			assert.Equal(t, StatusFailed, s.Health().Status, "shutdown keeps the failure's reason")
		})
	}
}

// checkFailed checks a server that gave up: its health, its refusal of
// queries and its healthy gauge.
func checkFailed(t *testing.T, s *Server, url, why string) {
	t.Helper()
	h := s.Health()
	assert.Equal(t, StatusFailed, h.Status)
	assert.Contains(t, h.Reason, "the GPU context cannot be reopened in this process after a GPU fault")
	assert.Contains(t, h.Reason, why)
	assert.True(t, strings.HasSuffix(h.Reason, "the process must be restarted"), h.Reason)
	assert.Equal(t, uint64(1), h.Generation, "never reopened")

	r := call(t, context.Background(), http.MethodGet, url+"/healthz", "")
	require.Equal(t, http.StatusServiceUnavailable, r.status)
	health := decodeReply[Health](t, r)
	assert.Equal(t, StatusFailed, health.Status)

	for _, path := range []string{"/v1/graphs/kron/bfs", "/v1/graphs/web/reach"} {
		r = post(t, url+path, map[string]any{"root": 1, "targets": []int{2}})
		require.Equal(t, http.StatusServiceUnavailable, r.status, "%s", r.body)
		e := r.apiError(t)
		assert.Equal(t, CodeFailed, e.Code)
		assert.Zero(t, e.RetryAfter, "retrying this process cannot succeed")
		assert.Contains(t, e.Msg, h.Reason)
		fix := e.Msg[strings.LastIndex(e.Msg, "Fix:"):]
		assert.Equal(t, "Fix: restart the server (run it under a supervisor that restarts it on failure), or send the query to another instance", fix)
	}

	fams := scrape(t, url)
	require.NotNil(t, sample(fams, "gpuplan_serve_healthy", map[string]string{}))
	assert.Zero(t, sample(fams, "gpuplan_serve_healthy", map[string]string{}).GetGauge().GetValue(), "not ready")
	assert.Equal(t, 1.0, sample(fams, "gpuplan_serve_residency_generation", map[string]string{}).GetGauge().GetValue())
	assert.Zero(t, counterValue(t, s, "gpuplan_serve_recoveries_total", "", ""))
	assert.Positive(t, counterValue(t, s, "gpuplan_serve_queries_total", labelOutcome, outcomeRefused), "the refused queries are counted")
}

// TestFaultUnderLoadNeverAnswersWrong sends queries from many clients
// while faults are injected: every response is a correct answer or an
// error, never a wrong answer.
func TestFaultUnderLoadNeverAnswersWrong(t *testing.T) {
	f := newFixture(t)
	s, url := f.start(Config{Window: time.Millisecond, RecoverBackoff: time.Millisecond}, f.gpu)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var ok, failed sync.Map
	for c := range 16 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				root := int32((c*31 + i*7) % f.kron.NumVertices())
				q := bfsquery.Query{Root: root, Targets: []int32{0, 5, 9}, MaxDepth: -1}
				r := post(t, url+"/v1/graphs/kron/bfs", map[string]any{"root": root, "targets": q.Targets})
				if r.status != http.StatusOK {
					failed.Store(r.status, true)
					continue
				}
				a := decodeReply[QueryResponse](t, r)
				assert.Equal(t, wantLevels(t, f.kron, q), a.Levels, "root %d", root)
				ok.Store(c, true)
			}
		})
	}
	for range 3 {
		time.Sleep(30 * time.Millisecond)
		gen := s.Health().Generation
		f.fake().Fail("cuLaunchKernel", 719)
		eventually(t, func() bool { return s.Health().Generation > gen && s.Health().Status == StatusOK }, "the server recovers")
	}
	time.Sleep(30 * time.Millisecond)
	close(stop)
	wg.Wait()
	_, sawFault := failed.Load(http.StatusInternalServerError)
	assert.True(t, sawFault, "some queries met a fault")
	n := 0
	ok.Range(func(any, any) bool { n++; return true })
	assert.Positive(t, n, "queries were answered between faults")
}

// TestShutdownFinishesQueriesInFlight shuts down while a query waits in
// its batching window: the query is answered, then the port closes.
func TestShutdownFinishesQueriesInFlight(t *testing.T) {
	f := newFixture(t)
	s, err := New(context.Background(), Config{Window: 200 * time.Millisecond, WaitAlone: true}, f.gpu)
	require.NoError(t, err)
	l, err := Listen("127.0.0.1:0")
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- s.Serve(l) }()
	url := "http://" + l.Addr().String()
	got := make(chan reply, 1)
	go func() { got <- post(t, url+"/v1/graphs/kron/bfs", map[string]any{"root": 2, "targets": []int{1}}) }()
	eventually(t, func() bool { return queuedOrRunning(s) }, "the query is in flight")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, s.Shutdown(ctx))
	require.NoError(t, <-served)
	r := <-got
	assert.Equal(t, http.StatusOK, r.status, "%s", r.body)
	_, err = net.DialTimeout("tcp", l.Addr().String(), time.Second)
	assert.Error(t, err, "the port is closed")
	assert.Zero(t, f.fake().Stats().DeviceAllocations, "the graphs are freed")
	assert.Equal(t, StatusShuttingDown, s.Health().Status)
}

// queuedOrRunning reports whether a query has reached a batcher.
func queuedOrRunning(s *Server) bool {
	for _, b := range s.order {
		if len(b.queue) > 0 || b.reserved.Load() > 0 {
			return true
		}
	}
	return counterValue(nil, s, "gpuplan_serve_queries_total", "", "") > 0
}

// TestListenErrors names a port in use and a malformed address.
func TestListenErrors(t *testing.T) {
	l, err := Listen("127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	_, err = Listen(l.Addr().String())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "in use")
	assert.Contains(t, err.Error(), "Fix:")
	_, err = Listen("localhost")
	require.ErrorContains(t, err, "HOST:PORT")
	assert.Equal(t, "127.0.0.1:8080", DefaultAddr, "loopback by default")
}

// TestWarmQueriesAllocateAndUploadNothing checks the residency promise on
// the fake GPU: once warm, queries allocate no device memory and upload
// no graph, only their roots.
func TestWarmQueriesAllocateAndUploadNothing(t *testing.T) {
	f := newFixture(t)
	s, url := f.start(Config{Window: time.Millisecond}, f.gpu)
	x := s.cur.Load().Executor
	query := func() {
		var wg sync.WaitGroup
		for c := range 8 {
			wg.Go(func() {
				r := post(t, url+"/v1/graphs/kron/bfs", map[string]any{"root": c * 11, "targets": []int{1, 2}})
				assert.Equal(t, http.StatusOK, r.status)
			})
		}
		wg.Wait()
	}
	query()
	before, stats := x.Telemetry(), f.fake().Stats()
	for range 5 {
		query()
	}
	d := x.Telemetry().Sub(before)
	assert.Zero(t, d.ResidentAllocationBytesRequested, "no resident allocation")
	assert.Zero(t, d.TransientAllocationBytesRequested, "no transient allocation")
	assert.Equal(t, stats.DeviceAllocations, f.fake().Stats().DeviceAllocations)
	// At most, each query runs in a pass of its own: the pass's padded
	// roots, and its two targets' (root, vertex) pairs.
	perQuery := uint64(4*bfsquery.DefaultBatchWidth + 8*2)
	assert.LessOrEqual(t, d.HostToDeviceBytes, 40*perQuery, "40 queries upload their roots and targets: %+v", d)
	graph := 4 * uint64(len(f.kron.Offsets)+len(f.kron.Targets))
	assert.Less(t, d.HostToDeviceBytes, graph/2, "not the graph: %+v", d)
	assert.Positive(t, d.KernelLaunches)
}

// TestConfigOutOfRange names the field of every bad setting.
func TestConfigOutOfRange(t *testing.T) {
	f := newFixture(t)
	for _, c := range []struct {
		cfg   Config
		field string
	}{
		{Config{Window: 2 * time.Second}, "Window"},
		{Config{Window: -5}, "Window"},
		{Config{MaxBatch: -1}, "MaxBatch"},
		{Config{MaxBatch: MaxMaxBatch + 1}, "MaxBatch"},
		{Config{QueueDepth: -1}, "QueueDepth"},
		{Config{MaxBodyBytes: -1}, "MaxBodyBytes"},
		{Config{Timeout: -1}, "Timeout"},
		{Config{MaxBatchQueries: 1 << 20}, "MaxBatchQueries"},
		{Config{RecoverBackoff: -1}, "RecoverBackoff"},
		{Config{RecoverAttempts: -1}, "RecoverAttempts"},
	} {
		_, err := New(context.Background(), c.cfg, f.cpu)
		var ce *ConfigError
		require.ErrorAs(t, err, &ce, "%+v", c.cfg)
		assert.Equal(t, c.field, ce.Field)
		assert.Contains(t, err.Error(), "Fix:")
	}
	_, err := New(context.Background(), Config{}, nil)
	assert.ErrorContains(t, err, "opener is nil")
	_, err = New(context.Background(), Config{}, func(context.Context) (*Residency, error) {
		g, _ := bfsquery.OpenCPU(f.kron, bfsquery.Options{})
		h, _ := bfsquery.OpenCPU(f.kron, bfsquery.Options{})
		return &Residency{Graphs: []*bfsquery.Graph{g, h}}, nil
	})
	assert.ErrorContains(t, err, "two graphs are named")
	assert.ErrorContains(t, CheckName("a/b"), "Fix:")
	assert.NoError(t, CheckName("road-usa.v2"))
}

// counterValue sums a metric's samples whose label has value ("" label:
// every sample). A nil t reports a gather failure as 0.
func counterValue(t *testing.T, s *Server, name, label, value string) float64 {
	mfs, err := s.metrics.reg.Gather()
	if t != nil {
		require.NoError(t, err)
	}
	sum := 0.0
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if label != "" && !hasLabel(m.GetLabel(), label, value) {
				continue
			}
			sum += m.GetCounter().GetValue()
		}
	}
	return sum
}

// histogramCount sums a histogram's observation counts.
func histogramCount(t *testing.T, s *Server, name string) uint64 {
	mfs, err := s.metrics.reg.Gather()
	require.NoError(t, err)
	var n uint64
	for _, mf := range mfs {
		if mf.GetName() == name {
			for _, m := range mf.GetMetric() {
				n += m.GetHistogram().GetSampleCount()
			}
		}
	}
	return n
}

func hasLabel[L interface {
	GetName() string
	GetValue() string
}](ls []L, name, value string) bool {
	for _, l := range ls {
		if l.GetName() == name && strings.EqualFold(l.GetValue(), value) {
			return true
		}
	}
	return false
}

// TestShutdownDoesNotWaitForSilentConnections opens a connection that
// sends nothing, as a client's transport dials spares: shutdown closes it
// rather than waiting for it.
func TestShutdownDoesNotWaitForSilentConnections(t *testing.T) {
	f := newFixture(t)
	s, err := New(context.Background(), Config{}, f.cpu)
	require.NoError(t, err)
	l, err := Listen("127.0.0.1:0")
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- s.Serve(l) }()
	conn, err := net.Dial("tcp", l.Addr().String())
	require.NoError(t, err)
	defer conn.Close()
	eventually(t, func() bool {
		s.httpMu.Lock()
		defer s.httpMu.Unlock()
		return len(s.fresh) == 1
	}, "the server sees the connection")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	require.NoError(t, s.Shutdown(ctx), "shutdown ends before its deadline")
	require.NoError(t, <-served)
}
