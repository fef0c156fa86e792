package megakernel_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/internal/checked"
	"github.com/gpuplan/gpuplan/megakernel"
)

// fusedReq is the spec's memory vector: 1000 nodes x 16 + 4000 edges x 8 =
// 48,000 graph bytes, frontier 4096, scratch 2048, output 512.
func fusedReq(budget uint64) megakernel.MemoryRequest {
	return megakernel.MemoryRequest{Graph: degree4, BytesPerNode: 16, BytesPerEdge: 8,
		FrontierBytes: 4096, ScratchBytes: 2048, OutputBytes: 512, BudgetBytes: budget}
}

func TestPlanMemoryBudget(t *testing.T) {
	t.Run("fused vector", func(t *testing.T) {
		m, err := megakernel.PlanMemoryBudget(megakernel.FusedWave, fusedReq(128<<10))
		require.NoError(t, err)
		assert.Equal(t, megakernel.MemoryPlan{GraphBytes: 48000, FrontierBytes: 4096, ScratchBytes: 8192, OutputBytes: 512,
			RequiredBytes: 60800, BudgetBytes: 128 << 10, MemoryPressureBPS: 4638}, m)
	})
	t.Run("dense over 32 KiB", func(t *testing.T) {
		_, err := megakernel.PlanMemoryBudget(megakernel.DenseFrontier, fusedReq(32<<10))
		var e *megakernel.OverBudgetError
		require.ErrorAs(t, err, &e)
		assert.Equal(t, megakernel.OverBudgetError{Topology: megakernel.DenseFrontier, RequiredBytes: 48000 + 4096 + 4096 + 512,
			BudgetBytes: 32 << 10, NodeCount: 1000, EdgeCount: 4000}, *e)
		assert.Contains(t, err.Error(), "Fix: choose a sparse topology")
	})
	scratch := []struct {
		t       megakernel.Topology
		in, out uint64
	}{
		{megakernel.WarpSparseFrontier, 10, 32}, {megakernel.WarpSparseFrontier, 100, 100},
		{megakernel.SparseFrontier, 10, 10}, {megakernel.BlockDenseFrontier, 10, 2048},
		{megakernel.BlockDenseFrontier, 2000, 4000}, {megakernel.DenseFrontier, 10, 20},
		{megakernel.HybridFrontier, 10, 30}, {megakernel.FusedWave, 10, 40},
	}
	for _, tc := range scratch {
		t.Run(fmt.Sprintf("scratch %v %d", tc.t, tc.in), func(t *testing.T) {
			got, err := megakernel.TopologyScratchBytes(tc.t, tc.in)
			require.NoError(t, err)
			assert.Equal(t, tc.out, got)
		})
	}
	overflow := []struct {
		name  string
		t     megakernel.Topology
		req   megakernel.MemoryRequest
		field string
	}{
		{"node layout", megakernel.SparseFrontier, megakernel.MemoryRequest{Graph: megakernel.GraphShape{NodeCount: math.MaxUint64}, BytesPerNode: 2}, "node layout bytes"},
		{"edge layout", megakernel.SparseFrontier, megakernel.MemoryRequest{Graph: megakernel.GraphShape{EdgeCount: math.MaxUint64}, BytesPerEdge: 2}, "edge layout bytes"},
		{"graph layout", megakernel.SparseFrontier, megakernel.MemoryRequest{Graph: megakernel.GraphShape{NodeCount: math.MaxUint64, EdgeCount: 1}, BytesPerNode: 1, BytesPerEdge: 1}, "graph layout bytes"},
		{"graph plus frontier", megakernel.SparseFrontier, megakernel.MemoryRequest{Graph: megakernel.GraphShape{NodeCount: 1}, BytesPerNode: 1, FrontierBytes: math.MaxUint64}, "graph plus frontier bytes"},
		{"scratch", megakernel.SparseFrontier, megakernel.MemoryRequest{FrontierBytes: 1, ScratchBytes: math.MaxUint64}, "scratch bytes"},
		{"output", megakernel.SparseFrontier, megakernel.MemoryRequest{FrontierBytes: 1, OutputBytes: math.MaxUint64}, "output bytes"},
		{"block dense", megakernel.BlockDenseFrontier, megakernel.MemoryRequest{ScratchBytes: math.MaxUint64}, "block dense topology scratch bytes"},
		{"dense", megakernel.DenseFrontier, megakernel.MemoryRequest{ScratchBytes: math.MaxUint64}, "dense topology scratch bytes"},
		{"hybrid", megakernel.HybridFrontier, megakernel.MemoryRequest{ScratchBytes: math.MaxUint64}, "hybrid topology scratch bytes"},
		{"fused", megakernel.FusedWave, megakernel.MemoryRequest{ScratchBytes: math.MaxUint64}, "fused topology scratch bytes"},
	}
	for _, tc := range overflow {
		t.Run("overflow "+tc.name, func(t *testing.T) {
			_, err := megakernel.PlanMemoryBudget(tc.t, tc.req)
			var o *checked.OverflowError
			require.ErrorAs(t, err, &o)
			assert.Equal(t, tc.field, o.Field)
			assert.Contains(t, err.Error(), "Fix:")
		})
	}
	t.Run("unknown topology", func(t *testing.T) {
		_, err := megakernel.PlanMemoryBudget(megakernel.Topology(42), fusedReq(1<<20))
		assert.ErrorContains(t, err, "Fix:")
	})
}

func TestPlanExecution(t *testing.T) {
	fused := sample(0.50, 1<<20)
	t.Run("fused fits at 128 KiB", func(t *testing.T) {
		p, err := megakernel.PlanExecution(fused, fusedReq(128<<10), 250, 0.90)
		require.NoError(t, err)
		assert.Equal(t, megakernel.FusedWave, p.Topology)
		assert.Equal(t, uint64(8192), p.Memory.ScratchBytes)
		assert.False(t, p.DowngradedToSparse)
	})
	t.Run("downgrade to sparse", func(t *testing.T) {
		req := fusedReq(80000)
		req.ScratchBytes = 10000
		p, err := megakernel.PlanExecution(fused, req, 250, 0.90)
		require.NoError(t, err)
		assert.Equal(t, megakernel.SparseFrontier, p.Topology)
		assert.Equal(t, megakernel.FusedWave, p.Decision.Topology)
		assert.Equal(t, uint64(10000), p.Memory.ScratchBytes)
		assert.True(t, p.DowngradedToSparse)
	})
	t.Run("sparse over budget is an error", func(t *testing.T) {
		_, err := megakernel.PlanExecution(fused, fusedReq(1000), 250, 0.90)
		var e *megakernel.OverBudgetError
		require.ErrorAs(t, err, &e)
		assert.Equal(t, megakernel.SparseFrontier, e.Topology)
	})
}

func TestPropertyPlansRespectBudget(t *testing.T) {
	// vyre's generated property: plans never exceed the budget, pressure is
	// at most 10000, and OverBudget implies required > budget.
	r := rand.New(rand.NewPCG(42, 42))
	topologies := []megakernel.Topology{megakernel.WarpSparseFrontier, megakernel.SparseFrontier, megakernel.BlockDenseFrontier,
		megakernel.DenseFrontier, megakernel.HybridFrontier, megakernel.FusedWave}
	for i := 0; i < 5000; i++ {
		req := megakernel.MemoryRequest{
			Graph:        megakernel.GraphShape{NodeCount: r.Uint64N(1 << 20), EdgeCount: r.Uint64N(1 << 22)},
			BytesPerNode: r.Uint64N(64), BytesPerEdge: r.Uint64N(32),
			FrontierBytes: r.Uint64N(1 << 24), ScratchBytes: r.Uint64N(1 << 24), OutputBytes: r.Uint64N(1 << 24),
			BudgetBytes: r.Uint64N(1 << 28),
		}
		for _, tp := range topologies {
			m, err := megakernel.PlanMemoryBudget(tp, req)
			var ob *megakernel.OverBudgetError
			switch {
			case err == nil:
				require.LessOrEqual(t, m.RequiredBytes, m.BudgetBytes)
				require.LessOrEqual(t, m.MemoryPressureBPS, uint32(10000))
			case errors.As(err, &ob):
				require.Greater(t, ob.RequiredBytes, ob.BudgetBytes)
			default:
				require.NoError(t, err)
			}
		}
		s := megakernel.ScheduleSample{DispatchCostNS: r.Float64() * 5000, FrontierDensity: r.Float64(), ReadbackBytes: r.Uint64N(1 << 21)}
		p, err := megakernel.PlanExecution(s, req, r.Float64()*1000, r.Float64())
		if err == nil {
			require.LessOrEqual(t, p.Memory.RequiredBytes, req.BudgetBytes)
			require.LessOrEqual(t, p.Decision.MemoryPressureBPS, uint32(10000))
			require.Equal(t, p.DowngradedToSparse, p.Topology != p.Decision.Topology)
		} else {
			var ob *megakernel.OverBudgetError
			require.ErrorAs(t, err, &ob)
			require.Greater(t, ob.RequiredBytes, ob.BudgetBytes)
		}
	}
}

func ExamplePlanExecution() {
	p, err := megakernel.PlanExecution(
		megakernel.ScheduleSample{DispatchCostNS: 1000, FrontierDensity: 0.5, ReadbackBytes: 1 << 20},
		megakernel.MemoryRequest{Graph: megakernel.GraphShape{NodeCount: 1000, EdgeCount: 4000},
			BytesPerNode: 16, BytesPerEdge: 8, FrontierBytes: 4096, ScratchBytes: 2048, OutputBytes: 512,
			BudgetBytes: 128 << 10},
		250,  // launch overhead, ns
		0.90, // fusion pressure
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.Topology, p.Memory.RequiredBytes, p.Memory.ScratchBytes, p.DowngradedToSparse)
	// Output: FusedWave 60800 8192 false
}

func TestGraphLayoutBytes(t *testing.T) {
	tests := []struct {
		name           string
		graph          megakernel.GraphShape
		perNode, perEd uint64
		want           uint64
		overflow       string
	}{
		{"nodes and edges", megakernel.GraphShape{NodeCount: 10, EdgeCount: 20}, 8, 4, 10*8 + 20*4, ""},
		{"empty graph", megakernel.GraphShape{}, 8, 4, 0, ""},
		{"node bytes overflow", megakernel.GraphShape{NodeCount: math.MaxUint64, EdgeCount: 1}, 2, 1, 0, "node layout bytes"},
		{"edge bytes overflow", megakernel.GraphShape{NodeCount: 1, EdgeCount: 1 << 63}, 1, 2, 0, "edge layout bytes"},
		{"sum overflow", megakernel.GraphShape{NodeCount: 1 << 63, EdgeCount: 1 << 63}, 1, 1, 0, "graph layout bytes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := megakernel.GraphLayoutBytes(tc.graph, tc.perNode, tc.perEd)
			if tc.overflow == "" {
				require.NoError(t, err)
				assert.Equal(t, tc.want, got)
				return
			}
			var oe *checked.OverflowError
			require.ErrorAs(t, err, &oe)
			assert.Equal(t, tc.overflow, oe.Field)
			assert.Contains(t, err.Error(), "Fix:")
		})
	}
}
