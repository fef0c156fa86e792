package rebuild

import (
	"testing"

	"github.com/gpuplan/gpuplan/egraph"
	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/internal/kernelabi"
	"github.com/gpuplan/gpuplan/megakernel"
	"github.com/gpuplan/gpuplan/workloads/harness"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSessionMemoryPlan checks that the session holds exactly its memory
// plan, and that an e-graph over the budget is refused by the plan before
// anything is allocated, with the plan's numbers; exactly the planned
// bytes fit.
func TestSessionMemoryPlan(t *testing.T) {
	x, _ := newFakeExecutor(t, 8<<30, 7)
	g := generate(t, "gen:20000:3")
	s, err := NewSession(x, g, "gen-20000", Config{})
	require.NoError(t, err)
	p := s.Plans()
	assert.Equal(t, p.Memory.RequiredBytes, x.ResidentBytes(), "the session holds exactly its memory plan")
	assert.EqualValues(t, 1<<16, p.Sizes.TableSlots, "the smallest power of two at least twice the e-nodes")
	assert.Equal(t, p.Sizes.ImageBytes, p.Image.Spans[egraph.SectionCount-1].End())
	require.NoError(t, s.Close())
	assert.Zero(t, x.ResidentBytes())

	before := x.Telemetry()
	_, err = NewSession(x, g, "gen-20000", Config{MaxResidentBytes: p.Memory.RequiredBytes - 1})
	var ob *megakernel.OverBudgetError
	require.ErrorAs(t, err, &ob)
	assert.Contains(t, err.Error(), "e-graph rebuild of gen-20000")
	assert.Equal(t, p.Memory.RequiredBytes, ob.RequiredBytes)
	assert.Equal(t, p.Memory.RequiredBytes-1, ob.BudgetBytes)
	assert.EqualValues(t, g.NodeCount(), ob.NodeCount)
	d := x.Telemetry().Sub(before)
	assert.Zero(t, d.ResidentAllocationBytesRequested+d.HostToDeviceBytes, "refused before any allocation or upload")
	s, err = NewSession(x, g, "gen-20000", Config{MaxResidentBytes: p.Memory.RequiredBytes})
	require.NoError(t, err, "exactly the planned bytes fit")
	require.NoError(t, s.Close())
}

// TestSessionRefusals checks the configurations and inputs a session
// refuses, each with an error naming what is wrong.
func TestSessionRefusals(t *testing.T) {
	x, _ := newFakeExecutor(t, 1<<30, 8)
	g := generate(t, "gen:100:1")
	bad := map[string]Config{"CheckEvery": {CheckEvery: -1}, "Threads": {Threads: 100}, "PersistentThreads": {PersistentThreads: 2048},
		"PersistentBlocksPerSM": {PersistentBlocksPerSM: -2}}
	for field, cfg := range bad {
		_, err := NewSession(x, g, "gen", cfg)
		require.ErrorContains(t, err, field)
		assert.Contains(t, err.Error(), "Fix:")
	}
	_, err := NewSession(x, nil, "none", Config{})
	require.ErrorContains(t, err, "needs an executor and an e-graph")
	// An invalid e-graph is refused naming the e-node, before anything
	// is allocated.
	broken := *g
	broken.Children = append([]int32(nil), g.Children...)
	broken.Children[0] = 9999
	_, err = NewSession(x, &broken, "broken", Config{})
	var ge *egraph.GraphError
	require.ErrorAs(t, err, &ge)
	assert.Contains(t, err.Error(), "children[0]")
	_, err = NewSession(x, &egraph.Graph{}, "empty", Config{})
	require.ErrorAs(t, err, &ge)
	assert.Contains(t, err.Error(), "empty")
	assert.Zero(t, x.ResidentBytes())
	s, err := NewSession(x, g, "gen", Config{})
	require.NoError(t, err)
	defer s.Close()
	_, err = s.Run("warp-drive")
	require.ErrorContains(t, err, "unknown rebuild arm")
}

// TestMisuseIsReported launches the kernels against their contracts: a
// step launch that fuses stages needing a barrier, and persistent phases
// that do not start with unite; both do nothing and say so.
func TestMisuseIsReported(t *testing.T) {
	x, _ := newFakeExecutor(t, 1<<30, 9)
	checkMisuse(t, x)
	for _, starts := range []uint64{StageGroup.Bit(), StageUnite.Bit(), StageUnite.Bit() | StageCompactNodes.Bit()} {
		assert.False(t, phasesOK(starts), starts)
	}
	assert.True(t, phasesOK(StageUnite.Bit()|StageCanonClasses.Bit()))
	assert.Equal(t, StageCanonClasses.Bit()|StageCanonChildren.Bit()|StageGroup.Bit(), nextPhase(StageUnite.Bit()|StageCanonClasses.Bit(), StageCanonClasses))
}

// checkMisuse launches step kernels that fuse stages needing a barrier
// and checks that they do nothing but set the misuse result.
func checkMisuse(t *testing.T, x *executor.Executor) {
	s, err := NewSession(x, generate(t, "gen:200:1"), "gen", Config{})
	require.NoError(t, err)
	defer s.Close()
	for _, mask := range []uint64{StageUnite.Bit() | StageGroup.Bit(), StageClear.Bit() | StageGroup.Bit(), StageGroup.Bit() | StageCompactNodes.Bit()} {
		require.NoError(t, s.reset())
		_, err := s.x.Launch(s.k.step, executor.Linear(1, 64), kernelabi.MustArgs(s.stepParams(0, mask, 0, allItems))...)
		require.NoError(t, err)
		w, err := s.resultWords()
		require.NoError(t, err)
		assert.EqualValues(t, MisusePhases, w[ResultMisuse], mask)
		r := Run{Arm: ArmDeviceLoop}
		require.ErrorContains(t, s.checkControl(&r), "need a grid barrier")
	}
	// A persistent launch given phase starts without unite.
	require.NoError(t, s.reset())
	_, err = s.x.Launch(s.k.persistent, s.plans.PersistentGrid.Config(), kernelabi.MustArgs(PersistentParams[executor.Buffer]{
		StateParams: s.stepParams(0, 0, 0, 0).StateParams, MaxRounds: 4, PhaseStarts: StageGroup.Bit()})...)
	require.NoError(t, err)
	w, err := s.resultWords()
	require.NoError(t, err)
	assert.EqualValues(t, MisusePhases, w[ResultMisuse])
	assert.Zero(t, w[ResultRounds], "it ran no round")
}

// TestFusionPlanGroups checks the fusion plan of a round: unite and clear
// in one launch, the canonical and group stages in another, unite
// starting a group because the host loop reads its input; and that a plan
// fusing stages that need a barrier is refused.
func TestFusionPlanGroups(t *testing.T) {
	z := Sizes{Rows: 100, ChildSlots: 150, Classes: 80, UnionPairs: 40, TableSlots: 256, UnionsBytes: 320, PairsBytes: 800,
		ParentBytes: 320, ClsBytes: 400, CanonBytes: 600, TableBytes: 2048, CtlBytes: 1024, OutBytes: 8 * 182}
	round, compact, err := PlanFusion(z, 1<<30)
	require.NoError(t, err)
	require.Len(t, round.Groups, 2)
	assert.Equal(t, []uint32{0, 1}, round.Groups[0].StageIDs)
	assert.Equal(t, []uint32{2, 3, 4}, round.Groups[1].StageIDs)
	assert.EqualValues(t, 1, compact.LaunchCount)
	assert.Equal(t, StageUnite.Bit()|StageCanonClasses.Bit(), PhaseStarts(round))
	assert.True(t, FusionStages(z)[0].RequiresHostMaterialization)
	stages := FusionStages(z)
	for i := range stages {
		stages[i].LayoutHash = 7
		stages[i].RequiresHostMaterialization = false
	}
	_, _, err = planFusion(stages, CompactFusionStages(z), 1<<30)
	require.ErrorContains(t, err, "need a grid barrier")
	_, _, err = PlanFusion(z, 0)
	require.ErrorContains(t, err, "max_group_bytes is 0")
}

// TestPlanArm checks the arm the topology selection picks: sparse rounds
// (few pending pairs per e-node) run persistent, dense ones as the device
// loop; a profile that is not a rebuild is refused.
func TestPlanArm(t *testing.T) {
	mem := megakernel.MemoryPlan{RequiredBytes: 1 << 20, BudgetBytes: 1 << 30}
	graph := megakernel.GraphShape{NodeCount: 10000, EdgeCount: 15000}
	sparse, err := PlanArm(Profile{Rounds: 64, Rows: 10000, PendingPairs: 1000, RoundNs: 30000, StepCost: harness.StepCost{LaunchOverheadNs: 5000, ReadbackBytes: 4}}, graph, mem)
	require.NoError(t, err)
	assert.Equal(t, ArmPersistent, sparse.Arm)
	assert.Equal(t, megakernel.WarpSparseFrontier, sparse.Decision.Topology)
	dense, err := PlanArm(Profile{Rounds: 4, Rows: 10000, PendingPairs: 40000, RoundNs: 300000, StepCost: harness.StepCost{LaunchOverheadNs: 5000, ReadbackBytes: 4}}, graph, mem)
	require.NoError(t, err)
	assert.Equal(t, ArmDeviceLoop, dense.Arm)
	_, err = PlanArm(Profile{}, graph, mem)
	require.ErrorContains(t, err, "not a rebuild")
}
