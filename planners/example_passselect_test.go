package planners_test

import (
	"fmt"

	"github.com/gpuplan/gpuplan/planners"
)

func ExampleSelectBenchmarkPasses() {
	plan, err := planners.SelectBenchmarkPasses([]planners.BenchmarkPassCandidate{
		{PassID: planners.PassLaunchFusion, MinFrontierItems: 1, MinReuseCount: 1, MinAvoidedReadbackBytes: 1,
			PlanningCostNs: 20_000, ScratchBytes: 4096, ExpectedSpeedupBPS: 15_000},
		{PassID: planners.PassGraphCaptureReplay, MinFrontierItems: 4096, MinReuseCount: 8, MinAvoidedReadbackBytes: 64 << 10,
			PlanningCostNs: 40_000, ScratchBytes: 8192, ExpectedSpeedupBPS: 20_000},
		{PassID: planners.PassResultCompaction, MinAvoidedReadbackBytes: 1 << 30,
			PlanningCostNs: 5_000, ScratchBytes: 1024, ExpectedSpeedupBPS: 11_000},
	}, planners.BenchmarkPassSelectionSample{
		FrontierItems: 1 << 16, ReuseCount: 64, AvoidableReadbackBytes: 1 << 20,
		PlanningBudgetNs: 100_000, ScratchBudgetBytes: 1 << 20,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(plan.SelectedPassIDs)
	for _, s := range plan.SkippedPasses {
		fmt.Println("skipped", s.PassID, s.Reason)
	}
	fmt.Println(plan.TotalPlanningCostNs, plan.TotalScratchBytes, plan.ProjectedSpeedupBPS)
	// Output:
	// [cuda.graph_capture_replay cuda.launch_fusion]
	// skipped cuda.result_compaction readback_below_threshold
	// 60000 12288 30000
}
