package planners

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/internal/memcheck"
)

// fstage builds a stage from the spec's (id, layout, input, output, scratch) tuples.
func fstage(id uint32, layout, in, out, scratch uint64) LaunchFusionStage {
	return LaunchFusionStage{ID: id, LayoutHash: layout, InputBytes: in, OutputBytes: out, ScratchBytes: scratch}
}

func requireFusionError(t *testing.T, err error, kind FusionErrorKind) *FusionError {
	t.Helper()
	return requireKindError(t, err, kind, func(e *FusionError) FusionErrorKind { return e.Kind })
}

func TestPlanLaunchFusionFusesCompatibleStages(t *testing.T) {
	plan, err := PlanLaunchFusion([]LaunchFusionStage{
		fstage(1, 7, 64, 32, 8), fstage(2, 7, 32, 48, 8), fstage(3, 7, 48, 16, 8),
	}, 256)
	require.NoError(t, err)
	assert.Equal(t, LaunchFusionPlan{
		Groups:      []LaunchFusionGroup{{StageIDs: []uint32{1, 2, 3}, LayoutHash: 7, RequiredBytes: 184, AvoidedIntermediateBytes: 80}},
		LaunchCount: 1, AvoidedLaunches: 2, AvoidedIntermediateBytes: 80,
	}, plan)

	// The peak grows 104 -> 160 -> 184: with a budget of 183 the third stage
	// starts its own group, with 160 the second one does not fit either.
	plan, err = PlanLaunchFusion([]LaunchFusionStage{
		fstage(1, 7, 64, 32, 8), fstage(2, 7, 32, 48, 8), fstage(3, 7, 48, 16, 8),
	}, 183)
	require.NoError(t, err)
	require.Len(t, plan.Groups, 2)
	assert.Equal(t, uint64(160), plan.Groups[0].RequiredBytes)
	assert.Equal(t, []uint32{3}, plan.Groups[1].StageIDs)
	assert.Equal(t, uint64(72), plan.Groups[1].RequiredBytes)
	plan, err = PlanLaunchFusion([]LaunchFusionStage{
		fstage(1, 7, 64, 32, 8), fstage(2, 7, 32, 48, 8), fstage(3, 7, 48, 16, 8),
	}, 159)
	require.NoError(t, err)
	assert.Equal(t, uint32(2), plan.LaunchCount)
	assert.Equal(t, []uint32{1}, plan.Groups[0].StageIDs)
	assert.Equal(t, []uint32{2, 3}, plan.Groups[1].StageIDs)
	assert.Equal(t, uint64(48), plan.AvoidedIntermediateBytes)
}

func TestPlanLaunchFusionBoundaries(t *testing.T) {
	host := fstage(3, 8, 64, 32, 8)
	host.RequiresHostMaterialization = true
	plan, err := PlanLaunchFusion([]LaunchFusionStage{
		fstage(1, 7, 64, 32, 8), fstage(2, 8, 64, 32, 8), host, fstage(4, 9, 64, 32, 8),
	}, 128)
	require.NoError(t, err)
	assert.Equal(t, uint32(4), plan.LaunchCount)
	assert.Equal(t, uint32(0), plan.AvoidedLaunches)
	assert.Equal(t, uint64(0), plan.AvoidedIntermediateBytes)
	for i, g := range plan.Groups {
		assert.Equal(t, []uint32{uint32(i + 1)}, g.StageIDs)
		assert.Equal(t, uint64(104), g.RequiredBytes)
	}

	// A host-materialising stage starts a group that later stages join.
	first := fstage(1, 5, 8, 8, 0)
	first.RequiresHostMaterialization = true
	plan, err = PlanLaunchFusion([]LaunchFusionStage{fstage(0, 5, 8, 8, 0), first, fstage(2, 5, 8, 8, 0)}, 1024)
	require.NoError(t, err)
	require.Len(t, plan.Groups, 2)
	assert.Equal(t, []uint32{0}, plan.Groups[0].StageIDs)
	assert.Equal(t, []uint32{1, 2}, plan.Groups[1].StageIDs)
}

func TestPlanLaunchFusionErrors(t *testing.T) {
	_, err := PlanLaunchFusion([]LaunchFusionStage{fstage(1, 7, 1, 1, 1)}, 0)
	requireFusionError(t, err, FusionZeroBudget)
	// The budget is checked before an empty list returns.
	_, err = PlanLaunchFusion(nil, 0)
	requireFusionError(t, err, FusionZeroBudget)

	_, err = PlanLaunchFusion([]LaunchFusionStage{fstage(1, 7, 1, 1, 1), fstage(1, 7, 1, 1, 1)}, 128)
	fe := requireFusionError(t, err, FusionDuplicateStage)
	assert.Equal(t, uint32(1), fe.ID)
	assert.Equal(t, "stages[1].id", fe.Field())

	_, err = PlanLaunchFusion([]LaunchFusionStage{fstage(9, 7, 64, 32, 64)}, 128)
	fe = requireFusionError(t, err, FusionStageOverBudget)
	assert.Equal(t, FusionError{Kind: FusionStageOverBudget, ID: 9, RequiredBytes: 160, BudgetBytes: 128}, *fe)

	// The duplicate check runs over all stages before any budget check.
	_, err = PlanLaunchFusion([]LaunchFusionStage{fstage(9, 7, 64, 32, 64), fstage(2, 7, 1, 1, 1), fstage(2, 7, 1, 1, 1)}, 128)
	requireFusionError(t, err, FusionDuplicateStage)

	// A later stage over budget names its position.
	_, err = PlanLaunchFusion([]LaunchFusionStage{fstage(1, 7, 1, 1, 1), fstage(2, 8, 200, 1, 1)}, 128)
	fe = requireFusionError(t, err, FusionStageOverBudget)
	assert.Equal(t, 1, fe.Index)
	assert.Equal(t, uint64(202), fe.RequiredBytes)

	assert.Equal(t, "StageOverBudget", FusionStageOverBudget.String())
	assert.Equal(t, "FusionErrorKind(9)", FusionErrorKind(9).String())
}

func TestPlanLaunchFusionOverflow(t *testing.T) {
	const max = math.MaxUint64
	tests := []struct {
		name   string
		stages []LaunchFusionStage
		field  string
	}{
		{"stage io", []LaunchFusionStage{fstage(1, 7, max, 1, 0)}, "stage io bytes"},
		{"stage required", []LaunchFusionStage{fstage(1, 7, max-1, 1, 1)}, "stage required bytes"},
		{"fused scratch", []LaunchFusionStage{fstage(1, 7, max-2, 1, 1), fstage(2, 7, 0, 0, 1)}, "fused scratch bytes"},
		{"fused output", []LaunchFusionStage{fstage(1, 7, max-2, 1, 1), fstage(2, 7, 0, 1, 0)}, "fused output bytes"},
		// "avoided intermediate bytes" cannot overflow: a group's avoided
		// bytes are outputs already counted in its required bytes.
		{"total avoided", []LaunchFusionStage{
			fstage(1, 7, 0, max, 0), fstage(2, 7, 0, 0, 0),
			fstage(3, 8, 0, 1, 0), fstage(4, 8, 0, 0, 0)}, "total avoided intermediate bytes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := PlanLaunchFusion(tc.stages, max)
			requireOverflow(t, err, tc.field)
		})
	}
}

func TestPlanLaunchFusionSingleStage(t *testing.T) {
	plan, err := PlanLaunchFusion([]LaunchFusionStage{fstage(4, 1, 10, 20, 30)}, 60)
	require.NoError(t, err)
	assert.Equal(t, uint32(1), plan.LaunchCount)
	assert.Equal(t, uint64(60), plan.Groups[0].RequiredBytes)

	plan, err = PlanLaunchFusion(nil, 1)
	require.NoError(t, err)
	assert.Equal(t, uint32(0), plan.LaunchCount)
	assert.NotNil(t, plan.Groups)
}

func TestPlanLaunchFusionSixtyFourStages(t *testing.T) {
	stages := make([]LaunchFusionStage, 64)
	for i := range stages {
		stages[i] = fstage(uint32(i), 3, 16, 16, 4)
	}
	plan, err := PlanLaunchFusion(stages, 8192)
	require.NoError(t, err)
	assert.Equal(t, uint32(1), plan.LaunchCount)
	assert.Equal(t, uint32(63), plan.AvoidedLaunches)
	assert.Equal(t, uint64(63*16), plan.AvoidedIntermediateBytes)
	assert.Equal(t, uint64(36+63*20), plan.Groups[0].RequiredBytes)

	// A smaller call afterwards is planned independently of the first.
	plan, err = PlanLaunchFusion(stages[:3], 8192)
	require.NoError(t, err)
	assert.Equal(t, []uint32{0, 1, 2}, plan.Groups[0].StageIDs)
	assert.Equal(t, uint32(2), plan.AvoidedLaunches)
}

func randomFusionStages(r *rand.Rand) []LaunchFusionStage {
	n := 1 + r.IntN(24)
	stages := make([]LaunchFusionStage, n)
	for i := range stages {
		stages[i] = LaunchFusionStage{
			ID:                          uint32(i) * 3,
			LayoutHash:                  r.Uint64N(3),
			InputBytes:                  r.Uint64N(96),
			OutputBytes:                 r.Uint64N(96),
			ScratchBytes:                r.Uint64N(64),
			RequiresHostMaterialization: r.IntN(11) == 0,
		}
	}
	return stages
}

// checkFusionPlan checks the spec's generated properties, and that every
// group is maximal and its byte counts follow the formula.
func checkFusionPlan(t *testing.T, stages []LaunchFusionStage, budget uint64, plan LaunchFusionPlan) {
	t.Helper()
	var flat []uint32
	var total uint64
	k := 0
	for gi, g := range plan.Groups {
		require.NotEmpty(t, g.StageIDs)
		flat = append(flat, g.StageIDs...)
		assert.LessOrEqual(t, g.RequiredBytes, budget)
		first := stages[k]
		assert.Equal(t, first.LayoutHash, g.LayoutHash)
		req := first.InputBytes + first.OutputBytes + first.ScratchBytes
		var avoided uint64
		for j := 1; j < len(g.StageIDs); j++ {
			s := stages[k+j]
			assert.False(t, s.RequiresHostMaterialization)
			assert.Equal(t, first.LayoutHash, s.LayoutHash)
			req += s.ScratchBytes + s.OutputBytes
			avoided += stages[k+j-1].OutputBytes
		}
		assert.Equal(t, req, g.RequiredBytes)
		assert.Equal(t, avoided, g.AvoidedIntermediateBytes)
		total += avoided
		k += len(g.StageIDs)
		if gi+1 < len(plan.Groups) {
			next := stages[k]
			blocked := next.RequiresHostMaterialization || next.LayoutHash != first.LayoutHash ||
				req+next.ScratchBytes+next.OutputBytes > budget
			assert.True(t, blocked, "group %d could have taken stage %d", gi, next.ID)
		}
	}
	want := make([]uint32, len(stages))
	for i, s := range stages {
		want[i] = s.ID
	}
	assert.Equal(t, want, flat)
	assert.Equal(t, len(plan.Groups), int(plan.LaunchCount))
	assert.Equal(t, len(stages)-len(plan.Groups), int(plan.AvoidedLaunches))
	assert.Equal(t, total, plan.AvoidedIntermediateBytes)
}

func TestPlanLaunchFusionGeneratedProperties(t *testing.T) {
	planned := 0
	for seed := uint64(0); seed < 4096; seed++ {
		r := rand.New(rand.NewPCG(seed, 0xf05e))
		stages := randomFusionStages(r)
		budget := 96 + seed%512
		plan, err := PlanLaunchFusion(stages, budget)
		if err != nil {
			requireFusionError(t, err, FusionStageOverBudget)
			continue
		}
		planned++
		checkFusionPlan(t, stages, budget, plan)
	}
	assert.Greater(t, planned, 1000)
}

func FuzzPlanLaunchFusion(f *testing.F) {
	f.Add([]byte{1, 7, 64, 32, 8, 0, 2, 7, 32, 48, 8, 0, 3, 7, 48, 16, 8, 0}, uint64(256))
	f.Add([]byte{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, uint64(0))
	f.Fuzz(func(t *testing.T, data []byte, budget uint64) {
		// No input makes memory grow faster than the input itself.
		memcheck.Check(t, memcheck.Bound{Base: 1 << 20, PerByte: 256}, len(data)+8, func() {
			var stages []LaunchFusionStage
			for ; len(data) >= 6; data = data[6:] {
				stages = append(stages, LaunchFusionStage{
					ID: uint32(data[0] % 32), LayoutHash: uint64(data[1] % 4),
					InputBytes: uint64(data[2]) << (data[5] % 64), OutputBytes: uint64(data[3]), ScratchBytes: uint64(data[4]),
					RequiresHostMaterialization: data[5]&1 == 1,
				})
			}
			plan, err := PlanLaunchFusion(stages, budget)
			if err != nil {
				if !strings.Contains(err.Error(), "Fix:") {
					t.Fatalf("error without a fix: %v", err)
				}
				return
			}
			var flat int
			for _, g := range plan.Groups {
				require.LessOrEqual(t, g.RequiredBytes, budget)
				flat += len(g.StageIDs)
			}
			require.Equal(t, len(stages), flat)
			require.Equal(t, len(stages)-len(plan.Groups), int(plan.AvoidedLaunches))
		})
	})
}

// benchFusionStages builds n stages in runs of about eight fusable stages.
func benchFusionStages(n int) []LaunchFusionStage {
	r := rand.New(rand.NewPCG(uint64(n), 1))
	stages := make([]LaunchFusionStage, n)
	for i := range stages {
		stages[i] = LaunchFusionStage{ID: uint32(i), LayoutHash: uint64(i / 8), InputBytes: 1024,
			OutputBytes: r.Uint64N(4096), ScratchBytes: r.Uint64N(512), RequiresHostMaterialization: r.IntN(64) == 0}
	}
	return stages
}

func BenchmarkPlanLaunchFusion(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		stages := benchFusionStages(n)
		b.Run(benchName(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := PlanLaunchFusion(stages, 16384); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
