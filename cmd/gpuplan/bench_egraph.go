package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gpuplan/gpuplan/egraph"
	"github.com/gpuplan/gpuplan/evidence"
	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/internal/graphbudget"
	"github.com/gpuplan/gpuplan/internal/input"
	"github.com/gpuplan/gpuplan/internal/quote"
	"github.com/gpuplan/gpuplan/internal/stats"
	"github.com/gpuplan/gpuplan/workloads/rebuild"
)

const benchEgraphAbout = `Measure the e-graph rebuild (congruence closure, egg's rebuild()) on the
GPU in six arms side by side, against the Go reference and egg itself.

The e-graph stays resident on the GPU (its device image and pending unions,
uploaded once) and is rebuilt with every arm:

  host-loop    one launch per stage of a round (each wave of its pass),
               a 4-byte readback of the pairs the round emitted and a sync
  device-loop  the launch fusion plan's groups, rounds enqueued back to
               back, the done flag read every --check-every rounds
  persistent   one cooperative launch for all rounds, a grid barrier after
               each fusion group, the changed flag read once at the end

and the same three drivers of the incremental rounds, where a round after
the first touches only the e-nodes its unions changed, in a hash table
kept across rounds (four phases a round):

  host-loop-incremental    a launch per phase, the changed flag read
                           every round
  device-loop-incremental  the phases' launches, rounds back to back, the
                           done flag read every --check-every rounds
  persistent-incremental   one cooperative launch, a grid barrier after
                           each phase

The incremental arms run on a second session beside the first (its own
copy of the e-graph and the incremental buffers), planned against the
memory the first leaves; --arms with only one family opens one session.

A round applies the pending union pairs (lock-free union-find, smallest id
wins), rewrites every e-node's children to their roots, groups equal
e-nodes in a hash table and emits the pairs of classes to unite next; the
round that emits nothing is the last. The session runs by its plans (the
device image, waves, memory, launch fusion, launch shapes, convergence);
the megakernel topology selection, fed with a measured profile of each
family of rounds, picks how each is driven, the family whose profiled
host-loop rebuild is the cheaper gives the arm it would run, and the bench
notes whether it was the fastest.

Arms are interleaved sample by sample; every sample's partition is read
back (vyre's readback format) and checked against the Go reference outside
the timed region. The Go reference (go-reference) is timed too, and
--peer-egg runs egg-bench on the same dump (its SHA-256 checked) and
records each run's T2 (the dump's unions plus rebuild()) as the external
arm egg, with T1 (rebuild() alone) beside it. Every sample is written in
gpuplan's evidence CSV format (-o); the persistent kernel's round floor
goes under the workload NAME-round-floor.

Inputs: gen:N[:SEED[:SHAPE]] (a generated e-graph: random, chain, giant,
cycle, distinct) or file:PATH (an egg pre-rebuild dump or a JSON snapshot).

Needs a build with CUDA support (make build-cuda).`

// benchEgraphOptions are the parsed flags of "gpuplan bench egraph".
type benchEgraphOptions struct {
	spec       string
	bench      rebuild.BenchConfig
	peerPath   string
	peerArgs   string
	peerN      int
	out        string
	summary    string
	metrics    string
	device     int
	sourceRoot string
	maxBytes   int64
	json       bool
	progress   bool
	open       func(device int) (*executor.Executor, error)
}

func parseBenchEgraphArgs(e *env, args []string) (*benchEgraphOptions, error) {
	f := e.newFlags("bench egraph", "bench egraph --egraph gen:N|file:PATH [--samples N] [--peer-egg PATH] [-o FILE.csv] [flags]", benchEgraphAbout)
	o := &benchEgraphOptions{open: openBenchExecutor}
	sc := &o.bench.Session
	f.StringVar(&o.spec, "egraph", "", "the e-graph: gen:N[:SEED[:SHAPE]] or file:PATH (an egg dump or a JSON snapshot)")
	f.IntVar(&o.bench.Samples, "samples", rebuild.DefaultSamples, "timed samples per GPU arm")
	f.IntVar(&o.bench.CPUSamples, "cpu-samples", rebuild.DefaultCPUSamples, "timed samples of the Go reference (0 skips it)")
	arms := f.String("arms", rebuildArmNames(rebuild.DefaultArms(), ","), "comma-separated GPU arms: "+rebuildArmNames(rebuild.Arms(), ", "))
	f.IntVar(&sc.CheckEvery, "check-every", rebuild.DefaultCheckEvery, "device-loop: rounds enqueued between host checks of the done flag")
	f.IntVar(&sc.Threads, "threads", rebuild.DefaultThreads, "block size of the host-loop and device-loop launches")
	f.IntVar(&sc.PersistentThreads, "persistent-threads", rebuild.DefaultPersistentThreads, "persistent: threads per block, a multiple of 32 up to 1024")
	f.IntVar(&sc.PersistentBlocksPerSM, "persistent-blocks-per-sm", 0, "persistent: at most `N` co-resident blocks per SM (0: one)")
	f.IntVar(&o.bench.FloorRounds, "floor-rounds", rebuild.DefaultFloorRounds, "persistent round floor: rounds per timed launch (0 skips it)")
	f.BoolVar(&o.bench.Structural, "structural", true, "run vyre's pairwise structural-equivalence path on the GPU and check it against the CPU")
	f.StringVar(&o.peerPath, "peer-egg", "", "run the egg-bench binary at `PATH` on the same dump (file inputs only)")
	f.StringVar(&o.peerArgs, "peer-args", "", "egg-bench options that reproduce the dump, quoted as in a shell (default: from the dump's header)")
	f.IntVar(&o.peerN, "peer-samples", rebuild.DefaultPeerSamples, "runs of egg-bench, one repetition each")
	f.StringVar(&o.out, "o", "", "write the evidence CSV to `FILE`")
	f.StringVar(&o.summary, "summary", "", "also write the summary table as Markdown to `FILE`")
	f.StringVar(&o.metrics, "metrics", "", "write the executor's telemetry after the run as Prometheus text exposition to `FILE` (- for standard output)")
	f.IntVar(&o.device, "device", 0, "CUDA device ordinal")
	f.StringVar(&o.sourceRoot, "source-root", "", "with -o: the module root whose measured code the evidence fingerprints (default: the nearest directory above the working directory with go.mod)")
	f.Int64Var(&o.maxBytes, "max-input-bytes", input.DefaultGraphLimit, "refuse an input file larger than `N` bytes")
	if err := f.parse(args); err != nil {
		return nil, err
	}
	if err := f.noArgs(); err != nil {
		return nil, err
	}
	o.json, o.progress = f.json, isTerminal(e.stderr)
	if err := o.check(*arms); err != nil {
		return nil, err
	}
	if err := o.checkPeerFlags(setFlags(f)); err != nil {
		return nil, err
	}
	return o, nil
}

// checkPeerFlags refuses the egg peer's flags without --peer-egg, which
// would drop them, and a --peer-args a shell could not split.
func (o *benchEgraphOptions) checkPeerFlags(set map[string]bool) error {
	if o.peerPath == "" && (set["peer-args"] || set["peer-samples"]) {
		return usagef("gpuplan bench egraph: --peer-args and --peer-samples need --peer-egg PATH. Fix: add --peer-egg with the path of egg-bench, or drop them")
	}
	if o.peerArgs == "" {
		return nil
	}
	_, err := splitShellWords(o.peerArgs)
	return err
}

// check refuses flag values out of range and parses --arms.
func (o *benchEgraphOptions) check(arms string) error {
	sc := o.bench.Session
	bad := func(format string, a ...any) error { return usagef("gpuplan bench egraph: "+format, a...) }
	switch {
	case o.spec == "":
		return bad("--egraph is required. Fix: add the input, for example --egraph gen:1e6 or --egraph file:math-1e6.pre.txt (run 'gpuplan bench egraph --help' for usage)")
	case !strings.HasPrefix(o.spec, "gen:") && !strings.HasPrefix(o.spec, "file:"):
		return bad("--egraph %s is neither gen:N[:SEED[:SHAPE]] nor file:PATH. Fix: generate one with gen:N, for example gen:1e6, or read an egg dump or JSON snapshot with file:PATH", quote.Echo(o.spec))
	case o.bench.Samples < 1 || o.bench.Samples > 100000:
		return bad("--samples %d is outside 1..100000. Fix: use at least 10 so the gate can judge the run", o.bench.Samples)
	case o.bench.CPUSamples < 0 || o.bench.CPUSamples > 100000:
		return bad("--cpu-samples %d is outside 0..100000. Fix: use 0 to skip the Go reference, or a count such as %d (the default)", o.bench.CPUSamples, rebuild.DefaultCPUSamples)
	case sc.CheckEvery < 1 || sc.CheckEvery > 1<<16:
		return bad("--check-every %d is outside 1..65536. Fix: give the rounds between host checks, for example %d (the default)", sc.CheckEvery, rebuild.DefaultCheckEvery)
	case sc.Threads < 32 || sc.Threads > 1024 || sc.Threads%32 != 0, sc.PersistentThreads < 32 || sc.PersistentThreads > 1024 || sc.PersistentThreads%32 != 0:
		return bad("--threads %d or --persistent-threads %d is not a multiple of 32 from 32 to 1024. Fix: use 32, 64, ... 1024 for both, for example %d and %d (the defaults)", sc.Threads, sc.PersistentThreads, rebuild.DefaultThreads, rebuild.DefaultPersistentThreads)
	case sc.PersistentBlocksPerSM < 0 || sc.PersistentBlocksPerSM > 64:
		return bad("--persistent-blocks-per-sm %d is outside 0..64. Fix: use 0 for the default (one), or 1 to 64", sc.PersistentBlocksPerSM)
	case o.bench.FloorRounds < 0 || o.bench.FloorRounds > 1<<20:
		return bad("--floor-rounds %d is outside 0..1048576. Fix: use 0 to skip the round floor, or a count such as %d (the default)", o.bench.FloorRounds, rebuild.DefaultFloorRounds)
	case o.peerN < 1 || o.peerN > 1000:
		return bad("--peer-samples %d is outside 1..1000. Fix: give the runs of egg-bench, for example %d (the default)", o.peerN, rebuild.DefaultPeerSamples)
	case o.peerPath != "" && strings.HasPrefix(o.spec, "gen:"):
		return bad("--peer-egg runs egg on an egg dump, and %s is generated. Fix: pass --egraph file:PATH with a dump egg-bench wrote", quote.Echo(o.spec))
	case o.maxBytes <= 0:
		return bad("--max-input-bytes %d is not positive. Fix: give the largest input size to accept in bytes, for example %d (the default)", o.maxBytes, input.DefaultGraphLimit)
	case o.device < 0:
		return bad("--device %d is negative. Fix: give a CUDA device ordinal, 0 for the first GPU", o.device)
	}
	if err := checkEgraphSpec(o.spec); err != nil {
		return err
	}
	return o.parseArms(arms)
}

// checkEgraphSpec parses a gen:... --egraph and refuses a file: one that
// names no file, before anything is loaded.
func checkEgraphSpec(spec string) error {
	if spec == "file:" {
		return usagef("gpuplan bench egraph: --egraph file: names no file. Fix: give the path of an egg dump or a JSON snapshot, for example --egraph file:math-1e6.pre.txt")
	}
	if !strings.HasPrefix(spec, "gen:") {
		return nil
	}
	if _, err := egraph.ParseGenSpec(spec); err != nil {
		return usagef("gpuplan bench egraph: --egraph: %v", err)
	}
	return nil
}

// parseArms reads --arms.
func (o *benchEgraphOptions) parseArms(arms string) error {
	o.bench.Arms = nil
	for _, a := range strings.Split(arms, ",") {
		arm, err := rebuild.ParseArm(strings.TrimSpace(a))
		if err != nil {
			return usagef("gpuplan bench egraph: --arms: unknown arm %s. Fix: use one or more of %s", quote.Echo(strings.TrimSpace(a)), rebuildArmNames(rebuild.Arms(), ", "))
		}
		if slices.Contains(o.bench.Arms, arm) {
			return usagef("gpuplan bench egraph: --arms: %s is listed twice. Fix: list each arm once", quote.Echo(string(arm)))
		}
		o.bench.Arms = append(o.bench.Arms, arm)
	}
	return nil
}

// rebuildArmNames joins the names of rebuild arms with sep.
func rebuildArmNames(arms []rebuild.Arm, sep string) string {
	names := make([]string, len(arms))
	for i, a := range arms {
		names[i] = string(a)
	}
	return strings.Join(names, sep)
}

// runBenchEgraph parses "gpuplan bench egraph" and runs it.
func runBenchEgraph(e *env, args []string) error {
	o, err := parseBenchEgraphArgs(e, args)
	if err != nil {
		return err
	}
	return benchEgraph(e, o)
}

// benchEgraph loads the input, opens the executor, runs the benchmark
// protocol (rebuild.Bench) and writes the evidence and the summary.
func benchEgraph(e *env, o *benchEgraphOptions) error {
	logf := e.benchLogf
	fingerprint, err := evidenceFingerprint(o.out, o.sourceRoot, rebuildWorkload)
	if err != nil {
		return err
	}
	in, err := loadBenchEgraph(e, o.spec, o.maxBytes)
	if err != nil {
		return err
	}
	logf("e-graph %s: %d e-nodes, %d class ids, %d pending unions (%s, sha256 %s, loaded in %s)", in.name, in.g.NodeCount(), in.g.ClassCount,
		in.g.UnionCount(), in.format, in.sha256, in.took.Round(time.Millisecond))
	if err := o.peerConfig(in); err != nil {
		return err
	}
	x, err := o.open(o.device)
	if err != nil {
		return err
	}
	defer x.Close()
	bar := &progressBar{w: e.stderr, on: o.progress}
	o.bench.Progress, o.bench.Log, o.bench.InputSHA256 = bar.update, logf, in.sha256
	res, err := rebuild.Bench(x, in.g, in.name, o.bench)
	if err != nil {
		return err
	}
	prov := benchProvenance(x, fingerprint)
	res.Summary.Device = fmt.Sprintf("%s, driver %s", res.Summary.Device, prov.DriverVersion)
	if o.metrics != "" {
		if err := e.writeMetrics(o.metrics, x.Telemetry()); err != nil {
			return err
		}
	}
	return writeBenchEgraphOutputs(e, o, res, prov, in)
}

// benchInput is a loaded --egraph.
type benchInput struct {
	g      *egraph.Graph
	name   string
	format string
	sha256 string
	head   []byte
	took   time.Duration
}

// loadBenchEgraph generates gen:... or reads file:PATH (a dump or a JSON
// snapshot), and hashes the input: the file's bytes, or the dump of a
// generated e-graph.
func loadBenchEgraph(e *env, spec string, limit int64) (*benchInput, error) {
	t0 := time.Now()
	if strings.HasPrefix(spec, "gen:") {
		cfg, err := egraph.ParseGenSpec(spec)
		if err != nil {
			return nil, usagef("gpuplan bench egraph: --egraph: %v", err)
		}
		need, err := graphbudget.EGraphBytes(cfg.Nodes)
		if err == nil {
			err = checkHostBytes("--egraph "+quote.Text(spec), need)
		}
		if err != nil {
			return nil, err
		}
		g, err := egraph.Generate(cfg)
		if err != nil {
			return nil, err
		}
		h := sha256.New()
		if err := egraph.WriteDump(h, g); err != nil {
			return nil, err
		}
		name := fmt.Sprintf("egraph-gen-%d-%d-%s", cfg.Nodes, cfg.Seed, cfg.Shape)
		return &benchInput{g: g, name: name, format: formatGenerated, sha256: hex.EncodeToString(h.Sum(nil)), took: time.Since(t0)}, nil
	}
	in, err := readBenchFile(e, strings.TrimPrefix(spec, "file:"), limit)
	if in != nil {
		in.took = time.Since(t0)
	}
	return in, err
}

// readBenchFile reads a dump or a JSON snapshot, hashing every byte.
func readBenchFile(e *env, path string, limit int64) (*benchInput, error) {
	f, err := input.Open(path, e.stdin, limit)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h := sha256.New()
	br := bufio.NewReaderSize(io.TeeReader(f, h), 1<<16)
	head, _ := br.Peek(1 << 16)
	in := &benchInput{name: workloadName(path), head: append([]byte(nil), head...)}
	switch {
	case isJSONStart(head):
		in.format = formatSnapshot
		in.g, err = readSnapshotGraph(br, path)
	case egraph.IsDump(head):
		in.format = formatDump
		var r io.Reader = br
		if f.Size > 0 {
			r = sizedReader{Reader: br, size: f.Size}
		}
		if in.g, err = egraph.ReadDump(r); err != nil {
			err = fmt.Errorf("%s: %w", path, err)
		}
	default:
		return nil, fmt.Errorf("%s: neither an egg dump (its first line is not %q) nor a JSON snapshot. Fix: pass a dump written by egg-bench, a snapshot as 'gpuplan egraph' reads, or gen:N", path, egraph.DumpMagic)
	}
	if err != nil {
		return nil, err
	}
	if _, err := io.Copy(io.Discard, br); err != nil {
		return nil, err
	}
	in.sha256 = hex.EncodeToString(h.Sum(nil))
	return in, nil
}

// workloadName is an evidence workload name for a file: its base name
// without the .txt, .json and .pre suffixes, every character outside the
// evidence token alphabet replaced by '-'.
func workloadName(path string) string {
	n := filepath.Base(path)
	for _, suf := range []string{".txt", ".json", ".pre"} {
		n = strings.TrimSuffix(n, suf)
	}
	b := []byte(n)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._-:+", c) >= 0) {
			b[i] = '-'
		}
	}
	if len(b) == 0 {
		return "egraph"
	}
	return string(b)
}

// peerConfig builds the egg peer's configuration for a dump.
func (o *benchEgraphOptions) peerConfig(in *benchInput) error {
	if o.peerPath == "" {
		return nil
	}
	if in.format != formatDump {
		return usagef("gpuplan bench egraph: --peer-egg needs an egg dump, and %s is a %s. Fix: pass a dump egg-bench wrote", quote.Echo(in.name), in.format)
	}
	p := &rebuild.PeerConfig{Path: o.peerPath, Samples: o.peerN}
	var err error
	if o.peerArgs != "" {
		p.Args, err = splitShellWords(o.peerArgs)
	} else {
		p.Args, err = rebuild.EggArgsFromDump(in.head)
	}
	if err != nil {
		return err
	}
	o.bench.Peer = p
	return nil
}

// splitShellWords splits s into words as a shell does for plain words and
// single- or double-quoted strings (no escapes or expansions). It works on
// bytes, so that any byte other than the quotes and blanks is kept as is.
func splitShellWords(s string) ([]string, error) {
	var out []string
	var cur []byte
	inWord := false
	var open byte
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case open != 0 && c == open:
			open = 0
		case open != 0:
			cur = append(cur, c)
		case c == '\'' || c == '"':
			open, inWord = c, true
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				out = append(out, string(cur))
				cur, inWord = cur[:0], false
			}
		default:
			cur, inWord = append(cur, c), true
		}
	}
	if open != 0 {
		return nil, usagef("gpuplan bench egraph: --peer-args %s has an unclosed %c quote. Fix: close the quote, as a shell would need", quote.Echo(s), open)
	}
	if inWord {
		out = append(out, string(cur))
	}
	return out, nil
}

// writeBenchEgraphOutputs writes the evidence CSV (with the summary, the
// plans and the peer's times as comment lines), the Markdown summary, and
// the table or JSON.
func writeBenchEgraphOutputs(e *env, o *benchEgraphOptions, res *rebuild.BenchResult, prov evidence.Provenance, in *benchInput) error {
	var table bytes.Buffer
	writeEgraphSummary(&table, res, in)
	return benchOutputs{out: o.out, summary: o.summary, json: o.json}.write(e, table.Bytes(), res,
		func() []evidence.Sample { return egraphEvidenceRows(res, prov, in) },
		func(w io.Writer) { writeEgraphComments(w, table.String(), res, in) })
}

// egraphEvidenceRows turns the samples into evidence rows: the arms under
// the input's name (iterations: the rounds), the round floor under
// NAME-round-floor (iterations: the rounds of one launch).
func egraphEvidenceRows(res *rebuild.BenchResult, prov evidence.Provenance, in *benchInput) []evidence.Sample {
	s := res.Summary
	w := evidence.Workload{Name: in.name, Nodes: uint64(s.Nodes), Edges: uint64(s.ChildSlots), Iterations: uint64(s.Rounds)}
	floor := evidence.Workload{Name: in.name + "-round-floor", Nodes: w.Nodes, Edges: w.Edges, Iterations: uint64(max(res.FloorRounds, 1))}
	now := time.Now().UTC()
	p := prov
	p.Date = now
	var rows []evidence.Sample
	add := func(wl evidence.Workload, smp rebuild.Sample) {
		rows = append(rows, evidenceRow(p, wl, smp))
	}
	for _, smp := range res.Samples {
		add(w, smp)
	}
	for _, smp := range res.FloorSamples {
		add(floor, smp)
	}
	return rows
}

// writeEgraphComments appends the summary table, the input's checksum,
// the egg peer's per-run times and the plans, as JSON, to an evidence CSV
// as comment lines.
func writeEgraphComments(w io.Writer, table string, res *rebuild.BenchResult, in *benchInput) {
	writeTableComments(w, table)
	fmt.Fprintf(w, "# input %s %s sha256 %s\n", in.name, in.format, in.sha256)
	for _, p := range res.Peer {
		fmt.Fprintf(w, "# egg sample %d: t2_ms=%.4f t1_ms=%.4f t1_cold_ms=%.4f dump_sha256=%s partition=%s\n", p.Index, p.T2Ns/1e6, p.T1Ns/1e6, p.T1ColdNs/1e6, p.DumpSHA256, p.Checksum)
	}
	writeJSONComments(w, jsonComment{"plans", res.Plans}, jsonComment{"incremental-plans", res.IncrementalPlans}, jsonComment{"arm-plan", res.ArmPlan},
		jsonComment{"arm-plans", res.ArmPlans}, jsonComment{"launches", res.Launches}, jsonComment{"structural", res.Structural})
}

// writeEgraphSummary writes the summary as a Markdown table.
func writeEgraphSummary(w io.Writer, res *rebuild.BenchResult, in *benchInput) {
	s := res.Summary
	fmt.Fprintf(w, "%s: %d e-nodes, %d child slots, %d class ids -> %d classes, %d pending unions, %d distinct e-nodes, %d rounds; %d samples per GPU arm; %s\n\n",
		s.Workload, s.Nodes, s.ChildSlots, s.ClassIDs, s.Classes, s.UnionPairs, s.DistinctNodes, s.Rounds, s.Samples, s.Device)
	fmt.Fprintln(w, "| arm | median | per round | M e-nodes/s | vs host-loop | vs go-reference | vs egg T2 | launches per round (planned/executed) |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	launches := map[string]rebuild.ArmLaunches{}
	for _, l := range res.Launches {
		launches[string(l.Arm)] = l
	}
	x := func(v float64) string {
		if v <= 0 {
			return "-"
		}
		return fmt.Sprintf("%.2fx", v)
	}
	for _, a := range s.Arms {
		name, lp := a.Arm, "-"
		if a.External {
			name += " (external, T2)"
		}
		if l, ok := launches[a.Arm]; ok {
			lp = fmt.Sprintf("%.3g/%.3g", l.PlannedLaunches, l.ExecutedLaunches)
			if l.Arm.Driver() == rebuild.ArmPersistent {
				lp += fmt.Sprintf(" (barriers %.3g/%.3g)", l.PlannedBarriers, l.ExecutedBarriers)
			}
		}
		fmt.Fprintf(w, "| %s | %s | %s | %.1f | %s | %s | %s | %s |\n", name, stats.FormatNs(a.MedianNs), stats.FormatNs(a.RoundNs),
			a.NodesPerSecond/1e6, x(a.SpeedupVsHostLoop), x(a.SpeedupVsCPU), x(a.SpeedupVsEgg), lp)
	}
	writeEgraphNotes(w, res, in)
}

// writeEgraphNotes writes the lines under the table.
func writeEgraphNotes(w io.Writer, res *rebuild.BenchResult, in *benchInput) {
	s := res.Summary
	fmt.Fprintln(w)
	if s.EggT1Ns > 0 {
		fmt.Fprintf(w, "egg 0.9.5 (external): T1 rebuild() alone, median %s over %d runs of egg-bench on the same dump (sha256 %s)\n", stats.FormatNs(s.EggT1Ns), len(res.Peer), in.sha256)
	}
	if s.RoundFloorNs > 0 {
		fmt.Fprintf(w, "persistent round floor (a round's %d grid barriers with no work): %s per round\n", res.Plans.Fusion.LaunchCount, stats.FormatNs(s.RoundFloorNs))
	}
	if c := res.Structural; c != nil {
		fmt.Fprintf(w, "structural equivalence (reference path): %d buckets, %d candidate pairs, %d exact, identical on the GPU and the CPU\n", c.Buckets, c.CandidatePairs, c.GPU.ExactPairCount)
	}
	if res.ArmPlan.Arm != "" {
		fmt.Fprintf(w, "arm plan: %s (topology %s; %s); fastest measured: %s\n", res.ArmPlan.Arm, res.ArmPlan.Decision.Topology, res.ArmPlanNote, s.FastestArm)
	}
	for _, n := range s.Notes {
		fmt.Fprintf(w, "\nnote: %s\n", n)
	}
}
