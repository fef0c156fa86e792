package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/gpuplan/gpuplan/planners"
)

// The JSON input of `gpuplan session` is planners.ResidentGraphSessionProfile
// itself: its snake_case fields, every one required.

const sessionAbout = `Plan repeated runs over one graph kept resident on the device (vyre
resident_graph_session). The graph is uploaded once, scratch is allocated
once and reused, every run refreshes its frontier, and the output is read
back once, after the final run. The plan checks the peak resident bytes
(graph + frontier + scratch + output) against the budget and reports what
residency avoids: graph uploads, device allocations and host fences.

Input (JSON object, every field required):
  graph_layout_hash        identity of the resident graph layout, not 0
  graph_bytes              bytes of the graph, uploaded once; not 0
  run_count                runs over the resident graph; not 0
  per_run_frontier_bytes   frontier bytes refreshed by every run
  reusable_scratch_bytes   scratch bytes allocated once and reused
  per_run_output_bytes     output bytes of one run
  budget_bytes             device bytes the session may keep resident; not 0
  readback                 "final_only" or "per_run" (rejected: a host fence
                           in every run)

Example:
  {"graph_layout_hash": 2748, "graph_bytes": 1048576, "run_count": 128,
   "per_run_frontier_bytes": 4096, "reusable_scratch_bytes": 65536,
   "per_run_output_bytes": 2048, "budget_bytes": 2000000,
   "readback": "final_only"}`

func runSession(e *env, args []string) error {
	var in planners.ResidentGraphSessionProfile
	f, _, err := e.jsonInput("session", sessionAbout, args, &in)
	if err != nil {
		return err
	}
	plan, err := planners.PlanResidentGraphSession(in)
	if err != nil {
		return err
	}
	return writePlan(e.stdout, f, plan, func(tw *tabwriter.Writer) {
		fmt.Fprintf(tw, "graph layout hash\t%#x\n", plan.GraphLayoutHash)
		fmt.Fprintf(tw, "runs\t%d (1 cold, %d warm)\n", in.RunCount, plan.GraphReuse.WarmReuses)
		fmt.Fprintf(tw, "peak resident bytes\t%d of %d budget\n", plan.PeakResidentBytes, in.BudgetBytes)
		fmt.Fprintf(tw, "  graph\t%d, uploaded once\n", plan.OneTimeGraphUploadBytes)
		fmt.Fprintf(tw, "  frontier\t%d per run, %d refreshed in all\n", in.PerRunFrontierBytes, plan.TotalFrontierRefreshBytes)
		fmt.Fprintf(tw, "  scratch\t%d, allocated once\n", in.ReusableScratchBytes)
		fmt.Fprintf(tw, "  output\t%d\n", in.PerRunOutputBytes)
		fmt.Fprintf(tw, "avoided graph upload bytes\t%d\n", plan.AvoidedGraphUploadBytes)
		fmt.Fprintf(tw, "avoided device allocations\t%d\n", plan.AvoidedDeviceAllocations)
		fmt.Fprintf(tw, "avoided host fences\t%d\n", plan.AvoidedHostFences)
		fmt.Fprintf(tw, "host readback\t%d bytes, once after the final run\n", plan.HostReadbackBytes)
	})
}
