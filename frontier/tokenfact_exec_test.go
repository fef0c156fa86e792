package frontier

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gpuplan/gpuplan/internal/checked"
	"github.com/gpuplan/gpuplan/megakernel"
	"github.com/gpuplan/gpuplan/planners"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// specDevice is the device key used by the spec's tests: sm 12.0, warp 32,
// grid sync, tensor cores, max workgroup 1024.
var specDevice = megakernel.DeviceKey{SMMajor: 12, WarpSize: 32, SupportsGridSync: true, SupportsTensorCores: true, MaxWorkgroupSize: 1024}

// specExecRequest is vyre's execution-plan setup: a 3-node / 2-edge graph (8-byte node
// records, 4-byte edge records, 16 payload bytes per node) and 3 chained
// frontier nodes with 4 active items each.
func specExecRequest(t testing.TB) TokenFactExecutionRequest {
	g, err := BuildTokenFactGraph(
		[]TokenFactNode{
			{ID: 1, Kind: NodeToken, PayloadOffset: 0, PayloadLen: 16},
			{ID: 2, Kind: NodeSemantic, PayloadOffset: 16, PayloadLen: 16},
			{ID: 3, Kind: NodeFact, PayloadOffset: 32, PayloadLen: 16},
		},
		[]TokenFactEdge{{From: 1, To: 2, Kind: EdgeTokenFlow}, {From: 2, To: 3, Kind: EdgeSemanticFact}}, 48)
	require.NoError(t, err)
	layout, err := AdaptTokenFactGraphLayout(g, 8, 4)
	require.NoError(t, err)
	ir, err := PlanFrontierTypedIR(
		[]IRNode{{ID: 0, Domain: DomainParser, ActiveItems: 4}, {ID: 1, Domain: DomainSemantic, ActiveItems: 4}, {ID: 2, Domain: DomainDataflow, ActiveItems: 4}},
		[]IRDependency{{Before: 0, After: 1}, {Before: 1, After: 2}})
	require.NoError(t, err)
	in, err := AdaptFrontierTypedIRToCUDA(ir, 8, 16, 32)
	require.NoError(t, err)
	return TokenFactExecutionRequest{
		Identity:         megakernel.PlanIdentity{GraphLayoutHash: 0x22, Kind: megakernel.ParserFrontend, Device: specDevice},
		Sample:           megakernel.ScheduleSample{DispatchCostNS: 1000, FrontierDensity: 0.9, ReadbackBytes: 1 << 20},
		Layout:           layout,
		Frontier:         in,
		BudgetBytes:      1 << 20,
		LaunchOverheadNS: 250,
		FusionPressure:   0.95,
	}
}

func TestTokenFactExecutionSpecVector(t *testing.T) {
	req := specExecRequest(t)
	plan, err := PlanTokenFactFrontierExecution(megakernel.NewPlanCache(megakernel.DefaultMaxPlans), req)
	require.NoError(t, err)
	assert.Equal(t, 2, plan.Frontier.Barriers.GlobalBarriers)
	assert.Equal(t, uint64(48), plan.WorkQueue.QueueBytes, "12 items x 4 bytes")
	assert.Equal(t, uint64(64), plan.WorkQueue.ResidentBytes)
	assert.Equal(t, uint64(64), plan.ResidentWorkQueueBytes)
	assert.Equal(t, uint64(48), plan.ResidentPayloadBytes)
	assert.Equal(t, uint64(12), plan.TotalActiveItems)
	assert.True(t, plan.WorkQueue.FinalOnlyHostSync)
	assert.Equal(t, uint32(10000), plan.WorkQueue.InitialOccupancyBPS)
	assert.GreaterOrEqual(t, plan.TotalRequiredBytes, plan.Frontier.Execution.Memory.RequiredBytes)
	assert.Equal(t, plan.Frontier.Execution.Memory.RequiredBytes+48+64, plan.TotalRequiredBytes)
	assert.Equal(t, uint64(32), plan.Frontier.Execution.Memory.GraphBytes, "graph bytes are node + edge records")
	assert.Equal(t, uint64(1<<20)-48-64, plan.Frontier.Execution.Memory.BudgetBytes, "the scheduler budget leaves payload and queue out")
}

func TestTokenFactLayoutFeedsSparseMemoryPlanner(t *testing.T) {
	// vyre's vector: the 152-byte layout gives graph bytes 128 in the Sparse planner.
	l, err := AdaptTokenFactGraphLayout(specTokenFactGraph(t), 32, 16)
	require.NoError(t, err)
	mem, err := megakernel.PlanMemoryBudget(megakernel.SparseFrontier, megakernel.MemoryRequest{
		Graph:        megakernel.GraphShape{NodeCount: l.GraphShape.NodeCount, EdgeCount: l.GraphShape.EdgeCount},
		BytesPerNode: l.NodeRecordBytes, BytesPerEdge: l.EdgeRecordBytes, BudgetBytes: 1 << 20})
	require.NoError(t, err)
	assert.Equal(t, uint64(128), mem.GraphBytes)
}

func TestFrontierIRAdapterFeedsBarrierPlanner(t *testing.T) {
	// vyre's vector: the adapted two-wave chain gives a barrier plan with 1 barrier.
	ir, err := PlanFrontierTypedIR(
		[]IRNode{{ID: 0, Domain: DomainParser, ActiveItems: 4}, {ID: 1, Domain: DomainSemantic, ActiveItems: 6}},
		[]IRDependency{{Before: 0, After: 1}})
	require.NoError(t, err)
	in, err := AdaptFrontierTypedIRToCUDA(ir, 8, 16, 32)
	require.NoError(t, err)
	bp, err := megakernel.PlanBarriers(len(in.Waves), []megakernel.Dependency{{Before: in.Dependencies[0].Before, After: in.Dependencies[0].After}})
	require.NoError(t, err)
	assert.Equal(t, 1, bp.GlobalBarriers)
}

func TestTokenFactExecutionColdVsWarm(t *testing.T) {
	req := specExecRequest(t)
	cold, err := PlanTokenFactFrontierExecutionEnvelope(nil, req, ColdUpload)
	require.NoError(t, err)
	warm, err := PlanTokenFactFrontierExecutionEnvelope(nil, req, WarmResident)
	require.NoError(t, err)
	assert.Equal(t, uint64(32), cold.ResidentGraphBytes)
	assert.Equal(t, uint64(32), warm.ResidentGraphBytes)
	assert.Equal(t, uint64(32), cold.GraphUploadBytes)
	assert.Equal(t, uint64(0), warm.GraphUploadBytes)
	assert.Equal(t, uint64(0), cold.AvoidedGraphUploadBytes)
	assert.Equal(t, uint64(32), warm.AvoidedGraphUploadBytes)
	assert.Equal(t, cold.TotalResidentBytes, warm.TotalResidentBytes)
	assert.Equal(t, cold.Plan.TotalRequiredBytes, cold.TotalResidentBytes)
	_, err = PlanTokenFactFrontierExecutionEnvelope(nil, req, GraphReuse(5))
	assert.ErrorContains(t, err, "Fix:")
}

func TestTokenFactExecutionErrors(t *testing.T) {
	tests := []struct {
		name string
		edit func(r *TokenFactExecutionRequest)
		want error
	}{
		{"active item mismatch", func(r *TokenFactExecutionRequest) { r.Frontier.ActiveItems = r.Frontier.ActiveItems[:2] },
			&ActiveItemWaveCountMismatchError{Waves: 3, ActiveItems: 2}},
		{"mismatch before zero graph", func(r *TokenFactExecutionRequest) {
			r.Frontier.ActiveItems = nil
			r.Layout.NodeBytes, r.Layout.EdgeBytes = 0, 0
		}, &ActiveItemWaveCountMismatchError{Waves: 3, ActiveItems: 0}},
		{"zero graph", func(r *TokenFactExecutionRequest) { r.Layout.NodeBytes, r.Layout.EdgeBytes = 0, 0 },
			ZeroResidentGraphBytesError{}},
		{"hand-built envelope", func(r *TokenFactExecutionRequest) { r.Layout.ResidentBytes = 79 },
			&ResidentGraphByteEnvelopeMismatchError{Expected: 79, Actual: 80}},
		{"payload over budget before frontier planning", func(r *TokenFactExecutionRequest) { r.BudgetBytes = 47 },
			&PayloadExceedsBudgetError{PayloadBytes: 48, BudgetBytes: 47}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := specExecRequest(t)
			tc.edit(&req)
			_, err := PlanTokenFactFrontierExecution(nil, req)
			assert.Equal(t, tc.want, err)
			assert.Contains(t, err.Error(), "Fix:")
		})
	}

	// An empty token/fact graph has no resident graph bytes.
	empty, err := BuildTokenFactGraph(nil, nil, 0)
	require.NoError(t, err)
	emptyLayout, err := AdaptTokenFactGraphLayout(empty, 8, 4)
	require.NoError(t, err)
	req0 := specExecRequest(t)
	req0.Layout = emptyLayout
	_, err = PlanTokenFactFrontierExecution(nil, req0)
	assert.Equal(t, ZeroResidentGraphBytesError{}, err)

	// The queue does not fit the payload budget: 48 payload + 64 queue > 100.
	req := specExecRequest(t)
	req.BudgetBytes = 100
	_, err = PlanTokenFactFrontierExecution(nil, req)
	var wq *WorkQueuePlanError
	require.ErrorAs(t, err, &wq)
	var qe *planners.WorkQueueError
	require.ErrorAs(t, err, &qe)
	assert.Equal(t, planners.WorkQueueOverBudget, qe.Kind)
	assert.Contains(t, err.Error(), "Fix:")

	// The queue fits but the graph and frontier do not.
	req.BudgetBytes = 48 + 64 + 40
	_, err = PlanTokenFactFrontierExecution(nil, req)
	var fp *FrontierPlanError
	require.ErrorAs(t, err, &fp)
	var gob *megakernel.GroupOverBudgetError
	require.ErrorAs(t, err, &gob)
	assert.Equal(t, "single fused frontier wave bytes", gob.Field)
	assert.Contains(t, err.Error(), "Fix:")

	// Overflow of the active item total and of the layout sums.
	req = specExecRequest(t)
	req.Frontier.ActiveItems = []uint64{math.MaxUint64, 1, 0}
	_, err = PlanTokenFactFrontierExecution(nil, req)
	assert.Equal(t, &checked.OverflowError{Field: "total active items"}, err)
	req = specExecRequest(t)
	req.Layout.NodeBytes = math.MaxUint64
	_, err = PlanTokenFactFrontierExecution(nil, req)
	assert.Equal(t, &checked.OverflowError{Field: "resident graph bytes"}, err)
	req = specExecRequest(t)
	req.Layout.PayloadBytes = math.MaxUint64
	_, err = PlanTokenFactFrontierExecution(nil, req)
	assert.Equal(t, &checked.OverflowError{Field: "resident graph envelope bytes"}, err)
	req = specExecRequest(t)
	req.QueueSizing = 9
	_, err = PlanTokenFactFrontierExecution(nil, req)
	assert.ErrorContains(t, err, "Fix:")
}

func TestTokenFactExecutionFloatInputs(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	tests := []struct {
		name  string
		edit  func(r *TokenFactExecutionRequest)
		field string
		value float64
	}{
		{"dispatch cost NaN", func(r *TokenFactExecutionRequest) { r.Sample.DispatchCostNS = nan }, "sample.dispatch_cost_ns", nan},
		{"dispatch cost +Inf", func(r *TokenFactExecutionRequest) { r.Sample.DispatchCostNS = inf }, "sample.dispatch_cost_ns", inf},
		{"dispatch cost -Inf", func(r *TokenFactExecutionRequest) { r.Sample.DispatchCostNS = -inf }, "sample.dispatch_cost_ns", -inf},
		{"dispatch cost 0", func(r *TokenFactExecutionRequest) { r.Sample.DispatchCostNS = 0 }, "sample.dispatch_cost_ns", 0},
		{"dispatch cost negative", func(r *TokenFactExecutionRequest) { r.Sample.DispatchCostNS = -1 }, "sample.dispatch_cost_ns", -1},
		{"density NaN", func(r *TokenFactExecutionRequest) { r.Sample.FrontierDensity = nan }, "sample.frontier_density", nan},
		{"density +Inf", func(r *TokenFactExecutionRequest) { r.Sample.FrontierDensity = inf }, "sample.frontier_density", inf},
		{"density above 1", func(r *TokenFactExecutionRequest) { r.Sample.FrontierDensity = 1.5 }, "sample.frontier_density", 1.5},
		{"density negative", func(r *TokenFactExecutionRequest) { r.Sample.FrontierDensity = -0.1 }, "sample.frontier_density", -0.1},
		{"launch overhead NaN", func(r *TokenFactExecutionRequest) { r.LaunchOverheadNS = nan }, "launch_overhead_ns", nan},
		{"launch overhead +Inf", func(r *TokenFactExecutionRequest) { r.LaunchOverheadNS = inf }, "launch_overhead_ns", inf},
		{"launch overhead negative", func(r *TokenFactExecutionRequest) { r.LaunchOverheadNS = -1 }, "launch_overhead_ns", -1},
		{"fusion pressure NaN", func(r *TokenFactExecutionRequest) { r.FusionPressure = nan }, "fusion_pressure", nan},
		{"fusion pressure -Inf", func(r *TokenFactExecutionRequest) { r.FusionPressure = -inf }, "fusion_pressure", -inf},
		{"fusion pressure above 1", func(r *TokenFactExecutionRequest) { r.FusionPressure = 2 }, "fusion_pressure", 2},
		// The fields are checked in order, and before everything else.
		{"density before fusion", func(r *TokenFactExecutionRequest) { r.Sample.FrontierDensity, r.FusionPressure = nan, inf }, "sample.frontier_density", nan},
		{"floats before active items", func(r *TokenFactExecutionRequest) {
			r.Frontier.ActiveItems = nil
			r.LaunchOverheadNS = nan
		}, "launch_overhead_ns", nan},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := specExecRequest(t)
			tc.edit(&req)
			_, err := PlanTokenFactFrontierExecution(nil, req)
			var fe *InvalidFloatError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, tc.field, fe.Field)
			if math.IsNaN(tc.value) {
				assert.True(t, math.IsNaN(fe.Value))
			} else {
				assert.Equal(t, tc.value, fe.Value)
			}
			assert.True(t, strings.HasPrefix(err.Error(), tc.field+" is "), err.Error())
			assert.Equal(t, 1, strings.Count(err.Error(), "Fix:"), err.Error())
			_, err = PlanTokenFactFrontierExecutionEnvelope(nil, req, WarmResident)
			require.ErrorAs(t, err, &fe)
		})
	}
	// The bounds themselves are accepted.
	req := specExecRequest(t)
	req.Sample.FrontierDensity, req.LaunchOverheadNS, req.FusionPressure = 0, 0, 1
	require.NoError(t, req.CheckFloatInputs())
	req.Sample.FrontierDensity, req.FusionPressure = 1, 0
	_, err := PlanTokenFactFrontierExecution(nil, req)
	require.NoError(t, err)
	assert.Equal(t, "sample.frontier_density is NaN, not a finite fraction in [0, 1]. Fix: give the active fraction of the frontier, between 0 and 1",
		(&InvalidFloatError{Field: "sample.frontier_density", Value: math.NaN(), Want: "a finite fraction in [0, 1]",
			Fix: "give the active fraction of the frontier, between 0 and 1"}).Error())
}

func TestTokenFactExecutionEmptyFrontier(t *testing.T) {
	req := specExecRequest(t)
	req.Frontier = CudaFrontierInput{}
	for _, sizing := range []QueueSizing{QueueSizingRelease, QueueSizingExpansionHeadroom} {
		req.QueueSizing = sizing
		plan, err := PlanTokenFactFrontierExecution(nil, req)
		require.NoError(t, err)
		assert.Equal(t, planners.DeviceWorkQueuePlan{FinalOnlyHostSync: true}, plan.WorkQueue)
		assert.Equal(t, uint64(0), plan.ResidentWorkQueueBytes)
		assert.Equal(t, 0, plan.Frontier.Barriers.GroupCount())
	}
	// Waves with zero active items also get no queue.
	req = specExecRequest(t)
	req.Frontier.ActiveItems = []uint64{0, 0, 0}
	plan, err := PlanTokenFactFrontierExecution(nil, req)
	require.NoError(t, err)
	assert.Equal(t, uint64(0), plan.WorkQueue.QueueBytes)
}

func TestTokenFactExecutionExpansionHeadroom(t *testing.T) {
	req := specExecRequest(t)
	req.QueueSizing = QueueSizingExpansionHeadroom
	plan, err := PlanTokenFactFrontierExecution(nil, req)
	require.NoError(t, err)
	// 12 active items: first rank >= 12 is 16, whose prefix sum covers all
	// 2 edges; capped by the edge count.
	assert.Equal(t, uint64(2), plan.ExpansionItems)
	assert.Equal(t, uint64(14), plan.WorkQueue.QueueCapacity)
	assert.Equal(t, uint64(56), plan.WorkQueue.QueueBytes)
	assert.Equal(t, uint64(72), plan.WorkQueue.ResidentBytes)
	assert.Equal(t, plan.Frontier.Execution.Memory.RequiredBytes+48+72, plan.TotalRequiredBytes)

	// A tight budget clips the headroom but keeps the active items.
	// payload budget = B-48; queue budget = B-48-32-peak fused (32+4*64+32=320).
	req.BudgetBytes = 48 + 32 + 320 + 16 + 4*12 + 4
	plan, err = PlanTokenFactFrontierExecution(nil, req)
	require.NoError(t, err)
	assert.Equal(t, uint64(13), plan.WorkQueue.QueueCapacity)
	assert.LessOrEqual(t, plan.TotalRequiredBytes, req.BudgetBytes)
}

func TestExpansionItems(t *testing.T) {
	prof := TokenFactGraphLayout{GraphShape: GraphShape{NodeCount: 100, EdgeCount: 1000}, MaxOutDegree: 50}
	for k := range prof.TopOutDegreePrefixSums {
		prof.TopOutDegreePrefixSums[k] = min(uint64(50*(1<<k)), 1000)
	}
	tests := []struct {
		name   string
		layout TokenFactGraphLayout
		active uint64
		want   uint64
	}{
		{"rank 1", prof, 1, 50},
		{"rank 4 for 3 items", prof, 3, 200},
		{"capped by edges", prof, 64, 1000},
		{"beyond the ranks: active x max degree", func() TokenFactGraphLayout {
			l := prof
			l.GraphShape.EdgeCount = math.MaxUint64
			return l
		}(), 40000, 40000 * 50},
		{"no profile: ceil(edges/nodes)", TokenFactGraphLayout{GraphShape: GraphShape{NodeCount: 300, EdgeCount: 1000}}, 7, 28},
		{"no profile capped", TokenFactGraphLayout{GraphShape: GraphShape{NodeCount: 1, EdgeCount: 1000}}, 7, 1000},
		{"no nodes", TokenFactGraphLayout{}, 7, 0},
		{"huge product capped", TokenFactGraphLayout{GraphShape: GraphShape{NodeCount: 1, EdgeCount: math.MaxUint64 - 1}, MaxOutDegree: math.MaxUint64}, 1 << 40, math.MaxUint64 - 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, expansionItems(tc.layout, tc.active))
		})
	}
}

func TestQueueSizingAndReuseText(t *testing.T) {
	var q QueueSizing
	require.NoError(t, q.UnmarshalText([]byte("expansion_headroom")))
	assert.Equal(t, QueueSizingExpansionHeadroom, q)
	require.NoError(t, q.UnmarshalText([]byte("release")))
	assert.Equal(t, QueueSizingRelease, q)
	assert.ErrorContains(t, q.UnmarshalText([]byte("x")), "Fix:")
	var r GraphReuse
	require.NoError(t, r.UnmarshalText([]byte("warm_resident")))
	assert.Equal(t, WarmResident, r)
	require.NoError(t, r.UnmarshalText([]byte("cold_upload")))
	assert.ErrorContains(t, r.UnmarshalText([]byte("x")), "Fix:")
	assert.Equal(t, "QueueSizing(7)", QueueSizing(7).String())
	assert.Equal(t, "GraphReuse(7)", GraphReuse(7).String())
}

// randomExecRequest builds a random token/fact graph and frontier IR.
func randomExecRequest(t testing.TB, r *rand.Rand) TokenFactExecutionRequest {
	n := 1 + r.IntN(40)
	nodes, edges, payload := randomTokenFactInput(r, n, r.IntN(3*n+1))
	g, err := BuildTokenFactGraph(nodes, edges, payload)
	require.NoError(t, err)
	layout, err := AdaptTokenFactGraphLayout(g, 1+uint64(r.IntN(32)), 1+uint64(r.IntN(16)))
	require.NoError(t, err)
	irNodes, deps := randomIRDAG(r, r.IntN(30), r.IntN(60))
	ir, err := PlanFrontierTypedIR(irNodes, deps)
	require.NoError(t, err)
	in, err := AdaptFrontierTypedIRToCUDA(ir, uint64(r.IntN(16)), uint64(r.IntN(16)), uint64(r.IntN(256)))
	require.NoError(t, err)
	return TokenFactExecutionRequest{
		Identity:         megakernel.PlanIdentity{GraphLayoutHash: r.Uint64(), Device: specDevice},
		Sample:           megakernel.ScheduleSample{DispatchCostNS: 100 + r.Float64()*5000, FrontierDensity: r.Float64(), ReadbackBytes: uint64(r.IntN(1 << 16))},
		Layout:           layout,
		Frontier:         in,
		BudgetBytes:      uint64(r.IntN(1 << 22)),
		LaunchOverheadNS: r.Float64() * 1000,
		FusionPressure:   r.Float64(),
		QueueSizing:      QueueSizing(r.IntN(2)),
	}
}

func checkExecPlan(t testing.TB, req TokenFactExecutionRequest, plan TokenFactExecutionPlan) {
	require.LessOrEqual(t, plan.TotalRequiredBytes, req.BudgetBytes)
	require.Equal(t, plan.Frontier.Execution.Memory.RequiredBytes+req.Layout.PayloadBytes+plan.WorkQueue.ResidentBytes, plan.TotalRequiredBytes)
	require.True(t, plan.WorkQueue.FinalOnlyHostSync)
	require.GreaterOrEqual(t, plan.WorkQueue.QueueCapacity, plan.TotalActiveItems)
	if req.QueueSizing == QueueSizingRelease {
		require.Equal(t, plan.TotalActiveItems, plan.WorkQueue.QueueCapacity)
	} else {
		require.LessOrEqual(t, plan.WorkQueue.QueueCapacity, plan.TotalActiveItems+plan.ExpansionItems)
		require.LessOrEqual(t, plan.ExpansionItems, req.Layout.GraphShape.EdgeCount)
	}
	require.Equal(t, req.Layout.NodeBytes+req.Layout.EdgeBytes, plan.Frontier.Execution.Memory.GraphBytes)
}

func TestTokenFactExecutionProperties(t *testing.T) {
	ok := 0
	for seed := uint64(0); seed < 300; seed++ {
		r := rand.New(rand.NewPCG(seed, 22))
		req := randomExecRequest(t, r)
		plan, err := PlanTokenFactFrontierExecution(nil, req)
		if err != nil {
			require.Contains(t, err.Error(), "Fix:", "seed %d", seed)
			var (
				pe *PayloadExceedsBudgetError
				we *WorkQueuePlanError
				fe *FrontierPlanError
			)
			require.True(t, errors.As(err, &pe) || errors.As(err, &we) || errors.As(err, &fe), "seed %d: %v", seed, err)
			continue
		}
		ok++
		checkExecPlan(t, req, plan)
		// Planning is a pure function: a fresh cache gives the same plan.
		again, err := PlanTokenFactFrontierExecution(megakernel.NewPlanCache(megakernel.DefaultMaxPlans), req)
		require.NoError(t, err, "seed %d", seed)
		require.Equal(t, plan, again, "seed %d", seed)
	}
	require.Greater(t, ok, 100, "the generator must produce mostly feasible plans")
}

func FuzzPlanTokenFactFrontierExecution(f *testing.F) {
	f.Add(uint64(1), uint64(1<<20), uint8(0))
	f.Add(uint64(7), uint64(100), uint8(1))
	f.Add(uint64(9), uint64(math.MaxUint64), uint8(1))
	f.Fuzz(func(t *testing.T, seed, budget uint64, flags uint8) {
		r := rand.New(rand.NewPCG(seed, 23))
		req := randomExecRequest(t, r)
		req.BudgetBytes = budget
		req.QueueSizing = QueueSizing(flags % 3)
		if flags&4 != 0 {
			req.Layout.ResidentBytes ^= uint64(flags)
		}
		if flags&8 != 0 && len(req.Frontier.Waves) > 0 {
			req.Frontier.Waves[0].FrontierBytes = math.MaxUint64 - uint64(flags)
		}
		if flags&16 != 0 {
			req.Sample.FrontierDensity = math.NaN()
			req.FusionPressure = math.Inf(1)
		}
		plan, err := PlanTokenFactFrontierExecution(nil, req)
		if err != nil {
			require.Contains(t, err.Error(), "Fix:")
			return
		}
		checkExecPlan(t, req, plan)
	})
}

func benchExecRequest(b *testing.B, waves int) TokenFactExecutionRequest {
	nodes, edges := benchTokenFactInput(1000)
	g, err := BuildTokenFactGraph(nodes, edges, 2048)
	require.NoError(b, err)
	layout, err := AdaptTokenFactGraphLayout(g, 32, 16)
	require.NoError(b, err)
	irNodes, deps := benchIRInput(waves * 4)
	ir, err := PlanFrontierTypedIR(irNodes, deps)
	require.NoError(b, err)
	in, err := AdaptFrontierTypedIRToCUDA(ir, 8, 4, 64)
	require.NoError(b, err)
	return TokenFactExecutionRequest{
		Identity: megakernel.PlanIdentity{Device: specDevice},
		Sample:   megakernel.ScheduleSample{DispatchCostNS: 1000, FrontierDensity: 0.5, ReadbackBytes: 4096},
		Layout:   layout, Frontier: in, BudgetBytes: 1 << 40, LaunchOverheadNS: 250, FusionPressure: 0.5,
	}
}

func BenchmarkPlanTokenFactFrontierExecution(b *testing.B) {
	// benchIRInput(4w) has 64 nodes per layer, so w*4/64 waves; scale the
	// node count so the wave counts are 10^5/16 and 10^6/16 chained layers
	// plus 10^5 and 10^6 frontier IR nodes end to end.
	for _, n := range []int{100_000, 1_000_000} {
		req := benchExecRequest(b, n/4)
		b.Run(fmt.Sprintf("ir_nodes=%d/waves=%d", n, len(req.Frontier.Waves)), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := PlanTokenFactFrontierExecution(nil, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func ExamplePlanTokenFactFrontierExecution() {
	g, _ := BuildTokenFactGraph(
		[]TokenFactNode{
			{ID: 1, Kind: NodeToken, PayloadOffset: 0, PayloadLen: 16},
			{ID: 2, Kind: NodeSemantic, PayloadOffset: 16, PayloadLen: 16},
			{ID: 3, Kind: NodeFact, PayloadOffset: 32, PayloadLen: 16},
		},
		[]TokenFactEdge{{From: 1, To: 2, Kind: EdgeTokenFlow}, {From: 2, To: 3, Kind: EdgeSemanticFact}}, 48)
	layout, _ := AdaptTokenFactGraphLayout(g, 8, 4)
	ir, _ := PlanFrontierTypedIR(
		[]IRNode{{ID: 0, Domain: DomainParser, ActiveItems: 4}, {ID: 1, Domain: DomainSemantic, ActiveItems: 4}, {ID: 2, Domain: DomainDataflow, ActiveItems: 4}},
		[]IRDependency{{Before: 0, After: 1}, {Before: 1, After: 2}})
	in, _ := AdaptFrontierTypedIRToCUDA(ir, 8, 16, 32)
	env, err := PlanTokenFactFrontierExecutionEnvelope(megakernel.NewPlanCache(megakernel.DefaultMaxPlans), TokenFactExecutionRequest{
		Identity: megakernel.PlanIdentity{Kind: megakernel.ParserFrontend, Device: megakernel.DeviceKey{
			SMMajor: 12, WarpSize: 32, SupportsGridSync: true, SupportsTensorCores: true, MaxWorkgroupSize: 1024}},
		Sample:   megakernel.ScheduleSample{DispatchCostNS: 1000, FrontierDensity: 0.9, ReadbackBytes: 1 << 20},
		Layout:   layout,
		Frontier: in, BudgetBytes: 1 << 20, LaunchOverheadNS: 250, FusionPressure: 0.95,
	}, WarmResident)
	if err != nil {
		fmt.Println(err)
		return
	}
	p := env.Plan
	fmt.Println("barriers", p.Frontier.Barriers.GlobalBarriers)
	fmt.Println("queue bytes", p.WorkQueue.QueueBytes, "resident", p.ResidentWorkQueueBytes)
	fmt.Println("payload", p.ResidentPayloadBytes, "graph", env.ResidentGraphBytes, "avoided upload", env.AvoidedGraphUploadBytes)
	fmt.Println("total = frontier + payload + queue:", p.TotalRequiredBytes == p.Frontier.Execution.Memory.RequiredBytes+48+64)
	// Output:
	// barriers 2
	// queue bytes 48 resident 64
	// payload 48 graph 32 avoided upload 32
	// total = frontier + payload + queue: true
}
