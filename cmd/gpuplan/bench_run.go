package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gpuplan/gpuplan/evidence"
	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/internal/quote"
	"github.com/gpuplan/gpuplan/internal/stats"
	"github.com/gpuplan/gpuplan/workloads/bfs"
)

// The workload packages the benchmarks measure, whose fingerprints their
// evidence records.
const (
	bfsWorkload     = "workloads/bfs"
	rebuildWorkload = "workloads/rebuild"
	wavedagWorkload = "workloads/wavedag"
)

// runBench parses "gpuplan bench frontier" or "gpuplan bench egraph" and
// runs it.
func runBench(e *env, args []string) error {
	if len(args) > 0 && args[0] == "egraph" {
		return runBenchEgraph(e, args[1:])
	}
	if len(args) > 0 && args[0] == "kron" {
		return runBenchKron(e, args[1:])
	}
	o, err := parseBenchArgs(e, args)
	if err != nil {
		return err
	}
	return runBenchOptions(e, o)
}

// runBenchOptions runs the benchmark the flags select: the partitioned BFS
// (--devices N > 1, --simulate-devices P; one process per GPU with
// --processes) or the single-GPU arms. A graph
// whose build does not fit the host's memory, or whose size wraps, is
// refused first, before the module is fingerprinted or a device opened.
func runBenchOptions(e *env, o *benchOptions) error {
	if err := o.build.checkHost(o.spec, quote.Text(o.graph), 1); err != nil {
		return err
	}
	if o.processes {
		return benchProcesses(e, o)
	}
	if o.partitioned() {
		return benchPartitioned(e, o)
	}
	return benchFrontier(e, o)
}

// benchLogf writes one progress line of a benchmark to stderr.
func (e *env) benchLogf(format string, a ...any) {
	fmt.Fprintf(e.stderr, "bench: "+format+"\n", a...)
}

// benchFrontier builds the graph, opens the executor, runs the benchmark
// protocol (bfs.Bench) and writes the evidence and the summary. A graph
// read from a file is read first, so that what is wrong with the file (or
// its roots) is named before anything about the device; a generated graph
// is built after the device is opened, so that a missing device is named
// before the build's time is spent.
func benchFrontier(e *env, o *benchOptions) error {
	logf := e.benchLogf
	var g *frontier.CSR
	var roots []int32
	var err error
	if o.spec.Kind == "file" {
		if g, roots, err = o.graphAndRoots(logf); err != nil {
			return err
		}
	}
	fingerprint, x, err := openBench(o.out, o.sourceRoot, bfsWorkload, o.open, o.device)
	if err != nil {
		return err
	}
	defer x.Close()
	if g == nil {
		if g, roots, err = o.graphAndRoots(logf); err != nil {
			return err
		}
	}
	bar := &progressBar{w: e.stderr, on: o.progress}
	o.bench.Progress, o.bench.Log = bar.update, logf
	res, err := bfs.Bench(x, g, roots, o.bench)
	if err != nil {
		return err
	}
	logPlans(logf, res)
	prov := benchProvenance(x, fingerprint)
	res.Summary.Device = fmt.Sprintf("%s, driver %s", res.Summary.Device, prov.DriverVersion)
	if o.metrics != "" {
		if err := e.writeMetrics(o.metrics, x.Telemetry()); err != nil {
			return err
		}
	}
	return writeBenchOutputs(e, o, res, prov, g)
}

// graphAndRoots builds the --graph and picks the roots (runBenchOptions
// has held the build to the host's memory).
func (o *benchOptions) graphAndRoots(logf func(string, ...any)) (*frontier.CSR, []int32, error) {
	t0 := time.Now()
	o.build.device = o.device
	g, err := o.build.build(o.spec, o.seed, o.limits, logf)
	if err != nil {
		return nil, nil, err
	}
	g.Name = o.spec.Name()
	logf("graph %s: %d vertices, %d edges (built in %s)", g.Name, g.NumVertices(), g.NumEdgeEntries()/2, time.Since(t0).Round(time.Millisecond))
	if len(o.rootIDs) == 0 {
		roots, err := frontier.Roots(g, o.roots, o.seed)
		return g, roots, err
	}
	roots := make([]int32, 0, len(o.rootIDs))
	for _, r := range o.rootIDs {
		if err := frontier.CheckRoot(g, r); err != nil {
			return nil, nil, err
		}
		roots = append(roots, int32(r))
	}
	return g, roots, nil
}

// benchProvenance is the provenance of every evidence row of the run.
func benchProvenance(x *executor.Executor, fingerprint string) evidence.Provenance {
	driver := executor.DriverVersion()
	if b, err := os.ReadFile("/proc/driver/nvidia/version"); err == nil {
		if v := driverVersionFromProc(string(b)); v != "" {
			driver = v
		}
	}
	if driver == "" {
		driver = "unknown"
	}
	dev := x.Device()
	version, commit := buildVersion()
	return evidence.Provenance{Version: version, Commit: commit, SourceFingerprint: fingerprint, DeviceName: dev.Name,
		ComputeMajor: uint32(dev.Major), ComputeMinor: uint32(dev.Minor), DriverVersion: driver}
}

// logPlans prints the plans the session ran by and the session checks.
func logPlans(logf func(string, ...any), res *bfs.BenchResult) {
	p := res.Plans
	logf("plans: memory %d of %d bytes (%d bps); queue %d items of %d bytes, %s in %d chunks of %d items; level grid %d x %d; megakernel grid %d x %d (%d blocks/SM by the model, %d by the driver); convergence %d steps, %s",
		p.Memory.RequiredBytes, p.Memory.BudgetBytes, p.Memory.MemoryPressureBPS, p.Queue.Queue.QueueCapacity, p.Queue.Queue.QueueBytes,
		p.Queue.Strategy, p.Queue.Chunks, p.Queue.ItemsPerChunk, p.LevelGrid.GridBlocks, p.LevelGrid.BlockThreads,
		p.MegakernelGrid.GridBlocks, p.MegakernelGrid.BlockThreads, p.MegakernelGrid.ModelBlocksPerSM, p.MegakernelGrid.DriverBlocksPerSM,
		p.Convergence.MaxDeviceIterations, p.Convergence.ReadbackPolicy)
	for _, s := range res.Sessions {
		pr, m := s.Check.Predicted, s.Check.Measured
		logf("session %s, predicted/measured: graph upload %d/%d B, resident %d/%d B, run uploads %d/%d B, run allocations %d/%d B, output readbacks %d/%d (%d/%d B)",
			s.Arm, pr.GraphUploadBytes, m.GraphUploadBytes, pr.ResidentBytes, m.ResidentBytes, pr.RunUploadBytes, m.RunUploadBytes,
			pr.RunAllocationBytes, m.RunAllocationBytes, pr.OutputReadbacks, m.OutputReadbacks, pr.OutputReadbackBytes, m.OutputReadbackBytes)
	}
}

// writeBenchOutputs writes the evidence CSV (with the summary and the plans
// as comment lines), the Markdown summary, and the table or JSON.
func writeBenchOutputs(e *env, o *benchOptions, res *bfs.BenchResult, prov evidence.Provenance, g *frontier.CSR) error {
	var table bytes.Buffer
	writeSummaryTable(&table, &res.Summary, res)
	return benchOutputs{out: o.out, summary: o.summary, json: o.json}.write(e, table.Bytes(), res,
		func() []evidence.Sample { return evidenceRows(res, prov, g) },
		func(w io.Writer) { writeComments(w, table.String(), res) })
}

// benchOutputs are where a benchmark's results go: the evidence CSV, the
// Markdown summary, and standard output as the table or JSON.
type benchOutputs struct {
	out, summary string
	json         bool
}

// write writes the evidence rows (with the comment lines after them), the
// summary table, and the table or the result as JSON.
func (b benchOutputs) write(e *env, table []byte, result any, rows func() []evidence.Sample, comments func(io.Writer)) error {
	if b.out != "" {
		r := rows()
		var buf bytes.Buffer
		if err := evidence.WriteSamples(&buf, r); err != nil {
			return err
		}
		comments(&buf)
		if err := os.WriteFile(b.out, buf.Bytes(), 0o644); err != nil {
			return writeError(b.out, err, "check the directory exists and is writable")
		}
		e.benchLogf("wrote %d samples to %s", len(r), b.out)
	}
	if b.summary != "" {
		if err := os.WriteFile(b.summary, table, 0o644); err != nil {
			return writeError(b.summary, err, "check the directory exists and is writable")
		}
	}
	if b.json {
		return writeJSON(e.stdout, result)
	}
	_, err := e.stdout.Write(table)
	return err
}

// workloadFingerprint returns the fingerprint of a workload package of the
// module at sourceRoot, or at the nearest directory above the working one
// with go.mod.
func workloadFingerprint(sourceRoot, workload string) (string, error) {
	root := sourceRoot
	if root == "" {
		var err error
		if root, err = findModuleRoot("."); err != nil {
			return "", err
		}
	}
	return evidence.WorkloadFingerprint(root, workload)
}

// openBench returns the evidence fingerprint of workload
// (evidenceFingerprint) and the executor open gives for device: the start
// of a benchmark command.
func openBench(out, sourceRoot, workload string, open func(int) (*executor.Executor, error), device int) (string, *executor.Executor, error) {
	fingerprint, err := evidenceFingerprint(out, sourceRoot, workload)
	if err != nil {
		return "", nil, err
	}
	x, err := open(device)
	return fingerprint, x, err
}

// evidenceFingerprint returns the source fingerprint the evidence CSV (-o)
// records: that of a workload package of the module at sourceRoot
// (--source-root), or at the nearest directory above the working one with
// go.mod. Without -o nothing records it, so it is not computed and a
// missing module root is no error.
func evidenceFingerprint(out, sourceRoot, workload string) (string, error) {
	if out == "" {
		return "", nil
	}
	root, err := sourceModuleRoot(sourceRoot)
	if err != nil {
		return "", err
	}
	name := "--source-root " + quote.Echo(root)
	if sourceRoot == "" {
		name = "the module root " + quote.Echo(root) + " (the nearest directory with go.mod from the working directory up; --source-root picks another)"
	}
	if info, err := os.Stat(filepath.Join(root, workload)); err != nil || !info.IsDir() {
		return "", fmt.Errorf("%s has no %s, the measured code whose fingerprint -o records. Fix: pass --source-root the gpuplan checkout (the directory holding go.mod and %s)", name, workload, workload)
	}
	fp, err := evidence.WorkloadFingerprint(root, workload)
	if err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	return fp, nil
}

// sourceModuleRoot returns --source-root, which must hold go.mod, or,
// without it, the nearest directory above the working one that does.
func sourceModuleRoot(sourceRoot string) (string, error) {
	if sourceRoot != "" {
		if _, err := os.Stat(filepath.Join(sourceRoot, "go.mod")); err != nil {
			return "", fmt.Errorf("--source-root %s holds no go.mod, so it is not the module root whose measured code -o fingerprints. Fix: pass --source-root the gpuplan checkout (the directory holding go.mod), or run from the checkout and leave it out", quote.Echo(sourceRoot))
		}
		return sourceRoot, nil
	}
	root, err := findModuleRoot(".")
	if err != nil {
		wd, _ := filepath.Abs(".")
		return "", fmt.Errorf("-o records the fingerprint of the measured code, and no directory from %s up holds go.mod, so the module root is unknown. Fix: run from the gpuplan checkout, or pass --source-root DIR (the directory holding go.mod)", quote.Echo(wd))
	}
	return root, nil
}

// evidenceRows turns the samples into evidence rows, after checking every
// arm's checksums against the reference.
func evidenceRows(res *bfs.BenchResult, prov evidence.Provenance, g *frontier.CSR) []evidence.Sample {
	w := evidence.Workload{Name: g.Name, Nodes: uint64(g.NumVertices()), Edges: uint64(g.NumEdgeEntries() / 2), Iterations: res.Summary.TotalLevels}
	rows := make([]evidence.Sample, len(res.Samples))
	now := time.Now().UTC()
	for i, s := range res.Samples {
		p := prov
		p.Date = now
		rows[i] = evidenceRow(p, w, s)
	}
	return rows
}

// writeComments appends the summary table, the check of every root (one
// "# check" line each), the roots' statistics (levels, reached vertices and
// traversed edges, from which a gate's per-level bound for a GTEPS rate is
// worked out) and the plans, as JSON, to an evidence CSV as comment lines.
func writeComments(w io.Writer, table string, res *bfs.BenchResult) {
	writeTableComments(w, table)
	writeJSONComments(w, checkComments(res.Checks)...)
	writeJSONComments(w, jsonComment{"roots", res.Summary.Roots}, jsonComment{"plans", res.Plans}, jsonComment{"arm-plan", res.ArmPlan}, jsonComment{"sessions", res.Sessions},
		jsonComment{"megakernel", res.Summary.Megakernel}, jsonComment{"megakernel-setting", res.Megakernel},
		jsonComment{"megakernel-tuning", res.Tuning}, jsonComment{"directions", res.Directions},
		jsonComment{"multi-source", res.MultiSource}, jsonComment{"peers", res.Peers})
}

// checkComments are the comment lines of the roots' checks, one a root:
// "# check {"root":R,"check":"reference"}", with the arm whose validated
// traversal is the reference under graph500.
func checkComments(checks []bfs.RootCheck) []jsonComment {
	out := make([]jsonComment, len(checks))
	for i, c := range checks {
		out[i] = jsonComment{"check", c}
	}
	return out
}

// writeTableComments writes a bench's summary table to an evidence CSV,
// each line as a comment line.
func writeTableComments(w io.Writer, table string) {
	for _, line := range strings.Split(strings.TrimRight(table, "\n"), "\n") {
		fmt.Fprintf(w, "# %s\n", line)
	}
}

// jsonComment is one named value an evidence CSV carries as a comment
// line of JSON.
type jsonComment struct {
	name string
	v    any
}

// writeJSONComments writes each value as "# name {json}", leaving out nil
// pointers and empty slices (reflectNil).
func writeJSONComments(w io.Writer, cs ...jsonComment) {
	for _, c := range cs {
		if reflectNil(c.v) {
			continue
		}
		if b, err := json.Marshal(c.v); err == nil {
			fmt.Fprintf(w, "# %s %s\n", c.name, b)
		}
	}
}

// writeSummaryTable writes the summary as a Markdown table, with the arm
// plan against the fastest arm.
func writeSummaryTable(w io.Writer, s *bfs.Summary, res *bfs.BenchResult) {
	fmt.Fprintf(w, "%s: %d vertices, %d edges, %d roots, %d levels in all, %d samples per arm, %s\n\n",
		s.Workload, s.Nodes, s.Edges, len(s.Roots), s.TotalLevels, s.Samples, s.Device)
	fmt.Fprintln(w, "| arm | median per root | per level | GTEPS (hmean) | speedup vs host-loop | modeled GB/s | of copy ceiling |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	for _, a := range s.Arms {
		sp, frac := "-", "-"
		if a.SpeedupVsHostLoop > 0 {
			sp = fmt.Sprintf("%.2fx", a.SpeedupVsHostLoop)
		}
		if a.CeilingFraction > 0 {
			frac = fmt.Sprintf("%.1f%%", 100*a.CeilingFraction)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %.3f | %s | %.1f | %s |\n", a.Arm, stats.FormatNs(a.MedianRootNs), stats.FormatNs(a.LevelNs), a.GTEPS, sp, a.ModeledGBps, frac)
	}
	if s.CopyGBps > 0 {
		fmt.Fprintf(w, "\ncopy ceiling (device-to-device, read + write): %.1f GB/s\n", s.CopyGBps)
	}
	if s.BarrierFloorNs > 0 {
		fmt.Fprintf(w, "megakernel barrier floor (a level barrier with no work): %s per level\n", stats.FormatNs(s.BarrierFloorNs))
	}
	if res != nil && res.ArmPlan.Arm != "" {
		fmt.Fprintf(w, "arm plan: %s (topology %s); fastest measured: %s\n", res.ArmPlan.Arm, res.ArmPlan.Decision.Topology, s.FastestArm)
	}
	if res != nil {
		writeBenchExtras(w, s, res)
	}
	for _, n := range s.Notes {
		fmt.Fprintf(w, "\nnote: %s\n", n)
	}
}
