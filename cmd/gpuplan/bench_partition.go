package main

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/gpuplan/gpuplan/evidence"
	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/internal/stats"
	"github.com/gpuplan/gpuplan/partition"
	"github.com/gpuplan/gpuplan/workloads/harness"
	"github.com/gpuplan/gpuplan/workloads/partbfs"
)

// partbfsWorkload is the workload package the partitioned benchmark
// measures, whose fingerprint its evidence records.
const partbfsWorkload = "workloads/partbfs"

// partitioned reports whether the flags ask for the partitioned BFS.
func (o *benchOptions) partitioned() bool { return o.devices > 1 || o.simulate > 0 || o.processes }

// checkPartitioned reads --partition and refuses --devices and
// --simulate-devices out of range or together.
func (o *benchOptions) checkPartitioned(strategy string) error {
	s, err := partition.ParseStrategy(strategy)
	if err != nil {
		return usagef("gpuplan bench frontier: --partition: %v", err)
	}
	o.strategy = s
	switch {
	case o.devices < 1 || o.devices > partbfs.MaxParts:
		return usagef("gpuplan bench frontier: --devices %d is outside 1..%d. Fix: give the number of GPUs to spread the graph over", o.devices, partbfs.MaxParts)
	case o.simulate < 0 || o.simulate > partbfs.MaxParts:
		return usagef("gpuplan bench frontier: --simulate-devices %d is outside 0..%d. Fix: give the number of partitions to run on one GPU", o.simulate, partbfs.MaxParts)
	case o.devices > 1 && o.simulate > 0:
		return usagef("gpuplan bench frontier: --devices %d and --simulate-devices %d exclude each other. Fix: run on N GPUs with --devices N, or simulate P partitions on one GPU with --simulate-devices P", o.devices, o.simulate)
	}
	return nil
}

// partitionedIgnored are the flags of the single-GPU arms, which the
// partitioned BFS does not run, besides the --mega-* flags; --copy-mib is
// one of them, since the partitioned bench measures no copy ceiling.
var partitionedIgnored = []string{"arms", "metrics", "check", "check-every", "chunk", "wide-offsets", "barrier-levels", "direction",
	"batch", "batch-width", "peer", "peer-gunrock", "peer-dir", "peer-timeout", "peer-samples", "copy-mib"}

// checkPartitionedFlags refuses, in the partitioned mode, the flags given
// (set) that it would ignore, naming them all; --device is one of them
// with --devices, which opens devices 0 to N-1. Out of it, it refuses
// --partition, which only the partitioned BFS reads.
func (o *benchOptions) checkPartitionedFlags(set map[string]bool) error {
	if !o.partitioned() {
		if set["partition"] {
			return usagef("gpuplan bench frontier: --partition applies only to the partitioned BFS, which runs with --devices N (N > 1) or --simulate-devices P; the single-GPU arms keep the whole graph. Fix: add --devices N or --simulate-devices P, or drop --partition")
		}
		return nil
	}
	mode := fmt.Sprintf("--devices %d", o.devices)
	switch {
	case o.simulate > 0:
		mode = fmt.Sprintf("--simulate-devices %d", o.simulate)
	case o.processes:
		mode += " --processes"
	}
	var given []string
	for name := range set {
		if strings.HasPrefix(name, "mega-") || slices.Contains(partitionedIgnored, name) || name == "device" && o.simulate == 0 && o.rank == nil {
			given = append(given, "--"+name)
		}
	}
	if len(given) == 0 {
		return nil
	}
	slices.Sort(given)
	verb := "do"
	if len(given) == 1 {
		verb = "does"
	}
	return usagef("gpuplan bench frontier: %s %s not apply with %s: the partitioned BFS runs one arm of its own, without the single-GPU arms' settings. Fix: drop %s, or leave out %s to measure the single-GPU arms",
		strings.Join(given, ", "), verb, mode, strings.Join(given, ", "), strings.Fields(mode)[0])
}

// openPartitioned opens the devices of the partitioned BFS, after checking
// that the NVIDIA driver library was loaded (CUDA build).
func (o *benchOptions) openPartitioned() (*partbfs.Devices, error) {
	if err := driverLibraryError(); err != nil {
		return nil, err
	}
	var devs *partbfs.Devices
	var err error
	if o.simulate > 0 {
		devs, err = o.opener.Simulate(o.device, o.simulate)
	} else {
		devs, err = o.opener.OpenDevices(o.devices)
	}
	return devs, unavailable(err)
}

// benchPartitioned opens the devices, builds the graph, runs the
// partitioned benchmark protocol (partbfs.Bench) and writes the evidence
// and the summary.
func benchPartitioned(e *env, o *benchOptions) error {
	logf := e.benchLogf
	fingerprint, err := evidenceFingerprint(o.out, o.sourceRoot, partbfsWorkload)
	if err != nil {
		return err
	}
	devs, err := o.openPartitioned()
	if err != nil {
		return err
	}
	defer devs.Close()
	g, roots, err := o.graphAndRoots(logf)
	if err != nil {
		return err
	}
	bar := &progressBar{w: e.stderr, on: o.progress}
	res, err := partbfs.Bench(devs, g, roots, partbfs.BenchConfig{Session: partbfs.Config{Strategy: o.strategy},
		Samples: o.bench.Samples, Reporting: harness.Reporting{Progress: bar.update, Log: logf}})
	if err != nil {
		return err
	}
	prov := benchProvenance(devs.Executors[0], fingerprint)
	if !devs.Simulated {
		prov.DeviceName = fmt.Sprintf("%dx %s", len(devs.Executors), prov.DeviceName)
	}
	res.Summary.Device = fmt.Sprintf("%s, driver %s", res.Summary.Device, prov.DriverVersion)
	logf("transport: %s", transportName(devs))
	return writePartitionedOutputs(e, o, res, prov, g)
}

// transportName says how the parts exchange.
func transportName(devs *partbfs.Devices) string {
	if devs.Simulated {
		return "device copies on one GPU"
	}
	if v, ok := devs.Transport.(interface{ Version() string }); ok && v.Version() != "" {
		return "NCCL " + v.Version()
	}
	return fmt.Sprintf("%T", devs.Transport)
}

// writePartitionedOutputs writes the evidence CSV (the summary, the plan
// and the steps as comment lines), the Markdown summary, and the table or
// JSON.
func writePartitionedOutputs(e *env, o *benchOptions, res *partbfs.BenchResult, prov evidence.Provenance, g *frontier.CSR) error {
	var table bytes.Buffer
	writePartitionedTable(&table, res)
	rows := func() []evidence.Sample {
		w := evidence.Workload{Name: g.Name, Nodes: uint64(g.NumVertices()), Edges: uint64(g.NumEdgeEntries() / 2), Iterations: res.Summary.TotalLevels}
		out := make([]evidence.Sample, len(res.Samples))
		now := time.Now().UTC()
		for i, s := range res.Samples {
			p := prov
			p.Date = now
			out[i] = evidenceRow(p, w, s)
		}
		return out
	}
	return benchOutputs{out: o.out, summary: o.summary, json: o.json}.write(e, table.Bytes(), res, rows,
		func(w io.Writer) { writePartitionedComments(w, table.String(), res) })
}

// writePartitionedComments appends the table, the plan and the steps to an
// evidence CSV as comment lines.
func writePartitionedComments(w io.Writer, table string, res *partbfs.BenchResult) {
	writeTableComments(w, table)
	writeJSONComments(w, jsonComment{"partition-plan", res.Plan}, jsonComment{"steps", res.Steps})
}

// writePartitionedTable writes the summary, the partition and the first
// root's steps as Markdown.
func writePartitionedTable(w io.Writer, res *partbfs.BenchResult) {
	s := res.Summary
	fmt.Fprintf(w, "%s: %d vertices, %d edges, %d roots, %d levels in all, %d samples, %s\n\n",
		s.Workload, s.Nodes, s.Edges, len(s.Roots), s.TotalLevels, s.Samples, s.Device)
	fmt.Fprintf(w, "partition (%s, %d devices, bitmap slices of %d words):\n", res.Plan.Strategy, len(res.Plan.Parts), res.Plan.SliceWords)
	for _, p := range res.Plan.Parts {
		fmt.Fprintf(w, "- device %d: vertices [%d, %d), %d edge entries, %d of %d bytes resident\n", p.Device, p.First, p.End, p.EdgeEntries, p.ResidentBytes, p.BudgetBytes)
	}
	fmt.Fprintln(w, "\n| arm | median per root | per level | GTEPS (hmean) | exchange per sample | exchange time | of the run | predicted exchange |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	fmt.Fprintf(w, "| %s | %s | %s | %.3f | %d B | %s | %.1f%% | %d B (largest step deviation %.1f%%) |\n", s.Arm, stats.FormatNs(s.MedianRootNs),
		stats.FormatNs(s.LevelNs), s.GTEPS, s.ExchangeBytes, stats.FormatNs(s.MedianExchangeNs), 100*s.ExchangeShare, s.PredictedBytes, 100*s.MaxStepDeviation)
	if len(res.Steps) > 0 {
		first := res.Steps[0].Root
		fmt.Fprintf(w, "\nlevel steps from root %d (every root's are in the evidence file):\n\n", first)
		fmt.Fprintln(w, "| level | direction | collective | queue/bitmap pairs | predicted bytes | measured bytes | exchange time | step time |")
		fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
		for _, st := range res.Steps {
			if st.Root != first {
				break
			}
			fmt.Fprintf(w, "| %d | %s | %s | %d/%d | %d | %d | %s | %s |\n", st.Level, st.Direction, st.Collective, st.QueuePairs, st.BitmapPairs,
				st.PredictedBytes, st.MeasuredBytes, stats.FormatNs(st.MedianExchangeNs), stats.FormatNs(st.MedianStepNs))
		}
	}
	for _, n := range s.Notes {
		fmt.Fprintf(w, "\nnote: %s\n", n)
	}
}
