package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	neturl "net/url"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gpuplan/gpuplan/evidence"
	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/internal/quote"
	"github.com/gpuplan/gpuplan/workloads/bfsserve"
)

// loadWorkload is the package whose fingerprint load evidence records.
const loadWorkload = "workloads/bfsserve"

// loadDriver runs the settings of one "gpuplan load".
type loadDriver struct {
	e        *env
	o        *loadOptions
	g        *frontier.CSR
	directed bool
	roots    []int32
	ref      *referenceCache
}

// loadRow is one setting's evidence row, what the run measured and the
// leaks a soak found.
type loadRow struct {
	evidence.LoadRow
	result bfsserve.LoadResult
	leaks  []string
	// phases is the server's time per batch in each phase over the
	// setting, batches how many ran, runs the GPU runs they made by kind
	// (pass, single) and arms the single runs by arm:
	// bfsserve.ScrapeBatchStats.
	phases     map[string]time.Duration
	batches    float64
	runs, arms map[string]float64
}

// setting is one server configuration and client count.
type setting struct {
	mode     string
	window   time.Duration
	maxBatch int
	clients  int
}

// settings lists the in-process settings: per client count, the serial
// baseline and then every window.
func (o *loadOptions) settings() []setting {
	var out []setting
	for _, c := range o.clients {
		if o.serial {
			out = append(out, setting{mode: evidence.LoadSerial, maxBatch: 1, clients: c})
		}
		for _, w := range o.windows {
			out = append(out, setting{mode: evidence.LoadBatched, window: w, maxBatch: o.maxBatch, clients: c})
		}
	}
	return out
}

// inProcess opens the graph once and runs every setting against a server
// of its own over it.
func (d *loadDriver) inProcess(ctx context.Context) ([]loadRow, error) {
	name := servedName(d.g.Name)
	d.g.Name = name
	shared := &sharedResidency{open: residencyOpener([]servedGraph{{d.g, d.directed}}, d.o.cpu, d.o.device), log: d.e.stderr}
	defer func() { _ = shared.close() }()
	prov, err := d.provenance(ctx, shared)
	if err != nil {
		return nil, err
	}
	res, err := shared.get(ctx)
	if err != nil {
		return nil, err
	}
	info := bfsserve.Info(res.Graphs[0])
	var rows []loadRow
	for _, st := range d.o.settings() {
		if ctx.Err() != nil {
			break
		}
		row, err := d.runSetting(ctx, shared, st, info)
		if err != nil {
			return nil, err
		}
		row.Provenance = prov
		row.Provenance.Date = time.Now().UTC()
		rows = append(rows, row)
	}
	return rows, nil
}

// provenance opens the residency (the first setting reuses it) and
// describes the device and build the rows record.
func (d *loadDriver) provenance(ctx context.Context, shared *sharedResidency) (evidence.Provenance, error) {
	fp := "sha256:" + strings.Repeat("0", 64)
	if d.o.out != "" {
		var err error
		if fp, err = evidenceFingerprint(d.o.out, d.o.sourceRoot, loadWorkload); err != nil {
			return evidence.Provenance{}, err
		}
	}
	res, err := shared.get(ctx)
	if err != nil {
		return evidence.Provenance{}, err
	}
	if res.Executor != nil {
		return benchProvenance(res.Executor, fp), nil
	}
	version, commit := buildVersion()
	return evidence.Provenance{Version: version, Commit: commit, SourceFingerprint: fp,
		DeviceName: fmt.Sprintf("CPU, %d threads", runtime.GOMAXPROCS(0)), DriverVersion: "none"}, nil
}

// runSetting serves the graph with one setting's configuration on a
// loopback port, warms it, and measures it.
func (d *loadDriver) runSetting(ctx context.Context, shared *sharedResidency, st setting, info bfsserve.GraphInfo) (loadRow, error) {
	cfg := bfsserve.Config{Window: st.window, MaxBatch: st.maxBatch, QueueDepth: max(bfsserve.DefaultQueueDepth, 2*st.clients),
		Logger: slog.New(slog.NewTextHandler(d.e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	if st.window == 0 {
		cfg.Window = bfsserve.NoWindow
	}
	s, err := bfsserve.New(ctx, cfg, shared.opener())
	if err != nil {
		return loadRow{}, err
	}
	l, err := bfsserve.Listen("127.0.0.1:0")
	if err != nil {
		return loadRow{}, errors.Join(err, s.Shutdown(ctx))
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve(l) }()
	row, err := d.measure(ctx, "http://"+l.Addr().String(), info, st)
	drain, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := errors.Join(err, s.Shutdown(drain), <-served); err != nil {
		return loadRow{}, err
	}
	return row, nil
}

// measure warms the server, runs the setting's load, and, in a soak,
// compares the server's memory, goroutines and descriptors before and
// after. g is the served graph as the server lists it.
func (d *loadDriver) measure(ctx context.Context, url string, g bfsserve.GraphInfo, st setting) (loadRow, error) {
	name := g.Name
	transport := &http.Transport{MaxIdleConnsPerHost: st.clients, DisableCompression: true}
	client := &http.Client{Transport: transport}
	defer transport.CloseIdleConnections()
	cfg := bfsserve.LoadConfig{URL: url, Graph: name, Clients: st.clients, Roots: d.roots, Vertices: d.g.NumVertices(),
		Targets: d.o.targets, MaxDepth: int32(d.o.maxDepth), Seed: d.o.seed, Client: client}
	label := fmt.Sprintf("%s %s", name, st.mode)
	if st.mode == evidence.LoadBatched {
		label += " window " + st.window.String()
	}
	label += fmt.Sprintf(", %d clients", st.clients)
	if d.o.warmup > 0 {
		warm := cfg
		warm.Duration = d.o.warmup
		if _, err := bfsserve.RunLoad(ctx, warm); err != nil {
			return loadRow{}, err
		}
	}
	before, err := d.settle(ctx, client, transport, url)
	if err != nil {
		return loadRow{}, err
	}
	stats, err := bfsserve.ScrapeBatchStats(ctx, client, url)
	if err != nil {
		return loadRow{}, err
	}
	cfg.Duration, cfg.Queries, cfg.CheckEvery, cfg.Reference = d.o.duration, d.o.queries, d.o.checkEvery, d.ref.levels
	cfg.Disconnect, cfg.Mixed = d.o.disconnect, d.o.soak
	bar := &progressBar{w: d.e.stderr, on: isTerminal(d.e.stderr)}
	start := time.Now()
	cfg.Progress = func(n int64) {
		bar.update(int(time.Since(start)*1000/d.o.duration), 1000, fmt.Sprintf("%s: %d answered", label, n))
	}
	res, err := bfsserve.RunLoad(ctx, cfg)
	if err != nil {
		return loadRow{}, err
	}
	bar.update(1000, 1000, label)
	row := loadRow{LoadRow: evidence.LoadRow{Graph: name, Nodes: uint64(g.Vertices), Edges: uint64(g.Edges),
		Backend: g.Backend, Mode: st.mode, WindowNS: uint64(st.window), MaxBatch: uint64(st.maxBatch), Clients: uint64(st.clients)}}
	row.fill(res)
	after, err := d.settle(ctx, client, transport, url)
	if err != nil {
		return loadRow{}, err
	}
	if d.o.soak {
		row.leaks = leaks(before, after)
	}
	if err := row.statsSince(ctx, client, url, stats, after["gpuplan_serve_batch_seconds"]-before["gpuplan_serve_batch_seconds"]); err != nil {
		return loadRow{}, err
	}
	d.e.logf("load", "%s: %s", label, row.summary())
	return row, nil
}

// settle closes the idle connections, lets the server's connection
// goroutines end, and scrapes its metrics.
func (d *loadDriver) settle(ctx context.Context, client *http.Client, transport *http.Transport, url string) (map[string]float64, error) {
	transport.CloseIdleConnections()
	select {
	case <-ctx.Done():
	case <-time.After(200 * time.Millisecond):
	}
	return bfsserve.Scrape(ctx, client, url)
}

// leaks compares a soak's metrics before and after: device memory must
// not grow; goroutines and descriptors by no more than a few.
func leaks(before, after map[string]float64) []string {
	var out []string
	check := func(name string, slack float64) {
		b, okB := before[name]
		a, okA := after[name]
		if okB && okA && a > b+slack {
			out = append(out, fmt.Sprintf("%s grew from %.0f to %.0f", name, b, a))
		}
	}
	check("gpuplan_serve_device_resident_bytes", 0)
	check("go_goroutines", 16)
	check("process_open_fds", 16)
	return out
}

// fill copies a run's measurements into the row.
func (r *loadRow) fill(res bfsserve.LoadResult) {
	r.result = res
	r.DurationNS = uint64(max(res.Elapsed, 1))
	r.Answered, r.Refused, r.Failed = uint64(res.Answered), uint64(res.Refused), uint64(res.Failed)
	r.QPS, r.MeanBatch = res.QPS, min(res.MeanBatch, float64(r.MaxBatch))
	r.P50NS, r.P99NS, r.P999NS, r.MaxNS = uint64(res.P50), uint64(res.P99), uint64(res.P999), uint64(res.Max)
	r.Checked, r.Mismatches = uint64(res.Checked), uint64(res.Mismatches)
}

// statsSince sets the row's time per batch in each phase, over batches
// batches, and its GPU runs by kind, since the server's stats were before.
func (r *loadRow) statsSince(ctx context.Context, client *http.Client, url string, before bfsserve.BatchStats, batches float64) error {
	now, err := bfsserve.ScrapeBatchStats(ctx, client, url)
	if err != nil {
		return err
	}
	r.batches, r.phases = batches, map[string]time.Duration{}
	r.runs, r.arms = since(now.Runs, before.Runs), since(now.Arms, before.Arms)
	if batches <= 0 {
		return nil
	}
	for phase, sec := range now.Phases {
		r.phases[phase] = time.Duration((sec - before.Phases[phase]) / batches * float64(time.Second))
	}
	return nil
}

// summary is the row's one-line report.
func (r *loadRow) summary() string {
	res := r.result
	s := fmt.Sprintf("%.0f queries/s, p50 %s, p99 %s, p99.9 %s, mean batch %.1f; %d answered, %d checked (%d wrong), %d refused, %d failed",
		res.QPS, res.P50.Round(time.Microsecond), res.P99.Round(time.Microsecond), res.P999.Round(time.Microsecond), res.MeanBatch,
		res.Answered, res.Checked, res.Mismatches, res.Refused, res.Failed)
	if res.Abandoned > 0 {
		s += fmt.Sprintf(", %d abandoned", res.Abandoned)
	}
	if r.batches > 0 {
		s += fmt.Sprintf("; per batch (%.0f batches) traverse %s, setup %s, read %s, answer %s", r.batches,
			r.phases["traverse"].Round(time.Microsecond), r.phases["setup"].Round(time.Microsecond), r.phases["read"].Round(time.Microsecond), r.phases["answer"].Round(time.Microsecond))
	}
	if len(r.runs) > 0 {
		s += fmt.Sprintf("; GPU runs: %.0f multi-source passes, %.0f single roots%s", r.runs["pass"], r.runs["single"], armCounts(r.arms))
	}
	return s
}

// since returns each counter of now less its value in before.
func since(now, before map[string]float64) map[string]float64 {
	out := make(map[string]float64, len(now))
	for k, n := range now {
		out[k] = n - before[k]
	}
	return out
}

// armCounts lists the single-root runs of each arm that ran any, in
// parentheses, most first ("" when none ran).
func armCounts(arms map[string]float64) string {
	names := slices.Collect(maps.Keys(arms))
	names = slices.DeleteFunc(names, func(a string) bool { return arms[a] <= 0 })
	if len(names) == 0 {
		return ""
	}
	slices.SortFunc(names, func(a, b string) int { return cmp.Or(cmp.Compare(arms[b], arms[a]), cmp.Compare(a, b)) })
	parts := make([]string, len(names))
	for i, a := range names {
		parts[i] = fmt.Sprintf("%s %.0f", a, arms[a])
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// remote drives the server at --url with every client count.
func (d *loadDriver) remote(ctx context.Context) ([]loadRow, error) {
	name := d.o.name
	if name == "" {
		name = servedName(d.g.Name)
	}
	info, err := remoteGraphs(ctx, d.o.url)
	if err != nil {
		return nil, err
	}
	var g *bfsserve.GraphInfo
	for i := range info.Graphs {
		if info.Graphs[i].Name == name {
			g = &info.Graphs[i]
		}
	}
	switch {
	case g == nil:
		return nil, fmt.Errorf("the server at %s serves no graph %s. Fix: give --name one of its graphs (GET /v1/graphs lists them)", quote.Echo(d.o.url), quote.Echo(name))
	case g.Vertices != d.g.NumVertices():
		return nil, fmt.Errorf("--graph %s has %d vertices but the server's graph %s has %d. Fix: give --graph the spec the server loaded", echoName(d.o.graph), d.g.NumVertices(), quote.Echo(name), g.Vertices)
	}
	st := setting{mode: evidence.LoadBatched, window: time.Duration(info.Batching.WindowNS), maxBatch: info.Batching.MaxBatch}
	if st.maxBatch == 1 {
		st.mode = evidence.LoadSerial
	}
	var rows []loadRow
	for _, c := range d.o.clients {
		st.clients = c
		row, err := d.measure(ctx, d.o.url, *g, st)
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// remoteGraphs reads GET /v1/graphs.
func remoteGraphs(ctx context.Context, url string) (*bfsserve.GraphsResponse, error) {
	if _, err := bfsserve.Scrape(ctx, nil, url); err != nil {
		return nil, fmt.Errorf("--url: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/v1/graphs", nil)
	if err != nil {
		return nil, fmt.Errorf("--url %s: %w. Fix: give the server's base URL, for example http://127.0.0.1:8080", quote.Echo(url), urlCause(err))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("--url %s: %w. Fix: start gpuplan serve there first", quote.Echo(url), urlCause(err))
	}
	defer resp.Body.Close()
	var out bfsserve.GraphsResponse
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&out); err != nil || resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("--url %s: GET /v1/graphs did not list graphs (status %d). Fix: point --url at gpuplan serve", quote.Echo(url), resp.StatusCode)
	}
	return &out, nil
}

// urlCause is a request's error without the URL that *url.Error repeats
// whole: the message names the URL once, quoted and cut.
func urlCause(err error) error {
	var ue *neturl.Error
	if errors.As(err, &ue) && ue.Err != nil {
		return ue.Err
	}
	return err
}

// report prints the table, writes the evidence and the chart, and fails
// on a wrong answer, a failed query or a soak's leak.
func (d *loadDriver) report(rows []loadRow) error {
	ev := make([]evidence.LoadRow, len(rows))
	for i := range rows {
		ev[i] = rows[i].LoadRow
	}
	if d.o.json {
		if err := writeJSON(d.e.stdout, loadJSON(rows, ev)); err != nil {
			return err
		}
	} else {
		fmt.Fprint(d.e.stdout, evidence.LoadMarkdown(ev))
	}
	if d.o.out != "" {
		var buf bytes.Buffer
		if err := evidence.WriteLoadCSV(&buf, ev); err != nil {
			return err
		}
		if err := writeFileAtomic(d.o.out, buf.Bytes()); err != nil {
			return err
		}
		d.e.logf("load", "wrote %d settings to %s", len(ev), d.o.out)
	}
	if d.o.chart != "" {
		var buf bytes.Buffer
		if err := writeLoadChart(&buf, ev, chartFormat(d.o.chart)); err != nil {
			return err
		}
		if err := writeFileAtomic(d.o.chart, buf.Bytes()); err != nil {
			return err
		}
		d.e.logf("load", "drew the curve to %s", d.o.chart)
	}
	return loadFailures(rows)
}

// loadFailures is the error of a run whose answers were wrong, whose
// queries failed, whose soak leaked, or one of whose settings had every
// query refused.
func loadFailures(rows []loadRow) error {
	errs := []error{refusedSettings(rows)}
	for i := range rows {
		r := &rows[i]
		key := r.Key()
		if r.Mismatches > 0 {
			errs = append(errs, fmt.Errorf("%s: %d of %d answers checked disagree with the CPU reference, first: %s. Fix: report this wrong answer", key, r.Mismatches, r.Checked, r.result.FirstMismatch))
		}
		if r.Failed > 0 {
			errs = append(errs, fmt.Errorf("%s: %d queries failed, first: %s. Fix: read the server's log for the cause", key, r.Failed, r.result.FirstFailure))
		}
		for _, l := range r.leaks {
			errs = append(errs, fmt.Errorf("%s: the soak leaked: %s. Fix: report the leak with this run's settings", key, l))
		}
	}
	return errors.Join(errs...)
}

// maxRefusedKeys is the most settings a refusal names; it counts the
// rest.
const maxRefusedKeys = 4

// refusedSettings is the one-line error of the settings whose every query
// the server refused (none answered), naming the first few and the first
// refusal, or nil.
func refusedSettings(rows []loadRow) error {
	var keys []string
	n, first := 0, ""
	for i := range rows {
		r := &rows[i]
		if r.Answered > 0 || r.Refused == 0 {
			continue
		}
		if n++; n <= maxRefusedKeys {
			keys = append(keys, fmt.Sprintf("%s (%d refused)", r.Key(), r.Refused))
		}
		if first == "" {
			first = r.result.FirstRefusal
		}
	}
	if n == 0 {
		return nil
	}
	if n > maxRefusedKeys {
		keys = append(keys, fmt.Sprintf("and %d more", n-maxRefusedKeys))
	}
	return fmt.Errorf("%d of %d settings answered no query, the server refused every one: %s; the first refusal: %s. Fix: ask for fewer --targets, or serve the graph with a budget that holds its queries (gpuplan serve --budget-mib) and drive it with --url",
		n, len(rows), strings.Join(keys, ", "), first)
}

// loadJSON is the --json report.
func loadJSON(rows []loadRow, ev []evidence.LoadRow) any {
	type setting struct {
		Setting string              `json:"setting"`
		Result  bfsserve.LoadResult `json:"result"`
		Leaks   []string            `json:"leaks,omitempty"`
	}
	type speedup struct {
		Graph   string  `json:"graph"`
		Clients uint64  `json:"clients"`
		Window  string  `json:"window"`
		Ratio   float64 `json:"batched_over_serial"`
	}
	out := struct {
		Settings []setting `json:"settings"`
		Speedups []speedup `json:"speedups"`
	}{Settings: []setting{}, Speedups: []speedup{}}
	for i := range rows {
		out.Settings = append(out.Settings, setting{Setting: rows[i].Key(), Result: rows[i].result, Leaks: rows[i].leaks})
	}
	for _, s := range evidence.LoadSpeedups(ev) {
		out.Speedups = append(out.Speedups, speedup{Graph: s.Batched.Graph, Clients: s.Batched.Clients, Window: time.Duration(s.Batched.WindowNS).String(), Ratio: s.Ratio})
	}
	return out
}

// servedName makes a graph's name a valid served name.
func servedName(name string) string {
	b := []byte(name)
	for i, c := range b {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || (i > 0 && (c == '.' || c == '_' || c == '-'))
		if !ok {
			b[i] = '-'
		}
	}
	if len(b) == 0 {
		return "graph"
	}
	if len(b) > 64 {
		b = b[:64]
	}
	if b[0] == '-' {
		b[0] = 'g'
	}
	return string(b)
}

// sharedResidency keeps one opening of the graph for every setting's
// server: a server's recovery after a fault replaces it.
type sharedResidency struct {
	open bfsserve.Opener
	log  io.Writer
	mu   sync.Mutex
	cur  *bfsserve.Residency
}

// get returns the shared residency, opening it the first time.
func (s *sharedResidency) get(ctx context.Context) (*bfsserve.Residency, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur == nil {
		r, err := s.open(ctx)
		if err != nil {
			return nil, err
		}
		s.cur = r
	}
	return s.cur, nil
}

// opener is one server's opener: its first call shares the residency; a
// later call is a recovery, which closes the failed one and opens anew.
// The server never closes the shared residency itself.
func (s *sharedResidency) opener() bfsserve.Opener {
	calls := 0
	return func(ctx context.Context) (*bfsserve.Residency, error) {
		calls++
		if calls > 1 {
			if err := s.close(); err != nil {
				fmt.Fprintf(s.log, "load: closing the failed residency: %v\n", err)
			}
		}
		r, err := s.get(ctx)
		if err != nil {
			return nil, err
		}
		return &bfsserve.Residency{Graphs: r.Graphs, Executor: r.Executor}, nil
	}
}

// close releases the shared residency.
func (s *sharedResidency) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur == nil || s.cur.Close == nil {
		s.cur = nil
		return nil
	}
	err := s.cur.Close()
	s.cur = nil
	return err
}

// referenceCache holds the CPU reference's levels of the latest roots
// checked.
type referenceCache struct {
	g     *frontier.CSR
	keep  int
	mu    sync.Mutex
	order []int32
	cache map[int32][]int32
}

func newReferenceCache(g *frontier.CSR, keep int) *referenceCache {
	return &referenceCache{g: g, keep: keep, cache: map[int32][]int32{}}
}

// levels returns every vertex's level from root by the parallel CPU
// reference, cached.
func (c *referenceCache) levels(root int32) ([]int32, error) {
	c.mu.Lock()
	l, ok := c.cache[root]
	c.mu.Unlock()
	if ok {
		return l, nil
	}
	l, err := frontier.BFSParallel(c.g, root)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.cache[root]; !ok {
		c.cache[root] = l
		c.order = append(c.order, root)
		if len(c.order) > c.keep {
			delete(c.cache, c.order[0])
			c.order = c.order[1:]
		}
	}
	return l, nil
}
