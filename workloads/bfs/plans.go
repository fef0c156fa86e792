package bfs

import (
	"fmt"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/internal/checked"
	"github.com/gpuplan/gpuplan/megakernel"
	"github.com/gpuplan/gpuplan/planners"
	"github.com/gpuplan/gpuplan/workloads/harness"
)

// Plans are the plan values a Session consumes. Every decision a session
// takes comes from one of them.
type Plans struct {
	// Memory is the resident memory plan: NewSession refuses a graph that
	// does not fit before allocating anything, and allocates exactly
	// Memory.RequiredBytes.
	Memory megakernel.MemoryPlan `json:"memory"`
	// Queue is the device work queue plan of each of the two frontier
	// queues: its capacity and bytes size them, and its drain chunk caps
	// the grid of a per-level launch.
	Queue planners.DeviceWorkQueueBackpressurePlan `json:"queue"`
	// LevelGrid and MegakernelGrid are the launch shapes from the occupancy
	// model, cross-checked with the driver.
	LevelGrid      executor.GridPlan `json:"level_grid"`
	MegakernelGrid executor.GridPlan `json:"megakernel_grid"`
	// Convergence is the device-side convergence plan: the megakernel reads
	// its changed flag once, at the end, and its iteration budget bounds
	// the levels of every arm.
	Convergence megakernel.ConvergencePlan `json:"convergence"`
	// OffsetBytes is the kernels' offset width (PlanOffsetWidth), which
	// sizes the offsets, the queue items and the decision log.
	OffsetBytes OffsetWidth `json:"offset_bytes"`
}

// MemoryRequest returns the memory request of a resident BFS of g at
// offset width w: the CSR (offsets of w bytes, 4-byte targets), two
// frontier queues of queueBytes each and two visited bitmaps as the
// frontier, the control buffer, the decision log and the offsets' end word
// as scratch, and the 4-byte level of every vertex as output.
func MemoryRequest(g *frontier.CSR, w OffsetWidth, queueBytes, budget uint64) (megakernel.MemoryRequest, error) {
	frontierBytes, err := checked.Mul(queueBytes, 2, "frontier queue bytes")
	if err != nil {
		return megakernel.MemoryRequest{}, err
	}
	if frontierBytes, err = checked.Sum("frontier bytes (queues and visited bitmaps)", frontierBytes, VisitedBytes(g), VisitedBytes(g)); err != nil {
		return megakernel.MemoryRequest{}, err
	}
	n := uint64(g.NumVertices())
	output, err := checked.Mul(n, 4, "level bytes")
	if err != nil {
		return megakernel.MemoryRequest{}, err
	}
	return megakernel.MemoryRequest{
		Graph:         graphShape(g),
		BytesPerNode:  uint64(w),
		BytesPerEdge:  4,
		FrontierBytes: frontierBytes,
		ScratchBytes:  4*CtlWords + uint64(w) + w.LogEntryBytes()*LogEntries(g),
		OutputBytes:   output,
		BudgetBytes:   budget,
	}, nil
}

// VisitedBytes is the size of one visited bitmap of g: one bit per vertex
// in 32-bit words.
func VisitedBytes(g *frontier.CSR) uint64 { return 4 * ((uint64(g.NumVertices()) + 31) / 32) }

// LogEntries is the capacity of g's decision log: one entry per level (a
// traversal has at most one level per vertex), at most maxLogEntries, at
// least 2 (a level reads the previous level's entry while it writes its
// own). A traversal of more levels keeps the last ones.
func LogEntries(g *frontier.CSR) uint64 {
	return max(2, min(uint64(g.NumVertices())+1, maxLogEntries))
}

// DirectionOptimizing reports whether the planner's degree gate lets g's
// levels leave top-down (planners.PlanBFSDirection with the default
// parameters): graphs of average degree 5 or more.
func DirectionOptimizing(g *frontier.CSR) bool {
	if g.NumVertices() == 0 {
		return false
	}
	d, err := planners.PlanBFSDirection(directionProfile(g), planners.BFSLevelState{Level: 1, FrontierVertices: 1},
		planners.DefaultDirectionParams())
	return err == nil && d.Reason != planners.ReasonLowAverageDegree
}

// directionProfile is g as the direction planner sees it.
func directionProfile(g *frontier.CSR) planners.BFSGraphProfile {
	return planners.BFSGraphProfile{Vertices: uint64(g.NumVertices()), EdgeEntries: uint64(g.NumEdgeEntries())}
}

// graphShape is g as the planners see it. A graph without edges still has a
// 4-byte targets buffer, counted as one edge.
func graphShape(g *frontier.CSR) megakernel.GraphShape {
	return megakernel.GraphShape{NodeCount: uint64(g.NumVertices()), EdgeCount: uint64(max(1, g.NumEdgeEntries()))}
}

// PlanMemory plans the resident memory of a BFS over g at offset width w
// with queues of queueBytes each under budget. It fails with
// *megakernel.OverBudgetError, wrapped with the graph's name, when the
// state does not fit.
func PlanMemory(g *frontier.CSR, w OffsetWidth, queueBytes, budget uint64) (megakernel.MemoryPlan, error) {
	req, err := MemoryRequest(g, w, queueBytes, budget)
	if err != nil {
		return megakernel.MemoryPlan{}, err
	}
	return harness.PlanMemory("BFS over "+g.Name, req)
}

// QueueProfile returns the work queue profile of one frontier queue of g
// at offset width w: capacity QueueBound items of w.QueueItemBytes,
// holding at launch the items of the vertex of largest degree (the most a
// root can start with).
func QueueProfile(g *frontier.CSR, w OffsetWidth, chunk int, budget uint64) (planners.DeviceWorkQueueProfile, error) {
	capacity, err := QueueBound(g, chunk)
	if err != nil {
		return planners.DeviceWorkQueueProfile{}, err
	}
	var maxDeg uint64
	for v := range g.NumVertices() {
		maxDeg = max(maxDeg, g.Offsets[v+1]-g.Offsets[v])
	}
	initial := (maxDeg + uint64(chunk) - 1) / uint64(chunk)
	return planners.DeviceWorkQueueProfile{InitialItems: max(initial, 1), QueueCapacity: capacity,
		EntryBytes: w.QueueItemBytes(), BudgetBytes: budget, HostSync: planners.WorkQueueFinalOnly}, nil
}

// PlanQueue plans a frontier queue and its drain: a per-level launch of the
// level grid takes at most one item per warp at a time, so its drain chunk
// is the grid's warps.
func PlanQueue(g *frontier.CSR, w OffsetWidth, chunk int, budget uint64, levelGrid executor.GridPlan) (planners.DeviceWorkQueueBackpressurePlan, error) {
	p, err := QueueProfile(g, w, chunk, budget)
	if err != nil {
		return planners.DeviceWorkQueueBackpressurePlan{}, err
	}
	warps := uint64(levelGrid.GridBlocks) * uint64(levelGrid.BlockThreads/32)
	return planners.PlanDeviceWorkQueueBackpressure(p, max(warps, 1))
}

// levelBlocks is the grid of a per-level launch for count items: one item
// per warp, at most the queue plan's drain chunk.
func levelBlocks(count uint64, warpsPerBlock uint64, q planners.DeviceWorkQueueBackpressurePlan) uint32 {
	items := min(count, q.ItemsPerChunk)
	return uint32(max(1, (items+warpsPerBlock-1)/warpsPerBlock))
}

// ArmForTopology maps an execution topology to the arm that runs it: a
// fused wave or a warp-sparse frontier (small frontiers of a low-degree
// graph, where each level is mostly launch overhead) runs as one persistent
// cooperative launch, the megakernel; every other topology has levels large
// enough to fill the device, and runs as the device loop.
func ArmForTopology(t megakernel.Topology) Arm {
	return harness.TopologyArm(t, ArmMegakernel, ArmDeviceLoop)
}

// Profile is what one measured traversal says about a graph, the input of
// the arm plan.
type Profile struct {
	// Levels and Reached are the traversal's levels and reached vertices,
	// Vertices the graph's.
	Levels, Reached, Vertices int
	// LevelNs is the host loop's median cost of one level.
	LevelNs float64
	// StepCost is the launch overhead and the host loop's readback per
	// level.
	harness.StepCost
}

// ArmPlan is the execution arm the megakernel topology selection picks for
// a graph from its measured profile.
type ArmPlan = harness.ArmPlan[Arm, Profile]

// PlanArm selects the topology from a measured profile: the schedule sample
// is one level (its cost, the mean frontier density reached/(levels x
// vertices), its readback), the fusion pressure comes from the homotopy
// scheduler, and memory pressure from the memory plan.
func PlanArm(p Profile, graph megakernel.GraphShape, mem megakernel.MemoryPlan) (ArmPlan, error) {
	if p.Levels < 1 || p.Vertices < 1 || p.Reached < 1 || p.Reached > p.Vertices {
		return ArmPlan{}, fmt.Errorf("profile of %d levels reaching %d of %d vertices is not a traversal. Fix: profile from a root with edges", p.Levels, p.Reached, p.Vertices)
	}
	density := float64(p.Reached) / (float64(p.Levels) * float64(p.Vertices))
	return harness.PlanStep(p, p.StepCost, p.LevelNs, density, graph, mem, ArmForTopology)
}
