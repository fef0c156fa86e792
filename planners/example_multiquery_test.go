package planners_test

import (
	"fmt"

	"github.com/gpuplan/gpuplan/planners"
)

func ExamplePlanMultiQueryExecution() {
	q := func(id uint32) planners.MultiQuery {
		return planners.MultiQuery{Query: id, GraphLayoutHash: 0xabc, TraversalKey: 0x10,
			GraphUploadBytes: 100, FrontierBytes: 100, ScratchBytes: 10, OutputBytes: 10}
	}
	plan, err := planners.PlanMultiQueryExecution([]planners.MultiQuery{q(3), q(1), q(2)}, 350)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, g := range plan.Groups {
		fmt.Println(g.Queries, "resident", g.ResidentBytes, "upload", g.GraphUploadBytes)
	}
	fmt.Println("launches", plan.LaunchCount, "avoided upload bytes", plan.AvoidedGraphUploadBytes)
	// Output:
	// [1 2] resident 330 upload 100
	// [3] resident 220 upload 0
	// launches 2 avoided upload bytes 200
}
