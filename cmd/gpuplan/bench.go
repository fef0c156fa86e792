package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/executor/nccl/rendezvous"
	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/internal/quote"
	"github.com/gpuplan/gpuplan/partition"
	"github.com/gpuplan/gpuplan/workloads/bfs"
	"github.com/gpuplan/gpuplan/workloads/partbfs"
)

const benchAbout = `Measure GPU execution arms side by side on one device, in one process.

"gpuplan bench frontier" runs breadth-first search on a graph that stays
resident on the GPU (uploaded once) from several roots with every arm:

  host-loop    one launch per level, a 4-byte readback of the next frontier
               size, a host sync and a host test: what a user writes by hand
               with the driver API (the whole loop on the driver thread; per
               level a launch, a 4-byte copy into pinned memory and a stream
               sync; no event, no allocation)
  device-loop  levels enqueued back to back without host syncs; the frontier
               size is read every --check-every levels
  megakernel   one cooperative launch runs every level, with grid barriers
               and a final-flag-only convergence check
  host-loop-scan (only with --arms) the host loop over the plain scan wave,
               one thread per vertex, every vertex visited every level

On graphs of average degree 5 or more (the planner's degree gate), every
arm but host-loop-scan is direction-optimizing: each level runs top-down
from the frontier queue or bottom-up over a visited bitmap, as
planners.PlanBFSDirection decides from the frontier's vertices and edges
and the unexplored edges (the host loop asks the planner; the device loop
and the megakernel evaluate the same rule on the device, and their logged
decisions are checked against the planner). Every arm's decisions must
equal the reference's (--check); the evidence records them (--direction
top-down turns it off). The megakernel is then level-synchronous (unless
--mega-top-down); on the other graphs its blocks run ahead up to
--mega-ahead levels, the depth adapting from each step's lowered labels.
Before anything is timed, the megakernel is tuned from the first root
(--mega-tune): it runs each candidate setting (its adaptive depth and
fixed depths from 2 to 16, each with a block keep budget of 256 and of 512
edges; where direction-optimizing, also the two budgets level-
synchronous; where the blocks have at most 512 threads, also top-down
without grid barriers (--mega-async) within windows of 4 and 8 labels,
with the 512-edge budget) three times and keeps the fastest that lowers at most 0.5
labels per vertex, the configured setting unless another is 3% faster. A
graph of long diameter whose levels are almost all top-down (a random
geometric graph) runs faster ahead than level-synchronous. The table of
trials is printed and recorded in the evidence.

--batch K also measures multi-source BFS from the K roots, in passes of
32 or 64 roots (planners.PlanMultiSourceBFS, within the memory budget),
as the arm multi-source beside the K single-root traversals.
--peer NAME=PATH (repeatable) runs a peer BFS code's driver binary on the
same graph (written as a Matrix Market file) and roots after the arms, one
peer after the other: gunrock (Gunrock essentials), gapbs (the GAP
benchmark suite's CPU BFS), gswitch (GSWITCH) or blest (BLEST), each built
by its peer bundle's run.sh. Every run's reached vertices, depth and
Graph500 edges are checked against the root's reference (a peer that is
missing, fails, times out or disagrees is an error), its times are
recorded as the external arm NAME, and the untimed preprocessing it
reports (BLEST's reordering) is printed and kept in the evidence's peers
comment. --peer-gunrock PATH is --peer gunrock=PATH.

The session runs by its plans: the memory plan (a graph that does not fit
is refused before anything is allocated), the frontier queue plan, launch
shapes from the occupancy model and the convergence plan; the bench prints
them. The megakernel topology selection, fed with a profile measured from
the first root, picks the arm it would run by default; the bench still
measures every arm and notes whether the planned arm was the fastest.

Arms are interleaved sample by sample (their order rotates). A sample is one
traversal from every root; every traversal's levels are downloaded (outside
the timed region) and checked against the root's reference, so all arms
produce identical levels or the run fails. The run also measures the copy-
bandwidth ceiling (arm copy-ceiling: a large device-to-device copy) and the
megakernel's barrier floor, and runs one resident session batch per arm
(every root, the levels read back once at the end), whose plan's predicted
uploads, allocations and readbacks are printed against the executor's
telemetry. Every sample is written in gpuplan's evidence CSV format (-o),
which 'gpuplan gate' judges against evidence/gates.json.

--check sets how each root's reference (its levels, level count and
direction decisions) is established. reference runs the CPU direction-
optimizing BFS from every root, on every CPU, before the GPU runs. graph500
runs no CPU BFS: the first traversal from each root (untimed, by the first
measured arm whose directions are checked, or the host loop) is validated
the Graph500 way on every CPU (the root at level 0; along every edge both
ends reached or neither, their levels within one; every other reached
vertex with a neighbour one level closer: together, exact BFS distances),
and becomes the root's reference. auto, the default, is reference on
graphs of at most 2^31 adjacency entries and graph500 on larger ones
(Kronecker scales 27 and 28), where the CPU reference takes too long. The
log says which check ran and how long it took; the evidence CSV has a
"# check" comment line per root.

Graphs: grid:N (N x N grid, diameter 2N-2), kron:SCALE (Graph500 Kronecker,
edge factor 16), road:N (road-like planar graph on an N x N lattice),
rgg:N[:DEGREE] (random geometric graph of N points in the unit square, average
degree 8 by default), file:PATH (.mtx Matrix Market, otherwise an edge list
"u v" per line; read under --max-graph-bytes, --max-load-bytes and
--vertices-per-byte).

"gpuplan bench egraph" measures the e-graph rebuild the same way (run
'gpuplan bench egraph --help'), and "gpuplan bench kron" building a Kronecker
graph on the GPU against the CPU ('gpuplan bench kron --help').

With --devices N (N > 1) the graph is partitioned over N GPUs (gpuplan
partition shows the plan) and the arm is the partitioned BFS, exchanging
the frontier over NCCL after every level (libnccl.so.2 is loaded at run
time); --simulate-devices P runs P partitions on one GPU, exchanging
through device copies. It reports GTEPS and every level's exchange bytes
and time against the partition planner's prediction. The flags of the
single-GPU arms (--arms, --metrics, every --mega-* flag, --check,
--check-every, --chunk, --barrier-levels, --direction, --batch,
--batch-width, the --peer-* flags, and --device with --devices) do not
apply there and are refused; --partition (the cut) applies only there.

With --devices N --processes the partitioned BFS runs one process per
GPU: gpuplan starts N child processes of itself, rank i seeing only GPU i
(CUDA_VISIBLE_DEVICES, the i-th entry of the list this process was given,
if any), each holding one partition of the same plan and running the same
levels. Rank 0 listens on a free loopback port and writes it to a file in
a temporary directory (GPUPLAN_RENDEZVOUS_FILE); the other ranks read it
there and receive NCCL's id from rank 0. Every rank checks its
partition's levels against the reference; rank 0 writes the evidence and
the table (the arms process-per-gpu-pN and process-per-gpu-exchange-pN).
Each rank's log lines are printed after "rank i:". When a rank fails the
others are stopped, the error names the rank and its last line, and the
command exits non-zero; --launch-timeout bounds the whole launch.

The same command runs as one rank when GPUPLAN_RANK is set, which is how
it runs across machines: start one process per GPU yourself, each with
GPUPLAN_RANK (0 to N-1), GPUPLAN_WORLD_SIZE (N) and GPUPLAN_RENDEZVOUS
(rank 0's host:port, for example node0:29500; rank 0 listens there, on
every interface with :29500) in its environment, and the same flags with
--processes (--devices may be left out, or must equal N; --device picks
the GPU of a machine with several). Processes of one machine may share
GPUPLAN_RENDEZVOUS_FILE instead of an address. Every rank must build the
same graph and roots (the same --graph, --seed and --roots) and run on
the same GPU model and driver; rank 0 refuses a rank that differs.

Needs a build with CUDA support (make build-cuda).`

// benchOptions are the parsed flags of "gpuplan bench frontier".
type benchOptions struct {
	spec       frontier.Spec
	graph      string
	build      graphBuild
	roots      int
	rootIDs    []int64
	seed       uint64
	limits     frontier.Limits
	bench      bfs.BenchConfig
	out        string
	summary    string
	metrics    string
	device     int
	sourceRoot string
	json       bool
	progress   bool
	// open opens the executor the benchmark runs on.
	open func(device int) (*executor.Executor, error)
	// devices and simulate select the partitioned BFS (devices > 1 or
	// simulate > 0), strategy its cut and opener its devices.
	devices, simulate int
	strategy          partition.Strategy
	opener            partbfs.Opener
	// processes runs one process per GPU (--processes): this process
	// launches them, each with startRank, within launchTimeout, or, with
	// rank set (read from GPUPLAN_RANK and the rest of the rank
	// environment), is one of them.
	processes     bool
	launchTimeout time.Duration
	rank          *rendezvous.Config
	startRank     rankStart
	// args are the command line after "bench", which every rank runs.
	args []string
	// extra are the flags of direction, multi-source and peer runs.
	extra benchExtra
}

// knownBenchArms are every arm --arms accepts.
func knownBenchArms() []string {
	var out []string
	for _, a := range bfs.Arms() {
		out = append(out, string(a))
	}
	return out
}

func armNames(arms []bfs.Arm) string {
	var out []string
	for _, a := range arms {
		out = append(out, string(a))
	}
	return strings.Join(out, ",")
}

// parseBenchArgs parses "frontier [flags]".
func parseBenchArgs(e *env, args []string) (*benchOptions, error) {
	f := e.newFlags("bench",
		"bench frontier --graph SPEC [--roots N | --root-ids A,B,...] [--samples N] [-o FILE.csv] [flags]",
		benchAbout)
	o := &benchOptions{open: openBenchExecutor, opener: partbfs.DefaultOpener(), args: args}
	o.startRank = e.execRank(append([]string{"bench"}, args...))
	sc := &o.bench.Session
	var graph string
	f.StringVar(&graph, "graph", "", "graph `SPEC`: grid:N, grid3d:N, kron:SCALE, road:N, rgg:N[:DEGREE] or file:PATH (.mtx or edge list)")
	o.limits = frontier.DefaultLimits()
	f.Int64Var(&o.limits.MaxFileBytes, "max-graph-bytes", o.limits.MaxFileBytes, "file graphs: the largest input file in bytes")
	f.Uint64Var(&o.limits.MaxLoadBytes, "max-load-bytes", o.limits.MaxLoadBytes, "file graphs: the memory a load may take, estimated before anything is allocated")
	f.IntVar(&o.limits.VerticesPerByte, "vertices-per-byte", o.limits.VerticesPerByte, "file graphs: the most vertices per input byte (raise it for files whose ids leave most vertices isolated)")
	f.IntVar(&o.roots, "roots", 16, "number of BFS roots, chosen among vertices with edges, deterministic from --seed")
	rootIDs := f.String("root-ids", "", "comma-separated explicit root vertex `IDS` (instead of --roots)")
	f.IntVar(&o.bench.Samples, "samples", bfs.DefaultSamples, "timed samples per arm (each one traversal from every root)")
	seed := f.Uint64("seed", 1, "seed for the graph generators and the root choice")
	arms := f.String("arms", armNames(bfs.DefaultArms()), "comma-separated arms: "+strings.Join(knownBenchArms(), ", "))
	f.IntVar(&sc.CheckEvery, "check-every", bfs.DefaultCheckEvery, "device-loop: levels enqueued between host checks of the frontier size")
	f.IntVar(&sc.Chunk, "chunk", bfs.DefaultChunk, "most edges per frontier-queue item")
	f.BoolVar(&sc.WideOffsets, "wide-offsets", false, "run the kernels' 64-bit offsets even where 32-bit ones fit (graphs past 2^32-1 adjacency entries run on them anyway, with the host-loop and device-loop arms)")
	f.IntVar(&sc.MegakernelThreads, "mega-threads", 0, "megakernel: threads per block, a multiple of 32 up to 1024 (0: 512 for graphs of low degree, 1024 otherwise)")
	f.IntVar(&sc.MegakernelBlocksPerSM, "mega-blocks-per-sm", 0, "megakernel: at most `N` co-resident blocks per SM (0: one, the measured best; the occupancy model bounds it)")
	f.IntVar(&sc.MegakernelAhead, "mega-ahead", 0, fmt.Sprintf("megakernel: at most `N` levels a block expands from its own frontier between grid barriers, the depth adapting below it (0: %d; 1 is one barrier per level)", bfs.DefaultMaxRunAhead))
	o.extra.define(f, o)
	f.IntVar(&o.bench.BarrierLevels, "barrier-levels", bfs.DefaultBarrierLevels, "megakernel barrier floor: grid barriers per timed launch (0 skips it)")
	copyMiB := f.Int("copy-mib", bfs.DefaultCopyBytes>>20, "size in MiB of each buffer of the copy-ceiling measurement (0 skips it)")
	f.StringVar(&o.out, "o", "", "write the evidence CSV to `FILE`")
	f.StringVar(&o.summary, "summary", "", "also write the summary table as Markdown to `FILE`")
	f.StringVar(&o.metrics, "metrics", "", "write the executor's telemetry after the run as Prometheus text exposition to `FILE` (- for standard output)")
	f.IntVar(&o.device, "device", 0, "CUDA device ordinal")
	addBuildOnFlag(f.FlagSet, &o.build)
	f.IntVar(&o.devices, "devices", 1, "partition the graph over `N` GPUs (N > 1: the partitioned BFS over NCCL)")
	f.IntVar(&o.simulate, "simulate-devices", 0, "run the partitioned BFS as `P` partitions on one GPU (--device), exchanging through device copies")
	partition := f.String("partition", "edges", "partitioned BFS: blocked (equal vertices) or edges (equal edge entries)")
	f.BoolVar(&o.processes, "processes", false, "with --devices N: one process per GPU (N child processes of this binary, each seeing only its GPU, meeting through a rendezvous on loopback); with GPUPLAN_RANK set, run as that rank")
	f.DurationVar(&o.launchTimeout, "launch-timeout", defaultLaunchTimeout, "with --processes: the longest the whole launch of the N processes may take")
	f.StringVar(&o.sourceRoot, "source-root", "", "with -o: the module root whose measured code the evidence fingerprints (default: the nearest directory above the working directory with go.mod)")
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		if err := f.parse(args); err != nil {
			return nil, err
		}
		return nil, usagef("gpuplan bench: no benchmark named. Fix: name frontier, egraph or kron first, for example 'gpuplan bench frontier --graph grid:2048' (run 'gpuplan bench --help' for usage)")
	}
	if args[0] != "frontier" {
		return nil, usagef("gpuplan bench: unknown benchmark %s. Fix: name frontier, egraph or kron, for example 'gpuplan bench frontier --graph grid:2048' (run 'gpuplan bench --help' for usage)", quote.Echo(args[0]))
	}
	if err := f.parse(args[1:]); err != nil {
		return nil, err
	}
	if err := f.noArgs(); err != nil {
		return nil, err
	}
	o.json = f.json
	o.seed = *seed
	if err := o.parseGraphAndRoots(graph, *rootIDs); err != nil {
		return nil, err
	}
	if err := o.check(*copyMiB); err != nil {
		return nil, err
	}
	if err := o.checkPartitioned(*partition); err != nil {
		return nil, err
	}
	set := setFlags(f)
	if err := o.checkProcesses(e, set); err != nil {
		return nil, err
	}
	if err := o.checkPartitionedFlags(set); err != nil {
		return nil, err
	}
	o.bench.CopyBytes = uint64(*copyMiB) << 20
	if err := o.parseArms(*arms); err != nil {
		return nil, err
	}
	if err := o.extra.apply(o, set); err != nil {
		return nil, err
	}
	o.progress = isTerminal(e.stderr)
	return o, nil
}

// parseGraphAndRoots reads --graph and --root-ids.
func (o *benchOptions) parseGraphAndRoots(graph, rootIDs string) error {
	if graph == "" {
		return usagef("gpuplan bench frontier: --graph is required. Fix: add the graph, for example --graph grid:2048 (run 'gpuplan bench --help' for the kinds)")
	}
	spec, err := frontier.ParseSpec(graph)
	if err != nil {
		return usagef("gpuplan bench frontier: --graph: %v", err)
	}
	o.spec, o.graph = spec, graph
	if rootIDs == "" {
		return nil
	}
	for _, s := range strings.Split(rootIDs, ",") {
		v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil {
			return usagef("gpuplan bench frontier: --root-ids: %s is not an integer. Fix: list vertex ids such as 0,17,42", quote.Echo(s))
		}
		o.rootIDs = append(o.rootIDs, v)
	}
	o.roots = len(o.rootIDs)
	return nil
}

// check refuses flag values out of range.
func (o *benchOptions) check(copyMiB int) error {
	sc := o.bench.Session
	switch {
	case o.roots < 1 || o.roots > 4096:
		return usagef("gpuplan bench frontier: --roots %d is outside 1..4096. Fix: use for example 16 (Graph500 uses 64)", o.roots)
	case o.bench.Samples < 1 || o.bench.Samples > 100000:
		return usagef("gpuplan bench frontier: --samples %d is outside 1..100000. Fix: use at least 10 so the gate can judge the run", o.bench.Samples)
	case sc.CheckEvery < 1 || sc.CheckEvery > 1<<16:
		return usagef("gpuplan bench frontier: --check-every %d is outside 1..65536. Fix: give the levels between host checks, for example %d (the default)", sc.CheckEvery, bfs.DefaultCheckEvery)
	case sc.Chunk < 1 || sc.Chunk > 1<<20:
		return usagef("gpuplan bench frontier: --chunk %d is outside 1..1048576. Fix: give the most edges per frontier-queue item, for example %d (the default)", sc.Chunk, bfs.DefaultChunk)
	case sc.MegakernelThreads < 0 || sc.MegakernelThreads > 1024 || sc.MegakernelThreads%32 != 0:
		return usagef("gpuplan bench frontier: --mega-threads %d is not 0 or a multiple of 32 up to 1024. Fix: use 0 for the default, or 32, 64, ... 1024", sc.MegakernelThreads)
	case sc.MegakernelBlocksPerSM < 0 || sc.MegakernelBlocksPerSM > 64:
		return usagef("gpuplan bench frontier: --mega-blocks-per-sm %d is outside 0..64. Fix: use 0 for the default (one), or 1 to 64", sc.MegakernelBlocksPerSM)
	case sc.MegakernelAhead < 0 || sc.MegakernelAhead > bfs.MaxRunAhead:
		return usagef("gpuplan bench frontier: --mega-ahead %d is outside 0..%d. Fix: use 0 for the default (%d), 1 for level-synchronous, or up to %d levels", sc.MegakernelAhead, bfs.MaxRunAhead, bfs.DefaultMaxRunAhead, bfs.MaxRunAhead)
	case o.bench.BarrierLevels < 0 || o.bench.BarrierLevels > 1<<20:
		return usagef("gpuplan bench frontier: --barrier-levels %d is outside 0..1048576. Fix: use 0 to skip the barrier floor, or a count such as %d (the default)", o.bench.BarrierLevels, bfs.DefaultBarrierLevels)
	case o.limits.MaxFileBytes < 1 || o.limits.MaxLoadBytes < 1 || o.limits.VerticesPerByte < 1:
		return usagef("gpuplan bench frontier: --max-graph-bytes %d, --max-load-bytes %d and --vertices-per-byte %d must all be positive. Fix: raise the one that is 0 or less, or drop it for its default", o.limits.MaxFileBytes, o.limits.MaxLoadBytes, o.limits.VerticesPerByte)
	case copyMiB < 0 || copyMiB > 1<<16:
		return usagef("gpuplan bench frontier: --copy-mib %d is outside 0..65536. Fix: use 0 to skip the copy ceiling, or a size in MiB such as %d (the default)", copyMiB, bfs.DefaultCopyBytes>>20)
	case o.device < 0:
		return usagef("gpuplan bench frontier: --device %d is negative. Fix: give a CUDA device ordinal, 0 for the first GPU", o.device)
	}
	if err := o.build.check("bench frontier"); err != nil {
		return err
	}
	return nil
}

// parseArms reads --arms.
func (o *benchOptions) parseArms(arms string) error {
	o.bench.Arms = nil
	for _, a := range strings.Split(arms, ",") {
		arm, err := bfs.ParseArm(strings.TrimSpace(a))
		if err != nil {
			return usagef("gpuplan bench frontier: --arms: unknown arm %s. Fix: use %s", quote.Echo(strings.TrimSpace(a)), strings.Join(knownBenchArms(), ", "))
		}
		if slices.Contains(o.bench.Arms, arm) {
			return usagef("gpuplan bench frontier: --arms: %s is listed twice. Fix: list each arm once", quote.Echo(string(arm)))
		}
		o.bench.Arms = append(o.bench.Arms, arm)
	}
	return nil
}

// findModuleRoot returns dir or the nearest parent holding go.mod.
func findModuleRoot(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := abs; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod above %s. Fix: run from the gpuplan checkout or pass --source-root", abs)
		}
	}
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// progressBar draws a one-line bar on a terminal; it draws nothing when
// disabled.
type progressBar struct {
	w  io.Writer
	on bool
}

// update shows done of total steps and the current step's label.
func (p *progressBar) update(done, total int, label string) {
	if !p.on || total <= 0 {
		return
	}
	const width = 30
	done = min(max(done, 0), total)
	filled := done * width / total
	fmt.Fprintf(p.w, "\r[%s%s] %3d%% %-40.40s", strings.Repeat("#", filled), strings.Repeat(".", width-filled), done*100/total, label)
	if done == total {
		fmt.Fprintln(p.w)
	}
}

// driverVersionFromProc reads the NVIDIA kernel module version from
// /proc/driver/nvidia/version ("... Kernel Module  580.159.04 ..."), or ""
// when it is not there.
func driverVersionFromProc(text string) string {
	fields := strings.Fields(text)
	for i, f := range fields {
		if f != "Module" {
			continue
		}
		for _, v := range fields[i+1:] {
			if v[0] >= '0' && v[0] <= '9' && strings.Contains(v, ".") {
				return v
			}
		}
	}
	return ""
}
