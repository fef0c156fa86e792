package planners

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/internal/checked"

	"github.com/gpuplan/gpuplan/internal/memcheck"
)

func requireCompactionError(t *testing.T, err error, kind CompactionErrorKind) *CompactionError {
	t.Helper()
	return requireKindError(t, err, kind, func(e *CompactionError) CompactionErrorKind { return e.Kind })
}

func TestPlanResultCompactionPacksSmallOutputs(t *testing.T) {
	plan, err := PlanResultCompaction([]ResultSlot{{2, 0, 128}, {1, 12, 128}, {3, 24, 256}}, 32)
	require.NoError(t, err)
	assert.Equal(t, ResultCompactionPlan{
		CompactRecords:             []CompactRecord{{Slot: 1, CompactOffset: 0, Bytes: 12}, {Slot: 3, CompactOffset: 12, Bytes: 24}},
		DirectSlots:                []uint32{},
		FullCapacityBytes:          512,
		CompactBytes:               36,
		SelectedReadbackBytes:      36,
		AvoidedReadbackBytes:       476,
		AvoidedReadbackBasisPoints: 9296,
	}, plan)
}

func TestPlanResultCompactionSortsAndKeepsLargeOutputsDirect(t *testing.T) {
	slots := make([]ResultSlot, 96)
	for i := range slots {
		id := uint32(95 - i)
		slots[i] = ResultSlot{Slot: id, MeaningfulBytes: uint64(id%8) + 1, CapacityBytes: 64}
	}
	plan, err := PlanResultCompaction(slots, 32)
	require.NoError(t, err)
	require.Len(t, plan.CompactRecords, 96)
	assert.Equal(t, uint32(0), plan.CompactRecords[0].Slot)
	assert.True(t, slices.IsSortedFunc(plan.CompactRecords, func(a, b CompactRecord) int { return int(a.Slot) - int(b.Slot) }))

	plan, err = PlanResultCompaction([]ResultSlot{{7, 0, 128}, {3, 512, 1024}, {5, 16, 128}}, 32)
	require.NoError(t, err)
	assert.Equal(t, []CompactRecord{{Slot: 5, CompactOffset: 0, Bytes: 16}}, plan.CompactRecords)
	assert.Equal(t, []uint32{3}, plan.DirectSlots)
	assert.Equal(t, uint64(1280), plan.FullCapacityBytes)
	assert.Equal(t, uint64(512), plan.DirectBytes)
	assert.Equal(t, uint64(528), plan.SelectedReadbackBytes)
	assert.Equal(t, uint64(752), plan.AvoidedReadbackBytes)
	assert.Equal(t, uint32(5875), plan.AvoidedReadbackBasisPoints)
}

func TestPlanResultCompactionEdges(t *testing.T) {
	// Threshold 0: every non-empty slot is direct.
	plan, err := PlanResultCompaction([]ResultSlot{{1, 1, 8}, {2, 0, 8}, {0, 8, 8}}, 0)
	require.NoError(t, err)
	assert.Empty(t, plan.CompactRecords)
	assert.Equal(t, []uint32{0, 1}, plan.DirectSlots)
	assert.Equal(t, uint64(9), plan.SelectedReadbackBytes)

	// No work: no division by zero.
	plan, err = PlanResultCompaction(nil, 32)
	require.NoError(t, err)
	assert.Equal(t, uint32(0), plan.AvoidedReadbackBasisPoints)
	assert.NotNil(t, plan.CompactRecords)
	assert.NotNil(t, plan.DirectSlots)
	plan, err = PlanResultCompaction([]ResultSlot{{4, 0, 0}}, 32)
	require.NoError(t, err)
	assert.Equal(t, ResultCompactionPlan{CompactRecords: []CompactRecord{}, DirectSlots: []uint32{}}, plan)
}

func TestPlanResultCompactionErrors(t *testing.T) {
	_, err := PlanResultCompaction([]ResultSlot{{1, 1, 8}, {2, 1, 8}, {1, 1, 8}}, 32)
	ce := requireCompactionError(t, err, CompactionDuplicateSlot)
	assert.Equal(t, CompactionError{Kind: CompactionDuplicateSlot, Index: 2, Slot: 1}, *ce)

	_, err = PlanResultCompaction([]ResultSlot{{1, 9, 8}}, 32)
	ce = requireCompactionError(t, err, CompactionMeaningfulExceedsCapacity)
	assert.Equal(t, CompactionError{Kind: CompactionMeaningfulExceedsCapacity, Index: 0, Slot: 1, MeaningfulBytes: 9, CapacityBytes: 8}, *ce)

	// Input order decides which error is reported.
	_, err = PlanResultCompaction([]ResultSlot{{1, 1, 8}, {2, 9, 8}, {1, 1, 8}}, 32)
	requireCompactionError(t, err, CompactionMeaningfulExceedsCapacity)
	_, err = PlanResultCompaction([]ResultSlot{{1, 1, 8}, {1, 1, 8}, {2, 9, 8}}, 32)
	ce = requireCompactionError(t, err, CompactionDuplicateSlot)
	assert.Equal(t, 1, ce.Index)
	// With two repeated ids the earliest repetition is reported.
	_, err = PlanResultCompaction([]ResultSlot{{5, 1, 8}, {1, 1, 8}, {1, 1, 8}, {5, 1, 8}}, 32)
	ce = requireCompactionError(t, err, CompactionDuplicateSlot)
	assert.Equal(t, 2, ce.Index)
	assert.Equal(t, uint32(1), ce.Slot)

	_, err = PlanResultCompaction([]ResultSlot{{1, 0, math.MaxUint64}, {2, 0, 1}}, 32)
	requireOverflow(t, err, "full capacity bytes")
	// The spec validates every slot before it sums the capacities: the
	// overflowing sum does not hide a later slot's error.
	_, err = PlanResultCompaction([]ResultSlot{{1, 0, math.MaxUint64}, {2, 0, 1}, {1, 0, 8}}, 32)
	ce = requireCompactionError(t, err, CompactionDuplicateSlot)
	assert.Equal(t, CompactionError{Kind: CompactionDuplicateSlot, Index: 2, Slot: 1}, *ce)
	_, err = PlanResultCompaction([]ResultSlot{{1, 0, math.MaxUint64}, {2, 0, 1}, {3, 9, 8}}, 32)
	requireCompactionError(t, err, CompactionMeaningfulExceedsCapacity)
	assert.Equal(t, "DuplicateSlot", CompactionDuplicateSlot.String())
}

func checkCompactionPlan(t *testing.T, slots []ResultSlot, threshold uint64, plan ResultCompactionPlan) {
	t.Helper()
	var full, compact, direct uint64
	var wantCompact []uint32
	var wantDirect []uint32
	sorted := slices.Clone(slots)
	slices.SortFunc(sorted, func(a, b ResultSlot) int { return int(a.Slot) - int(b.Slot) })
	for _, s := range sorted {
		full += s.CapacityBytes
		switch {
		case s.MeaningfulBytes == 0:
		case s.MeaningfulBytes <= threshold:
			compact += s.MeaningfulBytes
			wantCompact = append(wantCompact, s.Slot)
		default:
			direct += s.MeaningfulBytes
			wantDirect = append(wantDirect, s.Slot)
		}
	}
	assert.Equal(t, full, plan.FullCapacityBytes)
	assert.Equal(t, compact, plan.CompactBytes)
	assert.Equal(t, direct, plan.DirectBytes)
	assert.Equal(t, compact+direct, plan.SelectedReadbackBytes)
	assert.Equal(t, full-compact-direct, plan.AvoidedReadbackBytes)
	assert.Equal(t, checked.RatioBPS(full-compact-direct, full, 0), plan.AvoidedReadbackBasisPoints)
	assert.LessOrEqual(t, plan.AvoidedReadbackBasisPoints, uint32(10000))
	var offset uint64
	got := []uint32{}
	for _, r := range plan.CompactRecords {
		assert.Equal(t, offset, r.CompactOffset)
		offset += r.Bytes
		got = append(got, r.Slot)
	}
	assert.Equal(t, append([]uint32{}, wantCompact...), got)
	assert.Equal(t, append([]uint32{}, wantDirect...), plan.DirectSlots)
}

func TestPlanResultCompactionGeneratedTotals(t *testing.T) {
	for n := 1; n <= 64; n++ {
		for threshold := uint64(0); threshold < 16; threshold++ {
			r := rand.New(rand.NewPCG(uint64(n), threshold))
			slots := make([]ResultSlot, n)
			for i, id := range r.Perm(n) {
				capacity := r.Uint64N(32)
				slots[i] = ResultSlot{Slot: uint32(id), MeaningfulBytes: r.Uint64N(capacity + 1), CapacityBytes: capacity}
			}
			plan, err := PlanResultCompaction(slots, threshold)
			require.NoError(t, err)
			checkCompactionPlan(t, slots, threshold, plan)
		}
	}
}

func TestPlanResultCompactionGeneratedShapes(t *testing.T) {
	planned := 0
	for seed := uint64(0); seed < 4096; seed++ {
		r := rand.New(rand.NewPCG(seed, 0xc0))
		n := r.IntN(48)
		slots := make([]ResultSlot, n)
		for i := range slots {
			capacity := r.Uint64N(1 << 12)
			slots[i] = ResultSlot{Slot: uint32(r.IntN(256)), MeaningfulBytes: r.Uint64N(capacity + 2), CapacityBytes: capacity}
		}
		threshold := r.Uint64N(1 << 11)
		plan, err := PlanResultCompaction(slots, threshold)
		if err != nil {
			assert.Contains(t, err.Error(), "Fix:")
			continue
		}
		planned++
		checkCompactionPlan(t, slots, threshold, plan)
	}
	assert.Greater(t, planned, 500)
}

func FuzzPlanResultCompaction(f *testing.F) {
	f.Add([]byte{2, 0, 128, 1, 12, 128, 3, 24, 255}, uint64(32), uint8(0))
	f.Add([]byte{1, 1, 1, 1, 1, 1}, uint64(0), uint8(60))
	f.Fuzz(func(t *testing.T, data []byte, threshold uint64, shift uint8) {
		// No input makes memory grow faster than the input itself.
		memcheck.Check(t, memcheck.Bound{Base: 1 << 20, PerByte: 256}, len(data)+16, func() {
			var slots []ResultSlot
			for ; len(data) >= 3; data = data[3:] {
				slots = append(slots, ResultSlot{Slot: uint32(data[0]), MeaningfulBytes: uint64(data[1]), CapacityBytes: uint64(data[2]) << (shift % 64)})
			}
			plan, err := PlanResultCompaction(slots, threshold)
			if err != nil {
				if !strings.Contains(err.Error(), "Fix:") {
					t.Fatalf("error without a fix: %v", err)
				}
				return
			}
			require.Equal(t, plan.CompactBytes+plan.DirectBytes, plan.SelectedReadbackBytes)
			require.Equal(t, plan.FullCapacityBytes-plan.SelectedReadbackBytes, plan.AvoidedReadbackBytes)
			require.LessOrEqual(t, plan.AvoidedReadbackBasisPoints, uint32(10000))
		})
	})
}

func BenchmarkPlanResultCompaction(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		r := rand.New(rand.NewPCG(uint64(n), 2))
		slots := make([]ResultSlot, n)
		for i, id := range r.Perm(n) {
			capacity := r.Uint64N(4096)
			slots[i] = ResultSlot{Slot: uint32(id), MeaningfulBytes: r.Uint64N(capacity + 1), CapacityBytes: capacity}
		}
		b.Run(benchName(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := PlanResultCompaction(slots, 256); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
