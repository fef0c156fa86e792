package planners

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/internal/checked"
)

func kron22Request() MultiSourceBFSRequest {
	return MultiSourceBFSRequest{Roots: 64, Vertices: 1 << 22, GraphBytes: 530_000_000, LevelBytes: 4, BudgetBytes: 80 << 30}
}

func TestPlanMultiSourceBFSKron22(t *testing.T) {
	plan, err := PlanMultiSourceBFS(kron22Request())
	require.NoError(t, err)
	assert.Equal(t, MultiSourceBFSPlan{
		Width:         64,
		Batches:       []MultiSourceBFSBatch{{FirstRoot: 0, Roots: 64}},
		MaskBytes:     3 * 8 << 22,
		OutputBytes:   64 * 4 << 22,
		ResidentBytes: 530_000_000 + 3*8<<22 + 64*4<<22,
		AvoidedPasses: 63,
	}, plan)
}

func TestPlanMultiSourceBFSWidths(t *testing.T) {
	req := kron22Request()
	req.Roots = 100
	plan, err := PlanMultiSourceBFS(req)
	require.NoError(t, err)
	assert.EqualValues(t, 64, plan.Width)
	assert.Equal(t, []MultiSourceBFSBatch{{0, 64}, {64, 36}}, plan.Batches)

	// A 64-root pass does not fit, a 32-root pass does: width 32.
	req.BudgetBytes = req.GraphBytes + 3*4<<22 + 32*4<<22
	plan, err = PlanMultiSourceBFS(req)
	require.NoError(t, err)
	assert.EqualValues(t, 32, plan.Width)
	assert.Equal(t, []MultiSourceBFSBatch{{0, 32}, {32, 32}, {64, 32}, {96, 4}}, plan.Batches)
	assert.Equal(t, req.BudgetBytes, plan.ResidentBytes, "exactly at the budget fits")

	// Few roots use 32-bit words.
	req = kron22Request()
	req.Roots = 7
	plan, err = PlanMultiSourceBFS(req)
	require.NoError(t, err)
	assert.EqualValues(t, 32, plan.Width)
	assert.EqualValues(t, 7*4<<22, plan.OutputBytes, "a partial pass outputs only its roots")

	// A forced width is kept or refused, never changed.
	req = kron22Request()
	req.Width = 64
	req.BudgetBytes = req.GraphBytes + 3*4<<22 + 32*4<<22
	_, err = PlanMultiSourceBFS(req)
	e := requireKindError(t, err, MultiSourceOverBudget, func(e *MultiSourceBFSError) MultiSourceBFSErrorKind { return e.Kind })
	assert.EqualValues(t, 64, e.Width)
}

func TestPlanMultiSourceBFSOverBudget(t *testing.T) {
	req := kron22Request()
	req.BudgetBytes = 1 << 30
	_, err := PlanMultiSourceBFS(req)
	e := requireKindError(t, err, MultiSourceOverBudget, func(e *MultiSourceBFSError) MultiSourceBFSErrorKind { return e.Kind })
	need := uint64(530_000_000 + 3*4<<22 + 32*4<<22)
	assert.EqualValues(t, 32, e.Width, "the smallest pass tried is reported")
	assert.Equal(t, need, e.RequiredBytes)
	assert.Contains(t, err.Error(), "a pass of 32 roots at width 32 needs 1117202560 bytes (graph 530000000 + masks 50331648 + levels 536870912), above budget_bytes 1073741824")
	// Checksums instead of levels fit.
	req.LevelBytes = 0
	plan, err := PlanMultiSourceBFS(req)
	require.NoError(t, err)
	assert.EqualValues(t, 64, plan.Width)
}

// TestPlanMultiSourceBFSLevelPlanes checks the output of a pass that keeps
// its levels as bit planes: whole 32-byte groups per vertex, whatever the
// roots, with LevelBytes ignored.
func TestPlanMultiSourceBFSLevelPlanes(t *testing.T) {
	for _, tc := range []struct {
		bits, width, roots, groups uint64
	}{
		{1, 64, 64, 1}, {4, 64, 64, 1}, {5, 64, 64, 2}, {23, 64, 64, 6}, {32, 64, 40, 8},
		{8, 32, 32, 1}, {9, 32, 3, 2}, {23, 32, 32, 3}, {32, 32, 1, 4},
	} {
		req := kron22Request()
		req.Roots, req.Width, req.LevelBits = tc.roots, tc.width, tc.bits
		plan, err := PlanMultiSourceBFS(req)
		require.NoError(t, err, "%+v", tc)
		assert.Equal(t, tc.groups, PlaneGroups(tc.bits, tc.width), "%+v", tc)
		assert.Equal(t, tc.groups*PlaneGroupBytes<<22, plan.OutputBytes, "%+v", tc)
		assert.Equal(t, req.GraphBytes+plan.MaskBytes+plan.OutputBytes, plan.ResidentBytes, "%+v", tc)
	}
	req := kron22Request()
	req.LevelBits = 33
	_, err := PlanMultiSourceBFS(req)
	require.ErrorContains(t, err, "level_bits is 33. Fix: levels are 32-bit")
}

// TestPlanMultiSourceBFSProperties checks over random requests that the
// batches cover the roots in order, that a plan fits its budget, and that
// a refusal means the smallest pass does not fit.
func TestPlanMultiSourceBFSProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 1))
	for i := 0; i < 5000; i++ {
		req := MultiSourceBFSRequest{Roots: 1 + r.Uint64N(300), Vertices: 1 + r.Uint64N(1<<24), GraphBytes: 1 + r.Uint64N(1<<32),
			LevelBytes: r.Uint64N(5), Width: []uint64{0, 32, 64}[r.IntN(3)], BudgetBytes: 1 + r.Uint64N(1<<36)}
		if r.IntN(2) == 0 {
			req.LevelBits = 1 + r.Uint64N(32)
		}
		output := func(w uint64) uint64 {
			if req.LevelBits != 0 {
				return req.Vertices * 32 * ((req.LevelBits*w + 255) / 256)
			}
			return min(req.Roots, w) * req.Vertices * req.LevelBytes
		}
		plan, err := PlanMultiSourceBFS(req)
		smallest := uint64(32)
		if req.Width != 0 {
			smallest = req.Width
		}
		need := req.GraphBytes + req.Vertices*3*smallest/8 + output(smallest)
		if err != nil {
			requireKindError(t, err, MultiSourceOverBudget, func(e *MultiSourceBFSError) MultiSourceBFSErrorKind { return e.Kind })
			require.Greater(t, need, req.BudgetBytes, "%+v", req)
			continue
		}
		require.LessOrEqual(t, plan.ResidentBytes, req.BudgetBytes)
		var next uint64
		for k, b := range plan.Batches {
			require.Equal(t, next, b.FirstRoot)
			require.LessOrEqual(t, b.Roots, plan.Width)
			if k < len(plan.Batches)-1 {
				require.Equal(t, plan.Width, b.Roots)
			}
			next += b.Roots
		}
		require.Equal(t, req.Roots, next)
		require.Equal(t, req.Roots-uint64(len(plan.Batches)), plan.AvoidedPasses)
		if req.Width == 0 && req.Roots > 32 && plan.Width == 32 {
			wide := req.GraphBytes + req.Vertices*24 + output(64)
			require.Greater(t, wide, req.BudgetBytes, "64 is taken whenever it fits")
		}
	}
}

func TestPlanMultiSourceBFSErrors(t *testing.T) {
	kind := func(e *MultiSourceBFSError) MultiSourceBFSErrorKind { return e.Kind }
	for _, tc := range []struct {
		k MultiSourceBFSErrorKind
		f func(*MultiSourceBFSRequest)
	}{
		{MultiSourceZeroRoots, func(r *MultiSourceBFSRequest) { r.Roots = 0 }},
		{MultiSourceZeroVertices, func(r *MultiSourceBFSRequest) { r.Vertices = 0 }},
		{MultiSourceZeroGraphBytes, func(r *MultiSourceBFSRequest) { r.GraphBytes = 0 }},
		{MultiSourceBadWidth, func(r *MultiSourceBFSRequest) { r.Width = 16 }},
		{MultiSourceBadLevelBits, func(r *MultiSourceBFSRequest) { r.LevelBits = 33 }},
		{MultiSourceZeroBudget, func(r *MultiSourceBFSRequest) { r.BudgetBytes = 0 }},
	} {
		req := kron22Request()
		tc.f(&req)
		_, err := PlanMultiSourceBFS(req)
		requireKindError(t, err, tc.k, kind)
	}
	req := kron22Request()
	req.Vertices = math.MaxUint64 / 2
	_, err := PlanMultiSourceBFS(req)
	var oe *checked.OverflowError
	require.ErrorAs(t, err, &oe)
	assert.Contains(t, err.Error(), "mask bytes")
}

func TestMultiSourceBFSErrorFields(t *testing.T) {
	req := kron22Request()
	req.LevelBits = 33
	_, err := PlanMultiSourceBFS(req)
	var me *MultiSourceBFSError
	require.ErrorAs(t, err, &me)
	assert.Equal(t, MultiSourceBadLevelBits, me.Kind)
	assert.Equal(t, uint64(33), me.LevelBits, "the bad level bits are carried as such")
	assert.Zero(t, me.Width, "width is not the level bits")
	assert.Contains(t, err.Error(), "level_bits is 33")
	req = kron22Request()
	req.Width = 16
	_, err = PlanMultiSourceBFS(req)
	require.ErrorAs(t, err, &me)
	assert.Equal(t, uint64(16), me.Width)
	assert.Zero(t, me.LevelBits)
	assert.Contains(t, err.Error(), "width is 16")
}

func TestPlanesPerGroup(t *testing.T) {
	for _, tc := range []struct{ width, per, groups33 uint64 }{
		{64, 4, 9}, {32, 8, 5}, {256, 1, 33}, {512, 1, 33}, {0, 256, 1},
	} {
		assert.Equal(t, tc.per, PlanesPerGroup(tc.width), "width %d", tc.width)
		assert.Equal(t, tc.groups33, PlaneGroups(33, tc.width), "width %d", tc.width)
	}
}

func BenchmarkPlanMultiSourceBFS(b *testing.B) {
	req := kron22Request()
	req.Roots = 1 << 20
	for b.Loop() {
		if _, err := PlanMultiSourceBFS(req); err != nil {
			b.Fatal(err)
		}
	}
}
