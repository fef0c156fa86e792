package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/internal/quote"
	"github.com/gpuplan/gpuplan/workloads/bfsserve"
)

const loadAbout = `Drives a BFS query server with concurrent clients and reports, for every
setting, the throughput (answered queries per second), the p50, p99 and
p99.9 latencies and the batch sizes formed, checking a sample of the answers
against the CPU reference (kept during the setting, checked after its timed
window, so that the reference does not take the host from the server).

Without --url it starts the server itself over --graph (on the GPU in the
CUDA build, the CPU reference with --cpu), once per setting: every batching
window of --windows with every client count of --clients, and with --serial
(the default) the same clients served one query at a time (--max-batch 1)
through the same server, the baseline the batched throughput is divided by.
With --url it drives a running server (loopback only) whose graph --name is
the one --graph loads.

Each client sends one query at a time: a random root among --roots roots
drawn from the graph, --targets random targets, --max-depth. -o FILE.csv
records the settings as load evidence and --chart FILE.svg|png draws the
throughput-latency curve (gpuplan report FILE.csv shows both again; charts
need a build with charts: make build-chart).

--soak varies the queries (targets, depths, parents), abandons --disconnect
of them at random (0.1 by default) and fails if the server's device memory,
goroutines or file descriptors grew over the run.

Examples:
  gpuplan load --graph kron:22 --clients 1,16,64,256 --duration 10s -o evidence/load/kron-22.csv --chart kron-22.svg
  gpuplan load --graph rgg:2000000:8 --windows 50us,200us,1ms --clients 1,64,256
  gpuplan load --graph kron:22 --soak --duration 10m --clients 256
  gpuplan load --graph kron:16 --url http://127.0.0.1:8080 --name kron16 --clients 64`

// loadOptions are the parsed flags of "gpuplan load".
type loadOptions struct {
	graph, name, url, out, chart string
	// sourceRoot is --source-root: the module root whose measured code -o
	// fingerprints.
	sourceRoot              string
	cpu, serial, soak, json bool
	device, roots, targets  int
	maxDepth, checkEvery    int
	maxBatch                int
	seed                    uint64
	clients                 []int
	windows                 []time.Duration
	duration, warmup        time.Duration
	queries                 int64
	disconnect              float64
	limits                  frontier.Limits
	build                   graphBuild
}

func parseLoadArgs(e *env, args []string) (*loadOptions, error) {
	f := e.newFlags("load", "load --graph SPEC [--clients N,...] [--windows D,...] [--duration D] [--serial] [--soak] [--url URL --name NAME] [-o FILE.csv] [--chart FILE.svg]", loadAbout)
	o := &loadOptions{limits: frontier.DefaultLimits()}
	f.StringVar(&o.graph, "graph", "", "the graph: grid:N, grid3d:N, kron:SCALE, road:N, rgg:N[:DEGREE], file:PATH or directed:PATH")
	f.StringVar(&o.name, "name", "", "the served graph's name (default: from the spec)")
	f.StringVar(&o.url, "url", "", "drive the running server at `URL` (loopback) instead of starting one")
	f.BoolVar(&o.cpu, "cpu", false, "serve from the parallel CPU reference instead of the GPU")
	f.IntVar(&o.device, "device", 0, "CUDA device ordinal")
	addBuildOnFlag(f.FlagSet, &o.build)
	clients := f.String("clients", "1,16,64,256", "comma-separated concurrent client counts")
	windows := f.String("windows", bfsserve.DefaultWindow.String(), "comma-separated batching windows (0: none)")
	f.IntVar(&o.maxBatch, "max-batch", bfsserve.DefaultMaxBatch, "most distinct roots of one batch in the batched settings")
	f.BoolVar(&o.serial, "serial", true, "also serve every client count one query at a time, the baseline")
	f.DurationVar(&o.duration, "duration", 10*time.Second, "how long each setting runs")
	f.DurationVar(&o.warmup, "warmup", time.Second, "unmeasured load before each setting")
	f.Int64Var(&o.queries, "queries", 0, "stop each setting after `N` answers (0: the duration alone)")
	f.IntVar(&o.roots, "roots", 256, "draw the queries' roots among `N` random roots")
	f.IntVar(&o.targets, "targets", bfsserve.DefaultLoadTargets, "random targets per query")
	f.IntVar(&o.maxDepth, "max-depth", -1, "each query's depth limit (-1: none)")
	f.IntVar(&o.checkEvery, "check-every", 16, "check one answer in `N` against the CPU reference, up to 64 a setting, after its timed window (0: none)")
	f.Float64Var(&o.disconnect, "disconnect", 0, "fraction of queries abandoned early (--soak: 0.1)")
	f.BoolVar(&o.soak, "soak", false, "mixed queries and random disconnects; fail on growth of device memory, goroutines or file descriptors")
	f.Uint64Var(&o.seed, "seed", 1, "seed of the generated graph, the roots and the queries")
	f.StringVar(&o.out, "o", "", "record the settings as load evidence CSV in `FILE`")
	f.StringVar(&o.sourceRoot, "source-root", "", "with -o: the module root whose measured code the evidence fingerprints (default: the nearest directory above the working directory with go.mod)")
	f.StringVar(&o.chart, "chart", "", "draw the throughput-latency curve to `FILE` (.png or .svg)"+chartFlagNote)
	if err := f.parse(args); err != nil {
		return nil, err
	}
	if err := f.noArgs(); err != nil {
		return nil, err
	}
	o.json = f.json
	set := setFlags(f)
	var err error
	if o.clients, err = parseCounts("--clients", *clients, 1, bfsserve.MaxClients); err != nil {
		return nil, err
	}
	if o.windows, err = parseWindows(*windows); err != nil {
		return nil, err
	}
	if err := o.build.check("load"); err != nil {
		return nil, err
	}
	if o.soak && !set["disconnect"] {
		o.disconnect = 0.1
	}
	if err := o.check(set); err != nil {
		return nil, err
	}
	return o, nil
}

// check refuses flags out of range or at odds.
func (o *loadOptions) check(set map[string]bool) error {
	bad := func(format string, a ...any) error { return usagef("gpuplan load: "+format, a...) }
	switch {
	case o.graph == "":
		return bad("--graph is required: the roots and the reference come from it. Fix: give the served graph's spec, for example --graph kron:16")
	case o.duration <= 0 || o.duration > bfsserve.MaxLoadDuration:
		return bad("--duration %s is outside 0..24h. Fix: give a duration such as 10s", o.duration)
	case o.warmup < 0 || o.warmup > time.Hour:
		return bad("--warmup %s is outside 0..1h. Fix: give a warm-up such as 1s, or 0 for none", o.warmup)
	case o.queries < 0:
		return bad("--queries %d is negative. Fix: give a count, or 0 to run for --duration", o.queries)
	case o.roots < 1 || o.roots > 1<<20:
		return bad("--roots %d is outside 1..%d. Fix: give the roots to draw from, for example 256", o.roots, 1<<20)
	case o.targets < 1 || o.targets > 1<<16:
		return bad("--targets %d is outside 1..%d. Fix: give the random targets per query, for example 16", o.targets, 1<<16)
	case o.maxDepth < -1 || o.maxDepth > 1<<30:
		return bad("--max-depth %d is outside -1..%d. Fix: give a depth, or -1 for none", o.maxDepth, 1<<30)
	case o.checkEvery < 0:
		return bad("--check-every %d is negative. Fix: give N to check one answer in N, or 0", o.checkEvery)
	case !(o.disconnect >= 0 && o.disconnect <= 1):
		return bad("--disconnect %v is outside 0..1. Fix: give the fraction of queries abandoned, for example 0.1", o.disconnect)
	case o.maxBatch < 1 || o.maxBatch > bfsserve.MaxMaxBatch:
		return bad("--max-batch %d is outside 1..%d. Fix: give the most distinct roots of a batch, for example 64", o.maxBatch, bfsserve.MaxMaxBatch)
	case o.url != "" && (set["windows"] || set["max-batch"] || set["serial"] || set["cpu"] || set["device"]):
		return bad("--windows, --max-batch, --serial, --cpu and --device set up the server this command starts, but --url drives a running one. Fix: leave them out, or leave out --url")
	case o.url != "" && o.out != "":
		return bad("-o records evidence of the server this command starts (its device and build), not of a server at --url. Fix: leave out --url to record evidence")
	case o.url == "" && set["name"]:
		return bad("--name names the graph of the server at --url. Fix: give --url, or leave out --name")
	case o.chart != "" && chartFormat(o.chart) != "png" && chartFormat(o.chart) != "svg":
		return bad("--chart %s must end in .png or .svg. Fix: name the chart file with one of them", quote.Echo(o.chart))
	case o.chart != "" && !buildHasCharts:
		return errNoCharts
	case o.device < 0:
		return bad("--device %d is negative. Fix: give a CUDA device ordinal, 0 for the first", o.device)
	case o.sourceRoot != "" && o.out == "":
		return bad("--source-root names the code whose fingerprint -o records, and -o is not given. Fix: add -o FILE.csv, or leave out --source-root")
	}
	if err := checkOutputFile("load", "-o", o.out); err != nil {
		return err
	}
	if err := checkOutputFile("load", "--chart", o.chart); err != nil {
		return err
	}
	return nil
}

// parseCounts reads a comma-separated list of counts within lo..hi.
func parseCounts(flag, list string, lo, hi int) ([]int, error) {
	var out []int
	for _, s := range strings.Split(list, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || v < lo || v > hi {
			return nil, usagef("gpuplan load: %s: %s is not a count from %d to %d. Fix: list counts such as 1,16,64,256", flag, quote.Echo(s), lo, hi)
		}
		out = append(out, v)
	}
	return out, nil
}

// parseWindows reads a comma-separated list of batching windows.
func parseWindows(list string) ([]time.Duration, error) {
	var out []time.Duration
	for _, s := range strings.Split(list, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(s))
		if err != nil || d < 0 || d > bfsserve.MaxWindow {
			return nil, usagef("gpuplan load: --windows: %s is not a window from 0 to %s. Fix: list windows such as 50us,200us,1ms", quote.Echo(s), bfsserve.MaxWindow)
		}
		out = append(out, d)
	}
	return out, nil
}

// runLoad parses "gpuplan load", runs every setting and reports them.
func runLoad(e *env, args []string) error {
	o, err := parseLoadArgs(e, args)
	if err != nil {
		return err
	}
	o.build.device, o.build.cpu = o.device, o.cpu
	g, directed, err := o.build.load(o.graph, o.seed, o.limits, func(f string, a ...any) { e.logf("load", f, a...) })
	if err != nil {
		return fmt.Errorf("--graph: %w", err)
	}
	roots, err := frontier.Roots(g, o.roots, o.seed)
	if err != nil {
		return err
	}
	ctx, stop := e.interruptContext()
	defer stop()
	run := &loadDriver{e: e, o: o, g: g, directed: directed, roots: roots, ref: newReferenceCache(g, 8)}
	var rows []loadRow
	if o.url != "" {
		rows, err = run.remote(ctx)
	} else {
		rows, err = run.inProcess(ctx)
	}
	if err != nil {
		return err
	}
	return run.report(rows)
}
