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

func diamondRequest() megakernel.FrontierExecutionRequest {
	return megakernel.FrontierExecutionRequest{
		Identity:     identity(0xd1a),
		Sample:       megakernel.ScheduleSample{DispatchCostNS: 1000, FrontierDensity: 0.90, ReadbackBytes: 1 << 20},
		Graph:        degree4,
		BytesPerNode: 16, BytesPerEdge: 8,
		Waves: []megakernel.FrontierWave{
			{FrontierBytes: 1024, ScratchBytes: 512, OutputBytes: 256},
			{FrontierBytes: 2048, ScratchBytes: 1024, OutputBytes: 512},
			{FrontierBytes: 4096, ScratchBytes: 2048, OutputBytes: 1024},
			{FrontierBytes: 8192, ScratchBytes: 4096, OutputBytes: 2048},
		},
		Dependencies:     deps(0, 1, 0, 2, 1, 3, 2, 3),
		BudgetBytes:      128 << 10,
		LaunchOverheadNS: 250,
		FusionPressure:   0.95,
	}
}

func TestPlanFrontierExecutionVectors(t *testing.T) {
	t.Run("diamond", func(t *testing.T) {
		p, err := megakernel.PlanFrontierExecution(megakernel.NewPlanCache(megakernel.DefaultMaxPlans), diamondRequest())
		require.NoError(t, err)
		assert.Equal(t, 2, p.Barriers.GlobalBarriers)
		assert.Equal(t, [][]int{{0}, {1, 2}, {3}}, p.Barriers.Groups())
		assert.Equal(t, uint64(8192), p.PeakFrontierBytes)
		assert.Equal(t, uint64(4096), p.PeakScratchBytes)
		assert.Equal(t, uint64(2048), p.PeakOutputBytes)
		assert.Equal(t, uint64(1<<20), p.AmortizedReadbackBytes)
		assert.Equal(t, 2, p.MaxGroupWidth)
		assert.Equal(t, megakernel.FusedWave, p.Execution.Topology)
		assert.Equal(t, uint64(8192), p.Execution.Memory.FrontierBytes)
	})
	t.Run("static output drives fusion", func(t *testing.T) {
		req := diamondRequest()
		req.Waves = []megakernel.FrontierWave{{FrontierBytes: 1024, ScratchBytes: 512, OutputBytes: 3072}, {FrontierBytes: 1024, ScratchBytes: 512, OutputBytes: 3072}}
		req.Dependencies = nil
		req.Sample.ReadbackBytes = 0
		p, err := megakernel.PlanFrontierExecution(nil, req)
		require.NoError(t, err)
		assert.Equal(t, uint64(6144), p.PeakOutputBytes)
		assert.Equal(t, uint64(6144), p.AmortizedReadbackBytes)
		assert.Equal(t, megakernel.FusedWave, p.Execution.Topology)
	})
	t.Run("split to fit the budget", func(t *testing.T) {
		req := diamondRequest()
		req.Graph, req.BytesPerNode, req.BytesPerEdge = megakernel.GraphShape{}, 0, 0
		req.Waves = []megakernel.FrontierWave{{10, 10, 10}, {10, 10, 10}, {10, 10, 10}}
		req.Dependencies = nil
		req.BudgetBytes = 100
		p, err := megakernel.PlanFrontierExecution(nil, req)
		require.NoError(t, err)
		assert.Equal(t, 3, p.Barriers.GroupCount())
		assert.Equal(t, 2, p.Barriers.GlobalBarriers)
		assert.Equal(t, 1, p.Layers)
		assert.Equal(t, 1, p.MaxGroupWidth)
		assert.Equal(t, megakernel.FusedWave, p.Execution.Topology)
		assert.Equal(t, uint64(60), p.Execution.Memory.RequiredBytes)
	})
	t.Run("graph over budget", func(t *testing.T) {
		req := diamondRequest()
		req.Graph, req.BytesPerNode, req.BytesPerEdge = megakernel.GraphShape{NodeCount: 100, EdgeCount: 100}, 8, 8
		req.BudgetBytes = 1000
		_, err := megakernel.PlanFrontierExecution(nil, req)
		var e *megakernel.GroupOverBudgetError
		require.ErrorAs(t, err, &e)
		assert.Equal(t, megakernel.GroupOverBudgetError{RequiredBytes: 1600, BudgetBytes: 1000, Field: "resident graph bytes", Wave: -1}, *e)
		assert.Contains(t, err.Error(), "Fix:")
	})
	t.Run("single wave over budget", func(t *testing.T) {
		req := diamondRequest()
		req.Graph, req.BytesPerNode, req.BytesPerEdge = megakernel.GraphShape{}, 0, 0
		req.Waves = []megakernel.FrontierWave{{100, 100, 100}}
		req.Dependencies = nil
		req.BudgetBytes = 500
		_, err := megakernel.PlanFrontierExecution(nil, req)
		var e *megakernel.GroupOverBudgetError
		require.ErrorAs(t, err, &e)
		assert.Equal(t, megakernel.GroupOverBudgetError{RequiredBytes: 600, BudgetBytes: 500, Field: "single fused frontier wave bytes", Wave: 0}, *e)
	})
	t.Run("plan cache hit across a bucket", func(t *testing.T) {
		c := megakernel.NewPlanCache(megakernel.DefaultMaxPlans)
		req := diamondRequest()
		_, err := megakernel.PlanFrontierExecution(c, req)
		require.NoError(t, err)
		req.Sample.FrontierDensity = 0.91
		_, err = megakernel.PlanFrontierExecution(c, req)
		require.NoError(t, err)
		assert.Equal(t, uint64(1), c.Stats().Hits)
	})
	overflow := []struct {
		name  string
		edit  func(r *megakernel.FrontierExecutionRequest)
		field string
	}{
		{"fused wave bytes", func(r *megakernel.FrontierExecutionRequest) { r.Waves[0].FrontierBytes = math.MaxUint64 }, "fused wave bytes"},
		{"fused scratch", func(r *megakernel.FrontierExecutionRequest) { r.Waves[0].ScratchBytes = math.MaxUint64 / 2 }, "fused wave bytes"},
		{"node layout", func(r *megakernel.FrontierExecutionRequest) { r.Graph.NodeCount = math.MaxUint64 }, "node layout bytes"},
		{"edge layout", func(r *megakernel.FrontierExecutionRequest) { r.Graph.EdgeCount = math.MaxUint64 }, "edge layout bytes"},
		{"group budget", func(r *megakernel.FrontierExecutionRequest) {
			r.Graph, r.BytesPerNode, r.BytesPerEdge = megakernel.GraphShape{}, 0, 0
			r.BudgetBytes = math.MaxUint64
			r.Dependencies = nil
			r.Waves = []megakernel.FrontierWave{{FrontierBytes: 1 << 63}, {FrontierBytes: 1 << 63}}
		}, "barrier group fused wave budget bytes"},
	}
	for _, tc := range overflow {
		t.Run("overflow "+tc.name, func(t *testing.T) {
			req := diamondRequest()
			tc.edit(&req)
			_, err := megakernel.PlanFrontierExecution(nil, req)
			var o *checked.OverflowError
			require.ErrorAs(t, err, &o)
			assert.Equal(t, tc.field, o.Field)
		})
	}
	t.Run("errors in order: graph overflow before barrier errors", func(t *testing.T) {
		req := diamondRequest()
		req.Graph.NodeCount = math.MaxUint64
		req.Dependencies = deps(0, 9)
		_, err := megakernel.PlanFrontierExecution(nil, req)
		assert.ErrorContains(t, err, "node layout bytes")
		req = diamondRequest()
		req.Dependencies = append(req.Dependencies, deps(3, 0)...)
		req.BudgetBytes = 1
		_, err = megakernel.PlanFrontierExecution(nil, req)
		assert.ErrorAs(t, err, new(*megakernel.CycleError))
	})
	t.Run("empty wave list", func(t *testing.T) {
		req := diamondRequest()
		req.Waves, req.Dependencies = nil, nil
		p, err := megakernel.PlanFrontierExecution(nil, req)
		require.NoError(t, err)
		assert.Zero(t, p.Barriers.GroupCount())
		assert.Equal(t, uint64(1<<20), p.AmortizedReadbackBytes)
	})
}

// checkMemoryInvariants: the split keeps the layered order, no group crosses
// a layer boundary, every group's fused cost fits the group budget, and the
// peaks are the per-field maxima.
func checkMemoryInvariants(t testing.TB, req megakernel.FrontierMemoryRequest, layered megakernel.BarrierPlan, p megakernel.FrontierMemoryPlan) {
	t.Helper()
	require.Equal(t, layered.Order, p.Barriers.Order)
	checkBarrierGroupsCoverLayers(t, layered, p.Barriers)
	budget := req.BudgetBytes - req.ResidentGraphBytes
	var pf, ps, po uint64
	for g := 0; g < p.Barriers.GroupCount(); g++ {
		var cost, f, s, o uint64
		for _, w := range p.Barriers.Group(g) {
			c, err := req.Waves[w].FusedBytes()
			require.NoError(t, err)
			cost += c
			f += req.Waves[w].FrontierBytes
			s += req.Waves[w].ScratchBytes
			o += req.Waves[w].OutputBytes
		}
		require.LessOrEqual(t, cost, budget)
		pf, ps, po = max(pf, f), max(ps, s), max(po, o)
	}
	require.Equal(t, pf, p.PeakFrontierBytes)
	require.Equal(t, ps, p.PeakScratchBytes)
	require.Equal(t, po, p.PeakOutputBytes)
	require.Equal(t, max(req.ReadbackBytes, po), p.AmortizedReadbackBytes)
	require.Equal(t, p.Barriers.MaxGroupWidth(), p.MaxGroupWidth)
	require.Equal(t, max(p.Barriers.GroupCount()-1, 0), p.Barriers.GlobalBarriers)
}

func checkBarrierGroupsCoverLayers(t testing.TB, layered, split megakernel.BarrierPlan) {
	t.Helper()
	starts := map[int32]bool{}
	for _, s := range split.GroupStart {
		starts[s] = true
	}
	for _, s := range layered.GroupStart {
		require.True(t, starts[s], "layer boundary %d lost", s)
	}
}

func TestPropertyFrontierMemorySplit(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 2026))
	for i := 0; i < 500; i++ {
		n, ds := layeredDAG(r, 1+r.IntN(6), 1+r.IntN(10), 2)
		waves := make([]megakernel.FrontierWave, n)
		for j := range waves {
			waves[j] = megakernel.FrontierWave{FrontierBytes: r.Uint64N(1000), ScratchBytes: r.Uint64N(300), OutputBytes: r.Uint64N(500)}
		}
		req := megakernel.FrontierMemoryRequest{Waves: waves, Dependencies: ds, ResidentGraphBytes: r.Uint64N(1000),
			BudgetBytes: 1000 + r.Uint64N(20000), ReadbackBytes: r.Uint64N(4000)}
		layered, err := megakernel.PlanBarriers(n, ds)
		require.NoError(t, err)
		p, err := megakernel.PlanFrontierMemory(req)
		var gob *megakernel.GroupOverBudgetError
		if err != nil {
			require.ErrorAs(t, err, &gob)
			require.Greater(t, gob.RequiredBytes, gob.BudgetBytes)
			continue
		}
		require.Equal(t, layered.GroupCount(), p.Layers)
		checkMemoryInvariants(t, req, layered, p)
	}
}

func ExamplePlanFrontierExecution() {
	cache := megakernel.NewPlanCache(megakernel.DefaultMaxPlans)
	plan, err := megakernel.PlanFrontierExecution(cache, megakernel.FrontierExecutionRequest{
		Identity: megakernel.PlanIdentity{GraphLayoutHash: 1, Kind: megakernel.Dataflow, Device: megakernel.DeviceKey{
			SMMajor: 12, WarpSize: 32, SupportsGridSync: true, SupportsTensorCores: true, MaxWorkgroupSize: 1024}},
		Sample:       megakernel.ScheduleSample{DispatchCostNS: 1000, FrontierDensity: 0.90, ReadbackBytes: 1 << 20},
		Graph:        megakernel.GraphShape{NodeCount: 1000, EdgeCount: 4000},
		BytesPerNode: 16, BytesPerEdge: 8,
		Waves: []megakernel.FrontierWave{
			{FrontierBytes: 1024, ScratchBytes: 512, OutputBytes: 256},
			{FrontierBytes: 2048, ScratchBytes: 1024, OutputBytes: 512},
			{FrontierBytes: 4096, ScratchBytes: 2048, OutputBytes: 1024},
			{FrontierBytes: 8192, ScratchBytes: 4096, OutputBytes: 2048},
		},
		Dependencies:     []megakernel.Dependency{{Before: 0, After: 1}, {Before: 0, After: 2}, {Before: 1, After: 3}, {Before: 2, After: 3}},
		BudgetBytes:      128 << 10,
		LaunchOverheadNS: 250,
		FusionPressure:   0.95,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(plan.Barriers.Groups(), "barriers:", plan.Barriers.GlobalBarriers)
	fmt.Println(plan.Execution.Topology, "required:", plan.Execution.Memory.RequiredBytes, "of", plan.Execution.Memory.BudgetBytes)
	fmt.Println(plan.Execution.Decision.StableExplanation())
	// Output:
	// [[0] [1 2] [3]] barriers: 2
	// FusedWave required: 74624 of 131072
	// megakernel-topology-v1|topology=FusedWave|memory_pressure_bps=4755|average_degree_bps=40000|launch_pressure_bps=2500|reason=launch_and_readback_pressure_fused
}
