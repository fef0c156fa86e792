package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/gpuplan/gpuplan/evidence"
	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/internal/checked"
	"github.com/gpuplan/gpuplan/internal/graphbudget"
	"github.com/gpuplan/gpuplan/internal/stats"
	"github.com/gpuplan/gpuplan/workloads/harness"
	"github.com/gpuplan/gpuplan/workloads/kronbuild"
)

// kronbuildWorkload is the package whose code the build evidence
// fingerprints.
const kronbuildWorkload = "workloads/kronbuild"

const benchKronAbout = `Times building a Graph500 Kronecker graph on the GPU (workloads/kronbuild:
the labels, the edge count, the edges, the radix sort and the CSR on the device,
then the CSR read back to the host) against frontier.Kronecker on every CPU,
the arms interleaved, every build's offsets and targets compared with the
reference's entry by entry (the evidence names its checksum). The reference is
one CPU build; with --cpu-samples -1 no CPU build runs at all, and the GPU
warm-up build, checked on its own (2^S vertices, sorted rows without duplicates
or self loops, every edge in both directions), is the reference instead. Use
--cpu-samples -1 at scales 27 and 28: a CPU build there takes about 62 and
124 GB of host memory, beside the GPU build's readback. Arms: gpu (wall: the
whole build with its readback; device: its phases on the device) and cpu. -o
writes evidence CSV (workload kron-build-SCALE, one iteration a sample; comment
lines record the reference, the memory plan and every GPU build's phases).`

// benchKronOptions are the flags of "gpuplan bench kron".
type benchKronOptions struct {
	bench        kronbuild.BenchConfig
	maxDeviceMiB uint64
	out, summary string
	device       int
	sourceRoot   string
	json         bool
	progress     bool
	open         func(device int) (*executor.Executor, error)
}

func parseBenchKronArgs(e *env, args []string) (*benchKronOptions, error) {
	f := e.newFlags("bench kron", "bench kron --scale S [--samples N] [--cpu-samples N] [-o FILE.csv] [flags]", benchKronAbout)
	o := &benchKronOptions{open: openBenchExecutor}
	b := &o.bench
	f.IntVar(&b.Scale, "scale", 0, "the graph's scale: 2^`S` vertices (1 to 29 at edge factor 16)")
	f.IntVar(&b.EdgeFactor, "edge-factor", frontier.DefaultEdgeFactor, "generated edges per vertex")
	f.Uint64Var(&b.Seed, "seed", 1, "the generator's seed (the graph kron:S --seed builds)")
	f.IntVar(&b.Samples, "samples", kronbuild.DefaultBenchSamples, "timed builds on the GPU")
	f.IntVar(&b.CPUSamples, "cpu-samples", 0, "timed builds on the CPU (0: as many as --samples; -1: none, and no CPU reference: the GPU warm-up build is checked and is the reference)")
	f.BoolVar(&b.Build.HostPermutation, "host-labels", false, "draw the label permutation on the host and upload it")
	f.Uint64Var(&o.maxDeviceMiB, "max-device-mib", 0, "plan the build within `N` MiB of device memory (0: what the device has free)")
	f.StringVar(&o.out, "o", "", "write the evidence CSV to `FILE`")
	f.StringVar(&o.summary, "summary", "", "also write the summary table as Markdown to `FILE`")
	f.IntVar(&o.device, "device", 0, "CUDA device ordinal")
	f.StringVar(&o.sourceRoot, "source-root", "", "with -o: the module root whose measured code the evidence fingerprints (default: the nearest directory above the working directory with go.mod)")
	if err := f.parse(args); err != nil {
		return nil, err
	}
	if err := f.noArgs(); err != nil {
		return nil, err
	}
	o.json, o.progress = f.json, isTerminal(e.stderr)
	return o, o.check()
}

// check refuses flag values out of range.
func (o *benchKronOptions) check() error {
	b := o.bench
	switch {
	case b.Scale == 0:
		return usagef("gpuplan bench kron: --scale is required. Fix: add the scale, for example --scale 22")
	case b.Samples < 1 || b.Samples > 10000:
		return usagef("gpuplan bench kron: --samples %d is outside 1..10000. Fix: use at least 10 so the gate can judge the run", b.Samples)
	case b.CPUSamples < -1 || b.CPUSamples > 10000:
		return usagef("gpuplan bench kron: --cpu-samples %d is outside -1..10000. Fix: use 0 for as many as --samples, or -1 for none", b.CPUSamples)
	case o.maxDeviceMiB > 1<<30:
		return usagef("gpuplan bench kron: --max-device-mib %d is more than 2^30 MiB. Fix: give the device memory the build may plan with, or 0 for what is free", o.maxDeviceMiB)
	case o.device < 0:
		return usagef("gpuplan bench kron: --device %d is negative. Fix: give a CUDA device ordinal, 0 for the first GPU", o.device)
	}
	if err := kronbuild.Check(b.Scale, b.EdgeFactor); err != nil {
		return usagef("gpuplan bench kron: --scale %d at --edge-factor %d: %v", b.Scale, b.EdgeFactor, err)
	}
	return o.checkBudget()
}

// checkBudget refuses, before the device is opened, a build whose buffers
// held throughout (with the device labels' scratch) do not fit
// --max-device-mib (kronbuild.CheckBudget).
func (o *benchKronOptions) checkBudget() error {
	b := o.bench
	if o.maxDeviceMiB == 0 {
		return nil
	}
	budget := o.maxDeviceMiB << 20
	err := kronbuild.CheckBudget(b.Scale, b.EdgeFactor, budget, b.Build.HostPermutation)
	var be *kronbuild.BudgetError
	if !errors.As(err, &be) {
		return err
	}
	fix := "raise --max-device-mib (0 plans with what the device has free) or run a smaller --scale"
	if !b.Build.HostPermutation && kronbuild.CheckBudget(b.Scale, b.EdgeFactor, budget, true) == nil {
		fix = "add --host-labels (the labels drawn on the host need no device scratch), " + fix
	}
	return usagef("gpuplan bench kron: --scale %d: %s needs %d bytes of device memory but --max-device-mib %d allows %d bytes. Fix: %s",
		b.Scale, be.What, be.NeededBytes, o.maxDeviceMiB, be.BudgetBytes, fix)
}

// checkHost refuses, before a device is opened, a run whose graphs do not
// fit the host's memory: the CPU reference's build beside a GPU build read
// back, or with --cpu-samples -1 the GPU warm-up build (the reference)
// beside one read back. Where only the CPU build does not fit, the fix is
// --cpu-samples -1.
func (o *benchKronOptions) checkHost() error {
	b := o.bench
	what := fmt.Sprintf("--scale %d at --edge-factor %d", b.Scale, b.EdgeFactor)
	build, graph, err := graphbudget.KroneckerBytes(b.Scale, b.EdgeFactor)
	if err != nil {
		return fmt.Errorf("%s: %w. Fix: pass a smaller --scale", what, err)
	}
	readBack := 2 * graph // at most 2 x 2^58 x 4 bytes: no wrap
	if b.CPUSamples < 0 {
		return checkHostBytes(what, readBack)
	}
	withCPU, err := checked.Add(build, graph, "kron build bytes")
	if err != nil {
		return fmt.Errorf("%s: %w. Fix: pass a smaller --scale", what, err)
	}
	err = checkHostBytes(what, withCPU)
	var be *graphbudget.Error
	if !errors.As(err, &be) || checkHostBytes(what, readBack) != nil {
		return err
	}
	within := ""
	if be.Bound != "" {
		within = " within " + be.Bound
	}
	return fmt.Errorf("%s needs about %d bytes of host memory for the CPU reference build beside a GPU build read back, but %d are available%s. Fix: add --cpu-samples -1: no CPU build runs and the GPU warm-up build, checked on its own, is the reference, which needs about %d bytes",
		what, be.Bytes, be.Available, within, readBack)
}

// runBenchKron parses "gpuplan bench kron", runs kronbuild.Bench and writes
// the evidence and the summary.
func runBenchKron(e *env, args []string) error {
	o, err := parseBenchKronArgs(e, args)
	if err != nil {
		return err
	}
	return benchKron(e, o)
}

// benchKron opens the executor, runs kronbuild.Bench and writes the
// evidence and the summary.
func benchKron(e *env, o *benchKronOptions) error {
	if err := o.checkHost(); err != nil {
		return err
	}
	fingerprint, x, err := openBench(o.out, o.sourceRoot, kronbuildWorkload, o.open, o.device)
	if err != nil {
		return err
	}
	defer x.Close()
	bar := &progressBar{w: e.stderr, on: o.progress}
	o.bench.Progress, o.bench.Log = bar.update, e.benchLogf
	o.bench.Build.MaxDeviceBytes = o.maxDeviceMiB << 20
	res, err := kronbuild.Bench(x, o.bench)
	if err != nil {
		return err
	}
	prov := benchProvenance(x, fingerprint)
	var table bytes.Buffer
	writeKronSummary(&table, res, prov)
	return benchOutputs{out: o.out, summary: o.summary, json: o.json}.write(e, table.Bytes(), res,
		func() []evidence.Sample { return kronEvidenceRows(res, prov) },
		func(w io.Writer) { writeKronComments(w, table.String(), res) })
}

// kronEvidenceRows turns the samples into evidence rows: one iteration a
// build.
func kronEvidenceRows(res *kronbuild.BenchResult, prov evidence.Provenance) []evidence.Sample {
	w := evidence.Workload{Name: res.Name, Nodes: uint64(res.Vertices), Edges: uint64(res.EdgeEntries / 2), Iterations: 1}
	p := prov
	p.Date = time.Now().UTC()
	rows := make([]evidence.Sample, len(res.Samples))
	for i, s := range res.Samples {
		rows[i] = evidenceRow(p, w, s)
	}
	return rows
}

// writeKronSummary writes the arms' medians and the device build's median
// phases as a Markdown table.
func writeKronSummary(w io.Writer, res *kronbuild.BenchResult, prov evidence.Provenance) {
	fmt.Fprintf(w, "%s: %d vertices, %d edge entries, %s, checksum %s, reference %s, %s\n\n", res.Name, res.Vertices, res.EdgeEntries,
		partsText(len(res.Plan.Parts)), res.Checksum, res.Reference, prov.DeviceName)
	fmt.Fprintln(w, "| arm | samples | median wall | median device |")
	fmt.Fprintln(w, "|---|---:|---:|---:|")
	for _, arm := range []string{kronbuild.ArmGPU, kronbuild.ArmCPU} {
		wall, dev := armMedians(res.Samples, arm)
		if len(wall) == 0 {
			continue
		}
		fmt.Fprintf(w, "| %s | %d | %s | %s |\n", arm, len(wall), stats.FormatNs(stats.Median(wall)), stats.FormatNs(stats.Median(dev)))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| GPU phase | median |")
	fmt.Fprintln(w, "|---|---:|")
	for _, ph := range kronPhases(res.GPUTimes) {
		fmt.Fprintf(w, "| %s | %s |\n", ph.name, stats.FormatNs(stats.Median(ph.ns)))
	}
}

// kronPhase is one phase's times over the GPU builds.
type kronPhase struct {
	name string
	ns   []float64
}

// kronPhases lists each phase of the device builds.
func kronPhases(ts []kronbuild.Times) []kronPhase {
	out := []kronPhase{{name: "labels"}, {name: "count"}, {name: "generate"}, {name: "sort"}, {name: "CSR"}, {name: "readback"}, {name: "total"}}
	for _, t := range ts {
		for i, d := range []time.Duration{t.Permutation, t.Count, t.Generate, t.Sort, t.CSR, t.Readback, t.Total} {
			out[i].ns = append(out[i].ns, float64(d))
		}
	}
	return out
}

// armMedians returns an arm's wall and device times.
func armMedians(samples []harness.Sample, arm string) (wall, dev []float64) {
	for _, s := range samples {
		if s.Arm == arm {
			wall, dev = append(wall, s.WallNs), append(dev, s.DeviceNs)
		}
	}
	return wall, dev
}

// partsText says in how many parts the graph was built.
func partsText(n int) string {
	if n == 1 {
		return "built in 1 part"
	}
	return fmt.Sprintf("built in %d parts", n)
}

// kronReference is the reference every build was compared with, as an
// evidence CSV records it: its source (kronbuild.ReferenceCPU or
// kronbuild.ReferenceGPUWarmUp) and the CPU build's time, absent when no
// CPU build ran.
type kronReference struct {
	Reference string  `json:"reference"`
	BuildS    float64 `json:"reference_build_s,omitempty"`
}

// writeKronComments appends the summary table, the reference, the memory
// plan and every GPU build's phases (in sample order), as JSON, to an
// evidence CSV as comment lines.
func writeKronComments(w io.Writer, table string, res *kronbuild.BenchResult) {
	writeTableComments(w, table)
	writeJSONComments(w, jsonComment{"reference", kronReference{Reference: res.Reference, BuildS: res.ReferenceBuildS}},
		jsonComment{"plan", res.Plan}, jsonComment{"gpu-times", res.GPUTimes})
}
