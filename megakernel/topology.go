package megakernel

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/gpuplan/gpuplan/internal/checked"
)

// Topology selection constants (vyre megakernel_execution, exact values).
const (
	// The float constants are typed so that sums such as
	// SparseDensity+FrontierHysteresis round exactly like vyre's f64 math.
	WarpSparseDensity        float64 = 0.03125
	SparseDensity            float64 = 0.125
	DenseDensity             float64 = 0.70
	BlockDenseDensity        float64 = 0.85
	FusionPressureThreshold  float64 = 0.70
	FusionPressureHysteresis float64 = 0.10
	FrontierHysteresis       float64 = 0.025

	MemoryRedZoneBPS           = 9000
	MemoryHysteresisBPS        = 250
	LaunchPressureBPS          = 1500
	LaunchHysteresisBPS        = 250
	FusionReadbackBytes        = 4096
	DenseAverageDegreeBPS      = 20000
	WarpSparseAverageDegreeBPS = 80000
)

// Topology is a megakernel execution topology (vyre's
// MegakernelExecutionTopology). String returns vyre's Debug name.
type Topology int

// The execution topologies.
const (
	WarpSparseFrontier Topology = iota
	SparseFrontier
	BlockDenseFrontier
	DenseFrontier
	HybridFrontier
	FusedWave
)

var topologyNames = [...]string{"WarpSparseFrontier", "SparseFrontier", "BlockDenseFrontier", "DenseFrontier", "HybridFrontier", "FusedWave"}

// String returns the name of the value.
func (t Topology) String() string {
	if t >= 0 && int(t) < len(topologyNames) {
		return topologyNames[t]
	}
	return fmt.Sprintf("Topology(%d)", int(t))
}

// MarshalText renders the Debug name, so JSON shows "FusedWave".
func (t Topology) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// UnmarshalText parses a Debug name.
func (t *Topology) UnmarshalText(b []byte) error {
	for i, n := range topologyNames {
		if n == string(b) {
			*t = Topology(i)
			return nil
		}
	}
	return fmt.Errorf("unknown megakernel topology %q. Fix: use one of %v", b, topologyNames)
}

// ScheduleSample is one measured dispatch (vyre's
// CudaMegakernelScheduleSample).
type ScheduleSample struct {
	// DispatchCostNS is the dispatch cost in nanoseconds.
	DispatchCostNS float64 `json:"dispatch_cost_ns"`
	// FrontierDensity is the active fraction of the frontier, in [0, 1].
	FrontierDensity float64 `json:"frontier_density"`
	// ReadbackBytes is the bytes read back to the host per dispatch.
	ReadbackBytes uint64 `json:"readback_bytes"`
}

// SampleFromUtilization builds a sample from telemetry (vyre's
// from_telemetry_snapshot): density = logical thread utilisation / 10000.
func SampleFromUtilization(dispatchCostNS float64, logicalThreadUtilizationBPS uint32, readbackBytes uint64) ScheduleSample {
	return ScheduleSample{DispatchCostNS: dispatchCostNS,
		FrontierDensity: float64(logicalThreadUtilizationBPS) / checked.BasisPoints, ReadbackBytes: readbackBytes}
}

// GraphShape is the resident graph's size (vyre's MegakernelGraphShape).
type GraphShape struct {
	NodeCount uint64 `json:"node_count"`
	EdgeCount uint64 `json:"edge_count"`
}

// MemoryBudget is a required/available byte pair (vyre's
// MegakernelMemoryBudget).
type MemoryBudget struct {
	RequiredBytes uint64 `json:"required_bytes"`
	BudgetBytes   uint64 `json:"budget_bytes"`
}

// TopologyDecision is the result of topology selection (vyre's
// MegakernelTopologyDecision).
type TopologyDecision struct {
	Topology          Topology `json:"topology"`
	MemoryPressureBPS uint32   `json:"memory_pressure_bps"`
	AverageDegreeBPS  uint64   `json:"average_degree_bps"`
	LaunchPressureBPS uint32   `json:"launch_pressure_bps"`
}

// Reason returns vyre's stable reason code for the decision.
func (d TopologyDecision) Reason() string {
	switch d.Topology {
	case WarpSparseFrontier:
		return "ultra_sparse_warp_specialized"
	case SparseFrontier:
		if d.MemoryPressureBPS >= MemoryRedZoneBPS {
			return "memory_pressure_sparse_safety"
		}
		return "low_density_sparse_queue"
	case BlockDenseFrontier:
		return "high_density_block_specialized"
	case DenseFrontier:
		return "dense_coalesced_frontier"
	case HybridFrontier:
		return "transition_band_hybrid"
	case FusedWave:
		return "launch_and_readback_pressure_fused"
	}
	return "unknown_topology"
}

// StableExplanation renders vyre's versioned explanation string, byte for
// byte:
//
//	megakernel-topology-v1|topology=<name>|memory_pressure_bps=N|average_degree_bps=N|launch_pressure_bps=N|reason=<code>
func (d TopologyDecision) StableExplanation() string {
	return fmt.Sprintf("megakernel-topology-v1|topology=%s|memory_pressure_bps=%d|average_degree_bps=%d|launch_pressure_bps=%d|reason=%s",
		d.Topology, d.MemoryPressureBPS, d.AverageDegreeBPS, d.LaunchPressureBPS, d.Reason())
}

// MarshalJSON adds the reason and the stable explanation.
func (d TopologyDecision) MarshalJSON() ([]byte, error) {
	type plain TopologyDecision
	return json.Marshal(struct {
		plain
		Reason      string `json:"reason"`
		Explanation string `json:"explanation"`
	}{plain(d), d.Reason(), d.StableExplanation()})
}

// memoryPressureBPS is min(10000, required/budget) with vyre's zero rules.
func memoryPressureBPS(m MemoryBudget) uint32 {
	var zero uint32
	if m.RequiredBytes != 0 {
		zero = checked.BasisPoints
	}
	return min(checked.RatioBPS(m.RequiredBytes, m.BudgetBytes, zero), checked.BasisPoints)
}

// averageDegreeBPS is floor(edges*10000/nodes), unclamped, 128-bit exact.
func averageDegreeBPS(g GraphShape) uint64 {
	var zero uint64
	if g.EdgeCount != 0 {
		zero = math.MaxUint64
	}
	return checked.RatioBPSWide(g.EdgeCount, g.NodeCount, zero)
}

// f64ToU32 is Rust's saturating `as u32`: NaN -> 0.
func f64ToU32(f float64) uint32 {
	switch {
	case math.IsNaN(f) || f <= 0:
		return 0
	case f >= math.MaxUint32:
		return math.MaxUint32
	}
	return uint32(f)
}

// launchPressureBPS is round(max(launch,0)/cost*10000) with vyre's rules.
func launchPressureBPS(launchOverheadNS, dispatchCostNS float64) uint32 {
	if !checked.Finite(dispatchCostNS) || dispatchCostNS <= 0 {
		return 0
	}
	if math.IsInf(launchOverheadNS, 1) {
		return math.MaxUint32
	}
	if math.IsNaN(launchOverheadNS) || launchOverheadNS < 0 {
		return 0
	}
	return f64ToU32(math.Round(launchOverheadNS / dispatchCostNS * checked.BasisPoints))
}

// topologyInputs are the normalised selection metrics.
type topologyInputs struct {
	memory, launch uint32
	degree         uint64
	density        float64
	fusion         float64
	readback       uint64
}

func newTopologyInputs(sample ScheduleSample, graph GraphShape, memory MemoryBudget, launchOverheadNS, fusionPressure float64) topologyInputs {
	return topologyInputs{
		memory:   memoryPressureBPS(memory),
		launch:   launchPressureBPS(launchOverheadNS, sample.DispatchCostNS),
		degree:   averageDegreeBPS(graph),
		density:  checked.Clamp01(sample.FrontierDensity),
		fusion:   checked.Clamp01(fusionPressure),
		readback: sample.ReadbackBytes,
	}
}

func (in topologyInputs) fresh() Topology {
	switch {
	case in.memory >= MemoryRedZoneBPS:
		return SparseFrontier
	case in.fusion >= FusionPressureThreshold && in.launch >= LaunchPressureBPS &&
		in.readback >= FusionReadbackBytes && in.memory <= MemoryRedZoneBPS-2*MemoryHysteresisBPS:
		return FusedWave
	case in.density <= WarpSparseDensity && in.degree <= WarpSparseAverageDegreeBPS:
		return WarpSparseFrontier
	case in.density <= SparseDensity:
		return SparseFrontier
	case in.density >= BlockDenseDensity && in.degree >= DenseAverageDegreeBPS:
		return BlockDenseFrontier
	case in.density >= DenseDensity && in.degree >= DenseAverageDegreeBPS:
		return DenseFrontier
	}
	return HybridFrontier
}

func (in topologyInputs) decision(t Topology) TopologyDecision {
	return TopologyDecision{Topology: t, MemoryPressureBPS: in.memory, AverageDegreeBPS: in.degree, LaunchPressureBPS: in.launch}
}

// SelectTopology picks the execution topology (vyre's
// select_cuda_megakernel_topology). Density and fusion pressure are clamped
// to [0, 1] with NaN and infinities read as 0; memory is the sparse plan's
// required bytes against the budget. First match wins:
//
//  1. memory pressure >= 9000 bps: SparseFrontier;
//  2. fusion >= 0.70, launch >= 1500 bps, readback >= 4096 B and memory
//     <= 8500 bps: FusedWave;
//  3. density <= 0.03125 and average degree <= 8: WarpSparseFrontier;
//  4. density <= 0.125: SparseFrontier;
//  5. density >= 0.85 and average degree >= 2: BlockDenseFrontier;
//  6. density >= 0.70 and average degree >= 2: DenseFrontier;
//  7. otherwise HybridFrontier.
func SelectTopology(sample ScheduleSample, graph GraphShape, memory MemoryBudget, launchOverheadNS, fusionPressure float64) TopologyDecision {
	in := newTopologyInputs(sample, graph, memory, launchOverheadNS, fusionPressure)
	return in.decision(in.fresh())
}

// SelectTopologyStable is SelectTopology with hysteresis against the
// previous topology (vyre's select_…_stable): outside the memory red zone, a
// previous topology stays while a loosened version of its condition holds
// (density bands widened by 0.025, fusion by 0.10, launch and memory by 250
// bps), and a previous sparse topology stays sparse at memory >= 8750 bps.
//
// Fixed vyre quirk: vyre keeps a previous SparseFrontier (density <= 0.15)
// even when the fresh decision is FusedWave. Fusion is decided on launch and
// readback pressure, not density, so here a fresh FusedWave decision is never
// overridden by the density-band hysteresis of a previous WarpSparse, Sparse,
// Dense or BlockDense topology.
func SelectTopologyStable(sample ScheduleSample, graph GraphShape, memory MemoryBudget, launchOverheadNS, fusionPressure float64, previous Topology) TopologyDecision {
	in := newTopologyInputs(sample, graph, memory, launchOverheadNS, fusionPressure)
	fresh := in.fresh()
	return in.decision(in.stable(fresh, previous))
}

func (in topologyInputs) stable(fresh, previous Topology) Topology {
	if in.memory >= MemoryRedZoneBPS {
		return fresh
	}
	if fresh == FusedWave && previous != FusedWave {
		return fresh // the fixed quirk: density hysteresis never blocks fusion
	}
	if (previous == SparseFrontier || previous == WarpSparseFrontier) && in.memory >= MemoryRedZoneBPS-MemoryHysteresisBPS {
		return SparseFrontier
	}
	keep := false
	switch previous {
	case WarpSparseFrontier:
		keep = in.density <= WarpSparseDensity+FrontierHysteresis && in.degree <= WarpSparseAverageDegreeBPS
	case SparseFrontier:
		keep = in.density <= SparseDensity+FrontierHysteresis
	case HybridFrontier:
		keep = (fresh == SparseFrontier && in.density >= SparseDensity-FrontierHysteresis) ||
			((fresh == DenseFrontier || fresh == BlockDenseFrontier) && in.density <= DenseDensity+FrontierHysteresis)
	case DenseFrontier:
		keep = in.density >= DenseDensity-FrontierHysteresis && in.degree >= DenseAverageDegreeBPS
	case BlockDenseFrontier:
		keep = in.density >= BlockDenseDensity-FrontierHysteresis && in.degree >= DenseAverageDegreeBPS
	case FusedWave:
		keep = in.fusion >= FusionPressureThreshold-FusionPressureHysteresis &&
			in.launch >= LaunchPressureBPS-LaunchHysteresisBPS &&
			in.readback >= FusionReadbackBytes && in.memory <= MemoryRedZoneBPS-MemoryHysteresisBPS
	}
	if keep {
		return previous
	}
	return fresh
}
