package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/gpuplan/gpuplan/frontier"
)

const benchAbout = `Measure GPU execution arms side by side on one device, in one process.

"gpuplan bench frontier" runs breadth-first search on a graph that stays
resident on the GPU (uploaded once) from several roots with every arm:

  host-loop    one launch per level, a 4-byte readback of the next frontier
               size, a host sync and a host test: what a user writes by hand
               with the Go driver binding (the whole loop on the driver
               thread; per level cuLaunchKernel, a 4-byte async copy into
               pinned memory, cuStreamSynchronize; no events, no allocation)
  device-loop  levels enqueued back to back without host syncs; the frontier
               size is read every --check-every levels
  megakernel   one cooperative launch runs every level, with a grid barrier
               per level and a final-flag-only convergence check
  host-loop-scan (only with --arms) the host loop over the plain scan wave,
               one thread per vertex, every vertex visited every level

Arms are interleaved sample by sample (their order rotates). A sample is one
traversal from every root; every traversal's levels are downloaded (outside
the timed region) and checked against the CPU reference BFS, so all arms
produce identical levels or the run fails. The run also measures the copy-
bandwidth ceiling (arm copy-ceiling: a large device-to-device copy) and
writes every sample in gpuplan's evidence CSV format (-o), which
'gpuplan gate' judges against evidence/gates.json.

Graphs: grid:N (N x N grid, diameter 2N-2), kron:SCALE (Graph500 Kronecker,
edge factor 16), road:N (road-like planar graph on an N x N lattice),
file:PATH (.mtx Matrix Market, otherwise an edge list "u v" per line).

Needs a build with CUDA support (make build-cuda).`

// benchOptions are the parsed flags of "gpuplan bench frontier".
type benchOptions struct {
	spec       frontier.Spec
	graph      string
	roots      int
	rootIDs    []int64
	samples    int
	seed       uint64
	arms       []string
	checkEvery int
	chunk      int
	megaPerSM  int
	megaThr    int
	megaAhead  int
	copyBytes  uint64
	out        string
	summary    string
	device     int
	sourceRoot string
	json       bool
	progress   bool
}

// defaultBenchArms are the arms measured unless --arms says otherwise.
var defaultBenchArms = []string{"host-loop", "device-loop", "megakernel"}

// knownBenchArms are every arm --arms accepts.
func knownBenchArms() []string {
	return []string{"host-loop", "device-loop", "megakernel", "host-loop-scan"}
}

// parseBenchArgs parses "frontier [flags]".
func parseBenchArgs(e *env, args []string) (*benchOptions, error) {
	f := e.newFlags("bench",
		"bench frontier --graph SPEC [--roots N | --root-ids A,B,...] [--samples N] [-o FILE.csv] [flags]",
		benchAbout)
	o := &benchOptions{}
	f.StringVar(&o.graph, "graph", "", "graph `SPEC`: grid:N, kron:SCALE, road:N or file:PATH (.mtx or edge list)")
	f.IntVar(&o.roots, "roots", 16, "number of BFS roots, chosen among vertices with edges, deterministic from --seed")
	rootIDs := f.String("root-ids", "", "comma-separated explicit root vertex `IDS` (instead of --roots)")
	f.IntVar(&o.samples, "samples", 30, "timed samples per arm (each one traversal from every root)")
	seed := f.Uint64("seed", 1, "seed for the graph generators and the root choice")
	arms := f.String("arms", strings.Join(defaultBenchArms, ","), "comma-separated arms: "+strings.Join(knownBenchArms(), ", "))
	f.IntVar(&o.checkEvery, "check-every", 16, "device-loop: levels enqueued between host checks of the frontier size")
	f.IntVar(&o.chunk, "chunk", frontier.DefaultChunk, "most edges per frontier-queue item")
	f.IntVar(&o.megaThr, "mega-threads", 0, "megakernel: threads per block, a multiple of 32 up to 1024 (0: 512 for graphs of low degree, 1024 otherwise)")
	f.IntVar(&o.megaPerSM, "mega-blocks-per-sm", 0, "megakernel: at most `N` co-resident blocks per SM (0: one, the measured best; the occupancy model bounds it)")
	f.IntVar(&o.megaAhead, "mega-ahead", 0, "megakernel: at most `N` levels a block expands from its own frontier between grid barriers (0: 4 for graphs of low degree, 1 otherwise; 1 is one barrier per level)")
	copyMiB := f.Int("copy-mib", 1024, "size in MiB of each buffer of the copy-ceiling measurement (0 skips it)")
	f.StringVar(&o.out, "o", "", "write the evidence CSV to `FILE`")
	f.StringVar(&o.summary, "summary", "", "also write the summary table as Markdown to `FILE`")
	f.IntVar(&o.device, "device", 0, "CUDA device ordinal")
	f.StringVar(&o.sourceRoot, "source-root", "", "module root whose kernels and executor are fingerprinted (default: the nearest directory above the working directory with go.mod)")
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		if err := f.parse(args); err != nil {
			return nil, err
		}
		return nil, usagef("gpuplan bench: name the benchmark: 'gpuplan bench frontier --graph grid:2048' (run 'gpuplan bench --help' for usage)")
	}
	if args[0] != "frontier" {
		return nil, usagef("gpuplan bench: unknown benchmark %q; the only one is frontier (run 'gpuplan bench --help' for usage)", args[0])
	}
	if err := f.parse(args[1:]); err != nil {
		return nil, err
	}
	if err := f.noArgs(); err != nil {
		return nil, err
	}
	o.json = f.json
	o.seed = *seed
	if o.graph == "" {
		return nil, usagef("gpuplan bench frontier: --graph is required, for example --graph grid:2048 (run 'gpuplan bench --help' for usage)")
	}
	spec, err := frontier.ParseSpec(o.graph)
	if err != nil {
		return nil, usagef("gpuplan bench frontier: --graph: %v", err)
	}
	o.spec = spec
	if *rootIDs != "" {
		for _, s := range strings.Split(*rootIDs, ",") {
			v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
			if err != nil {
				return nil, usagef("gpuplan bench frontier: --root-ids: %q is not an integer. Fix: list vertex ids such as 0,17,42", s)
			}
			o.rootIDs = append(o.rootIDs, v)
		}
		o.roots = len(o.rootIDs)
	}
	switch {
	case o.roots < 1 || o.roots > 4096:
		return nil, usagef("gpuplan bench frontier: --roots %d is outside 1..4096. Fix: use for example 16 (Graph500 uses 64)", o.roots)
	case o.samples < 1 || o.samples > 100000:
		return nil, usagef("gpuplan bench frontier: --samples %d is outside 1..100000. Fix: use at least 10 so the gate can judge the run", o.samples)
	case o.checkEvery < 1 || o.checkEvery > 1<<16:
		return nil, usagef("gpuplan bench frontier: --check-every %d is outside 1..65536", o.checkEvery)
	case o.chunk < 1 || o.chunk > 1<<20:
		return nil, usagef("gpuplan bench frontier: --chunk %d is outside 1..1048576", o.chunk)
	case o.megaThr < 0 || o.megaThr > 1024 || o.megaThr%32 != 0:
		return nil, usagef("gpuplan bench frontier: --mega-threads %d is not 0 or a multiple of 32 up to 1024", o.megaThr)
	case o.megaPerSM < 0 || o.megaPerSM > 64:
		return nil, usagef("gpuplan bench frontier: --mega-blocks-per-sm %d is outside 0..64 (0 picks the default, one)", o.megaPerSM)
	case o.megaAhead < 0 || o.megaAhead > frontier.MaxRunAhead:
		return nil, usagef("gpuplan bench frontier: --mega-ahead %d is outside 0..65536 (0 picks the default; 1 is level-synchronous)", o.megaAhead)
	case *copyMiB < 0 || *copyMiB > 1<<16:
		return nil, usagef("gpuplan bench frontier: --copy-mib %d is outside 0..65536", *copyMiB)
	case o.device < 0:
		return nil, usagef("gpuplan bench frontier: --device %d is negative", o.device)
	}
	o.copyBytes = uint64(*copyMiB) << 20
	for _, a := range strings.Split(*arms, ",") {
		a = strings.TrimSpace(a)
		if !slices.Contains(knownBenchArms(), a) {
			return nil, usagef("gpuplan bench frontier: --arms: unknown arm %q. Fix: use %s", a, strings.Join(knownBenchArms(), ", "))
		}
		if slices.Contains(o.arms, a) {
			return nil, usagef("gpuplan bench frontier: --arms: %q is listed twice", a)
		}
		o.arms = append(o.arms, a)
	}
	o.progress = isTerminal(e.stderr)
	return o, nil
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
	w     io.Writer
	on    bool
	total int
	done  int
}

func (p *progressBar) step(label string) {
	p.done++
	if !p.on || p.total == 0 {
		return
	}
	const width = 30
	filled := p.done * width / p.total
	fmt.Fprintf(p.w, "\r[%s%s] %3d%% %-40.40s", strings.Repeat("#", filled), strings.Repeat(".", width-filled), p.done*100/p.total, label)
	if p.done == p.total {
		fmt.Fprintln(p.w)
	}
}

// rootStat is what the CPU reference knows about one root.
type rootStat struct {
	Root     int32  `json:"root"`
	Levels   int    `json:"levels"`
	Reached  int    `json:"reached"`
	Edges    uint64 `json:"edges"`
	Checksum uint64 `json:"-"`
}

// armSummary condenses one arm's samples.
type armSummary struct {
	Arm string `json:"arm"`
	// MedianSampleNs is the median wall time of one sample (all roots).
	MedianSampleNs float64 `json:"median_sample_ns"`
	// MedianDeviceNs is the median event-timed device time of one sample.
	MedianDeviceNs float64 `json:"median_device_ns"`
	// MedianRootNs is the median over roots of each root's median time.
	MedianRootNs float64 `json:"median_root_ns"`
	// LevelNs is the median sample time over the levels of all roots.
	LevelNs float64 `json:"per_level_ns"`
	// GTEPS is the harmonic mean over roots of traversed edges / median
	// time, in 10^9 edges per second.
	GTEPS float64 `json:"gteps_hmean"`
	// SpeedupVsHostLoop is host-loop's median sample time over this arm's.
	SpeedupVsHostLoop float64 `json:"speedup_vs_host_loop,omitempty"`
	// ModeledGBps is the modeled bytes of one sample over its median time.
	ModeledGBps float64 `json:"modeled_gbps"`
	// CeilingFraction is ModeledGBps over the copy ceiling.
	CeilingFraction float64 `json:"ceiling_fraction,omitempty"`
}

// benchSummary is the result of one run.
type benchSummary struct {
	Workload    string     `json:"workload"`
	Nodes       int        `json:"nodes"`
	Edges       uint64     `json:"edges"`
	Roots       []rootStat `json:"roots"`
	TotalLevels uint64     `json:"total_levels"`
	Samples     int        `json:"samples"`
	Device      string     `json:"device"`
	CopyGBps    float64    `json:"copy_ceiling_gbps"`
	// BarrierFloorNs is the megakernel's per-level cost with no work: one
	// level barrier on its grid.
	BarrierFloorNs float64      `json:"barrier_floor_ns,omitempty"`
	Arms           []armSummary `json:"arms"`
	Notes          []string     `json:"notes,omitempty"`
}

// median returns the median of xs (the mean of the middle two for an even
// count); 0 for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}

// modeledBytes is the fewest device bytes a top-down BFS from these roots
// moves: each traversed adjacency entry read once (4 B) with one 4-byte
// level check, and per reached vertex its two offsets (8 B), its level
// write (4 B) and one 8-byte queue item written and read (16 B).
func modeledBytes(roots []rootStat) float64 {
	var b float64
	for _, r := range roots {
		b += 8*2*float64(r.Edges) + 28*float64(r.Reached)
	}
	return b
}

// summarize builds an arm's summary from its per-sample walls and device
// times and its per-root times (perRoot[i] holds root i's wall times).
func summarize(arm string, sampleWall, sampleDevice []float64, perRoot [][]float64, roots []rootStat, totalLevels uint64) armSummary {
	s := armSummary{Arm: arm, MedianSampleNs: median(sampleWall), MedianDeviceNs: median(sampleDevice)}
	rootMedians := make([]float64, len(perRoot))
	var invSum float64
	ok := true
	for i, ts := range perRoot {
		rootMedians[i] = median(ts)
		if rootMedians[i] <= 0 || roots[i].Edges == 0 {
			ok = false
			continue
		}
		invSum += rootMedians[i] / float64(roots[i].Edges)
	}
	s.MedianRootNs = median(rootMedians)
	if totalLevels > 0 {
		s.LevelNs = s.MedianSampleNs / float64(totalLevels)
	}
	if ok && invSum > 0 {
		// edges/ns = G edges/s
		s.GTEPS = float64(len(perRoot)) / invSum
	}
	if s.MedianSampleNs > 0 {
		s.ModeledGBps = modeledBytes(roots) / s.MedianSampleNs
	}
	return s
}

// finishSummary adds speedups and ceiling fractions.
func finishSummary(sum *benchSummary) {
	var host float64
	for _, a := range sum.Arms {
		if a.Arm == "host-loop" {
			host = a.MedianSampleNs
		}
	}
	for i := range sum.Arms {
		a := &sum.Arms[i]
		if host > 0 && a.MedianSampleNs > 0 {
			a.SpeedupVsHostLoop = host / a.MedianSampleNs
		}
		if sum.CopyGBps > 0 {
			a.CeilingFraction = a.ModeledGBps / sum.CopyGBps
		}
	}
}

// writeSummaryTable writes the summary as a Markdown table.
func writeSummaryTable(w io.Writer, s *benchSummary) error {
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
		fmt.Fprintf(w, "| %s | %s | %s | %.3f | %s | %.1f | %s |\n", a.Arm, fmtNs(a.MedianRootNs), fmtNs(a.LevelNs), a.GTEPS, sp, a.ModeledGBps, frac)
	}
	if s.CopyGBps > 0 {
		fmt.Fprintf(w, "\ncopy ceiling (device-to-device, read + write): %.1f GB/s\n", s.CopyGBps)
	}
	if s.BarrierFloorNs > 0 {
		fmt.Fprintf(w, "megakernel barrier floor (a level barrier with no work): %s per level\n", fmtNs(s.BarrierFloorNs))
	}
	for _, n := range s.Notes {
		fmt.Fprintf(w, "\nnote: %s\n", n)
	}
	return nil
}

// fmtNs prints a duration in ns with a readable unit.
func fmtNs(ns float64) string {
	switch {
	case math.IsNaN(ns) || ns <= 0:
		return "-"
	case ns < 1e3:
		return fmt.Sprintf("%.0f ns", ns)
	case ns < 1e6:
		return fmt.Sprintf("%.2f us", ns/1e3)
	case ns < 1e9:
		return fmt.Sprintf("%.3f ms", ns/1e6)
	}
	return fmt.Sprintf("%.3f s", ns/1e9)
}

// combinedChecksum hashes the per-root level checksums in root order.
func combinedChecksum(sums []uint64) string {
	h := uint64(14695981039346656037)
	for _, s := range sums {
		for i := 0; i < 8; i++ {
			h ^= uint64(byte(s >> (8 * i)))
			h *= 1099511628211
		}
	}
	return fmt.Sprintf("fnv64-%016x", h)
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
