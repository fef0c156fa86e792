package megakernel

import (
	"fmt"
	"math"

	"github.com/gpuplan/gpuplan/internal/checked"
)

// MemoryPlan is the device memory a topology needs (vyre's
// MegakernelMemoryPlan). ScratchBytes is already scaled for the topology.
type MemoryPlan struct {
	GraphBytes        uint64 `json:"graph_bytes"`
	FrontierBytes     uint64 `json:"frontier_bytes"`
	ScratchBytes      uint64 `json:"scratch_bytes"`
	OutputBytes       uint64 `json:"output_bytes"`
	RequiredBytes     uint64 `json:"required_bytes"`
	BudgetBytes       uint64 `json:"budget_bytes"`
	MemoryPressureBPS uint32 `json:"memory_pressure_bps"`
}

// OverBudgetError reports that a topology's memory plan exceeds the budget
// (vyre's MegakernelMemoryError::OverBudget).
type OverBudgetError struct {
	Topology      Topology
	RequiredBytes uint64
	BudgetBytes   uint64
	NodeCount     uint64
	EdgeCount     uint64
}

// Error describes the failure and ends with a "Fix:" sentence.
func (e *OverBudgetError) Error() string {
	return fmt.Sprintf("megakernel %s needs %d bytes (graph of %d nodes and %d edges plus frontier, scratch and output) but the memory budget is %d bytes. Fix: choose a sparse topology, shrink the frontier and scratch buffers, or raise the memory budget",
		e.Topology, e.RequiredBytes, e.NodeCount, e.EdgeCount, e.BudgetBytes)
}

// MemoryRequest is the input of PlanMemoryBudget and PlanExecution: the
// resident graph layout, the per-dispatch buffers and the budget.
type MemoryRequest struct {
	Graph         GraphShape
	BytesPerNode  uint64
	BytesPerEdge  uint64
	FrontierBytes uint64
	ScratchBytes  uint64
	OutputBytes   uint64
	BudgetBytes   uint64
}

// GraphLayoutBytes returns nodes x bytesPerNode + edges x bytesPerEdge, with
// the overflow labels "node layout bytes", "edge layout bytes" and "graph
// layout bytes".
func GraphLayoutBytes(graph GraphShape, bytesPerNode, bytesPerEdge uint64) (uint64, error) {
	nb, err := checked.Mul(graph.NodeCount, bytesPerNode, "node layout bytes")
	if err != nil {
		return 0, checked.Inputs(err, "graph.node_count x graph.bytes_per_node")
	}
	eb, err := checked.Mul(graph.EdgeCount, bytesPerEdge, "edge layout bytes")
	if err != nil {
		return 0, checked.Inputs(err, "graph.edge_count x graph.bytes_per_edge")
	}
	sum, err := checked.Add(nb, eb, "graph layout bytes")
	return sum, checked.Inputs(err, "graph.node_count x graph.bytes_per_node + graph.edge_count x graph.bytes_per_edge")
}

// TopologyScratchBytes scales the scratch bytes for a topology: WarpSparse
// max(s, 32), Sparse s, BlockDense 2 x max(s, 1024), Dense 2 x s, Hybrid
// 3 x s, Fused 4 x s.
func TopologyScratchBytes(t Topology, scratch uint64) (uint64, error) {
	switch t {
	case WarpSparseFrontier:
		return max(scratch, 32), nil
	case SparseFrontier:
		return scratch, nil
	case BlockDenseFrontier:
		return checked.Mul(max(scratch, 1024), 2, "block dense topology scratch bytes")
	case DenseFrontier:
		return checked.Mul(scratch, 2, "dense topology scratch bytes")
	case HybridFrontier:
		return checked.Mul(scratch, 3, "hybrid topology scratch bytes")
	case FusedWave:
		return checked.Mul(scratch, 4, "fused topology scratch bytes")
	}
	return 0, fmt.Errorf("unknown megakernel topology %d. Fix: use one of the Topology constants", int(t))
}

// PlanMemoryBudget sizes the topology's memory: required = graph layout +
// frontier + topology scratch + output (vyre's
// plan_megakernel_memory_budget). It fails with *OverBudgetError when
// required > budget and with *checked.OverflowError (labels "node layout
// bytes", "edge layout bytes", "graph layout bytes", the topology scratch
// labels, "graph plus frontier bytes", "scratch bytes", "output bytes").
func PlanMemoryBudget(t Topology, req MemoryRequest) (MemoryPlan, error) {
	graph, err := GraphLayoutBytes(req.Graph, req.BytesPerNode, req.BytesPerEdge)
	if err != nil {
		return MemoryPlan{}, err
	}
	scratch, err := TopologyScratchBytes(t, req.ScratchBytes)
	if err != nil {
		return MemoryPlan{}, checked.Inputs(err, "the waves' peak scratch_bytes, scaled for the "+t.String()+" topology")
	}
	const inputs = "the graph layout + the waves' peak frontier_bytes, scratch_bytes and output_bytes"
	required, err := checked.Add(graph, req.FrontierBytes, "graph plus frontier bytes")
	if err != nil {
		return MemoryPlan{}, checked.Inputs(err, inputs)
	}
	if required, err = checked.Add(required, scratch, "scratch bytes"); err != nil {
		return MemoryPlan{}, checked.Inputs(err, inputs)
	}
	if required, err = checked.Add(required, req.OutputBytes, "output bytes"); err != nil {
		return MemoryPlan{}, checked.Inputs(err, inputs)
	}
	if required > req.BudgetBytes {
		return MemoryPlan{}, &OverBudgetError{Topology: t, RequiredBytes: required, BudgetBytes: req.BudgetBytes,
			NodeCount: req.Graph.NodeCount, EdgeCount: req.Graph.EdgeCount}
	}
	return MemoryPlan{GraphBytes: graph, FrontierBytes: req.FrontierBytes, ScratchBytes: scratch,
		OutputBytes: req.OutputBytes, RequiredBytes: required, BudgetBytes: req.BudgetBytes,
		MemoryPressureBPS: memoryPressureBPS(MemoryBudget{RequiredBytes: required, BudgetBytes: req.BudgetBytes})}, nil
}

// ExecutionPlan is a chosen topology with its memory plan (vyre's
// MegakernelExecutionPlan). Decision is the selection as made; when the
// chosen topology did not fit, Topology is SparseFrontier and
// DowngradedToSparse is true.
type ExecutionPlan struct {
	Topology           Topology         `json:"topology"`
	Decision           TopologyDecision `json:"decision"`
	Memory             MemoryPlan       `json:"memory"`
	DowngradedToSparse bool             `json:"downgraded_to_sparse"`
}

// PlanExecution plans a megakernel execution without a cache (vyre's
// plan_megakernel_execution): the Sparse memory plan first (an
// *OverBudgetError if even that does not fit), then SelectTopology with the
// sparse required bytes, then the chosen topology's memory plan, downgrading
// to Sparse when it is over budget.
func PlanExecution(sample ScheduleSample, req MemoryRequest, launchOverheadNS, fusionPressure float64) (ExecutionPlan, error) {
	sparse, err := PlanMemoryBudget(SparseFrontier, req)
	if err != nil {
		return ExecutionPlan{}, err
	}
	decision := SelectTopology(sample, req.Graph, MemoryBudget{RequiredBytes: sparse.RequiredBytes, BudgetBytes: req.BudgetBytes},
		launchOverheadNS, fusionPressure)
	return planChosen(decision, req)
}

// planChosen plans the chosen topology's memory, downgrading to Sparse.
func planChosen(decision TopologyDecision, req MemoryRequest) (ExecutionPlan, error) {
	mem, err := PlanMemoryBudget(decision.Topology, req)
	if err == nil {
		return ExecutionPlan{Topology: decision.Topology, Decision: decision, Memory: mem}, nil
	}
	var ob *OverBudgetError
	if !asOverBudget(err, &ob) || decision.Topology == SparseFrontier {
		return ExecutionPlan{}, err
	}
	mem, err = PlanMemoryBudget(SparseFrontier, req)
	if err != nil {
		return ExecutionPlan{}, err
	}
	return ExecutionPlan{Topology: SparseFrontier, Decision: decision, Memory: mem, DowngradedToSparse: true}, nil
}

func asOverBudget(err error, target **OverBudgetError) bool {
	ob, ok := err.(*OverBudgetError)
	if ok {
		*target = ob
	}
	return ok
}

// unlimitedBudget is the budget used for the overflow-only sparse sizing.
const unlimitedBudget = math.MaxUint64
