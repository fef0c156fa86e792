package bfsserve

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/gpuplan/gpuplan/internal/quote"
	"github.com/gpuplan/gpuplan/workloads/bfsquery"
)

// Bounds of LoadConfig.
const (
	// MaxClients bounds LoadConfig.Clients.
	MaxClients = 4096
	// MaxLoadDuration bounds LoadConfig.Duration.
	MaxLoadDuration = 24 * time.Hour
	// DefaultLoadTargets is the random targets of each query.
	DefaultLoadTargets = 16
	// maxLatencies bounds the latencies one run keeps for its percentiles
	// (a uniform sample beyond it).
	maxLatencies = 1 << 22
	// maxChecks bounds the answers a run keeps for its check; an answer
	// sampled once that many are kept is counted as unchecked.
	maxChecks = 64
)

// LoadConfig configures RunLoad: Clients concurrent clients, each sending
// one query at a time to the graph Graph of the server at URL (loopback
// only), for Duration or until Queries are answered, whichever comes
// first.
type LoadConfig struct {
	// URL is the server's base URL, for example http://127.0.0.1:8080.
	URL string
	// Graph is the served graph's name.
	Graph string
	// Clients is the concurrent clients, 1 to MaxClients.
	Clients int
	// Duration bounds the run's time (0: no bound but Queries).
	Duration time.Duration
	// Queries bounds the queries answered (0: no bound but Duration).
	Queries int64
	// Roots are the roots drawn at random, with Seed.
	Roots []int32
	// Vertices is the graph's vertex count, for the random targets.
	Vertices int
	// Targets is each query's random targets (0: DefaultLoadTargets).
	Targets int
	// MaxDepth is each query's depth limit (bfsquery.NoDepthLimit: none).
	MaxDepth int32
	// Seed seeds the roots and targets drawn.
	Seed uint64
	// CheckEvery checks one answer in CheckEvery against Reference (0:
	// none), up to 64 answers a run. The answers are kept and checked
	// after the run's timed window, so that the CPU reference does not
	// take the host from the server being measured.
	CheckEvery int
	// Reference returns the levels of every vertex from a root, by the
	// CPU reference.
	Reference func(root int32) ([]int32, error)
	// Disconnect is the fraction of queries whose client leaves early, at
	// a random moment within 2 ms (0 to 1).
	Disconnect float64
	// Mixed varies the queries: each draws 1 to 2*Targets targets, a depth
	// limit (none, or 1 to 8 levels) and asks for parents one time in four.
	Mixed bool
	// Client sends the requests (nil: one with a connection per client).
	Client *http.Client
	// Progress, when set, is called about every 100 ms with the queries
	// answered so far.
	Progress func(answered int64)
}

// LoadResult is what a load run measured.
type LoadResult struct {
	Clients int `json:"clients"`
	// Answered counts the queries answered, Refused those the server
	// refused for load (429 or 503), Failed those that failed otherwise,
	// Abandoned those whose client left early.
	Answered  int64 `json:"answered"`
	Refused   int64 `json:"refused"`
	Failed    int64 `json:"failed"`
	Abandoned int64 `json:"abandoned"`
	// Elapsed is the run's wall time and QPS the answered queries per
	// second of it.
	Elapsed time.Duration `json:"elapsed_ns"`
	QPS     float64       `json:"qps"`
	// The latency percentiles of the answered queries.
	P50  time.Duration `json:"p50_ns"`
	P99  time.Duration `json:"p99_ns"`
	P999 time.Duration `json:"p999_ns"`
	Max  time.Duration `json:"max_ns"`
	// MeanBatch is the mean over answered queries of their batch's
	// distinct roots, and Batches how many answered queries each batch
	// size served.
	MeanBatch float64       `json:"mean_batch"`
	Batches   map[int]int64 `json:"batches"`
	// Checked answers agreed with the reference or are in Mismatches;
	// Unchecked were sampled once the run kept as many as it checks.
	Checked    int64 `json:"checked"`
	Mismatches int64 `json:"mismatches"`
	Unchecked  int64 `json:"unchecked"`
	// FirstFailure, FirstRefusal and FirstMismatch describe the first of
	// each.
	FirstFailure  string `json:"first_failure,omitempty"`
	FirstRefusal  string `json:"first_refusal,omitempty"`
	FirstMismatch string `json:"first_mismatch,omitempty"`
}

// check validates the configuration.
func (c *LoadConfig) check() error {
	bad := func(field, msg, fix string) error { return &ConfigError{Field: field, Msg: msg, Fix: fix} }
	switch {
	case c.Clients < 1 || c.Clients > MaxClients:
		return bad("Clients", fmt.Sprintf("%d clients is outside 1..%d", c.Clients, MaxClients), "give 1 to 4096 concurrent clients")
	case c.Duration < 0 || c.Duration > MaxLoadDuration:
		return bad("Duration", fmt.Sprintf("%s is outside 0..24h", c.Duration), "give a duration such as 10s")
	case c.Queries < 0:
		return bad("Queries", fmt.Sprintf("%d is negative", c.Queries), "give a count, or 0 for no bound")
	case c.Duration == 0 && c.Queries == 0:
		return bad("Duration", "neither a duration nor a query count bounds the run", "give a duration, a query count, or both")
	case len(c.Roots) == 0:
		return bad("Roots", "no roots to draw from", "give the roots, for example from frontier.Roots")
	case c.Vertices < 1:
		return bad("Vertices", fmt.Sprintf("%d vertices", c.Vertices), "give the graph's vertex count")
	case c.Targets < 0 || c.Targets > bfsquery.MaxTargets:
		return bad("Targets", fmt.Sprintf("%d is outside 0..%d", c.Targets, bfsquery.MaxTargets), "give the random targets per query")
	case c.MaxDepth < bfsquery.NoDepthLimit:
		return bad("MaxDepth", fmt.Sprintf("%d is below -1", c.MaxDepth), "give a depth of 0 or more, or -1 for no limit")
	case c.CheckEvery < 0:
		return bad("CheckEvery", fmt.Sprintf("%d is negative", c.CheckEvery), "give N to check one answer in N, or 0 for none")
	case c.CheckEvery > 0 && c.Reference == nil:
		return bad("Reference", "answers are to be checked but there is no reference", "give the CPU reference, or set CheckEvery to 0")
	case !(c.Disconnect >= 0 && c.Disconnect <= 1):
		return bad("Disconnect", fmt.Sprintf("%v is outside 0..1", c.Disconnect), "give the fraction of queries abandoned early, from 0 to 1")
	}
	for i, r := range c.Roots {
		if r < 0 || int(r) >= c.Vertices {
			return bad(fmt.Sprintf("Roots[%d]", i), fmt.Sprintf("vertex %d is not in the graph of %d vertices", r, c.Vertices), "draw the roots from the graph")
		}
	}
	if err := CheckName(c.Graph); err != nil {
		return bad("Graph", err.Error(), "name a graph the server loaded")
	}
	return checkLoopback(c.URL)
}

// checkLoopback refuses a URL whose host is not a loopback address: load
// runs stay on the machine they run on.
func checkLoopback(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return &ConfigError{Field: "URL", Msg: fmt.Sprintf("%s is not an http:// URL", quote.Echo(raw)), Fix: "give the server's base URL, for example http://127.0.0.1:8080"}
	}
	host := u.Hostname()
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return &ConfigError{Field: "URL", Msg: fmt.Sprintf("host %s is not a loopback address", quote.Echo(host)), Fix: "drive a server on this machine, at 127.0.0.1 or [::1]"}
	}
	return nil
}

// loadRun is one run's shared state.
type loadRun struct {
	cfg                                  LoadConfig
	client                               *http.Client
	url                                  string
	answered, refused, failed, abandoned atomic.Int64
	checked, mismatches, unchecked       atomic.Int64
	mu                                   sync.Mutex
	firstFailure, firstRefusal           string
	firstMismatch                        string
	checks                               []check
}

// check is an answer waiting for its check.
type check struct {
	q bfsquery.Query
	a QueryResponse
}

// clientStats is one client's record.
type clientStats struct {
	lat     []time.Duration
	seen    int64
	batches map[int]int64
}

// RunLoad drives the server with cfg.Clients concurrent clients until the
// duration passes, the query count is answered or ctx ends, and reports
// what it measured. Failed queries are counted, not fatal: a run against a
// server that fails every query returns a result whose Failed says so.
func RunLoad(ctx context.Context, cfg LoadConfig) (LoadResult, error) {
	if cfg.Targets == 0 {
		cfg.Targets = DefaultLoadTargets
	}
	if err := cfg.check(); err != nil {
		return LoadResult{}, err
	}
	run := &loadRun{cfg: cfg, client: cfg.Client, url: fmt.Sprintf("%s/v1/graphs/%s/bfs", cfg.URL, cfg.Graph)}
	if run.client == nil {
		run.client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: cfg.Clients, DisableCompression: true}}
	}
	if cfg.Duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.Duration)
		defer cancel()
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	done := run.progress(ctx)
	stats := make([]clientStats, cfg.Clients)
	start := time.Now()
	var clients sync.WaitGroup
	for i := range stats {
		clients.Go(func() { run.client1(ctx, stop, uint64(i), &stats[i]) })
	}
	clients.Wait()
	elapsed := time.Since(start)
	close(done)
	run.check()
	return run.result(stats, elapsed), nil
}

// progress reports the answered count every 100 ms until done closes.
func (r *loadRun) progress(ctx context.Context) chan struct{} {
	done := make(chan struct{})
	if r.cfg.Progress == nil {
		return done
	}
	go func() {
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				r.cfg.Progress(r.answered.Load())
			}
		}
	}()
	return done
}

// client1 is one client: it sends a query, waits for its answer, and
// sends the next, until ctx ends or the query count is reached.
func (r *loadRun) client1(ctx context.Context, stop context.CancelFunc, id uint64, st *clientStats) {
	rng := rand.New(rand.NewPCG(r.cfg.Seed, id+1))
	st.batches = map[int]int64{}
	keep := maxLatencies / r.cfg.Clients
	for n := uint64(0); ctx.Err() == nil; n++ {
		q := r.draw(rng)
		leave := r.cfg.Disconnect > 0 && rng.Float64() < r.cfg.Disconnect
		t0 := time.Now()
		a, roots, err := r.send(ctx, q, leave, rng)
		lat := time.Since(t0)
		switch {
		case leave:
			r.abandoned.Add(1)
			continue
		case ctx.Err() != nil:
			return
		case err != nil:
			r.failure(err)
			continue
		}
		if got := r.answered.Add(1); r.cfg.Queries > 0 && got >= r.cfg.Queries {
			stop()
		}
		st.seen++
		if len(st.lat) < keep {
			st.lat = append(st.lat, lat)
		} else if k := rng.Int64N(st.seen); k < int64(keep) {
			st.lat[k] = lat
		}
		st.batches[roots]++
		if r.cfg.CheckEvery > 0 && n%uint64(r.cfg.CheckEvery) == 0 {
			r.keep(check{q: q, a: a})
		}
	}
}

// draw picks a query: a random root of the pool and random targets, and
// with Mixed a random target count, depth limit and parents.
func (r *loadRun) draw(rng *rand.Rand) bfsquery.Query {
	targets := r.cfg.Targets
	q := bfsquery.Query{Root: r.cfg.Roots[rng.IntN(len(r.cfg.Roots))], MaxDepth: r.cfg.MaxDepth}
	if r.cfg.Mixed {
		targets = 1 + rng.IntN(2*targets)
		if d := rng.IntN(9); d > 0 {
			q.MaxDepth = int32(d)
		}
		q.Parents = rng.IntN(4) == 0
	}
	q.Targets = make([]int32, targets)
	for i := range q.Targets {
		q.Targets[i] = int32(rng.IntN(r.cfg.Vertices))
	}
	return q
}

// refusedError is a query the server refused for load, with the status
// and the message (quoted and cut) it answered.
type refusedError struct {
	status int
	msg    string
}

func (e *refusedError) Error() string { return fmt.Sprintf("refused with %d: %s", e.status, e.msg) }

// send posts one query and decodes its answer; a leaving client cancels
// it at a random moment within 2 ms.
func (r *loadRun) send(ctx context.Context, q bfsquery.Query, leave bool, rng *rand.Rand) (QueryResponse, int, error) {
	if leave {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(rng.Int64N(int64(2*time.Millisecond))))
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.url, bytes.NewReader(queryBody(q)))
	if err != nil {
		return QueryResponse{}, 0, withoutAddress(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := r.client.Do(req)
	if err != nil {
		return QueryResponse{}, 0, withoutAddress(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return QueryResponse{}, 0, err
	}
	switch {
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable:
		return QueryResponse{}, 0, &refusedError{status: resp.StatusCode, msg: bodyMessage(body)}
	case resp.StatusCode != http.StatusOK:
		return QueryResponse{}, 0, fmt.Errorf("status %d: %s", resp.StatusCode, bodyMessage(body))
	}
	var a QueryResponse
	if err := json.Unmarshal(body, &a); err != nil {
		return QueryResponse{}, 0, fmt.Errorf("decoding the answer: %w", err)
	}
	roots, _ := strconv.Atoi(resp.Header.Get(BatchRootsHeader))
	return a, roots, nil
}

// queryBody is q's request body.
func queryBody(q bfsquery.Query) []byte {
	b := make([]byte, 0, 48+12*len(q.Targets))
	b = fmt.Appendf(b, `{"root":%d,"max_depth":%d,"parents":%t,"targets":[`, q.Root, q.MaxDepth, q.Parents)
	for i, t := range q.Targets {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(t), 10)
	}
	return append(b, "]}"...)
}

// failure counts a failed or refused query and keeps the first of each.
func (r *loadRun) failure(err error) {
	first := &r.firstFailure
	if re := (*refusedError)(nil); errors.As(err, &re) {
		r.refused.Add(1)
		first = &r.firstRefusal
	} else {
		r.failed.Add(1)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if *first == "" {
		*first = err.Error()
	}
}

// keep keeps a sampled answer for the check after the run, or counts it
// unchecked once maxChecks are kept.
func (r *loadRun) keep(c check) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.checks) >= maxChecks {
		r.unchecked.Add(1)
		return
	}
	r.checks = append(r.checks, c)
}

// check checks the kept answers against the reference, after the timed
// window, grouped by root so that each root's reference runs once.
func (r *loadRun) check() {
	slices.SortStableFunc(r.checks, func(a, b check) int { return cmp.Compare(a.q.Root, b.q.Root) })
	for _, c := range r.checks {
		want, err := r.cfg.Reference(c.q.Root)
		r.checked.Add(1)
		msg := ""
		switch {
		case err != nil:
			msg = fmt.Sprintf("root %d: the reference failed: %v", c.q.Root, err)
		default:
			msg = compareAnswer(c.q, c.a, want)
		}
		if msg == "" {
			continue
		}
		r.mismatches.Add(1)
		if r.firstMismatch == "" {
			r.firstMismatch = msg
		}
	}
}

// compareAnswer describes how a differs from the reference levels want,
// or returns "".
func compareAnswer(q bfsquery.Query, a QueryResponse, want []int32) string {
	if a.Root != q.Root || len(a.Levels) != len(q.Targets) {
		return fmt.Sprintf("root %d: answered root %d with %d levels for %d targets", q.Root, a.Root, len(a.Levels), len(q.Targets))
	}
	for i, t := range q.Targets {
		w := want[t]
		if q.MaxDepth != bfsquery.NoDepthLimit && w > q.MaxDepth {
			w = bfsquery.Unreached
		}
		if a.Levels[i] != w {
			return fmt.Sprintf("root %d, target %d: level %d, the reference says %d", q.Root, t, a.Levels[i], w)
		}
	}
	return ""
}

// result merges the clients' records.
func (r *loadRun) result(stats []clientStats, elapsed time.Duration) LoadResult {
	res := LoadResult{Clients: r.cfg.Clients, Answered: r.answered.Load(), Refused: r.refused.Load(), Failed: r.failed.Load(),
		Abandoned: r.abandoned.Load(), Elapsed: elapsed, Batches: map[int]int64{},
		Checked: r.checked.Load(), Mismatches: r.mismatches.Load(), Unchecked: r.unchecked.Load(),
		FirstFailure: r.firstFailure, FirstRefusal: r.firstRefusal, FirstMismatch: r.firstMismatch}
	var lat []time.Duration
	var weighted float64
	for _, st := range stats {
		lat = append(lat, st.lat...)
		for size, n := range st.batches {
			res.Batches[size] += n
			weighted += float64(size) * float64(n)
		}
	}
	if res.Answered > 0 {
		res.QPS = float64(res.Answered) / elapsed.Seconds()
		res.MeanBatch = weighted / float64(res.Answered)
	}
	slices.Sort(lat)
	res.P50, res.P99, res.P999 = percentile(lat, 0.50), percentile(lat, 0.99), percentile(lat, 0.999)
	if len(lat) > 0 {
		res.Max = lat[len(lat)-1]
	}
	return res
}

// percentile returns the p-quantile of sorted values (nearest rank), 0 for
// none.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	k := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[min(max(k, 0), len(sorted)-1)]
}

// Scrape reads a server's /metrics and returns each metric's value, the
// samples of a labelled metric summed (a histogram's or summary's count):
// a soak compares them before and after, for example
// gpuplan_serve_device_resident_bytes, go_goroutines and process_open_fds.
func Scrape(ctx context.Context, client *http.Client, baseURL string) (map[string]float64, error) {
	families, err := scrapeFamilies(ctx, client, baseURL)
	if err != nil {
		return nil, err
	}
	out := make(map[string]float64, len(families))
	for name, mf := range families {
		for _, m := range mf.GetMetric() {
			switch {
			case m.Gauge != nil:
				out[name] += m.GetGauge().GetValue()
			case m.Counter != nil:
				out[name] += m.GetCounter().GetValue()
			case m.Histogram != nil:
				out[name] += float64(m.GetHistogram().GetSampleCount())
			case m.Summary != nil:
				out[name] += float64(m.GetSummary().GetSampleCount())
			case m.Untyped != nil:
				out[name] += m.GetUntyped().GetValue()
			}
		}
	}
	return out, nil
}

// BatchStats is what a server's batches have done so far, summed over
// its graphs: the seconds spent in each phase (traverse, setup, read,
// answer: gpuplan_serve_batch_phase_seconds) and the GPU runs of each kind
// (pass, single: gpuplan_serve_gpu_runs_total; none for a CPU server),
// and the single-root runs of each arm.
type BatchStats struct {
	Phases map[string]float64
	Runs   map[string]float64
	Arms   map[string]float64
}

// ScrapeBatchStats reads a server's /metrics once and returns its
// BatchStats.
func ScrapeBatchStats(ctx context.Context, client *http.Client, baseURL string) (BatchStats, error) {
	families, err := scrapeFamilies(ctx, client, baseURL)
	if err != nil {
		return BatchStats{}, err
	}
	return BatchStats{
		Phases: sumByLabel(families["gpuplan_serve_batch_phase_seconds"], labelPhase, func(m *dto.Metric) float64 { return m.GetHistogram().GetSampleSum() }),
		Runs:   sumByLabel(families["gpuplan_serve_gpu_runs_total"], labelKind, seriesCounter),
		Arms:   sumByLabel(singles(families["gpuplan_serve_gpu_runs_total"]), labelArm, seriesCounter),
	}, nil
}

// seriesCounter is a counter series' value.
func seriesCounter(m *dto.Metric) float64 { return m.GetCounter().GetValue() }

// singles keeps the series of gpuplan_serve_gpu_runs_total whose kind is
// single.
func singles(mf *dto.MetricFamily) *dto.MetricFamily {
	out := &dto.MetricFamily{}
	for _, m := range mf.GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == labelKind && l.GetValue() == runSingle {
				out.Metric = append(out.Metric, m)
			}
		}
	}
	return out
}

// sumByLabel sums value over a family's series by their label's value.
func sumByLabel(mf *dto.MetricFamily, label string, value func(*dto.Metric) float64) map[string]float64 {
	out := map[string]float64{}
	for _, m := range mf.GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == label {
				out[l.GetValue()] += value(m)
			}
		}
	}
	return out
}

// scrapeFamilies reads and parses a loopback server's /metrics.
func scrapeFamilies(ctx context.Context, client *http.Client, baseURL string) (map[string]*dto.MetricFamily, error) {
	if err := checkLoopback(baseURL); err != nil {
		return nil, err
	}
	if client == nil {
		client = http.DefaultClient
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, baseURL+"/metrics", nil)
	if err != nil {
		return nil, withoutAddress(err)
	}
	at := quote.Echo(baseURL + "/metrics")
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w. Fix: check that the server is running", at, withoutAddress(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("reading %s: status %d. Fix: point at a gpuplan server", at, resp.StatusCode)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %s. Fix: point at a gpuplan server", at, quote.Echo(err.Error()))
	}
	return families, nil
}
