package planners_test

import (
	"fmt"

	"github.com/gpuplan/gpuplan/planners"
)

func ExamplePlanBFSDirection() {
	graph := planners.BFSGraphProfile{Vertices: 1 << 22, EdgeEntries: 128_000_000}
	state := planners.BFSLevelState{Level: 2, Previous: planners.DirectionTopDown, FrontierVertices: 1500,
		PreviousFrontierVertices: 1, FrontierEdges: 9_000_000, UnexploredEdges: 100_000_000}
	d, err := planners.PlanBFSDirection(graph, state, planners.DefaultDirectionParams())
	fmt.Println(d.Direction, d.Reason, err)
	fmt.Println(d)
	// Output:
	// bottom-up frontier_edges_above_unexplored_over_alpha <nil>
	// bfs-direction-v1|level=2|direction=bottom-up|reason=frontier_edges_above_unexplored_over_alpha|frontier_vertices=1500|frontier_edges=9000000|unexplored_edges=100000000
}

func ExamplePlanMultiSourceBFS() {
	plan, err := planners.PlanMultiSourceBFS(planners.MultiSourceBFSRequest{
		Roots: 100, Vertices: 1 << 22, GraphBytes: 530_000_000, LevelBytes: 4, BudgetBytes: 4 << 30})
	fmt.Println(plan.Width, plan.Batches, plan.ResidentBytes, err)
	_, err = planners.PlanMultiSourceBFS(planners.MultiSourceBFSRequest{
		Roots: 100, Vertices: 1 << 22, GraphBytes: 530_000_000, LevelBytes: 4, BudgetBytes: 1 << 30})
	fmt.Println(err)
	// Output:
	// 64 [{0 64} {64 36}] 1704405120 <nil>
	// multi-source BFS: a pass of 32 roots at width 32 needs 1117202560 bytes (graph 530000000 + masks 50331648 + levels 536870912), above budget_bytes 1073741824. Fix: raise budget_bytes to at least 1117202560, or return per-root checksums instead of levels (level_bytes and level_bits 0)
}

// A pass that keeps its levels as bit planes needs the bits of its deepest
// level per vertex and root bit, in 32-byte groups, whatever its roots.
func ExamplePlanMultiSourceBFS_levelPlanes() {
	req := planners.MultiSourceBFSRequest{Roots: 64, Vertices: 1 << 22, GraphBytes: 530_000_000, LevelBits: 23, BudgetBytes: 4 << 30}
	plan, err := planners.PlanMultiSourceBFS(req)
	fmt.Println(plan.Width, planners.PlaneGroups(req.LevelBits, plan.Width), plan.OutputBytes/req.Vertices, err)
	// Output:
	// 64 6 192 <nil>
}
