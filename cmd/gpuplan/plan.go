package main

import (
	_ "embed"
	"fmt"
	"path/filepath"

	"github.com/gpuplan/gpuplan/internal/input"

	"github.com/gpuplan/gpuplan/megakernel"
	"github.com/gpuplan/gpuplan/occupancy"
)

// defaultPlanWorkload is the example `gpuplan plan` plans when given no
// file: a four-way sharded, multi-phase taint dataflow analysis on an H100
// SXM.
//
//go:embed plan_default.json
var defaultPlanWorkload []byte

const planAbout = `
Plans a megakernel execution of a wave DAG: barrier groups (Kahn layers split
to fit the memory budget), the per-producer wait form a persistent kernel
uses instead of grid-wide barriers, the execution topology with vyre's stable
explanation, the memory plan and the device-side convergence plan.

The input is a workload JSON file ("-" reads standard input); with no file,
the embedded default example is planned. Fields: analysis, device (a built-in
profile name, see 'gpuplan devices') or device_file (a profile JSON path,
relative to the workload file), memory_budget_bytes (default 90% of the
device memory), launch_overhead_ns, graph {node_count, edge_count,
bytes_per_node, bytes_per_edge}, schedule_sample {dispatch_cost_ns,
frontier_density, readback_bytes}, fusion_pressure (default: derived from the
sample by the homotopy scheduler), max_device_iterations (default 1024),
graph_layout_hash, waves [{id, name, frontier_bytes, scratch_bytes,
output_bytes}] and dependencies [{before, after}]. Decoding is strict.

Output: readable tables by default, --json for machines, --dot for a
Graphviz drawing with barrier groups as clusters (at most 5000 waves).
Exit status 1 for an invalid workload or plan (the message names the field
and says how to fix it), 2 for a usage error.`

func runPlan(e *env, args []string) error {
	f := e.newFlags("plan", "plan [--json | --dot] [FILE|-]", planAbout)
	dot := f.Bool("dot", false, "write a Graphviz DOT drawing of the wave DAG, barrier groups as clusters")
	f.readsInput()
	if err := f.parse(args); err != nil {
		return err
	}
	if f.NArg() > 1 {
		return usagef("gpuplan plan: expected at most one workload file, got %d arguments. Fix: pass one workload JSON file, - for standard input, or nothing for the default example", f.NArg())
	}
	if f.json && *dot {
		return usagef("gpuplan plan: --json and --dot cannot be combined. Fix: keep one of them")
	}
	data, source, dir := defaultPlanWorkload, "<default example>", ""
	if f.NArg() == 1 {
		path := f.Arg(0)
		var err error
		if data, source, err = e.readInput(path); err != nil {
			return err
		}
		if path != "-" {
			dir = filepath.Dir(path)
		}
	}
	w, err := megakernel.DecodeWorkload(source, data)
	if err != nil {
		return err
	}
	dev, profile, err := resolvePlanDevice(e, w, source, dir)
	if err != nil {
		return err
	}
	p, err := megakernel.PlanWorkload(source, w, dev, profile, nil)
	if err != nil {
		return err
	}
	switch {
	case f.json:
		return writeJSON(e.stdout, p)
	case *dot:
		return p.WriteDOT(e.stdout)
	}
	return p.WriteText(e.stdout)
}

// resolvePlanDevice returns the workload's device: a built-in profile by
// name, or a profile file resolved against the workload file's directory.
func resolvePlanDevice(e *env, w *megakernel.Workload, source, dir string) (occupancy.Device, string, error) {
	if w.Device != nil {
		p, err := lookupProfile(*w.Device, "use one of the known names, or give the path of a profile JSON as device_file instead")
		if err != nil {
			return occupancy.Device{}, "", &megakernel.WorkloadError{Source: source, Field: "device", Err: err}
		}
		return p.Device, p.Short, nil
	}
	path := *w.DeviceFile
	if !filepath.IsAbs(path) && dir != "" {
		path = filepath.Join(dir, path)
	}
	data, err := input.ReadFile(path, nil, e.inputLimit)
	if err != nil {
		return occupancy.Device{}, "", &megakernel.WorkloadError{Source: source, Field: "device_file",
			Err: fmt.Errorf("%w (relative paths start at the workload file's directory)", err)}
	}
	dev, err := occupancy.LoadDeviceJSON(path, data)
	if err != nil {
		return occupancy.Device{}, "", &megakernel.WorkloadError{Source: source, Field: "device_file", Err: err}
	}
	return dev, "", nil
}
