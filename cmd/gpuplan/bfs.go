package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/frontier/validate"
	"github.com/gpuplan/gpuplan/internal/checked"
	"github.com/gpuplan/gpuplan/internal/quote"
	"github.com/gpuplan/gpuplan/workloads/bfsquery"
)

const bfsAbout = `Answers BFS queries over one graph: the level (distance) from each root of
every vertex, or of the --targets, within --max-depth, and with --parents
each one's parent in a BFS tree (the smallest in-neighbour one level
closer to the root).

The graph is a spec: grid:N, grid3d:N, kron:SCALE, road:N, rgg:N[:DEGREE] or
file:PATH (an edge list, or Matrix Market for .mtx), all undirected, or
directed:PATH, an edge list whose SRC DST lines are directed edges. The
roots are --roots N drawn at random (--seed), or --root-ids.

The CUDA build keeps the graph resident on the GPU (uploaded once) and runs
the roots there; --cpu, and a build without CUDA, use the parallel CPU
reference. Either way an undirected graph's roots run in multi-source
passes of 64.

The answers go to -o FILE: CSV (root,vertex,level[,parent], one row per
root and target) for a .csv file, the binary format (a header, then per
root its levels and parents; see the README) for any other name, or
--format csv|binary. Without -o, CSV goes to standard output, up to a
million rows.

--validate checks every answer against the graph by the Graph500 rules
(frontier/validate: one pass over the edges a root, no BFS run), and fails
naming the first vertex that breaks one; it needs answers over every vertex
(no --targets) without a depth limit.`

// bfsOptions are the parsed flags of "gpuplan bfs".
type bfsOptions struct {
	graph    string
	roots    int
	rootIDs  []int32
	targets  []int32
	maxDepth int
	parents  bool
	cpu      bool
	seed     uint64
	out      string
	format   string
	device   int
	json     bool
	validate bool
	limits   frontier.Limits
	build    graphBuild
}

// maxStdoutRows bounds the CSV rows written to standard output.
const maxStdoutRows = 1 << 20

func parseBFSArgs(e *env, args []string) (*bfsOptions, error) {
	f := e.newFlags("bfs", "bfs --graph SPEC [--roots N | --root-ids A,B,...] [--targets A,B,...] [--max-depth D] [--parents] [--cpu] [-o FILE]", bfsAbout)
	o := &bfsOptions{limits: frontier.DefaultLimits()}
	f.StringVar(&o.graph, "graph", "", "the graph: grid:N, grid3d:N, kron:SCALE, road:N, rgg:N[:DEGREE], file:PATH or directed:PATH")
	f.IntVar(&o.roots, "roots", 1, "draw `N` random roots (with --seed)")
	ids := f.String("root-ids", "", "comma-separated root vertex ids (instead of --roots)")
	targets := f.String("targets", "", "comma-separated target vertex ids (default: every vertex)")
	f.IntVar(&o.maxDepth, "max-depth", -1, "report vertices beyond `D` levels as unreached (-1: no limit)")
	f.BoolVar(&o.parents, "parents", false, "also write each target's parent in a BFS tree")
	f.BoolVar(&o.cpu, "cpu", false, "answer with the parallel CPU reference instead of the GPU")
	f.Uint64Var(&o.seed, "seed", 1, "seed of the generated graphs and the random roots")
	f.StringVar(&o.out, "o", "", "write the answers to `FILE` (default: CSV on standard output)")
	f.StringVar(&o.format, "format", "auto", "answers format: csv, binary, or auto (by -o's extension: .csv is CSV, others binary)")
	f.IntVar(&o.device, "device", 0, "CUDA device ordinal")
	addBuildOnFlag(f.FlagSet, &o.build)
	f.BoolVar(&o.validate, "validate", false, "check every answer by the Graph500 rules (answers over every vertex, no depth limit)")
	if err := f.parse(args); err != nil {
		return nil, err
	}
	if err := f.noArgs(); err != nil {
		return nil, err
	}
	o.json = f.json
	bad := func(format string, a ...any) error { return usagef("gpuplan bfs: "+format, a...) }
	var err error
	if o.rootIDs, err = parseIDs("--root-ids", *ids); err != nil {
		return nil, err
	}
	if o.targets, err = parseIDs("--targets", *targets); err != nil {
		return nil, err
	}
	switch {
	case o.graph == "":
		return nil, bad("--graph is required. Fix: name the graph, for example --graph kron:16 (run 'gpuplan bfs --help' for the specs)")
	case setFlags(f)["roots"] && len(o.rootIDs) > 0:
		return nil, bad("--roots and --root-ids exclude each other. Fix: give one of them")
	case o.roots < 1 || o.roots > bfsquery.MaxBatchRoots:
		return nil, bad("--roots %d is outside 1..%d. Fix: give the number of random roots, for example 16, or list them with --root-ids", o.roots, bfsquery.MaxBatchRoots)
	case len(o.rootIDs) > bfsquery.MaxBatchRoots:
		return nil, bad("--root-ids lists %d roots, more than %d. Fix: split the roots over several runs", len(o.rootIDs), bfsquery.MaxBatchRoots)
	case o.maxDepth < -1 || o.maxDepth > 1<<30:
		return nil, bad("--max-depth %d is outside -1..%d. Fix: give a depth of 0 or more, or -1 for no limit", o.maxDepth, 1<<30)
	case o.format != "auto" && o.format != "csv" && o.format != "binary":
		return nil, bad("--format %s is not csv, binary or auto. Fix: use one of the three, or leave the flag out to choose by -o's extension", quote.Echo(o.format))
	case o.format == "binary" && o.out == "":
		return nil, bad("--format binary needs -o FILE. Fix: name the file to write")
	case o.device < 0:
		return nil, bad("--device %d is negative. Fix: give a CUDA device ordinal, 0 for the first", o.device)
	case checkOutputFile("bfs", "-o", o.out) != nil:
		return nil, checkOutputFile("bfs", "-o", o.out)
	case o.build.check("bfs") != nil:
		return nil, o.build.check("bfs")
	case o.validate && (o.targets != nil || o.maxDepth != -1):
		return nil, bad("--validate checks answers over every vertex without a depth limit. Fix: drop --targets and --max-depth, or --validate")
	}
	return o, nil
}

// parseIDs reads a comma-separated list of vertex ids.
func parseIDs(flag, list string) ([]int32, error) {
	if list == "" {
		return nil, nil
	}
	var out []int32
	for _, s := range strings.Split(list, ",") {
		v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 32)
		if err != nil || v < 0 {
			return nil, usagef("gpuplan bfs: %s: %s is not a vertex id. Fix: list non-negative ids such as 0,17,42", flag, quote.Echo(s))
		}
		out = append(out, int32(v))
	}
	return out, nil
}

// runBFS parses "gpuplan bfs" and answers its queries.
func runBFS(e *env, args []string) error {
	o, err := parseBFSArgs(e, args)
	if err != nil {
		return err
	}
	t0 := time.Now()
	o.build.device, o.build.cpu = o.device, o.cpu
	g, directed, err := o.build.load(o.graph, o.seed, o.limits, func(f string, a ...any) { e.logf("bfs", f, a...) })
	if err != nil {
		return err
	}
	e.logf("bfs", "graph %s: %d vertices, %d edge entries%s (loaded in %s)", echoName(g.Name), g.NumVertices(), g.NumEdgeEntries(), map[bool]string{true: ", directed"}[directed], time.Since(t0).Round(time.Millisecond))
	roots := o.rootIDs
	if roots == nil {
		if roots, err = frontier.Roots(g, o.roots, o.seed); err != nil {
			return err
		}
	}
	qs := make([]bfsquery.Query, len(roots))
	for i, root := range roots {
		qs[i] = bfsquery.Query{Root: root, Targets: o.targets, MaxDepth: int32(o.maxDepth), Parents: o.parents}
	}
	if err := checkAnswerSize(o, g, directed, qs); err != nil {
		return err
	}
	r, closeGraph, where, err := openQueryGraph(g, directed, o.cpu, o.device)
	if err != nil {
		return err
	}
	defer closeGraph()
	t1 := time.Now()
	as, err := r.Batch(context.Background(), qs)
	if err != nil {
		return err
	}
	e.logf("bfs", "%d roots answered on %s in %s", len(roots), where, time.Since(t1).Round(time.Microsecond))
	if o.validate {
		if err := validateAnswers(e, g, directed, as); err != nil {
			return err
		}
	}
	set := &bfsquery.Answers{Vertices: g.NumVertices(), Targets: o.targets, Parents: o.parents, Answers: as}
	if o.json {
		return writeJSON(e.stdout, set)
	}
	return writeAnswers(e, o, set)
}

// validateAnswers checks every answer's levels (and parents) by the
// Graph500 rules.
func validateAnswers(e *env, g *frontier.CSR, directed bool, as []bfsquery.Answer) error {
	t0 := time.Now()
	in := g
	if directed {
		in = bfsquery.Transpose(g)
	}
	for _, a := range as {
		if err := validate.Levels(g, in, a.Root, a.Levels); err != nil {
			return fmt.Errorf("the answer from root %d: %w", a.Root, err)
		}
		if a.Parents == nil {
			continue
		}
		if err := validate.Parents(in, a.Root, a.Levels, a.Parents); err != nil {
			return fmt.Errorf("the parents from root %d: %w", a.Root, err)
		}
	}
	e.logf("bfs", "%d answers valid by the Graph500 rules (checked in %s)", len(as), time.Since(t0).Round(time.Microsecond))
	return nil
}

// openQueryGraph keeps g resident on the GPU, or answers on the CPU with
// --cpu and in a build without CUDA, as the server opens its graphs. It
// returns the graph, what closes it (and its executor) and where it
// answers.
func openQueryGraph(g *frontier.CSR, directed, cpu bool, device int) (*bfsquery.Graph, func() error, string, error) {
	res, err := residencyOpener([]servedGraph{{g, directed}}, cpu, device)(context.Background())
	if err != nil {
		return nil, nil, "", err
	}
	where := "the parallel CPU reference"
	switch {
	case res.Executor != nil:
		where = res.Executor.Device().Name
	case !cpu:
		where += " (a build without CUDA)"
	}
	return res.Graphs[0], res.Close, where, nil
}

// binaryOutput reports whether -o is written in the binary format:
// --format binary, or auto with a file name that does not end in .csv.
func (o *bfsOptions) binaryOutput() bool {
	return o.out != "" && (o.format == "binary" || (o.format == "auto" && !strings.EqualFold(filepath.Ext(o.out), ".csv")))
}

// writeAnswers writes the answers as the format and -o say.
func writeAnswers(e *env, o *bfsOptions, set *bfsquery.Answers) error {
	binary := o.binaryOutput()
	if o.out == "" {
		return set.WriteCSV(e.stdout)
	}
	write := set.WriteCSV
	if binary {
		write = set.WriteBinary
	}
	if err := writeFileAtomicFrom(o.out, write); err != nil {
		return err
	}
	e.logf("bfs", "wrote %d answers to %s (%s)", len(set.Answers), echoName(o.out), map[bool]string{true: "binary", false: "CSV"}[binary])
	return nil
}

// Host bytes of one answer entry (one root and one vertex or target): its
// level in the answer, as much again for its parent with --parents, and,
// with --json, its encoding, an indented JSON value (encoded, then
// indented) at most; CSV and the binary format are streamed to their
// output. On a GPU the traversal reads each entry's level (and parent)
// back into the host's view of its root, viewEntryBytes more.
const (
	entryBytes     = 4
	viewEntryBytes = 4
	entryJSONBytes = 48
)

// checkAnswerSize refuses, before any traversal runs, answers that standard
// output does not take (more than maxStdoutRows rows of CSV or JSON) or
// that the host memory does not hold with the traversal that computes them:
// the queries times the vertices (or targets) each, at entry bytes apiece,
// and traversalBytes.
func checkAnswerSize(o *bfsOptions, g *frontier.CSR, directed bool, qs []bfsquery.Query) error {
	roots, perRoot := len(qs), g.NumVertices()
	if o.targets != nil {
		perRoot = len(o.targets)
	}
	rows, err := checked.Mul(uint64(roots), uint64(max(perRoot, 0)), "answer rows")
	if err != nil {
		return fmt.Errorf("%w. Fix: ask for fewer roots or name --targets", err)
	}
	if (o.out == "" || o.json) && rows > maxStdoutRows {
		return usagef("gpuplan bfs: %d roots over %d vertices or targets each are %d rows, too many for standard output (at most %d). Fix: write them to a file with -o FILE (the binary format for large answers), or ask for fewer roots or --targets",
			roots, perRoot, rows, maxStdoutRows)
	}
	answers, err := checked.Mul(rows, answerEntryBytes(o), "answer bytes")
	if err != nil {
		return fmt.Errorf("%w. Fix: ask for fewer roots or name --targets", err)
	}
	traversal, err := traversalBytes(o, g, directed, qs, rows)
	if err != nil {
		return fmt.Errorf("%w. Fix: ask for fewer roots or name --targets, or ask for a smaller graph", err)
	}
	return checkAnswerMemory(roots, perRoot, answers, traversal)
}

// checkAnswerMemory refuses answers and traversal bytes that the host
// memory does not hold, with a tenth of it left for the runtime.
func checkAnswerMemory(roots, perRoot int, answers, traversal uint64) error {
	need, err := checked.Add(answers, traversal, "answer and traversal bytes")
	m := hostMemory()
	if err == nil && (m.Bytes == 0 || need <= m.Bytes-m.Bytes/10) {
		return nil
	}
	within := ""
	if m.Bound != "" {
		within = " within " + m.Bound
	}
	return fmt.Errorf("the answers of %d roots over %d vertices or targets each need about %d bytes of host memory and their traversal about %d more, %d in all, but %d are available%s. Fix: ask for fewer roots (--roots, --root-ids) or name --targets, and run the rest in further runs, or ask for a smaller graph",
		roots, perRoot, answers, traversal, checked.SaturatingAdd(answers, traversal), m.Bytes, within)
}

// traversalBytes is the host memory the traversal of qs holds beside the
// graph and the answers: on the CPU (--cpu, or a build without CUDA) the
// working set of bfsquery's CPU path (bfsquery.CPUWorkingSet); on a GPU
// the levels (and parents) read back, viewEntryBytes an answer entry.
func traversalBytes(o *bfsOptions, g *frontier.CSR, directed bool, qs []bfsquery.Query, rows uint64) (uint64, error) {
	if o.cpu || !buildHasCUDA {
		return bfsquery.CPUWorkingSet(bfsquery.CPUBatchOf(g, directed, qs))
	}
	per := uint64(viewEntryBytes)
	if o.parents {
		per *= 2
	}
	return checked.Mul(rows, per, "view bytes")
}

// answerEntryBytes is the host bytes of one answer entry as o writes it.
func answerEntryBytes(o *bfsOptions) uint64 {
	per, out := uint64(entryBytes), uint64(0)
	if o.json {
		out = entryJSONBytes
	}
	if o.parents {
		per, out = 2*per, 2*out
	}
	return per + out
}

// logf writes one progress line of a command to standard error.
func (e *env) logf(cmd, format string, a ...any) {
	fmt.Fprintf(e.stderr, cmd+": "+format+"\n", a...)
}
