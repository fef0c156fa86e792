package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/internal/quote"
	"github.com/gpuplan/gpuplan/workloads/bfsquery"
	"github.com/gpuplan/gpuplan/workloads/bfsserve"
)

const serveAbout = `Serves BFS queries over HTTP/JSON: loads every --graph NAME=SPEC once,
keeps it resident (on the GPU in the CUDA build, each graph uploaded once;
on the parallel CPU reference with --cpu and in a build without CUDA) and
answers on --listen, a loopback address by default.

Concurrent queries on one graph are batched: the first queued query waits
up to --window for others, up to --max-batch distinct roots, and the batch
runs as multi-source passes of 64 roots, grouped by the multi-query plan
within the memory budget. A full queue (--queue) refuses with 429, a query
the budget cannot hold with 503; a GPU fault fails its batch with 500, and
the server tries to reopen the graphs (a new context, uploaded again) while
/healthz says "recovering". On a real GPU a sticky fault (an illegal
address, for example) ends the process's use of CUDA: every new context
fails, so the server gives up (/healthz says "failed"), shuts down and
exits with a failure status, to be restarted by its supervisor (for
example systemd with Restart=on-failure).

The API (see the README): GET /v1/graphs; POST /v1/graphs/NAME/bfs with
{"root": R, "targets": [...], "max_depth": D, "parents": false}; POST
/v1/graphs/NAME/batch and /reach; GET /v1/graphs/NAME/levels?root=R (every
level, binary); GET /healthz; GET /metrics (Prometheus).

SIGINT or SIGTERM shuts down gracefully: the queries in flight are answered
(for up to --drain), then the graphs are released.

Examples:
  gpuplan serve --graph kron22=kron:22
  gpuplan serve --graph road=file:usa.mtx --graph web=directed:links.txt --listen 127.0.0.1:9000
  curl -s -d '{"root": 0, "targets": [1, 2]}' http://127.0.0.1:8080/v1/graphs/kron22/bfs`

// graphFlags collects repeated --graph NAME=SPEC flags.
type graphFlags []namedSpec

// namedSpec is one --graph value.
type namedSpec struct{ name, spec string }

func (g *graphFlags) String() string {
	parts := make([]string, len(*g))
	for i, s := range *g {
		parts[i] = s.name + "=" + s.spec
	}
	return strings.Join(parts, " ")
}

// Set parses one NAME=SPEC.
func (g *graphFlags) Set(v string) error {
	name, spec, ok := strings.Cut(v, "=")
	if !ok || spec == "" {
		return fmt.Errorf("%s is not NAME=SPEC. Fix: name the graph, for example --graph kron22=kron:22", quote.Echo(v))
	}
	if err := bfsserve.CheckName(name); err != nil {
		return err
	}
	for _, s := range *g {
		if s.name == name {
			return fmt.Errorf("graph %q is given twice. Fix: give every --graph its own name", name)
		}
	}
	*g = append(*g, namedSpec{name, spec})
	return nil
}

// serveOptions are the parsed flags of "gpuplan serve".
type serveOptions struct {
	graphs    graphFlags
	listen    string
	cpu       bool
	device    int
	seed      uint64
	cfg       bfsserve.Config
	budgetMiB uint64
	drain     time.Duration
	logLevel  string
	logFormat string
	limits    frontier.Limits
	build     graphBuild
}

func parseServeArgs(e *env, args []string) (*serveOptions, error) {
	f := e.newFlags("serve", "serve --graph NAME=SPEC [--graph NAME=SPEC ...] [--listen ADDR] [--cpu] [--window D] [--max-batch N]", serveAbout)
	o := &serveOptions{limits: frontier.DefaultLimits()}
	f.Var(&o.graphs, "graph", "a graph to serve, `NAME=SPEC` (repeatable); SPEC is grid:N, grid3d:N, kron:SCALE, road:N, rgg:N[:DEGREE], file:PATH or directed:PATH")
	f.StringVar(&o.listen, "listen", bfsserve.DefaultAddr, "listen on `ADDR` (host:port; a loopback address by default)")
	f.BoolVar(&o.cpu, "cpu", false, "answer with the parallel CPU reference instead of the GPU")
	f.IntVar(&o.device, "device", 0, "CUDA device ordinal")
	addBuildOnFlag(f.FlagSet, &o.build)
	f.Uint64Var(&o.seed, "seed", 1, "seed of the generated graphs")
	f.DurationVar(&o.cfg.Window, "window", bfsserve.DefaultWindow, "batching window: how long a graph's first queued query waits for others (0: none)")
	f.IntVar(&o.cfg.MaxBatch, "max-batch", bfsserve.DefaultMaxBatch, "most distinct roots of one batch (1: one query at a time)")
	f.IntVar(&o.cfg.QueueDepth, "queue", bfsserve.DefaultQueueDepth, "queries each graph holds queued before refusing with 429")
	f.Uint64Var(&o.budgetMiB, "budget-mib", 0, "memory one batch may hold, in MiB (0: a full batch of queries over every vertex, or of 1024 targets on a smaller graph)")
	f.Int64Var(&o.cfg.MaxBodyBytes, "max-body", bfsserve.DefaultMaxBodyBytes, "largest request body in bytes")
	f.DurationVar(&o.cfg.Timeout, "timeout", bfsserve.DefaultTimeout, "each request's deadline")
	f.DurationVar(&o.drain, "drain", 30*time.Second, "how long shutdown waits for the queries in flight")
	f.StringVar(&o.logLevel, "log-level", "info", "log level: debug (every request), info, warn or error")
	f.StringVar(&o.logFormat, "log-format", "json", "log format: json or text")
	if err := f.parse(args); err != nil {
		return nil, err
	}
	if err := f.noArgs(); err != nil {
		return nil, err
	}
	bad := func(format string, a ...any) error { return usagef("gpuplan serve: "+format, a...) }
	switch {
	case len(o.graphs) == 0:
		return nil, bad("no graph to serve. Fix: give --graph NAME=SPEC, for example --graph kron22=kron:22")
	case o.cfg.Window < 0 || o.cfg.Window > bfsserve.MaxWindow:
		return nil, bad("--window %s is outside 0..%s. Fix: give a window such as 200us, or 0 for none", o.cfg.Window, bfsserve.MaxWindow)
	case o.build.check("serve") != nil:
		return nil, o.build.check("serve")
	case o.cfg.MaxBatch < 1 || o.cfg.MaxBatch > bfsserve.MaxMaxBatch:
		return nil, bad("--max-batch %d is outside 1..%d. Fix: give 1 (one query at a time) up to %d, for example 64", o.cfg.MaxBatch, bfsserve.MaxMaxBatch, bfsserve.MaxMaxBatch)
	case o.cfg.QueueDepth < 1 || o.cfg.QueueDepth > bfsserve.MaxQueueDepth:
		return nil, bad("--queue %d is outside 1..%d. Fix: give the queries a graph may hold queued, for example 4096", o.cfg.QueueDepth, bfsserve.MaxQueueDepth)
	case o.cfg.MaxBodyBytes < 1:
		return nil, bad("--max-body %d is not positive. Fix: give the largest request body in bytes, for example 1048576", o.cfg.MaxBodyBytes)
	case o.cfg.Timeout <= 0:
		return nil, bad("--timeout %s is not positive. Fix: give each request's deadline, for example 30s", o.cfg.Timeout)
	case o.drain <= 0:
		return nil, bad("--drain %s is not positive. Fix: give how long shutdown may wait, for example 30s", o.drain)
	case o.budgetMiB > 1<<40:
		return nil, bad("--budget-mib %d is more than 2^40 MiB. Fix: give the memory a batch may hold in MiB, or 0 for a full batch", o.budgetMiB)
	case o.device < 0:
		return nil, bad("--device %d is negative. Fix: give a CUDA device ordinal, 0 for the first", o.device)
	}
	if o.cfg.Window == 0 {
		o.cfg.Window = bfsserve.NoWindow
	}
	o.cfg.BudgetBytes = o.budgetMiB << 20
	var err error
	if o.cfg.Logger, err = newLogger(e.stderr, o.logLevel, o.logFormat); err != nil {
		return nil, err
	}
	return o, nil
}

// newLogger builds the structured logger the flags ask for.
func newLogger(w io.Writer, level, format string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, usagef("gpuplan serve: --log-level %s is not a level. Fix: use debug, info, warn or error", quote.Echo(level))
	}
	opts := &slog.HandlerOptions{Level: l}
	switch format {
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	}
	return nil, usagef("gpuplan serve: --log-format %s is not a format. Fix: use json or text", quote.Echo(format))
}

// servedGraph is a loaded graph and how it is opened.
type servedGraph struct {
	csr      *frontier.CSR
	directed bool
}

// loadServedGraphs loads every --graph once; the residency is opened from
// them, at start and after each fault.
func loadServedGraphs(e *env, specs graphFlags, seed uint64, lim frontier.Limits, build graphBuild) ([]servedGraph, error) {
	out := make([]servedGraph, 0, len(specs))
	for _, s := range specs {
		t0 := time.Now()
		g, directed, err := build.load(s.spec, seed, lim, func(f string, a ...any) { e.logf("serve", f, a...) })
		if err != nil {
			return nil, fmt.Errorf("--graph %s=%s: %w", s.name, echoName(s.spec), err)
		}
		g.Name = s.name
		e.logf("serve", "graph %s (%s): %d vertices, %d edge entries%s, loaded in %s", s.name, quote.Text(s.spec), g.NumVertices(), g.NumEdgeEntries(),
			map[bool]string{true: ", directed"}[directed], time.Since(t0).Round(time.Millisecond))
		out = append(out, servedGraph{g, directed})
	}
	return out, nil
}

// residencyOpener opens the graphs on the CPU reference, or on a new
// executor of the device (every graph uploaded once).
func residencyOpener(graphs []servedGraph, cpu bool, device int) bfsserve.Opener {
	return func(context.Context) (*bfsserve.Residency, error) {
		var x *executor.Executor
		if !cpu && buildHasCUDA {
			var err error
			if x, err = openFaultTolerantExecutor(device); err != nil {
				return nil, err
			}
		}
		res := &bfsserve.Residency{Executor: x}
		closeAll := func() error {
			var errs []error
			for _, g := range res.Graphs {
				errs = append(errs, g.Close())
			}
			if x != nil {
				errs = append(errs, x.Close())
			}
			return errors.Join(errs...)
		}
		for _, sg := range graphs {
			opts := bfsquery.Options{Directed: sg.directed}
			var g *bfsquery.Graph
			var err error
			if x == nil {
				g, err = bfsquery.OpenCPU(sg.csr, opts)
			} else {
				g, err = bfsquery.Open(x, sg.csr, opts)
			}
			if err != nil {
				return nil, errors.Join(fmt.Errorf("graph %s: %w", sg.csr.Name, err), closeAll())
			}
			res.Graphs = append(res.Graphs, g)
		}
		res.Close = closeAll
		return res, nil
	}
}

// interruptContext ends on SIGINT or SIGTERM, or with the env's context
// where a test gave one.
func (e *env) interruptContext() (context.Context, context.CancelFunc) {
	if e.ctx != nil {
		return context.WithCancel(e.ctx)
	}
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

// runServe parses "gpuplan serve" and serves until interrupted, or until
// the server fails.
func runServe(e *env, args []string) error {
	o, err := parseServeArgs(e, args)
	if err != nil {
		return err
	}
	l, err := bfsserve.Listen(o.listen)
	if err != nil {
		return fmt.Errorf("--listen: %w", err)
	}
	defer l.Close()
	o.build.device, o.build.cpu = o.device, o.cpu
	graphs, err := loadServedGraphs(e, o.graphs, o.seed, o.limits, o.build)
	if err != nil {
		return err
	}
	where := "the parallel CPU reference"
	if !o.cpu && buildHasCUDA {
		where = "the GPU"
	}
	return serveOn(e, o, l, residencyOpener(graphs, o.cpu, o.device), fmt.Sprintf("%d graphs from %s", len(graphs), where))
}

// serveOn serves the residency open opens on l (what describes it) until
// SIGINT or SIGTERM, or until the server gives up reopening its graphs
// after a fault; either way it shuts down gracefully. A failed server is
// an error that names the cause.
func serveOn(e *env, o *serveOptions, l net.Listener, open bfsserve.Opener, what string) error {
	ctx, stop := e.interruptContext()
	defer stop()
	s, err := bfsserve.New(ctx, o.cfg, open)
	if err != nil {
		return err
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve(l) }()
	e.logf("serve", "serving %s on http://%s (Ctrl-C stops)", what, l.Addr())
	var failure error
	select {
	case err := <-served:
		return errors.Join(err, s.Shutdown(context.Background()))
	case <-ctx.Done():
		e.logf("serve", "shutting down: finishing the queries in flight (up to %s)", o.drain)
	case <-s.Failed():
		failure = serveFailure(s.Health().Reason)
		e.logf("serve", "the server failed; shutting down: finishing the queries in flight (up to %s)", o.drain)
	}
	drain, cancel := context.WithTimeout(context.Background(), o.drain)
	defer cancel()
	// The failure comes last: the message ends with its Fix.
	return errors.Join(s.Shutdown(drain), <-served, failure)
}

// serveFailure is the error of a server that gave up reopening its graphs
// for reason.
func serveFailure(reason string) error {
	return fmt.Errorf("the server failed: %s. Fix: restart gpuplan serve (run it under a supervisor that restarts it on failure, e.g. systemd Restart=on-failure)", reason)
}
