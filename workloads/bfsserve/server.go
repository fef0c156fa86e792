package bfsserve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/internal/quote"
	"github.com/gpuplan/gpuplan/workloads/bfsquery"
)

// Health statuses.
const (
	StatusOK         = "ok"
	StatusRecovering = "recovering"
	// StatusFailed is a server that gave up reopening its graphs after a
	// fault (see Server.Failed): it answers no query again, and its
	// process must be restarted.
	StatusFailed       = "failed"
	StatusShuttingDown = "shutting_down"
)

// Health is what GET /healthz answers: the status, why it is not ok, since
// when, and the residency's generation (1, plus one per recovery).
type Health struct {
	Status     string    `json:"status"`
	Reason     string    `json:"reason,omitempty"`
	Since      time.Time `json:"since"`
	Generation uint64    `json:"generation"`
	Recoveries uint64    `json:"recoveries"`
}

// Server answers BFS queries over resident graphs on HTTP/JSON (see the
// package documentation for the API). Its methods are safe for concurrent
// use.
type Server struct {
	cfg     Config
	open    Opener
	log     *slog.Logger
	infos   []graphInfo
	byName  map[string]*batcher
	order   []*batcher
	metrics *metrics
	handler http.Handler

	// resMu excludes recovery from batches: a batch holds it shared, a
	// recovery alone while it closes the failed residency and opens a new
	// one.
	resMu  sync.RWMutex
	res    *Residency
	graphs map[string]*bfsquery.Graph
	// cur is the residency as /metrics and /healthz read it, without
	// waiting for a recovery; nil while one runs.
	cur        atomic.Pointer[Residency]
	generation atomic.Uint64
	health     atomic.Pointer[Health]

	// faultMu guards recovering: set while a recovery runs, and kept set
	// once one has given up, so that no other starts.
	faultMu    sync.Mutex
	recovering bool
	// failed is closed when a recovery gives up, after failReason is set.
	failed     chan struct{}
	failReason string

	stop     chan struct{}
	stopOnce sync.Once
	workers  sync.WaitGroup
	httpMu   sync.Mutex
	https    []*http.Server
	// fresh holds the connections accepted that have sent no request yet:
	// shutdown closes them at once, where the HTTP server would wait five
	// seconds for them (a client's transport dials such spares).
	fresh map[net.Conn]struct{}
	// warns bounds the request warnings logged.
	warns warnLimit
}

// New opens the residency and returns a server over its graphs, its
// batchers running; Serve answers on a listener, Handler serves it in a
// caller's own http.Server, and Shutdown stops it.
func New(ctx context.Context, cfg Config, open Opener) (*Server, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if open == nil {
		return nil, errors.New("the opener is nil. Fix: give New a function that opens the graphs")
	}
	res, err := open(ctx)
	if err != nil {
		return nil, err
	}
	graphs, infos, err := res.index()
	if err != nil {
		return nil, errors.Join(err, closeResidency(res))
	}
	s := &Server{cfg: cfg, open: open, log: cfg.Logger, infos: infos, byName: map[string]*batcher{}, res: res, graphs: graphs, stop: make(chan struct{}), failed: make(chan struct{})}
	for _, info := range infos {
		b, err := newBatcher(s, graphs[info.Name], info)
		if err != nil {
			return nil, errors.Join(err, closeResidency(res))
		}
		s.byName[info.Name] = b
		s.order = append(s.order, b)
	}
	s.cur.Store(res)
	s.generation.Store(1)
	s.health.Store(&Health{Status: StatusOK, Since: time.Now(), Generation: 1})
	s.metrics = newMetrics(cfg.Registry, s)
	s.handler = s.routes()
	for _, b := range s.order {
		s.workers.Go(func() { b.loop(s.stop) })
	}
	for _, g := range infos {
		s.log.Info("graph resident", slog.String("graph", g.Name), slog.Int("vertices", g.Vertices), slog.Int64("edges", g.Edges), slog.Bool("directed", g.Directed), slog.String("backend", g.Backend))
	}
	return s, nil
}

// Handler returns the API's handler.
func (s *Server) Handler() http.Handler { return s.handler }

// Health returns the server's health.
func (s *Server) Health() Health {
	h := *s.health.Load()
	h.Generation = s.generation.Load()
	h.Recoveries = h.Generation - 1
	return h
}

// Failed returns a channel that is closed when the server gives up
// reopening its graphs after a fault: after Config.RecoverAttempts failed
// attempts, or at once when a reopening finds the GPU context lost
// (executor.ContextLost). From then on Health says StatusFailed, its
// Reason says why, and every query is refused with 503. On a real GPU a
// sticky fault (an illegal address, for example) ends the process's use
// of CUDA, every new context failing the same way, so the owner should
// shut the server down and exit, to be restarted (by a supervisor, for
// example). Shutdown does not close it.
func (s *Server) Failed() <-chan struct{} { return s.failed }

// hasFailed reports whether a recovery has given up.
func (s *Server) hasFailed() bool { return closed(s.failed) }

// setHealth changes the status.
func (s *Server) setHealth(status, reason string) {
	s.health.Store(&Health{Status: status, Reason: reason, Since: time.Now()})
}

// errStopped is a batch's error once the server has stopped.
var errStopped = errors.New("the server has stopped. Fix: start it again")

// ranOn is the residency a batch ran on: its generation, and the
// graph's series labels in it.
type ranOn struct {
	gen    uint64
	at     series
	phases bfsquery.Phases
}

// batch runs qs on b's graph of the current residency.
func (s *Server) batch(ctx context.Context, b *batcher, qs []bfsquery.Query) ([]bfsquery.Answer, ranOn, error) {
	s.resMu.RLock()
	defer s.resMu.RUnlock()
	g := s.graphs[b.info.Name]
	on := ranOn{gen: s.generation.Load(), at: b.labels()}
	if g == nil {
		return nil, on, s.noResidency()
	}
	as, ph, err := g.BatchPhases(ctx, qs)
	on.phases = ph
	return as, on, err
}

// noResidency is a batch's error when no residency is open: errStopped,
// joined, once the server has failed, with the 503 that its queries
// answer (the batcher tells errStopped from a fault; the API's error is
// the 503).
func (s *Server) noResidency() error {
	if s.hasFailed() {
		return errors.Join(errStopped, gaveUp(s.failReason))
	}
	return errStopped
}

// fault starts a recovery from a fault of the residency of generation
// gen, unless one has already started.
func (s *Server) fault(gen uint64, cause error) {
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	if s.recovering || gen != s.generation.Load() || s.stopped() {
		return
	}
	s.recovering = true
	s.setHealth(StatusRecovering, cause.Error())
	s.workers.Go(func() { s.recover(cause) })
}

// recover closes the failed residency and opens a new one, with a backoff
// between attempts, until it succeeds, the server stops, or it gives up:
// after Config.RecoverAttempts failed attempts, or at once when a
// reopening finds the context lost, which no retry in this process
// recovers.
func (s *Server) recover(cause error) {
	s.resMu.Lock()
	defer s.resMu.Unlock()
	s.log.Warn("reopening the graphs after a GPU fault", slog.Any("cause", cause))
	s.cur.Store(nil)
	if err := closeResidency(s.res); err != nil {
		s.log.Warn("closing the failed residency", slog.Any("error", err))
	}
	s.res, s.graphs = nil, nil
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-s.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	wait := s.cfg.RecoverBackoff
	for attempt := 1; ; attempt++ {
		res, graphs, err := s.reopen(ctx)
		switch {
		case err == nil:
			s.reopened(res, graphs, attempt)
			return
		case s.stopped():
			return
		case executor.ContextLost(err), attempt >= s.cfg.RecoverAttempts:
			s.giveUp(cause, err, attempt)
			return
		}
		s.log.Warn("reopening the graphs failed", slog.Int("attempt", attempt), slog.Duration("retry_in", wait), slog.Any("error", err))
		s.setHealth(StatusRecovering, fmt.Sprintf("%v; reopening failed %d times: %v", cause, attempt, err))
		select {
		case <-s.stop:
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, 30*time.Second)
	}
}

// reopened makes a reopened residency current and ends the recovery,
// under resMu.
func (s *Server) reopened(res *Residency, graphs map[string]*bfsquery.Graph, attempt int) {
	s.install(res, graphs)
	gen := s.generation.Add(1)
	s.metrics.recoveries.Inc()
	s.faultMu.Lock()
	s.recovering = false
	s.faultMu.Unlock()
	s.setHealth(StatusOK, "")
	s.log.Info("graphs reopened", slog.Int("attempt", attempt), slog.Uint64("generation", gen))
}

// giveUp ends a recovery that cannot succeed: the server answers no query
// again, and Failed is closed. The recovery stays marked as running, so
// that no other starts and nothing closes failed twice.
func (s *Server) giveUp(cause, last error, attempts int) {
	why := fmt.Sprintf("reopening the graphs failed %d times, the last with: %v", attempts, last)
	if executor.ContextLost(last) {
		why = fmt.Sprintf("reopening the graphs found the GPU context lost (%v): after a sticky fault, CUDA fails every new context of the process the same way", last)
	}
	s.failReason = fmt.Sprintf("the GPU context cannot be reopened in this process after a GPU fault (%v): %s; the process must be restarted", cause, why)
	s.log.Error("giving up reopening the graphs: the process must be restarted", slog.Int("attempts", attempts), slog.Any("cause", cause), slog.Any("error", last))
	s.setHealth(StatusFailed, s.failReason)
	close(s.failed)
}

// install makes a reopened residency current, under resMu: its graphs
// answer and label the metrics from now on.
func (s *Server) install(res *Residency, graphs map[string]*bfsquery.Graph) {
	s.res, s.graphs = res, graphs
	for _, b := range s.order {
		b.relabel(graphs[b.info.Name])
	}
	s.cur.Store(res)
}

// reopen opens a residency and checks that it holds the same graphs.
func (s *Server) reopen(ctx context.Context) (*Residency, map[string]*bfsquery.Graph, error) {
	res, err := s.open(ctx)
	if err != nil {
		return nil, nil, err
	}
	graphs, infos, err := res.index()
	if err == nil {
		err = sameGraphs(s.infos, infos)
	}
	if err != nil {
		return nil, nil, errors.Join(err, closeResidency(res))
	}
	return res, graphs, nil
}

// stopped reports whether Shutdown has begun.
func (s *Server) stopped() bool { return closed(s.stop) }

// closed reports whether ch, which is only ever closed, is.
func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// Listen listens on addr, a loopback address unless the caller gives
// another: an empty addr is DefaultAddr. A port in use is an error that
// says so and how to fix it.
func Listen(addr string) (net.Listener, error) {
	if addr == "" {
		addr = DefaultAddr
	}
	at := quote.Echo(addr)
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return nil, fmt.Errorf("listen address %s: %v. Fix: give HOST:PORT, for example 127.0.0.1:8080", at, withoutAddress(err))
	}
	l, err := net.Listen("tcp", addr)
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		return nil, fmt.Errorf("listen address %s: the port is in use by another process. Fix: stop that process, or listen on another port (for example 127.0.0.1:0 picks a free one)", at)
	case err != nil:
		return nil, fmt.Errorf("listen address %s: %v. Fix: give an address of this machine, for example 127.0.0.1:8080", at, withoutAddress(err))
	}
	return l, nil
}

// DefaultAddr is the address the server listens on by default: loopback
// only.
const DefaultAddr = "127.0.0.1:8080"

// Serve answers on l until Shutdown; it returns nil after a graceful
// shutdown.
func (s *Server) Serve(l net.Listener) error {
	hs := &http.Server{Handler: s.handler, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute,
		ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelWarn), ConnState: s.trackConn}
	s.httpMu.Lock()
	if s.stopped() {
		s.httpMu.Unlock()
		return errStopped
	}
	s.https = append(s.https, hs)
	s.httpMu.Unlock()
	s.log.Info("serving", slog.String("addr", l.Addr().String()))
	if err := hs.Serve(l); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// trackConn keeps the set of connections that have sent no request.
func (s *Server) trackConn(c net.Conn, state http.ConnState) {
	s.httpMu.Lock()
	defer s.httpMu.Unlock()
	if s.fresh == nil {
		s.fresh = map[net.Conn]struct{}{}
	}
	if state == http.StateNew {
		s.fresh[c] = struct{}{}
	} else {
		delete(s.fresh, c)
	}
}

// shutdownHTTP shuts hs down, closing the connections that have sent no
// request as they appear until it is done.
func (s *Server) shutdownHTTP(ctx context.Context, hs *http.Server) error {
	done := make(chan error, 1)
	go func() { done <- hs.Shutdown(ctx) }()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			return err
		case <-tick.C:
			s.closeFresh()
		}
	}
}

// closeFresh closes the connections that have sent no request: none of
// them holds a query in flight.
func (s *Server) closeFresh() {
	s.httpMu.Lock()
	defer s.httpMu.Unlock()
	for c := range s.fresh {
		_ = c.Close()
		delete(s.fresh, c)
	}
}

// Shutdown stops the server gracefully: it stops accepting connections,
// finishes the queries in flight (until ctx ends), then stops the
// batchers and closes the graphs. A failed server's health stays
// StatusFailed, with its reason.
func (s *Server) Shutdown(ctx context.Context) error {
	if !s.hasFailed() {
		s.setHealth(StatusShuttingDown, "")
	}
	s.httpMu.Lock()
	servers := s.https
	s.httpMu.Unlock()
	var errs []error
	for _, hs := range servers {
		if err := s.shutdownHTTP(ctx, hs); err != nil {
			errs = append(errs, fmt.Errorf("finishing the requests in flight: %w", err))
		}
	}
	s.httpMu.Lock()
	s.stopOnce.Do(func() { close(s.stop) })
	s.httpMu.Unlock()
	s.workers.Wait()
	s.resMu.Lock()
	defer s.resMu.Unlock()
	s.cur.Store(nil)
	errs = append(errs, closeResidency(s.res))
	s.res, s.graphs = nil, nil
	if skipped := s.warns.flush(); skipped > 0 {
		s.log.Warn("failed or refused requests not logged", slog.Int64("requests", skipped), slog.Int("logged_per_period", warnBurst), slog.Duration("period", warnPeriod))
	}
	s.log.Info("stopped")
	return errors.Join(errs...)
}
