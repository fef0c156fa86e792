package bfsserve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/gpuplan/gpuplan/internal/strictjson"
	"github.com/gpuplan/gpuplan/workloads/bfsquery"
)

// BatchRootsHeader is the response header that says how many distinct
// roots the batch that answered a query held (the largest, for a batch
// request).
const BatchRootsHeader = "Gpuplan-Batch-Roots"

// Routes that ask queries, the route label of their metrics.
const (
	routeBFS    = "bfs"
	routeBatch  = "batch"
	routeReach  = "reach"
	routeLevels = "levels"
)

// routes builds the API's handler.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	s.route(mux, http.MethodGet, "/v1/graphs", "graphs", s.listGraphs)
	s.route(mux, http.MethodGet, "/v1/graphs/{name}", "graph", s.getGraph)
	s.route(mux, http.MethodPost, "/v1/graphs/{name}/bfs", routeBFS, s.bfs)
	s.route(mux, http.MethodPost, "/v1/graphs/{name}/batch", routeBatch, s.batchQueries)
	s.route(mux, http.MethodPost, "/v1/graphs/{name}/reach", routeReach, s.reach)
	s.route(mux, http.MethodGet, "/v1/graphs/{name}/levels", routeLevels, s.levels)
	s.route(mux, http.MethodGet, "/healthz", "healthz", s.healthz)
	metrics := s.metrics.handler(s)
	s.route(mux, http.MethodGet, "/metrics", "metrics", func(w http.ResponseWriter, r *http.Request) error {
		metrics.ServeHTTP(w, r)
		return nil
	})
	s.route(mux, "", "/", "unknown", func(http.ResponseWriter, *http.Request) error {
		return &Error{Status: http.StatusNotFound, Code: CodeNotFound, Field: "path", Msg: "path: no such API call. Fix: use GET /v1/graphs, POST /v1/graphs/NAME/bfs, /batch or /reach, GET /v1/graphs/NAME/levels, /healthz or /metrics"}
	})
	return mux
}

// apiFunc handles a request; an error it returns is written as the API's
// error response.
type apiFunc func(w http.ResponseWriter, r *http.Request) error

// route registers fn on path for method (any method when ""), timed in
// the request histogram and logged.
func (s *Server) route(mux *http.ServeMux, method, path, name string, fn apiFunc) {
	mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusWriter{ResponseWriter: w}
		var err error
		if method != "" && r.Method != method {
			rec.Header().Set("Allow", method)
			err = &Error{Status: http.StatusMethodNotAllowed, Code: CodeMethodRefused, Field: "method",
				Msg: fmt.Sprintf("method: %s %s is not an API call. Fix: use %s %s", r.Method, path, method, path)}
		} else {
			err = fn(rec, r)
		}
		if err != nil {
			s.writeError(rec, err)
		}
		status := rec.code()
		s.metrics.requests.WithLabelValues(s.requestSeries(r).values(name, code(status))...).Observe(time.Since(start).Seconds())
		attrs := []any{slog.String("method", r.Method), slog.String("path", r.URL.Path),
			slog.Int("status", status), slog.Duration("elapsed", time.Since(start)), slog.String("remote", r.RemoteAddr)}
		if status < 500 {
			s.log.Log(r.Context(), slog.LevelDebug, "request", attrs...)
			return
		}
		ok, skipped := s.warns.allow(time.Now())
		if !ok {
			return
		}
		if skipped > 0 {
			attrs = append(attrs, slog.Int64("not_logged", skipped))
		}
		s.log.Log(r.Context(), slog.LevelWarn, "request", attrs...)
	})
}

// Bounds of the request warnings: the first warnBurst failed or refused
// requests (status 500 and over) of each warnPeriod are logged at WARN,
// the rest counted.
const (
	warnBurst  = 5
	warnPeriod = 10 * time.Second
)

// warnLimit bounds the WARN lines of failed and refused requests, so that
// a server refusing every query does not write a line per query: the
// first warnBurst of each warnPeriod are logged, and the next line logged
// (or Shutdown) says how many were not.
type warnLimit struct {
	mu      sync.Mutex
	start   time.Time
	logged  int
	skipped int64
}

// allow reports whether a warning at now is logged and, when it is, how
// many were not since the last one.
func (w *warnLimit) allow(now time.Time) (bool, int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if now.Sub(w.start) >= warnPeriod {
		w.start, w.logged = now, 0
	}
	if w.logged >= warnBurst {
		w.skipped++
		return false, 0
	}
	w.logged++
	skipped := w.skipped
	w.skipped = 0
	return true, skipped
}

// flush returns the warnings not logged since the last one, and forgets
// them.
func (w *warnLimit) flush() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	skipped := w.skipped
	w.skipped = 0
	return skipped
}

// requestSeries returns the series labels of the loaded graph a request
// names, or none: a name that is not loaded creates no series.
func (s *Server) requestSeries(r *http.Request) series {
	if b := s.byName[r.PathValue("name")]; b != nil {
		return b.labels()
	}
	return series{}
}

// statusWriter remembers the status written.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Flush passes a flush on, for streamed responses.
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *statusWriter) code() int {
	if w.status == 0 {
		return http.StatusOK
	}
	return w.status
}

// writeError writes err as the API's error response.
func (s *Server) writeError(w http.ResponseWriter, err error) {
	e := asError(err)
	if e.Status == 499 {
		// The client has gone: record the status, write nothing.
		if sw, ok := w.(*statusWriter); ok {
			sw.status = e.Status
		}
		return
	}
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(e.RetryAfter))
	}
	writeJSON(w, e.Status, e)
}

// writeJSON writes v as the response body.
func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		body = []byte(`{"status":500,"code":"internal","error":"the answer could not be encoded. Fix: report this failure"}`)
	}
	body = append(body, '\n')
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// decode reads a JSON body of at most MaxBodyBytes strictly into v.
func (s *Server) decode(w http.ResponseWriter, r *http.Request, v any) error {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes))
	if err != nil {
		var be *http.MaxBytesError
		if errors.As(err, &be) {
			return err
		}
		return fromContext(context.Canceled)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return badField("body", "is empty", `send a JSON object, for example {"root": 0, "targets": [1, 2]}`)
	}
	return strictjson.Decode("request", body, v)
}

// graph returns the named graph's batcher, or a 404.
func (s *Server) graph(r *http.Request) (*batcher, error) {
	name := r.PathValue("name")
	b := s.byName[name]
	if b == nil {
		return nil, unknownGraph(name, s.infos)
	}
	return b, nil
}

func (s *Server) listGraphs(w http.ResponseWriter, _ *http.Request) error {
	writeJSON(w, http.StatusOK, GraphsResponse{Graphs: s.infos,
		Batching: Batching{WindowNS: s.cfg.Window.Nanoseconds(), MaxBatch: s.cfg.MaxBatch, QueueDepth: s.cfg.QueueDepth}})
	return nil
}

func (s *Server) getGraph(w http.ResponseWriter, r *http.Request) error {
	b, err := s.graph(r)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, b.info)
	return nil
}

func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) error {
	h := s.Health()
	status := http.StatusOK
	if h.Status != StatusOK {
		status = http.StatusServiceUnavailable
		w.Header().Set("Retry-After", "1")
	}
	writeJSON(w, status, h)
	return nil
}

func (s *Server) bfs(w http.ResponseWriter, r *http.Request) error {
	b, req, err := decodeFor[QueryRequest](s, w, r)
	if err != nil {
		return err
	}
	return s.one(w, r, b, routeBFS, req, func(a bfsquery.Answer) any { return a })
}

func (s *Server) batchQueries(w http.ResponseWriter, r *http.Request) error {
	b, req, err := decodeFor[BatchRequest](s, w, r)
	if err != nil {
		return err
	}
	switch {
	case req.Queries == nil:
		return badField("queries", "is required", `send {"queries": [{"root": 0}, {"root": 7}]}`)
	case len(req.Queries) == 0 || len(req.Queries) > s.cfg.MaxBatchQueries:
		return badField("queries", fmt.Sprintf("%d queries is outside 1..%d", len(req.Queries), s.cfg.MaxBatchQueries), "split the queries over several batch requests")
	}
	qs := make([]bfsquery.Query, len(req.Queries))
	for i, rq := range req.Queries {
		if qs[i], err = b.query(rq.Root, rq.Targets, rq.MaxDepth, rq.Parents, fmt.Sprintf("queries[%d].", i)); err != nil {
			return err
		}
	}
	outs, err := s.ask(r.Context(), b, routeBatch, qs)
	if err != nil {
		return err
	}
	resp := BatchResponse{Answers: make([]QueryResponse, len(outs))}
	roots := 0
	for i, o := range outs {
		resp.Answers[i] = o.a
		roots = max(roots, o.roots)
	}
	w.Header().Set(BatchRootsHeader, strconv.Itoa(roots))
	writeJSON(w, http.StatusOK, resp)
	return nil
}

func (s *Server) reach(w http.ResponseWriter, r *http.Request) error {
	b, req, err := decodeFor[ReachRequest](s, w, r)
	if err != nil {
		return err
	}
	if req.Targets == nil {
		req.Targets = []int64{} // the count alone, not every vertex's flag
	}
	return s.one(w, r, b, routeReach, QueryRequest{Root: req.Root, Targets: req.Targets, MaxDepth: req.MaxDepth}, func(a bfsquery.Answer) any { return reach(a) })
}

// decodeFor returns the named graph's batcher and the body decoded as a T.
func decodeFor[T any](s *Server, w http.ResponseWriter, r *http.Request) (*batcher, T, error) {
	var req T
	b, err := s.graph(r)
	if err != nil {
		return nil, req, err
	}
	return b, req, s.decode(w, r, &req)
}

// one answers one query of route and writes what render makes of its
// answer.
func (s *Server) one(w http.ResponseWriter, r *http.Request, b *batcher, route string, req QueryRequest, render func(bfsquery.Answer) any) error {
	q, err := b.query(req.Root, req.Targets, req.MaxDepth, req.Parents, "")
	if err != nil {
		return err
	}
	outs, err := s.ask(r.Context(), b, route, []bfsquery.Query{q})
	if err != nil {
		return err
	}
	w.Header().Set(BatchRootsHeader, strconv.Itoa(outs[0].roots))
	writeJSON(w, http.StatusOK, render(outs[0].a))
	return nil
}

// levels answers GET /v1/graphs/NAME/levels?root=R[&max_depth=D][&parents=true]
// with every vertex's level (and parent) in the binary answers format.
func (s *Server) levels(w http.ResponseWriter, r *http.Request) error {
	b, err := s.graph(r)
	if err != nil {
		return err
	}
	args := r.URL.Query()
	num := func(key string) (*int64, error) {
		v := args.Get(key)
		if !args.Has(key) {
			return nil, nil
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, badField(key, fmt.Sprintf("%q is not an integer", v), fmt.Sprintf("give %s as a decimal integer, for example ?%s=0", key, key))
		}
		return &n, nil
	}
	root, err := num("root")
	if err != nil {
		return err
	}
	depth, err := num("max_depth")
	if err != nil {
		return err
	}
	parents := false
	if args.Has("parents") {
		if parents, err = strconv.ParseBool(args.Get("parents")); err != nil {
			return badField("parents", fmt.Sprintf("%q is not a boolean", args.Get("parents")), "give parents=true or parents=false")
		}
	}
	q, err := b.query(root, nil, depth, parents, "")
	var e *Error
	if errors.As(err, &e) && e.Field == "targets" {
		err = nil // the binary format carries every vertex
	}
	if err != nil {
		return err
	}
	outs, err := s.ask(r.Context(), b, routeLevels, []bfsquery.Query{q})
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	set := &bfsquery.Answers{Vertices: b.info.Vertices, Parents: parents, Answers: []bfsquery.Answer{outs[0].a}}
	if err := set.WriteBinary(&buf); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.Header().Set(BatchRootsHeader, strconv.Itoa(outs[0].roots))
	_, _ = w.Write(buf.Bytes())
	return nil
}

// query checks a request's fields against the graph.
func (b *batcher) query(root *int64, targets []int64, maxDepth *int64, parents bool, prefix string) (bfsquery.Query, error) {
	q, err := toQuery(root, targets, maxDepth, parents, b.info.Vertices, b.s.cfg.MaxJSONLevels, prefix, b.info.Name)
	if err != nil {
		return q, err
	}
	return q, b.g0.Check(q)
}

// ask queues the queries of route on b and waits for their answers,
// within the request's deadline; a client that leaves cancels them. It
// counts them by outcome.
func (s *Server) ask(ctx context.Context, b *batcher, route string, qs []bfsquery.Query) ([]outcome, error) {
	count := func(outcome string) {
		s.metrics.queries.WithLabelValues(b.labels().values(route, outcome)...).Add(float64(len(qs)))
	}
	if err := s.admitting(); err != nil {
		count(outcomeRefused)
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	jobs, err := b.jobs(ctx, route, qs)
	if err == nil {
		err = b.enqueue(jobs)
	}
	if err != nil {
		count(outcomeRefused)
		return nil, err
	}
	outs, kind, err := await(ctx, jobs)
	count(kind)
	return outs, err
}

// admitting refuses queries while the server is not answering.
func (s *Server) admitting() error {
	switch h := s.Health(); h.Status {
	case StatusOK:
		return nil
	case StatusRecovering:
		return recovering(h.Reason)
	case StatusFailed:
		return gaveUp(h.Reason)
	default:
		return shuttingDown
	}
}

// jobs makes the queries' jobs, refusing the first query that the budget
// cannot hold alone by its field: "query", or "queries[i]" in a batch.
func (b *batcher) jobs(ctx context.Context, route string, qs []bfsquery.Query) ([]*job, error) {
	now := time.Now()
	jobs := make([]*job, len(qs))
	for i, q := range qs {
		j := &job{ctx: ctx, q: q, foot: b.g0.Footprint(q), enq: now, done: make(chan outcome, 1)}
		field := "query"
		if route == routeBatch {
			field = fmt.Sprintf("queries[%d]", i)
		}
		if err := b.admit(field, j.foot); err != nil {
			return nil, err
		}
		jobs[i] = j
	}
	return jobs, nil
}

// await waits for the jobs' outcomes until ctx ends, and returns them with
// the outcome label of the whole request.
func await(ctx context.Context, jobs []*job) ([]outcome, string, error) {
	outs := make([]outcome, len(jobs))
	for i, j := range jobs {
		select {
		case outs[i] = <-j.done:
		case <-ctx.Done():
			return nil, outcomeCancelled, fromContext(ctx.Err())
		}
		if err := outs[i].err; err != nil {
			kind := outcomeFailed
			if e := asError(err); e.Code == CodeCancelled || e.Code == CodeDeadline {
				kind = outcomeCancelled
			}
			return nil, kind, err
		}
	}
	return outs, outcomeAnswered, nil
}
