package bfsserve

import (
	"context"
	"net/http"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRunLoadChecksEveryAnswer drives the fake GPU server with concurrent
// clients: every answer checked agrees with the reference, batches form,
// and the percentiles are ordered.
func TestRunLoadChecksEveryAnswer(t *testing.T) {
	f := newFixture(t)
	_, url := f.start(Config{Window: time.Millisecond}, f.gpu)
	var progress []int64
	cfg := f.loadConfig(url)
	cfg.Progress = func(n int64) { progress = append(progress, n) }
	res, err := RunLoad(context.Background(), cfg)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, res.Answered, int64(150))
	assert.Zero(t, res.Failed, res.FirstFailure)
	assert.Zero(t, res.Mismatches, res.FirstMismatch)
	assert.Equal(t, res.Answered, res.Checked+res.Unchecked, "every answer is checked or counted unchecked")
	assert.Positive(t, res.Checked)
	assert.Greater(t, res.MeanBatch, 1.0, "concurrent clients share batches")
	assert.Positive(t, res.P50)
	assert.LessOrEqual(t, res.P50, res.P99)
	assert.LessOrEqual(t, res.P99, res.P999)
	assert.LessOrEqual(t, res.P999, res.Max)
	assert.Positive(t, res.QPS)
	sum := int64(0)
	for _, n := range res.Batches {
		sum += n
	}
	assert.Equal(t, res.Answered, sum)
}

// TestRunLoadChecksAfterTheTimedWindow holds the checks out of the
// measured window: every reference call comes after the run's elapsed
// time, at most maxChecks answers are checked, and the rest of the
// sampled ones are counted unchecked.
func TestRunLoadChecksAfterTheTimedWindow(t *testing.T) {
	f := newFixture(t)
	_, url := f.start(Config{Window: time.Millisecond}, f.gpu)
	cfg := f.loadConfig(url)
	right := cfg.Reference
	var mu sync.Mutex
	var calls []time.Time
	cfg.Reference = func(root int32) ([]int32, error) {
		mu.Lock()
		calls = append(calls, time.Now())
		mu.Unlock()
		return right(root)
	}
	t0 := time.Now()
	res, err := RunLoad(context.Background(), cfg)
	require.NoError(t, err)
	require.Zero(t, res.Mismatches, res.FirstMismatch)
	assert.Equal(t, int64(maxChecks), res.Checked, "150 answers sampled, the first maxChecks kept")
	assert.Equal(t, res.Answered, res.Checked+res.Unchecked)
	require.Len(t, calls, maxChecks)
	end := t0.Add(res.Elapsed)
	for i, c := range calls {
		assert.False(t, c.Before(end), "reference call %d ran inside the timed window", i)
	}
}

// TestRunLoadCatchesWrongAnswers checks against a wrong reference: the
// mismatches are counted and described.
func TestRunLoadCatchesWrongAnswers(t *testing.T) {
	f := newFixture(t)
	_, url := f.start(Config{}, f.cpu)
	cfg := f.loadConfig(url)
	cfg.Queries, cfg.Clients = 20, 2
	right := cfg.Reference
	cfg.Reference = func(root int32) ([]int32, error) {
		l, err := right(root)
		wrong := append([]int32(nil), l...)
		for i := range wrong {
			wrong[i]++
		}
		return wrong, err
	}
	res, err := RunLoad(context.Background(), cfg)
	require.NoError(t, err)
	assert.Equal(t, res.Checked, res.Mismatches)
	assert.Contains(t, res.FirstMismatch, "the reference says")
}

// TestSoakWithDisconnectsLeaksNothing runs mixed load with clients that
// leave at random, then shuts down: no goroutine, file descriptor or
// device allocation outlives it, and every answer checked is right.
func TestSoakWithDisconnectsLeaksNothing(t *testing.T) {
	goroutines, fds := runtime.NumGoroutine(), openFDs()
	f := newFixture(t)
	s, err := New(context.Background(), Config{Window: 500 * time.Microsecond}, f.gpu)
	require.NoError(t, err)
	l, err := Listen("127.0.0.1:0")
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- s.Serve(l) }()
	transport := &http.Transport{MaxIdleConnsPerHost: 32}
	cfg := f.loadConfig("http://" + l.Addr().String())
	cfg.Clients, cfg.Queries, cfg.Duration, cfg.Disconnect, cfg.CheckEvery, cfg.Mixed = 32, 0, 700*time.Millisecond, 0.3, 5, true
	cfg.Client = &http.Client{Transport: transport}
	warm := f.fake().Stats().DeviceAllocations
	before, err := Scrape(context.Background(), cfg.Client, cfg.URL)
	require.NoError(t, err)
	res, err := RunLoad(context.Background(), cfg)
	require.NoError(t, err)
	after, err := Scrape(context.Background(), cfg.Client, cfg.URL)
	require.NoError(t, err)
	assert.Positive(t, before["gpuplan_serve_device_resident_bytes"])
	assert.Equal(t, before["gpuplan_serve_device_resident_bytes"], after["gpuplan_serve_device_resident_bytes"], "no device memory leaks")
	assert.Greater(t, after["gpuplan_serve_queries_total"], before["gpuplan_serve_queries_total"])
	assert.Contains(t, after, "go_goroutines")
	assert.Positive(t, res.Answered)
	assert.Positive(t, res.Abandoned)
	assert.Zero(t, res.Failed, res.FirstFailure)
	assert.Zero(t, res.Mismatches, res.FirstMismatch)
	assert.Equal(t, warm, f.fake().Stats().DeviceAllocations, "no device allocation per query")
	transport.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, s.Shutdown(ctx))
	require.NoError(t, <-served)
	assert.Zero(t, f.fake().Stats().DeviceAllocations)
	eventually(t, func() bool { return runtime.NumGoroutine() <= goroutines+2 }, "the goroutines end")
	if fds >= 0 {
		eventually(t, func() bool { return openFDs() <= fds+2 }, "the connections close")
	}
}

// openFDs counts this process's open file descriptors, -1 where it
// cannot tell.
func openFDs() int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(ents)
}

// TestLoadConfigOutOfRange names the field of every bad setting.
func TestLoadConfigOutOfRange(t *testing.T) {
	good := LoadConfig{URL: "http://127.0.0.1:1", Graph: "g", Clients: 1, Duration: time.Second, Roots: []int32{0}, Vertices: 4}
	for _, c := range []struct {
		change func(*LoadConfig)
		field  string
	}{
		{func(c *LoadConfig) { c.Clients = 0 }, "Clients"},
		{func(c *LoadConfig) { c.Clients = MaxClients + 1 }, "Clients"},
		{func(c *LoadConfig) { c.Duration = 0 }, "Duration"},
		{func(c *LoadConfig) { c.Duration = 48 * time.Hour }, "Duration"},
		{func(c *LoadConfig) { c.Queries = -1 }, "Queries"},
		{func(c *LoadConfig) { c.Roots = nil }, "Roots"},
		{func(c *LoadConfig) { c.Roots = []int32{4} }, "Roots[0]"},
		{func(c *LoadConfig) { c.Targets = -1 }, "Targets"},
		{func(c *LoadConfig) { c.MaxDepth = -3 }, "MaxDepth"},
		{func(c *LoadConfig) { c.CheckEvery = 1 }, "Reference"},
		{func(c *LoadConfig) { c.Disconnect = 1.5 }, "Disconnect"},
		{func(c *LoadConfig) { c.Graph = "a b" }, "Graph"},
		{func(c *LoadConfig) { c.URL = "http://10.1.2.3:80" }, "URL"},
		{func(c *LoadConfig) { c.URL = "ftp://127.0.0.1" }, "URL"},
	} {
		cfg := good
		c.change(&cfg)
		_, err := RunLoad(context.Background(), cfg)
		var ce *ConfigError
		require.ErrorAs(t, err, &ce, c.field)
		assert.Equal(t, c.field, ce.Field)
		assert.Contains(t, err.Error(), "Fix:")
	}
}

func TestPercentile(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	for _, c := range []struct {
		sorted []time.Duration
		p      float64
		want   time.Duration
	}{
		{nil, 0.5, 0},
		{ms(7), 0.999, 7 * time.Millisecond},
		{ms(1, 2, 3, 4), 0.5, 2 * time.Millisecond},
		{ms(1, 2, 3, 4), 0.99, 4 * time.Millisecond},
		{ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 0.9, 9 * time.Millisecond},
	} {
		assert.Equal(t, c.want, percentile(c.sorted, c.p), "%v at %v", c.sorted, c.p)
	}
}
