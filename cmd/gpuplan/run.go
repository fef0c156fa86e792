package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gpuplan/gpuplan/evidence"
	"github.com/gpuplan/gpuplan/examples"
	"github.com/gpuplan/gpuplan/examples/synthetic"
	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/internal/input"
	"github.com/gpuplan/gpuplan/internal/quote"
	"github.com/gpuplan/gpuplan/internal/stats"
	"github.com/gpuplan/gpuplan/workloads/wavedag"
)

const runAbout = `Runs a wave DAG of your own kernels by its plans, in five execution arms
side by side, checks every result, and reports each arm's time.

The input is a workload file with a module (the waves' relocatable PTX,
compiled with nvcc -rdc=true -ptx against gpuplan_wave.h, which --header
writes), named buffers with their initial contents, the outputs to read
back, and a kernel per wave (see the README, and gpuplan plan for the
planning fields); or a generated DAG: gen:chain:WAVES:TILES (a chain of
near-empty waves) or gen:wide:WAVES:DEPS:SEED (a wide random DAG of tiny
waves). gpuplan links your PTX with code it generates, through the
driver's JIT linker: no compiler is needed at run time.

It prints the plan as gpuplan plan does, then runs the arms:

  streams    one launch per wave on a small pool of streams, the
             dependencies as events (what you would write by hand)
  graph      the DAG as one CUDA graph of kernel nodes and edges,
             instantiated once and replayed
  graph-pdl  the same with programmatic dependent launch edges (Hopper):
             a wave's prologue overlaps its producers
  barriers   one cooperative persistent launch running the barrier plan's
             groups, a grid barrier between groups
  waits      one persistent launch running the tile plan: each tile starts
             as soon as the producer tiles it reads are done, fused waves
             run as one task, no grid barrier

Every arm runs once untimed, its outputs checked and its counts (launches,
grid barriers, counter waits, tasks) held against its plan; then --samples
timed samples per arm, interleaved, each from the initial buffers and
checked outside the timed region: against the CPU reference where every
wave function has a Go reference (the examples), else against the first
run. The megakernel topology selection, fed with the measured profile,
picks an arm, and the report says whether it was the fastest. A
persistent run that stops making progress is aborted by a watchdog that
names the waves and the counters they waited on; a kernel fault names the
arm and the wave, which a child process finds with --find-fault (a
process that saw a sticky fault, an illegal address, cannot use CUDA
again), then exits 1.

--find-fault runs no benchmark: it runs the waves one at a time, each
waited for, and names the first that faults, as one line on standard
output: "fault-wave: N" (the wave's index) or "fault-wave: none". It exits
0 either way, and nonzero when the waves cannot be run.

--out DIR writes the outputs (one .bin file each, and outputs.json); -o
FILE the evidence CSV. A build without CUDA runs the examples on the CPU
emulation, with their Go references.`

// runOptions are the parsed flags of "gpuplan run".
type runOptions struct {
	spec       string
	bench      wavedag.BenchConfig
	arms       string
	out        string
	evidence   string
	dump       string
	emitPTX    string
	sourceRoot string
	device     int
	copyMiB    uint64
	json       bool
	progress   bool
	findFault  bool
}

func parseRunArgs(e *env, args []string) (*runOptions, bool, error) {
	f := e.newFlags("run", "run [FILE | gen:SPEC] [--arms LIST] [--samples N] [-o evidence.csv] [--out DIR] [flags]", runAbout)
	o := &runOptions{}
	header := f.Bool("header", false, "write gpuplan_wave.h, the wave ABI header, to standard output and exit")
	f.StringVar(&o.arms, "arms", "", "comma-separated arms: streams, graph, graph-pdl, barriers, waits (default: every arm the device runs)")
	f.IntVar(&o.bench.Samples, "samples", wavedag.DefaultSamples, "timed samples per arm")
	f.StringVar(&o.evidence, "o", "", "write the evidence CSV to `FILE`")
	f.StringVar(&o.out, "out", "", "write the outputs read back after the run to `DIR`")
	f.StringVar(&o.dump, "dump-workload", "", "write the workload's JSON (a generated one too) to `FILE` and run nothing")
	f.StringVar(&o.emitPTX, "emit-ptx", "", "write the workload's module and the PTX gpuplan links with it (launch wrappers, dispatch, runtime) to `DIR`/sm_80 and DIR/sm_90, and run nothing")
	f.DurationVar(&o.bench.Session.Watchdog, "watchdog", wavedag.DefaultWatchdog, "abort a persistent run whose block waits longer than `D` for one producer or barrier")
	grid := f.Uint("grid", 0, "persistent arms' grid in blocks (0: the co-resident grid the occupancy model sizes)")
	f.IntVar(&o.bench.Session.Streams, "streams", wavedag.DefaultStreams, "the streams arm's pool of streams")
	maxRegs := f.String("max-regs", "auto", "cap the persistent arms' registers per thread at `N` (16..255; 0: no cap), for more co-resident blocks; auto, on a GPU, tries no cap, 96, 64 and 48 and keeps the fastest")
	f.Uint64Var(&o.copyMiB, "copy-mib", 0, "also measure the copy-bandwidth ceiling with buffers of `N` MiB (0: skip it)")
	f.IntVar(&o.device, "device", 0, "CUDA device ordinal")
	f.BoolVar(&o.findFault, "find-fault", false, "run the waves one at a time, each waited for, and name the first that faults: print \"fault-wave: N\" or \"fault-wave: none\" and benchmark nothing")
	f.StringVar(&o.sourceRoot, "source-root", "", "module root whose measured code is fingerprinted (default: the nearest directory above the working directory with go.mod)")
	f.readsInput()
	if err := f.parse(args); err != nil {
		return nil, false, err
	}
	if *header {
		return o, true, f.noArgs()
	}
	if f.NArg() != 1 {
		return nil, false, usagef("gpuplan run: expected one workload file or gen:SPEC, got %d arguments. Fix: pass a workload JSON file with a module, for example examples/quickstart/quickstart.json", f.NArg())
	}
	o.spec, o.json, o.progress = f.Arg(0), f.json, isTerminal(e.stderr)
	o.bench.Session.Grid = uint32(min(*grid, 1<<31))
	if err := o.parseMaxRegs(*maxRegs); err != nil {
		return nil, false, err
	}
	return o, false, o.check(*grid)
}

// parseMaxRegs reads --max-regs: auto (the bench tries
// wavedag.DefaultRegisterCaps) or one cap.
func (o *runOptions) parseMaxRegs(v string) error {
	if v == "auto" {
		// The CPU emulation's times say nothing about registers.
		if executor.CUDAEnabled {
			o.bench.RegisterCaps = wavedag.DefaultRegisterCaps
		}
		return nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return usagef("gpuplan run: --max-regs %s is neither auto nor a count. Fix: use auto, 0 for no cap, or a count such as 64", quote.Text(v))
	}
	o.bench.Session.MaxRegisters = n
	return nil
}

// check refuses flag values out of range.
func (o *runOptions) check(grid uint) error {
	bad := func(format string, a ...any) error { return usagef("gpuplan run: "+format, a...) }
	switch {
	case o.bench.Samples < 1 || o.bench.Samples > 100000:
		return bad("--samples %d is outside 1..100000. Fix: use at least 10 so the gate can judge the run", o.bench.Samples)
	case o.bench.Session.Watchdog < time.Millisecond || o.bench.Session.Watchdog > time.Hour:
		return bad("--watchdog %s is outside 1ms..1h. Fix: give a duration such as 2s", o.bench.Session.Watchdog)
	case grid > 1<<20:
		return bad("--grid %d is above 1048576 blocks. Fix: leave it 0 for the co-resident grid", grid)
	case o.bench.Session.Streams < 1 || o.bench.Session.Streams > wavedag.MaxStreams:
		return bad("--streams %d is outside 1..%d", o.bench.Session.Streams, wavedag.MaxStreams)
	case o.copyMiB > 64<<10:
		return bad("--copy-mib %d is above 65536 (64 GiB)", o.copyMiB)
	case o.bench.Session.MaxRegisters != 0 && (o.bench.Session.MaxRegisters < executor.MinLinkRegisters || o.bench.Session.MaxRegisters > executor.MaxLinkRegisters):
		return bad("--max-regs %d is outside %d..%d. Fix: use 0 for no cap, or a count such as 64", o.bench.Session.MaxRegisters, executor.MinLinkRegisters, executor.MaxLinkRegisters)
	case o.device < 0:
		return bad("--device %d is negative", o.device)
	}
	if o.arms != "" {
		arms, err := wavedag.ParseArms(o.arms)
		if err != nil {
			return bad("--arms: %v", err)
		}
		o.bench.Arms = arms
	}
	o.bench.CopyBytes = o.copyMiB << 20
	return nil
}

// runRun parses "gpuplan run" and runs it.
func runRun(e *env, args []string) error {
	o, header, err := parseRunArgs(e, args)
	if err != nil || header {
		if header && err == nil {
			_, err = e.stdout.Write(wavedag.Header())
		}
		return err
	}
	src, err := loadRunProgram(e, o.spec)
	if err != nil {
		return err
	}
	switch {
	case o.dump != "":
		return writeFileAtomic(o.dump, src.json)
	case o.emitPTX != "":
		return emitRunPTX(o.emitPTX, src.p)
	case o.findFault:
		return runFindFault(e, o, src.p)
	}
	return runProgram(e, o, src)
}

// runSource is a loaded program with the bytes its fingerprint covers.
type runSource struct {
	p    *wavedag.Program
	json []byte
}

// loadRunProgram reads a workload file or generates gen:SPEC.
func loadRunProgram(e *env, spec string) (*runSource, error) {
	if rest, ok := strings.CutPrefix(spec, "gen:"); ok {
		data, err := synthetic.Spec(rest)
		if err != nil {
			return nil, usagef("gpuplan run: %s: %v", quote.Text(spec), err)
		}
		files := func(path string) ([]byte, error) {
			if path == synthetic.ModuleName {
				return synthetic.PTX(), nil
			}
			return nil, fmt.Errorf("a generated workload names only %s. Fix: this is a bug; report it", synthetic.ModuleName)
		}
		p, err := wavedag.Parse(spec, data, files, wavedag.LoadOptions{MaxInputBytes: e.inputLimit})
		return &runSource{p: p, json: data}, err
	}
	data, source, err := e.readInput(spec)
	if err != nil {
		return nil, err
	}
	dir := "."
	if spec != input.Stdin {
		dir = filepath.Dir(spec)
	}
	p, err := wavedag.Parse(source, data, wavedag.DirFiles(dir, max(e.inputLimit, input.DefaultGraphLimit)), wavedag.LoadOptions{})
	return &runSource{p: p, json: data}, err
}

// emitTargets are the targets --emit-ptx writes, each in a folder of its
// own: Ampere's, and Hopper's with programmatic dependent launch.
var emitTargets = []int{80, 90}

// emitRunPTX writes, for each target, the user's module and the PTX gpuplan
// generates for it: the launch arms' wrappers, the schedulers' dispatch and
// the scheduler runtime, the inputs of the two images Open links.
func emitRunPTX(dir string, p *wavedag.Program) error {
	for _, sm := range emitTargets {
		sub := filepath.Join(dir, fmt.Sprintf("sm_%d", sm))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			return fmt.Errorf("--emit-ptx %s: %v. Fix: pass a directory you can write", echoName(sub), osReason(err))
		}
		launch, dispatch := wavedag.GeneratedPTX(p, sm)
		for _, f := range []struct {
			name string
			data []byte
		}{{p.ModuleName, p.PTX}, {wavedag.LaunchInputName, launch}, {wavedag.DispatchInputName, dispatch}, {wavedag.RuntimeInputName, wavedag.RuntimePTX()}} {
			if err := writeFileAtomic(filepath.Join(sub, f.name), f.data); err != nil {
				return err
			}
		}
	}
	return nil
}

// runProgram prints the plan, runs the benchmark protocol and writes the
// results.
func runProgram(e *env, o *runOptions, src *runSource) error {
	p := src.p
	if !o.json {
		if err := p.Plan.WriteText(e.stdout); err != nil {
			return err
		}
	}
	fingerprint, err := runFingerprint(o.sourceRoot, src)
	if err != nil {
		return err
	}
	x, backend, err := openRunExecutor(o.device, p)
	if err != nil {
		return err
	}
	if refs, ok := referencesFor(p); ok {
		o.bench.Reference = refs
	}
	bar := &progressBar{w: e.stderr, on: o.progress}
	o.bench.Progress = bar.update
	o.bench.Log = func(format string, a ...any) { fmt.Fprintf(e.stderr, "run: "+format+"\n", a...) }
	e.benchLogf("%s on %s", p.Name(), backend)
	res, err := wavedag.Bench(x, p, o.bench)
	if err != nil {
		return runFailure(e, o, src, x, err)
	}
	defer x.Close()
	prov := benchProvenance(x, fingerprint)
	if err := writeRunOutputs(o, p, res, prov); err != nil {
		return err
	}
	if o.json {
		return writeJSON(e.stdout, res)
	}
	return writeRunTable(e.stdout, p, res, backend, prov, o.bench.Reference != nil)
}

// referencesFor returns the examples' Go references when every wave
// function of p has one.
func referencesFor(p *wavedag.Program) (map[string]wavedag.HostFunc, bool) {
	all := examples.Funcs()
	refs := map[string]wavedag.HostFunc{}
	for _, f := range p.Funcs {
		fn, ok := all[f]
		if !ok {
			return nil, false
		}
		refs[f] = fn
	}
	return refs, true
}

// missingReference names the first wave function of p without a Go
// reference.
func missingReference(p *wavedag.Program) string {
	all := examples.Funcs()
	for _, f := range p.Funcs {
		if _, ok := all[f]; !ok {
			return "wave function " + f
		}
	}
	return "no function"
}

// runFingerprint is the evidence fingerprint of a run: the wavedag
// workload's measured code, the workload file and the user's PTX.
func runFingerprint(sourceRoot string, src *runSource) (string, error) {
	fp, err := workloadFingerprint(sourceRoot, wavedagWorkload)
	if err != nil {
		return "", err
	}
	return evidence.RunFingerprint(fp, src.json, src.p.PTX), nil
}

// writeRunOutputs writes the evidence and the outputs.
func writeRunOutputs(o *runOptions, p *wavedag.Program, res *wavedag.BenchResult, prov evidence.Provenance) error {
	if o.evidence != "" {
		rows := runEvidenceRows(res, prov)
		if err := writeEvidenceFile(o.evidence, rows); err != nil {
			return err
		}
	}
	if o.out != "" {
		return wavedag.WriteOutputs(o.out, p, res.Outputs)
	}
	return nil
}

// runEvidenceRows turns the samples into evidence rows: the waves as the
// workload's nodes and iterations (a per-iteration claim is per wave), its
// dependencies as edges, the checked outputs' checksum on every arm's row.
func runEvidenceRows(res *wavedag.BenchResult, prov evidence.Provenance) []evidence.Sample {
	rows := make([]evidence.Sample, 0, len(res.Samples))
	now := time.Now().UTC()
	for _, s := range res.Samples {
		w := evidence.Workload{Name: evidenceName(res.Workload), Nodes: uint64(res.Waves), Edges: uint64(res.Dependencies), Iterations: uint64(res.Waves)}
		sum := res.Checksum
		if s.Arm == wavedag.ArmCopyCeiling {
			w.Name, sum = w.Name+"-copy", "copy"
		}
		pr := prov
		pr.Date = now
		s.Checksum = sum
		rows = append(rows, evidenceRow(pr, w, s))
	}
	return rows
}

// evidenceName maps a workload name into the evidence token alphabet.
func evidenceName(n string) string {
	b := []byte(n)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._-:+", c) >= 0) {
			b[i] = '-'
		}
	}
	if len(b) == 0 {
		return "run"
	}
	return string(b)
}

// writeRunTable prints each arm's times, speedups and counts.
func writeRunTable(w io.Writer, p *wavedag.Program, res *wavedag.BenchResult, backend string, prov evidence.Provenance, cpuRef bool) error {
	samples := 0
	for _, s := range res.Samples {
		if s.Arm == res.Arms[0].Arm {
			samples++
		}
	}
	fmt.Fprintf(w, "\nRun: %s on %s (driver %s), %d samples per arm, interleaved; persistent grid %d blocks (%d per SM, limited by %s)\n",
		quote.Text(res.Workload), quote.Text(backend), quote.Text(prov.DriverVersion), samples, res.Grid.GridBlocks, res.Grid.BlocksPerSM, res.Grid.Limit)
	writeTuning(w, res.Tuning)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  arm\twall (95% CI)\tdevice\tper wave\tper dependency\tvs streams\tvs graph\tplanned -> executed")
	for _, a := range res.Arms {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", a.Arm, intervalText(a.Wall),
			stats.FormatNs(a.Device.Center), stats.FormatNs(a.PerWaveNs), stats.FormatNs(a.PerDependencyNs), speedupText(a.OverStreams), speedupText(a.OverGraph), countsText(a))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	pk := res.Pick
	if pk.Arm != "" {
		verdict := "the pick was the fastest"
		if !pk.PickFastest {
			verdict = fmt.Sprintf("the pick was not the fastest: %s was", pk.Fastest)
		}
		fmt.Fprintf(w, "pick: %s (topology %s, %s; dispatch %s per wave, launch overhead %s, density %.3g); %s\n",
			pk.Arm, pk.Decision.Topology, pk.Decision.Reason(), stats.FormatNs(pk.Sample.DispatchCostNS), stats.FormatNs(pk.LaunchOverheadNs), pk.Sample.FrontierDensity, verdict)
	} else {
		fmt.Fprintf(w, "pick: none (the topology selection needs the streams and graph arms' profile); fastest: %s\n", pk.Fastest)
	}
	writeBandwidth(w, p, res)
	ref := "the first run (no Go reference for every wave function)"
	if cpuRef {
		ref = "the CPU reference (the wave functions' Go references)"
	}
	_, err := fmt.Fprintf(w, "outputs: every sample checked against %s; %s\n", ref, res.Checksum)
	return err
}

// writeBandwidth prints the bytes per second of a workload that states
// bytes_moved, against the copy ceiling when measured.
func writeBandwidth(w io.Writer, p *wavedag.Program, res *wavedag.BenchResult) {
	if p.Workload.BytesMoved == 0 {
		return
	}
	for _, a := range res.Arms {
		ceiling := ""
		if res.CopyBytesPerSecond > 0 {
			ceiling = fmt.Sprintf(", %.0f%% of the %.0f GB/s copy ceiling", 100*a.BytesPerSecond/res.CopyBytesPerSecond, res.CopyBytesPerSecond/1e9)
		}
		fmt.Fprintf(w, "bandwidth: %s moves %.0f GB/s%s\n", a.Arm, a.BytesPerSecond/1e9, ceiling)
	}
}

// intervalText is a median time with its 95% interval, or with a note
// that too few samples give none.
func intervalText(iv evidence.Interval) string {
	if math.IsInf(iv.Lo, 0) || math.IsInf(iv.Hi, 0) {
		return stats.FormatNs(iv.Center) + " (too few samples for a CI)"
	}
	return fmt.Sprintf("%s (%s to %s)", stats.FormatNs(iv.Center), stats.FormatNs(iv.Lo), stats.FormatNs(iv.Hi))
}

func speedupText(iv *evidence.Interval) string {
	if iv == nil {
		return "-"
	}
	return fmt.Sprintf("%.2fx", iv.Center)
}

// countsText is an arm's planned and executed counts.
func countsText(a wavedag.ArmSummary) string {
	switch wavedag.Arm(a.Arm) {
	case wavedag.ArmStreams:
		return fmt.Sprintf("%d launches -> %d", a.Planned.Launches, a.Executed.Launches)
	case wavedag.ArmGraph, wavedag.ArmGraphPDL:
		return fmt.Sprintf("%d graph launch -> %d", a.Planned.GraphLaunches, a.Executed.GraphLaunches)
	case wavedag.ArmBarriers:
		return fmt.Sprintf("%d grid barriers -> %d", a.Planned.Barriers, a.Executed.Barriers)
	}
	return fmt.Sprintf("%d counter waits -> %d, %d tasks -> %d", a.Planned.CounterWaits, a.Executed.CounterWaits, a.Planned.Tasks, a.Executed.Tasks)
}

// writeTuning prints the launch shapes the bench tried for the persistent
// arms and the ones it kept.
func writeTuning(w io.Writer, t *wavedag.Tuning) {
	if t == nil {
		return
	}
	parts := make([]string, len(t.Registers))
	for i, tr := range t.Registers {
		parts[i] = fmt.Sprintf("%s: %d registers, %d blocks, %s %s", regCapText(tr.Cap), tr.Registers, tr.GridBlocks, tr.Arm, stats.FormatNs(tr.WallNs))
	}
	fmt.Fprintf(w, "register cap: %s kept for the persistent arms (tried %s)\n", regCapText(t.ChosenCap), strings.Join(parts, "; "))
	if len(t.Grids) == 0 {
		return
	}
	parts = make([]string, len(t.Grids))
	for i, g := range t.Grids {
		parts[i] = fmt.Sprintf("%d blocks %s", g.GridBlocks, stats.FormatNs(g.WallNs))
	}
	fmt.Fprintf(w, "waits grid: %d blocks kept (tried %s)\n", t.ChosenGrid, strings.Join(parts, "; "))
}

// regCapText names a register cap.
func regCapText(c int) string {
	if c == 0 {
		return "none"
	}
	return strconv.Itoa(c)
}
