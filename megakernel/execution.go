package megakernel

// FrontierExecutionRequest is the input of PlanFrontierExecution (the
// arguments of vyre's plan_cuda_frontier_megakernel_execution).
type FrontierExecutionRequest struct {
	// Identity is the cache identity: graph layout hash, analysis kind and
	// device key.
	Identity PlanIdentity
	// Sample is the measured dispatch; its readback is replaced by the
	// amortised readback before topology selection.
	Sample ScheduleSample
	// Graph, BytesPerNode and BytesPerEdge give the resident graph layout.
	Graph        GraphShape
	BytesPerNode uint64
	BytesPerEdge uint64
	// Waves and Dependencies form the wave DAG; a wave's index is its id.
	Waves        []FrontierWave
	Dependencies []Dependency
	// BudgetBytes is the device memory budget for the whole plan.
	BudgetBytes uint64
	// LaunchOverheadNS is the per-launch overhead in nanoseconds.
	LaunchOverheadNS float64
	// FusionPressure in [0, 1], for example from ScheduleFusionPressure.
	FusionPressure float64
}

// FrontierExecutionPlan joins the memory-split barrier plan and the cached
// execution plan (vyre's CudaMegakernelFrontierExecutionPlan).
type FrontierExecutionPlan struct {
	// Execution is the topology, its memory plan and the downgrade flag.
	Execution ExecutionPlan `json:"execution"`
	// FrontierMemoryPlan is the memory-split barrier plan with the layer
	// count, the per-group peaks (scratch unscaled), the amortised readback
	// max(sample readback, peak output) and the widest group. Its fields are
	// promoted, in JSON too.
	FrontierMemoryPlan
}

// PlanFrontierExecution plans a frontier megakernel execution (vyre's
// plan_cuda_frontier_megakernel_execution):
//
//  1. graph bytes = nodes x bytes per node + edges x bytes per edge
//     (overflow labels "node layout bytes", "edge layout bytes", "graph
//     layout bytes");
//  2. PlanFrontierMemory with that resident graph, the budget and the
//     sample's readback;
//  3. cache.GetOrPlanExecution with the sample's readback replaced by the
//     amortised readback, the three per-group peaks as frontier, scratch and
//     output, and the full budget.
//
// Errors, in that order: *checked.OverflowError; the barrier errors
// (*InvalidWaveError, *SelfDependencyError, *CycleError);
// *GroupOverBudgetError; *checked.OverflowError from the memory split; and
// *OverBudgetError or *checked.OverflowError from the memory plan. A nil
// cache plans through a fresh single-use cache.
func PlanFrontierExecution(cache *PlanCache, req FrontierExecutionRequest) (FrontierExecutionPlan, error) {
	graphBytes, err := GraphLayoutBytes(req.Graph, req.BytesPerNode, req.BytesPerEdge)
	if err != nil {
		return FrontierExecutionPlan{}, err
	}
	mem, err := PlanFrontierMemory(FrontierMemoryRequest{Waves: req.Waves, Dependencies: req.Dependencies,
		ResidentGraphBytes: graphBytes, BudgetBytes: req.BudgetBytes, ReadbackBytes: req.Sample.ReadbackBytes})
	if err != nil {
		return FrontierExecutionPlan{}, err
	}
	if cache == nil {
		cache = NewPlanCache(0)
	}
	sample := req.Sample
	sample.ReadbackBytes = mem.AmortizedReadbackBytes
	exec, err := cache.GetOrPlanExecution(req.Identity, sample, MemoryRequest{Graph: req.Graph,
		BytesPerNode: req.BytesPerNode, BytesPerEdge: req.BytesPerEdge, FrontierBytes: mem.PeakFrontierBytes,
		ScratchBytes: mem.PeakScratchBytes, OutputBytes: mem.PeakOutputBytes, BudgetBytes: req.BudgetBytes},
		req.LaunchOverheadNS, req.FusionPressure)
	if err != nil {
		return FrontierExecutionPlan{}, err
	}
	return FrontierExecutionPlan{Execution: exec, FrontierMemoryPlan: mem}, nil
}
