package harness

import (
	"fmt"

	"github.com/gpuplan/gpuplan/internal/stats"
	"github.com/gpuplan/gpuplan/megakernel"
)

// ArmPlan is the execution arm the megakernel topology selection picks for
// a workload's input from its measured profile: A is the workload's arm
// type and P its profile.
type ArmPlan[A ~string, P any] struct {
	Arm              A                           `json:"arm"`
	Decision         megakernel.TopologyDecision `json:"decision"`
	Sample           megakernel.ScheduleSample   `json:"sample"`
	LaunchOverheadNs float64                     `json:"launch_overhead_ns"`
	FusionPressure   float64                     `json:"fusion_pressure"`
	Profile          P                           `json:"profile"`
}

// Describe renders the plan for the benchmark's log: the arm, the topology
// and the reason, the measured cost of one step (step names it, "level" or
// "round"), the launch overhead, the frontier density and the fusion
// pressure.
func (p ArmPlan[A, P]) Describe(step string, stepNs float64) string {
	return fmt.Sprintf("%s (topology %s, %s; %s %s, launch overhead %s, frontier density %.2g, fusion pressure %.2f)",
		p.Arm, p.Decision.Topology, p.Decision.Reason(), step, stats.FormatNs(stepNs), stats.FormatNs(p.LaunchOverheadNs),
		p.Sample.FrontierDensity, p.FusionPressure)
}

// SelectTopology selects the execution topology for one schedule sample
// (one step: its dispatch cost, frontier density and readback): the fusion
// pressure comes from the homotopy scheduler at the measured launch
// overhead, memory pressure from mem. It returns the decision and the
// fusion pressure.
func SelectTopology(sample megakernel.ScheduleSample, overheadNs float64, graph megakernel.GraphShape, mem megakernel.MemoryBudget) (megakernel.TopologyDecision, float64, error) {
	fp, err := megakernel.ScheduleFusionPressure([]megakernel.ScheduleSample{sample}, overheadNs,
		megakernel.DerivedFusionSteps, megakernel.DerivedFusionDt)
	if err != nil {
		return megakernel.TopologyDecision{}, 0, err
	}
	return megakernel.SelectTopology(sample, graph, mem, overheadNs, fp[0]), fp[0], nil
}

// PlanArm plans the arm of a measured profile: SelectTopology for its
// schedule sample and launch overhead, the arm that runs the topology from
// armFor.
func PlanArm[A ~string, P any](profile P, sample megakernel.ScheduleSample, overheadNs float64, graph megakernel.GraphShape,
	mem megakernel.MemoryPlan, armFor func(megakernel.Topology) A) (ArmPlan[A, P], error) {
	d, fp, err := SelectTopology(sample, overheadNs, graph, megakernel.MemoryBudget{RequiredBytes: mem.RequiredBytes, BudgetBytes: mem.BudgetBytes})
	if err != nil {
		return ArmPlan[A, P]{}, err
	}
	return ArmPlan[A, P]{Arm: armFor(d.Topology), Decision: d, Sample: sample, LaunchOverheadNs: overheadNs,
		FusionPressure: fp, Profile: profile}, nil
}

// StepCost is what a workload's arm profile measured of one step of its
// host loop (a BFS level, a rebuild round) besides the step's own cost. A
// workload's Profile embeds it.
type StepCost struct {
	// LaunchOverheadNs is the cost of a launch and a 4-byte readback that
	// do no work.
	LaunchOverheadNs float64
	// ReadbackBytes is the host loop's readback per step.
	ReadbackBytes uint64
}

// PlanStep is PlanArm for a profile whose schedule sample is one step of
// its host loop: stepNs is the step's cost and density its frontier
// density, with cost's readback and launch overhead.
func PlanStep[A ~string, P any](profile P, cost StepCost, stepNs, density float64, graph megakernel.GraphShape,
	mem megakernel.MemoryPlan, armFor func(megakernel.Topology) A) (ArmPlan[A, P], error) {
	sample := megakernel.ScheduleSample{DispatchCostNS: stepNs, ReadbackBytes: cost.ReadbackBytes, FrontierDensity: density}
	return PlanArm(profile, sample, cost.LaunchOverheadNs, graph, mem, armFor)
}

// TopologyArm returns the arm that runs topology t: persistent for a
// Persistent topology, deviceLoop for the others.
func TopologyArm[A ~string](t megakernel.Topology, persistent, deviceLoop A) A {
	if Persistent(t) {
		return persistent
	}
	return deviceLoop
}

// Persistent reports whether a topology runs as one persistent cooperative
// launch: a fused wave, or a warp-sparse frontier (small frontiers, where
// each step is mostly launch overhead). Every other topology has steps
// large enough to fill the device, and runs as a device loop.
func Persistent(t megakernel.Topology) bool {
	return t == megakernel.FusedWave || t == megakernel.WarpSparseFrontier
}
