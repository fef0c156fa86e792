package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/gpuplan/gpuplan/planners"
)

// batchInput is the JSON input of `gpuplan batch`.
type batchInput struct {
	BudgetBytes uint64                `json:"budget_bytes"`
	Queries     []planners.MultiQuery `json:"queries"`
}

const batchAbout = `Batch many queries over resident graphs into few launches (vyre
multi_query_execution). Queries sharing graph_layout_hash and traversal_key
run in one launch while graph + Σ frontier + max scratch + Σ output fits
budget_bytes; launches are ordered by (graph, key) and the first launch on a
graph uploads it, every later one reuses it warm.

Input (JSON object, every field required):
  budget_bytes   device bytes one launch may keep resident
  queries        list of {query, graph_layout_hash, traversal_key,
                 graph_upload_bytes, frontier_bytes, scratch_bytes,
                 output_bytes}; hash, key and graph bytes are non-zero and
                 one graph has one graph_upload_bytes

Example:
  {"budget_bytes": 350, "queries": [
    {"query": 1, "graph_layout_hash": 2748, "traversal_key": 16,
     "graph_upload_bytes": 100, "frontier_bytes": 100, "scratch_bytes": 10,
     "output_bytes": 10}]}`

func runBatch(e *env, args []string) error {
	var in batchInput
	f, _, err := e.jsonInput("batch", batchAbout, args, &in)
	if err != nil {
		return err
	}
	plan, err := planners.PlanMultiQueryExecution(in.Queries, in.BudgetBytes)
	if err != nil {
		return err
	}
	return writePlan(e.stdout, f, plan, func(tw *tabwriter.Writer) {
		r := plan.GraphReuse
		fmt.Fprintf(tw, "queries\t%d\n", len(in.Queries))
		fmt.Fprintf(tw, "launches\t%d\n", plan.LaunchCount)
		fmt.Fprintf(tw, "avoided launches\t%d\n", plan.AvoidedLaunches)
		fmt.Fprintf(tw, "avoided host fences\t%d\n", plan.AvoidedHostFences)
		fmt.Fprintf(tw, "graph uploads\t%d cold (%d bytes), %d warm reuses (%d bytes avoided)\n", r.ColdUploads, r.UploadBytes, r.WarmReuses, r.AvoidedUploadBytes)
		fmt.Fprintf(tw, "peak resident bytes\t%d of %d budget\n", plan.PeakResidentBytes, in.BudgetBytes)
		fmt.Fprintf(tw, "host fences\tone per launch, at the end\n")
		fmt.Fprintf(tw, "\nlaunch\tgraph\tkey\tqueries\tupload bytes\tresident bytes\tpeak scratch\n")
		for i, g := range plan.Groups {
			fmt.Fprintf(tw, "%d\t%#x\t%#x\t%s\t%d\t%d\t%d\n", i, g.GraphLayoutHash, g.TraversalKey, joinUints(g.Queries),
				g.GraphUploadBytes, g.ResidentBytes, g.PeakScratchBytes)
		}
	})
}
