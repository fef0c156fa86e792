package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/gpuplan/gpuplan/internal/quote"
	"github.com/gpuplan/gpuplan/planners"
)

// passesInput is the JSON input of `gpuplan passes`.
type passesInput struct {
	Sample     planners.BenchmarkPassSelectionSample `json:"sample"`
	Candidates []planners.BenchmarkPassCandidate     `json:"candidates"`
}

const passesAbout = `Choose optimisation passes from benchmark evidence (vyre
benchmark_pass_selection). Candidates are ranked mandatory first, then by
expected_speedup_bps × (min_frontier_items + min_reuse_count +
min_avoided_readback_bytes), then by pass id; a pass is selected when the
sample meets its thresholds and its planning cost and scratch fit what is
left of the budgets. A mandatory pass that meets its thresholds but does not
fit is an error.

Input (JSON object, every field required):
  sample       {frontier_items, reuse_count, avoidable_readback_bytes,
               planning_budget_ns, scratch_budget_bytes}
  candidates   list of {pass_id, min_frontier_items, min_reuse_count,
               min_avoided_readback_bytes, planning_cost_ns, scratch_bytes,
               expected_speedup_bps (above 10000), mandatory_when_profitable}

Example:
  {"sample": {"frontier_items": 65536, "reuse_count": 64,
     "avoidable_readback_bytes": 1048576, "planning_budget_ns": 100000,
     "scratch_budget_bytes": 1048576},
   "candidates": [{"pass_id": "cuda.launch_fusion", "min_frontier_items": 1,
     "min_reuse_count": 1, "min_avoided_readback_bytes": 1,
     "planning_cost_ns": 20000, "scratch_bytes": 4096,
     "expected_speedup_bps": 15000, "mandatory_when_profitable": false}]}`

func runPasses(e *env, args []string) error {
	var in passesInput
	f, _, err := e.jsonInput("passes", passesAbout, args, &in)
	if err != nil {
		return err
	}
	plan, err := planners.SelectBenchmarkPasses(in.Candidates, in.Sample)
	if err != nil {
		return err
	}
	return writePlan(e.stdout, f, plan, func(tw *tabwriter.Writer) {
		fmt.Fprintf(tw, "candidates\t%d (%d selected, %d skipped)\n", len(in.Candidates), len(plan.SelectedPassIDs), len(plan.SkippedPasses))
		fmt.Fprintf(tw, "planning cost\t%d ns of %d budget\n", plan.TotalPlanningCostNs, in.Sample.PlanningBudgetNs)
		fmt.Fprintf(tw, "scratch\t%d bytes of %d budget\n", plan.TotalScratchBytes, in.Sample.ScratchBudgetBytes)
		fmt.Fprintf(tw, "projected speedup\t%d bps (%d.%04dx)\n", plan.ProjectedSpeedupBPS, plan.ProjectedSpeedupBPS/10000, plan.ProjectedSpeedupBPS%10000)
		fmt.Fprintf(tw, "\npass\tdecision\n")
		for _, id := range plan.SelectedPassIDs {
			fmt.Fprintf(tw, "%s\tselected\n", quote.Text(id))
		}
		for _, s := range plan.SkippedPasses {
			fmt.Fprintf(tw, "%s\tskipped: %s\n", quote.Text(s.PassID), s.Reason)
		}
	})
}
