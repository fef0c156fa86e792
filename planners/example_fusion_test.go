package planners_test

import (
	"fmt"

	"github.com/gpuplan/gpuplan/planners"
)

func ExamplePlanLaunchFusion() {
	plan, err := planners.PlanLaunchFusion([]planners.LaunchFusionStage{
		{ID: 1, LayoutHash: 7, InputBytes: 64, OutputBytes: 32, ScratchBytes: 8},
		{ID: 2, LayoutHash: 7, InputBytes: 32, OutputBytes: 48, ScratchBytes: 8},
		{ID: 3, LayoutHash: 7, InputBytes: 48, OutputBytes: 16, ScratchBytes: 8},
	}, 256)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, g := range plan.Groups {
		fmt.Println(g.StageIDs, g.RequiredBytes)
	}
	fmt.Println(plan.LaunchCount, plan.AvoidedLaunches, plan.AvoidedIntermediateBytes)
	// Output:
	// [1 2 3] 184
	// 1 2 80
}

func ExamplePlanLaunchFusion_stageOverBudget() {
	_, err := planners.PlanLaunchFusion([]planners.LaunchFusionStage{
		{ID: 9, LayoutHash: 7, InputBytes: 64, OutputBytes: 32, ScratchBytes: 64},
	}, 128)
	fmt.Println(err)
	// Output: stages[0]: stage 9 alone needs 160 bytes (input + output + scratch) but max_group_bytes is 128. Fix: raise max_group_bytes to at least 160 or split stage 9
}
