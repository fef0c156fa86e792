package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gpuplan/gpuplan/egraph"
	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/internal/graphbudget"
	"github.com/gpuplan/gpuplan/internal/input"
	"github.com/gpuplan/gpuplan/internal/quote"
	"github.com/gpuplan/gpuplan/workloads/rebuild"
)

const egraphRebuildAbout = `Restore congruence in an e-graph (egg's rebuild) on the CPU and print
the classes before and after, the unions applied, the rounds and the time.

FILE is one of:
  an egg pre-rebuild dump  (first line "egg-prerebuild-dump v1", as written
                           by the egg-bench baseline: e-nodes and pending
                           unions; the unions are applied first)
  a JSON snapshot          (the input of 'gpuplan egraph': rows, children,
                           op_arities; no pending unions)
  gen:N[:SEED[:SHAPE]]     a generated e-graph of N e-nodes with planted
                           congruences; SHAPE is random (default), chain
                           (a long union chain), giant (one giant class),
                           cycle (deep cycles) or distinct (nothing merges)
  -                        standard input (a dump or a JSON snapshot)

The final partition names each class by its smallest class id. -o writes
it in egg's partition format (one class id per e-node line of the input),
so it compares directly with egg's NAME.post.txt; --check compares with
such a file up to renaming and fails unless the partitions are the same.

Methods, all with the same partition: worklist (the CPU reference: egg's
deferred rebuild with a hash-cons, a union-find and a worklist of parents
to repair); rounds (the data-parallel rounds the GPU runs while each round
unites at least one class per 64 e-nodes, at most 64 rounds, then the
worklist from their state, so that no input takes more than linear
passes); and exact-rounds (the exact specification of the GPU's rounds:
apply pending unions, canonicalise every e-node, group equal e-nodes,
unite their classes, until a round finds nothing; one round per link of
the longest chain of congruences, quadratic on long chains). --gpu runs
the exact rounds on the GPU (CUDA build), in the arm the megakernel
topology plan picks from a measured profile, or in --arm (the -incremental
arms run the incremental rounds, which touch only the e-nodes a round's
unions changed); the partition and the deduplicated e-node table are read
back from the device.

Example: gpuplan egraph rebuild math-1e6.pre.txt -o mine.post.txt --check math-1e6.post.txt`

// rebuildOptions are the parsed flags of "gpuplan egraph rebuild".
type rebuildOptions struct {
	file     string
	method   string
	out      string
	check    string
	maxBytes int64
	json     bool
	gpu      bool
	arm      string
	device   int
	// open opens the executor of --gpu.
	open func(device int) (*executor.Executor, error)
}

// rebuildCheck is the --check result.
type rebuildCheck struct {
	File          string `json:"file"`
	Same          bool   `json:"same"`
	Classes       int    `json:"classes"`
	DistinctNodes int    `json:"distinct_nodes"`
}

// rebuildOutput is the --json output of "gpuplan egraph rebuild".
type rebuildOutput struct {
	Input     string            `json:"input"`
	Format    string            `json:"format"`
	Generator *egraph.GenConfig `json:"generator,omitempty"`
	Ops       int               `json:"ops"`
	Method    string            `json:"method"`
	// MinMerges is the rounds method's threshold: a round uniting fewer
	// classes hands the rest to the worklist.
	MinMerges int `json:"min_merges,omitempty"`
	egraph.RebuildResult
	ReadMS         float64       `json:"read_ms"`
	RebuildMS      float64       `json:"rebuild_ms"`
	NodesPerSecond float64       `json:"nodes_per_second"`
	PartitionFile  string        `json:"partition_file,omitempty"`
	Check          *rebuildCheck `json:"check,omitempty"`
	GPU            *gpuRebuild   `json:"gpu,omitempty"`
}

// Input formats as the output names them.
const (
	formatDump      = egraph.DumpMagic
	formatSnapshot  = "json snapshot"
	formatGenerated = "generated"
)

func parseRebuildArgs(e *env, args []string) (*rebuildOptions, error) {
	f := e.newFlags("egraph rebuild", "egraph rebuild [--json] [--method worklist|rounds|exact-rounds | --gpu [--arm ARM]] [-o FILE] [--check FILE] FILE|gen:N|-", egraphRebuildAbout)
	o := &rebuildOptions{open: openBenchExecutor}
	f.StringVar(&o.method, "method", methodWorklist, "rebuild `METHOD`: worklist (the CPU reference), rounds (data-parallel rounds while they unite many classes, then the worklist) or exact-rounds (the GPU's rounds exactly)")
	f.StringVar(&o.out, "o", "", "write the partition in egg-partition v1 format to `FILE`")
	f.StringVar(&o.check, "check", "", "compare the partition with an egg-partition v1 `FILE` (or one class id per line); differing is an error")
	f.Int64Var(&o.maxBytes, "max-input-bytes", input.DefaultGraphLimit, "refuse an input (and a --check file) larger than `N` bytes")
	f.BoolVar(&o.gpu, "gpu", false, "rebuild on the GPU (CUDA build) instead of the CPU")
	f.StringVar(&o.arm, "arm", armPlanned, "with --gpu: the `ARM` to run: planned (the topology plan's choice), "+rebuildArmNames(rebuild.Arms(), ", "))
	f.IntVar(&o.device, "device", 0, "with --gpu: CUDA device ordinal")
	if err := f.parse(args); err != nil {
		return nil, err
	}
	if err := o.checkGPUFlags(setFlags(f)); err != nil {
		return nil, err
	}
	if f.NArg() != 1 {
		return nil, usagef("gpuplan egraph rebuild: want one input (a dump, a JSON snapshot, gen:N or -), got %d arguments. Fix: run 'gpuplan egraph rebuild --help' for the usage", f.NArg())
	}
	o.file, o.json = f.Arg(0), f.json
	switch {
	case rebuildMethod(o.method) == nil:
		return nil, usagef("gpuplan egraph rebuild: --method %q is unknown. Fix: use worklist, rounds or exact-rounds", o.method)
	case o.maxBytes <= 0:
		return nil, usagef("gpuplan egraph rebuild: --max-input-bytes %d is not positive. Fix: pass a size in bytes, such as 1073741824", o.maxBytes)
	}
	return o, nil
}

func runEgraphRebuild(e *env, args []string) error {
	o, err := parseRebuildArgs(e, args)
	if err != nil {
		return err
	}
	return egraphRebuild(e, o)
}

// egraphRebuild loads the input, rebuilds it, checks and writes the
// partition and prints the result.
func egraphRebuild(e *env, o *rebuildOptions) error {
	out := &rebuildOutput{Input: o.file, Method: o.method}
	start := time.Now()
	g, err := loadRebuildInput(e, o, out)
	if err != nil {
		return err
	}
	out.ReadMS = msSince(start)
	out.Ops = len(g.Ops)
	res, err := runRebuildMethod(o, g, out)
	if err != nil {
		return fmt.Errorf("%s: %w", o.file, err)
	}
	out.RebuildResult = *res
	if out.RebuildMS > 0 {
		out.NodesPerSecond = float64(res.Nodes) / (out.RebuildMS / 1e3)
	}
	classes := res.NodeClasses(g)
	if err := checkPartition(e, o, classes, res, out); err != nil {
		return err
	}
	if err := writePartitionFile(o.out, g, classes, res.DistinctNodes, out); err != nil {
		return err
	}
	if o.json {
		return writeJSON(e.stdout, out)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	writeRebuildText(tw, out)
	return tw.Flush()
}

// runRebuildMethod rebuilds g with --method on the CPU, or on the GPU, and
// records the rebuild's time.
func runRebuildMethod(o *rebuildOptions, g *egraph.Graph, out *rebuildOutput) (*egraph.RebuildResult, error) {
	if o.gpu {
		return rebuildOnGPU(o, g, out)
	}
	if o.method == methodRounds {
		out.MinMerges = egraph.HybridMinMerges(g.NodeCount())
	}
	start := time.Now()
	res, err := rebuildMethod(o.method)(g)
	out.RebuildMS = msSince(start)
	return res, err
}

// The CPU methods of --method.
const (
	methodWorklist    = "worklist"
	methodRounds      = "rounds"
	methodExactRounds = "exact-rounds"
)

// rebuildMethod returns the rebuild of a --method, or nil for an unknown
// one.
func rebuildMethod(name string) func(*egraph.Graph) (*egraph.RebuildResult, error) {
	switch name {
	case methodWorklist:
		return egraph.Rebuild
	case methodRounds:
		return egraph.RebuildHybrid
	case methodExactRounds:
		return egraph.RebuildRounds
	}
	return nil
}

func msSince(t time.Time) float64 { return float64(time.Since(t).Nanoseconds()) / 1e6 }

// loadRebuildInput reads a dump or a JSON snapshot, or generates gen:N.
func loadRebuildInput(e *env, o *rebuildOptions, out *rebuildOutput) (*egraph.Graph, error) {
	if strings.HasPrefix(o.file, "gen:") {
		cfg, err := egraph.ParseGenSpec(o.file)
		if err != nil {
			return nil, usagef("gpuplan egraph rebuild: %v", err)
		}
		need, err := graphbudget.EGraphBytes(cfg.Nodes)
		if err == nil {
			err = checkHostBytes(quote.Text(o.file), need)
		}
		if err != nil {
			return nil, err
		}
		out.Format, out.Generator = formatGenerated, &cfg
		return egraph.Generate(cfg)
	}
	f, err := input.Open(o.file, e.stdin, o.maxBytes)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<16)
	head, _ := br.Peek(1 << 16)
	switch {
	case isJSONStart(head):
		out.Format = formatSnapshot
		return readSnapshotGraph(br, o.file)
	case !egraph.IsDump(head) && len(bytes.TrimSpace(head)) > 0:
		return nil, fmt.Errorf("%s: neither an egg dump (its first line is not %q) nor a JSON snapshot (it does not start with '{'). Fix: pass a dump written by egg-bench, a snapshot as 'gpuplan egraph' reads, or gen:N", o.file, egraph.DumpMagic)
	}
	out.Format = formatDump
	var r io.Reader = br
	if f.Size > 0 {
		r = sizedReader{Reader: br, size: f.Size}
	}
	g, err := egraph.ReadDump(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", o.file, err)
	}
	return g, nil
}

// sizedReader tells ReadDump the file's size (egraph.Sized), so that it
// reserves the e-graph's arrays once.
type sizedReader struct {
	io.Reader
	size int64
}

// Size returns the file's size in bytes.
func (s sizedReader) Size() int64 { return s.size }

// isJSONStart reports whether the first non-space byte of head is '{'.
func isJSONStart(head []byte) bool {
	t := bytes.TrimLeft(head, " \t\r\n")
	return len(t) > 0 && t[0] == '{'
}

// readSnapshotGraph decodes a JSON snapshot strictly and converts it.
func readSnapshotGraph(r io.Reader, name string) (*egraph.Graph, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	source := name
	if name == input.Stdin {
		source = "<stdin>"
	}
	var in egraphInput
	if err := decodeJSONInput(source, data, &in); err != nil {
		return nil, err
	}
	g, err := egraph.FromSnapshot(&egraph.Snapshot{Rows: in.Rows, Children: in.Children, OpArities: in.OpArities})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	return g, nil
}

// checkPartition compares the partition with --check's file.
func checkPartition(e *env, o *rebuildOptions, classes []int32, res *egraph.RebuildResult, out *rebuildOutput) error {
	if o.check == "" {
		return nil
	}
	f, err := input.Open(o.check, e.stdin, o.maxBytes)
	if err != nil {
		return err
	}
	defer f.Close()
	want, err := egraph.ReadPartition(f)
	if err != nil {
		return fmt.Errorf("%s: %w", o.check, err)
	}
	if err := egraph.ComparePartitions(classes, want.Classes); err != nil {
		return fmt.Errorf("--check %s: %w", o.check, err)
	}
	if want.DistinctNodes >= 0 && want.DistinctNodes != res.DistinctNodes {
		return fmt.Errorf("--check %s: the file records %d distinct canonical e-nodes but the rebuild has %d. Fix: check the rebuild against the reference", o.check, want.DistinctNodes, res.DistinctNodes)
	}
	out.Check = &rebuildCheck{File: o.check, Same: true, Classes: want.ClassCount, DistinctNodes: want.DistinctNodes}
	return nil
}

// writePartitionFile writes -o: the partition with the input's class ids.
func writePartitionFile(path string, g *egraph.Graph, classes []int32, distinct int, out *rebuildOutput) error {
	if path == "" {
		return nil
	}
	named := classes
	if g.ClassIDs != nil {
		if !fitsInt32(g.ClassIDs) {
			return fmt.Errorf("-o %s: e-class ids above 2147483647 cannot be written in egg's partition format. Fix: renumber the snapshot's eclass_id values", path)
		}
		named = make([]int32, len(classes))
		for i, c := range classes {
			named[i] = int32(g.SourceClassID(c))
		}
	}
	var buf bytes.Buffer
	how := "--method " + out.Method
	if out.GPU != nil {
		how = "--gpu --arm " + out.GPU.Arm
	}
	if err := egraph.WritePartition(&buf, named, distinct, "written by gpuplan egraph rebuild "+how+" from "+out.Input); err != nil {
		return err
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("-o: %w", writeError(path, err, "check that the folder exists and is writable"))
	}
	out.PartitionFile = path
	return nil
}

func fitsInt32(ids []uint32) bool {
	return len(ids) == 0 || ids[len(ids)-1] <= 1<<31-1
}

func writeRebuildText(tw *tabwriter.Writer, o *rebuildOutput) {
	r := o.RebuildResult
	switch {
	case o.Generator != nil:
		fmt.Fprintf(tw, "input\t%s (generated, shape %s, seed %d)\n", o.Input, o.Generator.Shape, o.Generator.Seed)
	default:
		fmt.Fprintf(tw, "input\t%s (%s)\n", o.Input, o.Format)
	}
	fmt.Fprintf(tw, "\t%d e-nodes, %d class ids, %d pending union pairs, %d ops; read in %.2f ms\n", r.Nodes, r.ClassIDs, r.UnionPairs, o.Ops, o.ReadMS)
	fmt.Fprintf(tw, "classes\t%d before, %d after the pending unions, %d after the rebuild\n", r.ClassIDs, r.ClassesAfterUnions, r.Classes)
	fmt.Fprintf(tw, "unions\t%d pending pairs applied (%d merged), %d congruence merges\n", r.UnionPairs, r.UnionMerges, r.CongruenceMerges)
	fmt.Fprintf(tw, "e-nodes\t%d in, %d distinct after the rebuild\n", r.Nodes, r.DistinctNodes)
	fmt.Fprintf(tw, "rounds\t%d (%s)\n", r.Rounds, roundsMeaning(o))
	if o.GPU != nil {
		writeGPUTime(tw, o)
	} else {
		fmt.Fprintf(tw, "time\t%.3f ms rebuild on the CPU (%s), %.1f M e-nodes/s\n", o.RebuildMS, o.Method, o.NodesPerSecond/1e6)
	}
	if o.PartitionFile != "" {
		fmt.Fprintf(tw, "partition\twritten to %s (%s)\n", o.PartitionFile, egraph.PartitionMagic)
	}
	if c := o.Check; c != nil {
		fmt.Fprintf(tw, "check\tsame partition as %s up to renaming (%d classes)\n", c.File, c.Classes)
	}
}

// roundsMeaning says what the rounds line counts for the output's method.
func roundsMeaning(o *rebuildOutput) string {
	r := o.RebuildResult
	switch {
	case o.Method == methodGPU:
		return "data-parallel rounds on the GPU, the last finding nothing new"
	case o.Method == methodExactRounds:
		return "data-parallel rounds, the last finding nothing new"
	case o.Method == methodRounds && r.WorklistFinished:
		return fmt.Sprintf("%d data-parallel, the last uniting fewer than %d classes, then %d worklist generations of repairs",
			r.DataParallelRounds, o.MinMerges, r.Rounds-r.DataParallelRounds)
	case o.Method == methodRounds:
		return fmt.Sprintf("%d data-parallel, the last finding nothing new; the worklist was not needed", r.DataParallelRounds)
	}
	return "worklist: the first pass over every e-node plus one per generation of repairs"
}
