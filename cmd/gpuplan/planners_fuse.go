package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/gpuplan/gpuplan/planners"
)

// fuseInput is the JSON input of `gpuplan fuse`.
type fuseInput struct {
	MaxGroupBytes uint64                       `json:"max_group_bytes"`
	Stages        []planners.LaunchFusionStage `json:"stages"`
}

const fuseAbout = `Fuse runs of consecutive pipeline stages into single kernel launches
(vyre launch_fusion). A stage joins the current launch when it needs no host
materialisation, shares the first stage's layout_hash, and the launch's peak
(first stage input + output + scratch, plus scratch + output of each joined
stage) stays within max_group_bytes.

Input (JSON object, every field required):
  max_group_bytes   device bytes one fused launch may use
  stages            list of {id, layout_hash, input_bytes, output_bytes,
                    scratch_bytes, requires_host_materialization}

Example:
  {"max_group_bytes": 256, "stages": [
    {"id": 1, "layout_hash": 7, "input_bytes": 64, "output_bytes": 32,
     "scratch_bytes": 8, "requires_host_materialization": false}]}`

func runFuse(e *env, args []string) error {
	var in fuseInput
	f, _, err := e.jsonInput("fuse", fuseAbout, args, &in)
	if err != nil {
		return err
	}
	plan, err := planners.PlanLaunchFusion(in.Stages, in.MaxGroupBytes)
	if err != nil {
		return err
	}
	return writePlan(e.stdout, f, plan, func(tw *tabwriter.Writer) {
		fmt.Fprintf(tw, "stages\t%d\n", len(in.Stages))
		fmt.Fprintf(tw, "launches\t%d (%d avoided)\n", plan.LaunchCount, plan.AvoidedLaunches)
		fmt.Fprintf(tw, "avoided intermediate bytes\t%d\n", plan.AvoidedIntermediateBytes)
		fmt.Fprintf(tw, "\nlaunch\tstages\tlayout hash\trequired bytes\tavoided bytes\n")
		for i, g := range plan.Groups {
			fmt.Fprintf(tw, "%d\t%s\t%#x\t%d\t%d\n", i, joinUints(g.StageIDs), g.LayoutHash, g.RequiredBytes, g.AvoidedIntermediateBytes)
		}
	})
}
