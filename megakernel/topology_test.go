package megakernel_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/internal/checked"
	"github.com/gpuplan/gpuplan/megakernel"
)

var (
	degree4  = megakernel.GraphShape{NodeCount: 1000, EdgeCount: 4000}
	degree10 = megakernel.GraphShape{NodeCount: 1000, EdgeCount: 10000}
	mem1000  = megakernel.MemoryBudget{RequiredBytes: 1000, BudgetBytes: 10000}
)

func sample(density float64, readback uint64) megakernel.ScheduleSample {
	return megakernel.ScheduleSample{DispatchCostNS: 1000, FrontierDensity: density, ReadbackBytes: readback}
}

func TestSelectTopologyVectors(t *testing.T) {
	tests := []struct {
		name     string
		sample   megakernel.ScheduleSample
		graph    megakernel.GraphShape
		memory   megakernel.MemoryBudget
		launch   float64
		fusion   float64
		topology megakernel.Topology
		reason   string
	}{
		{"low density, degree 10: sparse", sample(0.01, 0), degree10, mem1000, 100, 0, megakernel.SparseFrontier, "low_density_sparse_queue"},
		{"red zone 95/100", sample(0.01, 0), degree4, megakernel.MemoryBudget{RequiredBytes: 95, BudgetBytes: 100}, 100, 0, megakernel.SparseFrontier, "memory_pressure_sparse_safety"},
		{"density 0.01, degree 4: warp sparse", sample(0.01, 0), degree4, mem1000, 100, 0, megakernel.WarpSparseFrontier, "ultra_sparse_warp_specialized"},
		{"0.90: block dense", sample(0.90, 0), degree4, mem1000, 100, 0, megakernel.BlockDenseFrontier, "high_density_block_specialized"},
		{"0.75: dense", sample(0.75, 0), degree4, mem1000, 100, 0, megakernel.DenseFrontier, "dense_coalesced_frontier"},
		{"0.35: hybrid", sample(0.35, 0), degree4, mem1000, 100, 0, megakernel.HybridFrontier, "transition_band_hybrid"},
		{"0.50 with readback and launch pressure: fused", sample(0.50, 1<<20), degree4, mem1000, 250, 0.90, megakernel.FusedWave, "launch_and_readback_pressure_fused"},
		{"fused needs readback >= 4096", sample(0.50, 4095), degree4, mem1000, 250, 0.90, megakernel.HybridFrontier, "transition_band_hybrid"},
		{"fused needs memory <= 8500", sample(0.50, 1<<20), degree4, megakernel.MemoryBudget{RequiredBytes: 8501, BudgetBytes: 10000}, 250, 0.90, megakernel.HybridFrontier, "transition_band_hybrid"},
		{"NaN density reads as 0", sample(math.NaN(), 0), degree4, mem1000, 100, 0, megakernel.WarpSparseFrontier, "ultra_sparse_warp_specialized"},
		{"density above 1 clamps", sample(7, 0), degree4, mem1000, 100, 0, megakernel.BlockDenseFrontier, "high_density_block_specialized"},
		{"dense needs degree 2", sample(0.90, 0), megakernel.GraphShape{NodeCount: 1000, EdgeCount: 1999}, mem1000, 100, 0, megakernel.HybridFrontier, "transition_band_hybrid"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := megakernel.SelectTopology(tc.sample, tc.graph, tc.memory, tc.launch, tc.fusion)
			assert.Equal(t, tc.topology, d.Topology)
			assert.Equal(t, tc.reason, d.Reason())
		})
	}
	t.Run("red zone pressure", func(t *testing.T) {
		d := megakernel.SelectTopology(sample(0.01, 0), degree10, megakernel.MemoryBudget{RequiredBytes: 95, BudgetBytes: 100}, 100, 0)
		assert.Equal(t, uint32(9500), d.MemoryPressureBPS)
	})
	t.Run("fused launch pressure", func(t *testing.T) {
		d := megakernel.SelectTopology(sample(0.50, 1<<20), degree4, mem1000, 250, 0.90)
		assert.Equal(t, uint32(2500), d.LaunchPressureBPS)
	})
}

func TestStableExplanationExact(t *testing.T) {
	d := megakernel.SelectTopology(sample(0.01, 0), degree4, mem1000, 100, 0)
	assert.Equal(t, "megakernel-topology-v1|topology=WarpSparseFrontier|memory_pressure_bps=1000|average_degree_bps=40000|launch_pressure_bps=1000|reason=ultra_sparse_warp_specialized",
		d.StableExplanation())
}

func TestSelectTopologyMetrics(t *testing.T) {
	t.Run("exact 128-bit math", func(t *testing.T) {
		d := megakernel.SelectTopology(sample(0.5, 0), megakernel.GraphShape{NodeCount: 1 << 60, EdgeCount: 1 << 62},
			megakernel.MemoryBudget{RequiredBytes: 1 << 62, BudgetBytes: 1 << 63}, 0, 0)
		assert.Equal(t, uint32(5000), d.MemoryPressureBPS)
		assert.Equal(t, uint64(40000), d.AverageDegreeBPS)
	})
	tests := []struct {
		name          string
		graph         megakernel.GraphShape
		memory        megakernel.MemoryBudget
		cost, launch  float64
		mem, deg, lpb uint64
	}{
		{"zero budget, zero required", degree4, megakernel.MemoryBudget{}, 1000, 100, 0, 40000, 1000},
		{"zero budget, some required", degree4, megakernel.MemoryBudget{RequiredBytes: 1}, 1000, 100, 10000, 40000, 1000},
		{"memory clamps at 10000", degree4, megakernel.MemoryBudget{RequiredBytes: 300, BudgetBytes: 100}, 1000, 100, 10000, 40000, 1000},
		{"no nodes, no edges", megakernel.GraphShape{}, mem1000, 1000, 100, 1000, 0, 1000},
		{"no nodes, some edges", megakernel.GraphShape{EdgeCount: 1}, mem1000, 1000, 100, 1000, math.MaxUint64, 1000},
		{"degree is not clamped", megakernel.GraphShape{NodeCount: 1, EdgeCount: 1 << 50}, mem1000, 1000, 100, 1000, 10000 << 50, 1000},
		{"degree pins at MaxUint64", megakernel.GraphShape{NodeCount: 1, EdgeCount: 1 << 60}, mem1000, 1000, 100, 1000, math.MaxUint64, 1000},
		{"zero cost", degree4, mem1000, 0, 100, 1000, 40000, 0},
		{"NaN cost", degree4, mem1000, math.NaN(), 100, 1000, 40000, 0},
		{"negative launch", degree4, mem1000, 1000, -5, 1000, 40000, 0},
		{"infinite launch", degree4, mem1000, 1000, math.Inf(1), 1000, 40000, math.MaxUint32},
		{"NaN launch", degree4, mem1000, 1000, math.NaN(), 1000, 40000, 0},
		{"rounding", degree4, mem1000, 3, 1, 1000, 40000, 3333},
		{"rounding up", degree4, mem1000, 3, 2, 1000, 40000, 6667},
		{"huge launch saturates", degree4, mem1000, 1e-9, 1e9, 1000, 40000, math.MaxUint32},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := megakernel.SelectTopology(megakernel.ScheduleSample{DispatchCostNS: tc.cost, FrontierDensity: 0.5}, tc.graph, tc.memory, tc.launch, 0)
			assert.Equal(t, tc.mem, uint64(d.MemoryPressureBPS))
			assert.Equal(t, tc.deg, d.AverageDegreeBPS)
			assert.Equal(t, tc.lpb, uint64(d.LaunchPressureBPS))
		})
	}
}

func TestSelectTopologyStable(t *testing.T) {
	fusedSample := sample(0.50, 1<<20)
	tests := []struct {
		name     string
		sample   megakernel.ScheduleSample
		memory   megakernel.MemoryBudget
		launch   float64
		fusion   float64
		previous megakernel.Topology
		want     megakernel.Topology
	}{
		{"previous sparse at 0.14 stays sparse", sample(0.14, 0), mem1000, 100, 0, megakernel.SparseFrontier, megakernel.SparseFrontier},
		{"previous sparse at 0.16 leaves", sample(0.16, 0), mem1000, 100, 0, megakernel.SparseFrontier, megakernel.HybridFrontier},
		{"previous dense at 0.68 stays dense", sample(0.68, 0), mem1000, 100, 0, megakernel.DenseFrontier, megakernel.DenseFrontier},
		{"previous dense at 0.67 leaves", sample(0.67, 0), mem1000, 100, 0, megakernel.DenseFrontier, megakernel.HybridFrontier},
		{"previous fused at 1300 bps and 0.65 stays fused", fusedSample, mem1000, 130, 0.65, megakernel.FusedWave, megakernel.FusedWave},
		{"previous fused at 1200 bps leaves", fusedSample, mem1000, 120, 0.65, megakernel.FusedWave, megakernel.HybridFrontier},
		{"previous warp sparse at 0.05 stays", sample(0.05, 0), mem1000, 100, 0, megakernel.WarpSparseFrontier, megakernel.WarpSparseFrontier},
		{"previous block dense at 0.83 stays", sample(0.83, 0), mem1000, 100, 0, megakernel.BlockDenseFrontier, megakernel.BlockDenseFrontier},
		{"previous hybrid vs fresh sparse at 0.11 stays", sample(0.11, 0), mem1000, 100, 0, megakernel.HybridFrontier, megakernel.HybridFrontier},
		{"previous hybrid vs fresh dense at 0.72 stays", sample(0.72, 0), mem1000, 100, 0, megakernel.HybridFrontier, megakernel.HybridFrontier},
		{"previous hybrid vs fresh dense at 0.73 leaves", sample(0.73, 0), mem1000, 100, 0, megakernel.HybridFrontier, megakernel.DenseFrontier},
		{"previous sparse near the red zone stays sparse", sample(0.5, 0), megakernel.MemoryBudget{RequiredBytes: 8800, BudgetBytes: 10000}, 100, 0, megakernel.SparseFrontier, megakernel.SparseFrontier},
		{"red zone wins over hysteresis", sample(0.9, 0), megakernel.MemoryBudget{RequiredBytes: 9000, BudgetBytes: 10000}, 100, 0, megakernel.DenseFrontier, megakernel.SparseFrontier},
		{"fixed quirk: fresh fused beats sticky sparse", megakernel.ScheduleSample{DispatchCostNS: 1000, FrontierDensity: 0.14, ReadbackBytes: 1 << 20}, mem1000, 250, 0.9, megakernel.SparseFrontier, megakernel.FusedWave},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := megakernel.SelectTopologyStable(tc.sample, degree4, tc.memory, tc.launch, tc.fusion, tc.previous)
			assert.Equal(t, tc.want, d.Topology)
		})
	}
}

func TestTopologyText(t *testing.T) {
	for _, tp := range []megakernel.Topology{megakernel.WarpSparseFrontier, megakernel.SparseFrontier, megakernel.BlockDenseFrontier,
		megakernel.DenseFrontier, megakernel.HybridFrontier, megakernel.FusedWave} {
		b, err := tp.MarshalText()
		require.NoError(t, err)
		var back megakernel.Topology
		require.NoError(t, back.UnmarshalText(b))
		assert.Equal(t, tp, back)
	}
	var bad megakernel.Topology
	assert.ErrorContains(t, bad.UnmarshalText([]byte("Nope")), "Fix:")
}

func TestScheduleFusionPressure(t *testing.T) {
	t.Run("vector", func(t *testing.T) {
		out, err := megakernel.ScheduleFusionPressure([]megakernel.ScheduleSample{
			{DispatchCostNS: 10, FrontierDensity: 0, ReadbackBytes: 0},
			{DispatchCostNS: 20, FrontierDensity: 1, ReadbackBytes: 4096},
		}, 5, 8, 0.25)
		require.NoError(t, err)
		require.Len(t, out, 2)
		assert.Greater(t, out[1], out[0])
	})
	t.Run("telemetry density", func(t *testing.T) {
		s := megakernel.SampleFromUtilization(100, 3750, 4096)
		assert.Equal(t, 0.375, s.FrontierDensity)
		assert.Equal(t, uint64(4096), s.ReadbackBytes)
	})
	t.Run("one step of dt 1 reaches the target", func(t *testing.T) {
		out, err := megakernel.ScheduleFusionPressure([]megakernel.ScheduleSample{{DispatchCostNS: 100, FrontierDensity: 1, ReadbackBytes: 1}}, 100, 1, 1)
		require.NoError(t, err)
		assert.InDelta(t, 0.55+0.25+0.075+0.05, out[0], 1e-12)
	})
	zeros := []struct {
		name    string
		samples []megakernel.ScheduleSample
		launch  float64
		steps   int
	}{
		{"no samples", nil, 5, 8},
		{"no steps", []megakernel.ScheduleSample{{DispatchCostNS: 10, FrontierDensity: 0.5}}, 5, 0},
		{"all zero", []megakernel.ScheduleSample{{FrontierDensity: 0.5}}, 0, 8},
	}
	for _, tc := range zeros {
		t.Run(tc.name, func(t *testing.T) {
			out, err := megakernel.ScheduleFusionPressure(tc.samples, tc.launch, tc.steps, 0.25)
			require.NoError(t, err)
			assert.Len(t, out, len(tc.samples))
			for _, x := range out {
				assert.Zero(t, x)
			}
		})
	}
	errs := []struct {
		name    string
		samples []megakernel.ScheduleSample
		launch  float64
		dt      float64
		check   func(t *testing.T, err error)
	}{
		{"density 1.5", []megakernel.ScheduleSample{{DispatchCostNS: 1, FrontierDensity: 1.5}}, 5, 0.25, func(t *testing.T, err error) {
			var e *megakernel.InvalidFrontierDensityError
			require.ErrorAs(t, err, &e)
			assert.Equal(t, 0, e.Index)
		}},
		{"dt first", []megakernel.ScheduleSample{{DispatchCostNS: -1}}, math.NaN(), math.Inf(1), func(t *testing.T, err error) {
			var e *megakernel.InvalidStepError
			require.ErrorAs(t, err, &e)
		}},
		{"launch second", []megakernel.ScheduleSample{{DispatchCostNS: -1}}, -1, 0.25, func(t *testing.T, err error) {
			var e *megakernel.InvalidLaunchOverheadError
			require.ErrorAs(t, err, &e)
		}},
		{"every cost before any density", []megakernel.ScheduleSample{{DispatchCostNS: 1, FrontierDensity: 2}, {DispatchCostNS: math.NaN(), FrontierDensity: 0.5}}, 5, 0.25, func(t *testing.T, err error) {
			var e *megakernel.InvalidCostError
			require.ErrorAs(t, err, &e)
			assert.Equal(t, 1, e.Index)
		}},
	}
	for _, tc := range errs {
		t.Run(tc.name, func(t *testing.T) {
			_, err := megakernel.ScheduleFusionPressure(tc.samples, tc.launch, 8, tc.dt)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "Fix:")
			tc.check(t, err)
		})
	}
	t.Run("property: outputs in [0,1]", func(t *testing.T) {
		r := rand.New(rand.NewPCG(11, 3))
		for i := 0; i < 500; i++ {
			ss := make([]megakernel.ScheduleSample, r.IntN(6))
			for j := range ss {
				ss[j] = megakernel.ScheduleSample{DispatchCostNS: r.Float64() * 1e4, FrontierDensity: r.Float64(), ReadbackBytes: r.Uint64N(1 << 30)}
			}
			out, err := megakernel.ScheduleFusionPressure(ss, r.Float64()*1e3, r.IntN(40), r.Float64()*2)
			require.NoError(t, err)
			for _, x := range out {
				require.True(t, checked.Finite(x) && x >= 0 && x <= 1, "x = %v", x)
			}
		}
	})
}

func ExampleSelectTopology() {
	d := megakernel.SelectTopology(
		megakernel.ScheduleSample{DispatchCostNS: 1000, FrontierDensity: 0.01},
		megakernel.GraphShape{NodeCount: 1000, EdgeCount: 4000},
		megakernel.MemoryBudget{RequiredBytes: 1000, BudgetBytes: 10000},
		100, // launch overhead, ns
		0,   // fusion pressure
	)
	fmt.Println(d.StableExplanation())
	// Output: megakernel-topology-v1|topology=WarpSparseFrontier|memory_pressure_bps=1000|average_degree_bps=40000|launch_pressure_bps=1000|reason=ultra_sparse_warp_specialized
}

func ExampleScheduleFusionPressure() {
	out, err := megakernel.ScheduleFusionPressure([]megakernel.ScheduleSample{
		{DispatchCostNS: 10, FrontierDensity: 0, ReadbackBytes: 0},
		{DispatchCostNS: 20, FrontierDensity: 1, ReadbackBytes: 4096},
	}, 5, 8, 0.25)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%.4f %.4f\n", out[0], out[1])
	// Output: 0.1516 0.5830
}
