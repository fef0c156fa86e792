package planners

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/internal/memcheck"
)

func requirePassSelectionError(t *testing.T, err error, kind PassSelectionErrorKind) *PassSelectionError {
	t.Helper()
	return requireKindError(t, err, kind, func(e *PassSelectionError) PassSelectionErrorKind { return e.Kind })
}

func launchFusionCandidate() BenchmarkPassCandidate {
	return BenchmarkPassCandidate{PassID: PassLaunchFusion, MinFrontierItems: 1, MinReuseCount: 1, MinAvoidedReadbackBytes: 1,
		PlanningCostNs: 20_000, ScratchBytes: 4096, ExpectedSpeedupBPS: 15_000}
}

func graphCaptureCandidate() BenchmarkPassCandidate {
	return BenchmarkPassCandidate{PassID: PassGraphCaptureReplay, MinFrontierItems: 4096, MinReuseCount: 8, MinAvoidedReadbackBytes: 64 << 10,
		PlanningCostNs: 40_000, ScratchBytes: 8192, ExpectedSpeedupBPS: 20_000}
}

func richSample() BenchmarkPassSelectionSample {
	return BenchmarkPassSelectionSample{FrontierItems: 1 << 16, ReuseCount: 64, AvoidableReadbackBytes: 1 << 20,
		PlanningBudgetNs: 100_000, ScratchBudgetBytes: 1 << 20}
}

func TestSelectBenchmarkPassesSelectsByValue(t *testing.T) {
	plan, err := SelectBenchmarkPasses([]BenchmarkPassCandidate{launchFusionCandidate(), graphCaptureCandidate()}, richSample())
	require.NoError(t, err)
	assert.Equal(t, BenchmarkPassSelectionPlan{
		SelectedPassIDs:     []string{PassGraphCaptureReplay, PassLaunchFusion},
		SkippedPasses:       []SkippedPass{},
		TotalPlanningCostNs: 60_000,
		TotalScratchBytes:   12_288,
		ProjectedSpeedupBPS: 30_000,
	}, plan)
}

func TestSelectBenchmarkPassesThresholds(t *testing.T) {
	frontier := graphCaptureCandidate()
	reuse := BenchmarkPassCandidate{PassID: PassResidentGraphReuse, MinReuseCount: 100, PlanningCostNs: 1, ScratchBytes: 1, ExpectedSpeedupBPS: 30_000, MandatoryWhenProfitable: true}
	readback := BenchmarkPassCandidate{PassID: PassResultCompaction, MinAvoidedReadbackBytes: 1 << 30, PlanningCostNs: 1, ScratchBytes: 1, ExpectedSpeedupBPS: 11_000}
	sample := BenchmarkPassSelectionSample{FrontierItems: 16, ReuseCount: 8, AvoidableReadbackBytes: 1 << 20, PlanningBudgetNs: 1 << 30, ScratchBudgetBytes: 1 << 30}
	plan, err := SelectBenchmarkPasses([]BenchmarkPassCandidate{frontier, reuse, readback}, sample)
	require.NoError(t, err)
	assert.Empty(t, plan.SelectedPassIDs)
	// The mandatory pass comes first and is skipped like any other.
	assert.Equal(t, []SkippedPass{
		{PassID: PassResidentGraphReuse, Reason: ReuseBelowThreshold},
		{PassID: PassResultCompaction, Reason: ReadbackBelowThreshold},
		{PassID: PassGraphCaptureReplay, Reason: FrontierBelowThreshold},
	}, plan.SkippedPasses)
	assert.Equal(t, uint32(10_000), plan.ProjectedSpeedupBPS)
	assert.Equal(t, uint64(0), plan.TotalPlanningCostNs)

	// Frontier is checked before reuse, reuse before readback.
	all := BenchmarkPassCandidate{PassID: "x", MinFrontierItems: 1 << 40, MinReuseCount: 1 << 40, MinAvoidedReadbackBytes: 1 << 40, ExpectedSpeedupBPS: 10_001}
	plan, err = SelectBenchmarkPasses([]BenchmarkPassCandidate{all}, sample)
	require.NoError(t, err)
	assert.Equal(t, FrontierBelowThreshold, plan.SkippedPasses[0].Reason)
	all.MinFrontierItems = 0
	plan, err = SelectBenchmarkPasses([]BenchmarkPassCandidate{all}, sample)
	require.NoError(t, err)
	assert.Equal(t, ReuseBelowThreshold, plan.SkippedPasses[0].Reason)
}

func TestSelectBenchmarkPassesBudgets(t *testing.T) {
	residency := BenchmarkPassCandidate{PassID: PassResidentGraphReuse, PlanningCostNs: 10_000, ScratchBytes: 64,
		ExpectedSpeedupBPS: 12_000, MandatoryWhenProfitable: true}
	sample := BenchmarkPassSelectionSample{PlanningBudgetNs: 9_999, ScratchBudgetBytes: 1 << 20}
	_, err := SelectBenchmarkPasses([]BenchmarkPassCandidate{residency}, sample)
	pe := requirePassSelectionError(t, err, PassSelectionMandatoryProfitablePassOverBudget)
	assert.Equal(t, PassSelectionError{Kind: PassSelectionMandatoryProfitablePassOverBudget, PassID: PassResidentGraphReuse,
		Reason: PlanningBudgetExceeded, RequiredTotal: 10_000, Budget: 9_999}, *pe)
	assert.Equal(t, "sample.planning_budget_ns", pe.Field())

	// The same pass, optional, is skipped.
	residency.MandatoryWhenProfitable = false
	plan, err := SelectBenchmarkPasses([]BenchmarkPassCandidate{residency}, sample)
	require.NoError(t, err)
	assert.Equal(t, []SkippedPass{{PassID: PassResidentGraphReuse, Reason: PlanningBudgetExceeded}}, plan.SkippedPasses)

	// Scratch is checked after planning cost.
	residency.MandatoryWhenProfitable = true
	sample = BenchmarkPassSelectionSample{PlanningBudgetNs: 10_000, ScratchBudgetBytes: 63}
	_, err = SelectBenchmarkPasses([]BenchmarkPassCandidate{residency}, sample)
	pe = requirePassSelectionError(t, err, PassSelectionMandatoryProfitablePassOverBudget)
	assert.Equal(t, ScratchBudgetExceeded, pe.Reason)
	assert.Equal(t, "sample.scratch_budget_bytes", pe.Field())

	// A sum above 64 bits is reported pinned, not wrapped.
	a := BenchmarkPassCandidate{PassID: "a", PlanningCostNs: math.MaxUint64, ExpectedSpeedupBPS: 10_001, MandatoryWhenProfitable: true}
	b := BenchmarkPassCandidate{PassID: "b", PlanningCostNs: 1, ExpectedSpeedupBPS: 10_001, MandatoryWhenProfitable: true}
	_, err = SelectBenchmarkPasses([]BenchmarkPassCandidate{a, b}, BenchmarkPassSelectionSample{PlanningBudgetNs: math.MaxUint64})
	pe = requirePassSelectionError(t, err, PassSelectionMandatoryProfitablePassOverBudget)
	assert.Equal(t, "b", pe.PassID)
	assert.Equal(t, uint64(math.MaxUint64), pe.RequiredTotal)

	// Optional passes with a higher value never starve a mandatory one:
	// mandatory passes are walked first.
	greedy := BenchmarkPassCandidate{PassID: "greedy", MinFrontierItems: 1000, PlanningCostNs: 100, ScratchBytes: 100, ExpectedSpeedupBPS: 50_000}
	needed := BenchmarkPassCandidate{PassID: "needed", PlanningCostNs: 60, ScratchBytes: 60, ExpectedSpeedupBPS: 10_500, MandatoryWhenProfitable: true}
	plan, err = SelectBenchmarkPasses([]BenchmarkPassCandidate{greedy, needed}, BenchmarkPassSelectionSample{FrontierItems: 1000, PlanningBudgetNs: 100, ScratchBudgetBytes: 100})
	require.NoError(t, err)
	assert.Equal(t, []string{"needed"}, plan.SelectedPassIDs)
	assert.Equal(t, []SkippedPass{{PassID: "greedy", Reason: PlanningBudgetExceeded}}, plan.SkippedPasses)
	assert.Equal(t, uint32(10_500), plan.ProjectedSpeedupBPS)
}

func TestSelectBenchmarkPassesMandatoryOverBudgetBeforeProjectionOverflow(t *testing.T) {
	// a and b are selected first and their product overflows the 32-bit
	// projection; c, walked after them, is mandatory and over budget. The
	// spec's dry run raises c's error before anything else is decided.
	a := BenchmarkPassCandidate{PassID: "a", PlanningCostNs: 1, ExpectedSpeedupBPS: math.MaxUint32, MandatoryWhenProfitable: true}
	b := BenchmarkPassCandidate{PassID: "b", PlanningCostNs: 1, ExpectedSpeedupBPS: math.MaxUint32, MandatoryWhenProfitable: true}
	c := BenchmarkPassCandidate{PassID: "c", PlanningCostNs: 1, ExpectedSpeedupBPS: 10_001, MandatoryWhenProfitable: true}
	sample := BenchmarkPassSelectionSample{PlanningBudgetNs: 2, ScratchBudgetBytes: 1}
	_, err := SelectBenchmarkPasses([]BenchmarkPassCandidate{c, b, a}, sample)
	pe := requirePassSelectionError(t, err, PassSelectionMandatoryProfitablePassOverBudget)
	assert.Equal(t, PassSelectionError{Kind: PassSelectionMandatoryProfitablePassOverBudget, Index: 0, PassID: "c",
		Reason: PlanningBudgetExceeded, RequiredTotal: 3, Budget: 2}, *pe)

	// Within budget, the same passes report the projection's overflow.
	sample.PlanningBudgetNs = 3
	_, err = SelectBenchmarkPasses([]BenchmarkPassCandidate{c, b, a}, sample)
	requireOverflow(t, err, "projected speedup bps")
	assert.Contains(t, err.Error(), "overflows 32 bits")
}

func TestSelectBenchmarkPassesErrors(t *testing.T) {
	ok := launchFusionCandidate()
	tests := []struct {
		name       string
		candidates []BenchmarkPassCandidate
		kind       PassSelectionErrorKind
		index      int
	}{
		{"empty id", []BenchmarkPassCandidate{ok, {ExpectedSpeedupBPS: 1}}, PassSelectionEmptyPassID, 1},
		{"duplicate", []BenchmarkPassCandidate{ok, launchFusionCandidate()}, PassSelectionDuplicatePassID, 1},
		{"no speedup", []BenchmarkPassCandidate{ok, {PassID: "slow", ExpectedSpeedupBPS: 10_000}}, PassSelectionMissingSpeedupEvidence, 1},
		// Validation runs over every candidate before any budget decision.
		{"validation first", []BenchmarkPassCandidate{
			{PassID: "m", PlanningCostNs: math.MaxUint64, ExpectedSpeedupBPS: 20_000, MandatoryWhenProfitable: true},
			{PassID: "slow", ExpectedSpeedupBPS: 9_000}}, PassSelectionMissingSpeedupEvidence, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := SelectBenchmarkPasses(tc.candidates, richSample())
			pe := requirePassSelectionError(t, err, tc.kind)
			assert.Equal(t, tc.index, pe.Index)
		})
	}
	assert.Equal(t, "MandatoryProfitablePassOverBudget", PassSelectionMandatoryProfitablePassOverBudget.String())
}

func TestSelectBenchmarkPassesHugeValuesRankExactly(t *testing.T) {
	const max = math.MaxUint64
	// Both values exceed 64 bits and differ by one speedup unit × 1; the
	// larger ranks first even though its id sorts last.
	big1 := BenchmarkPassCandidate{PassID: "z.big", MinFrontierItems: max, MinReuseCount: max, MinAvoidedReadbackBytes: max, ExpectedSpeedupBPS: math.MaxUint32}
	big2 := BenchmarkPassCandidate{PassID: "a.big", MinFrontierItems: max, MinReuseCount: max, MinAvoidedReadbackBytes: max - 1, ExpectedSpeedupBPS: math.MaxUint32}
	sample := BenchmarkPassSelectionSample{FrontierItems: max, ReuseCount: max, AvoidableReadbackBytes: max, PlanningBudgetNs: 1, ScratchBudgetBytes: 1}
	_, err := SelectBenchmarkPasses([]BenchmarkPassCandidate{big2, big1}, sample)
	// 4294967295² / 10000 overflows a uint32 projected speedup.
	requireOverflow(t, err, "projected speedup bps")
	assert.Contains(t, err.Error(), "projected speedup bps (the product of the selected candidates' expected_speedup_bps) overflows 32 bits")

	big1.ExpectedSpeedupBPS, big2.ExpectedSpeedupBPS = 10_001, 10_001
	plan, err := SelectBenchmarkPasses([]BenchmarkPassCandidate{big2, big1}, sample)
	require.NoError(t, err)
	assert.Equal(t, []string{"z.big", "a.big"}, plan.SelectedPassIDs)

	v := benchmarkPassValue(&big1)
	want := new(big.Int).Mul(big.NewInt(10_001), new(big.Int).Mul(new(big.Int).SetUint64(max), big.NewInt(3)))
	got := new(big.Int).Lsh(new(big.Int).SetUint64(v.hi), 64)
	got.Or(got, new(big.Int).SetUint64(v.lo))
	assert.Equal(t, want.String(), got.String())
}

func TestPassSkipReasonText(t *testing.T) {
	for r := FrontierBelowThreshold; r <= ScratchBudgetExceeded; r++ {
		text, err := r.MarshalText()
		require.NoError(t, err)
		var back PassSkipReason
		require.NoError(t, back.UnmarshalText(text))
		assert.Equal(t, r, back)
	}
	_, err := PassSkipReason(0).MarshalText()
	require.Error(t, err)
	var r PassSkipReason
	require.ErrorContains(t, r.UnmarshalText([]byte("bored")), "Fix:")
	assert.Equal(t, "PassSkipReason(9)", PassSkipReason(9).String())
}

func randomPassCandidates(r *rand.Rand) ([]BenchmarkPassCandidate, BenchmarkPassSelectionSample) {
	n := 1 + r.IntN(12)
	cands := make([]BenchmarkPassCandidate, n)
	for i := range cands {
		cands[i] = BenchmarkPassCandidate{
			PassID:                  fmt.Sprintf("p%02d", r.IntN(1000)*100+i),
			MinFrontierItems:        r.Uint64N(64),
			MinReuseCount:           r.Uint64N(8),
			MinAvoidedReadbackBytes: r.Uint64N(4096),
			PlanningCostNs:          r.Uint64N(1000),
			ScratchBytes:            r.Uint64N(1000),
			ExpectedSpeedupBPS:      10_001 + r.Uint32N(20_000),
			MandatoryWhenProfitable: r.IntN(8) == 0,
		}
	}
	sample := BenchmarkPassSelectionSample{FrontierItems: r.Uint64N(96), ReuseCount: r.Uint64N(12), AvoidableReadbackBytes: r.Uint64N(6000),
		PlanningBudgetNs: r.Uint64N(3000), ScratchBudgetBytes: r.Uint64N(3000)}
	return cands, sample
}

// checkPassSelection checks the ordering and budget properties: every pass
// is decided once, in (mandatory, value, id) order; selected passes meet
// their thresholds and fit; each skip has the first reason that applies.
func checkPassSelection(t *testing.T, cands []BenchmarkPassCandidate, sample BenchmarkPassSelectionSample, plan BenchmarkPassSelectionPlan) {
	t.Helper()
	byID := make(map[string]*BenchmarkPassCandidate)
	for i := range cands {
		byID[cands[i].PassID] = &cands[i]
	}
	// Rebuild the walk from the plan: selected and skipped merge into the
	// decision order, which must be sorted by (mandatory, value desc, id).
	skipped := make(map[string]PassSkipReason)
	for _, s := range plan.SkippedPasses {
		skipped[s.PassID] = s.Reason
	}
	assert.Equal(t, len(cands), len(plan.SelectedPassIDs)+len(plan.SkippedPasses))
	var planning, scratch uint64
	projected := uint64(10_000)
	for _, id := range plan.SelectedPassIDs {
		c := byID[id]
		require.NotNil(t, c)
		assert.GreaterOrEqual(t, sample.FrontierItems, c.MinFrontierItems)
		assert.GreaterOrEqual(t, sample.ReuseCount, c.MinReuseCount)
		assert.GreaterOrEqual(t, sample.AvoidableReadbackBytes, c.MinAvoidedReadbackBytes)
		planning += c.PlanningCostNs
		scratch += c.ScratchBytes
		projected = projected * uint64(c.ExpectedSpeedupBPS) / 10_000
	}
	assert.LessOrEqual(t, planning, sample.PlanningBudgetNs)
	assert.LessOrEqual(t, scratch, sample.ScratchBudgetBytes)
	assert.Equal(t, planning, plan.TotalPlanningCostNs)
	assert.Equal(t, scratch, plan.TotalScratchBytes)
	assert.Equal(t, projected, uint64(plan.ProjectedSpeedupBPS))
	for id, reason := range skipped {
		c := byID[id]
		switch {
		case sample.FrontierItems < c.MinFrontierItems:
			assert.Equal(t, FrontierBelowThreshold, reason)
		case sample.ReuseCount < c.MinReuseCount:
			assert.Equal(t, ReuseBelowThreshold, reason)
		case sample.AvoidableReadbackBytes < c.MinAvoidedReadbackBytes:
			assert.Equal(t, ReadbackBelowThreshold, reason)
		default:
			assert.False(t, c.MandatoryWhenProfitable, "mandatory %s skipped for budget", id)
			assert.Contains(t, []PassSkipReason{PlanningBudgetExceeded, ScratchBudgetExceeded}, reason)
		}
	}
	// Selection order respects the ranking.
	rank := func(c *BenchmarkPassCandidate) (bool, *big.Int) {
		sum := new(big.Int).SetUint64(c.MinFrontierItems)
		sum.Add(sum, new(big.Int).SetUint64(c.MinReuseCount))
		sum.Add(sum, new(big.Int).SetUint64(c.MinAvoidedReadbackBytes))
		return c.MandatoryWhenProfitable, sum.Mul(sum, big.NewInt(int64(c.ExpectedSpeedupBPS)))
	}
	for k := 1; k < len(plan.SelectedPassIDs); k++ {
		a, b := byID[plan.SelectedPassIDs[k-1]], byID[plan.SelectedPassIDs[k]]
		ma, va := rank(a)
		mb, vb := rank(b)
		if ma != mb {
			assert.True(t, ma)
			continue
		}
		c := va.Cmp(vb)
		assert.True(t, c > 0 || c == 0 && a.PassID < b.PassID, "%s before %s", a.PassID, b.PassID)
	}
}

func TestSelectBenchmarkPassesGeneratedProperties(t *testing.T) {
	planned, mandatoryErrors := 0, 0
	for seed := uint64(0); seed < 4096; seed++ {
		r := rand.New(rand.NewPCG(seed, 0x17))
		cands, sample := randomPassCandidates(r)
		plan, err := SelectBenchmarkPasses(cands, sample)
		if err != nil {
			pe := requirePassSelectionError(t, err, PassSelectionMandatoryProfitablePassOverBudget)
			assert.Greater(t, pe.RequiredTotal, pe.Budget)
			mandatoryErrors++
			continue
		}
		planned++
		checkPassSelection(t, cands, sample, plan)
	}
	assert.Greater(t, planned, 2000)
	assert.Greater(t, mandatoryErrors, 10)
}

func FuzzSelectBenchmarkPasses(f *testing.F) {
	f.Add([]byte{1, 1, 1, 20, 40, 150, 0, 2, 40, 8, 64, 40, 80, 200, 0}, uint64(4096), uint64(100), uint64(60))
	f.Add([]byte{0, 0, 0, 0, 0, 0, 1}, uint64(0), uint64(0), uint64(0))
	f.Fuzz(func(t *testing.T, data []byte, frontier, planningBudget, scratchBudget uint64) {
		// No input makes memory grow faster than the input itself.
		memcheck.Check(t, memcheck.Bound{Base: 1 << 20, PerByte: 256}, len(data)+24, func() {
			var cands []BenchmarkPassCandidate
			for i := 0; len(data) >= 7; data, i = data[7:], i+1 {
				cands = append(cands, BenchmarkPassCandidate{
					PassID:                  fmt.Sprintf("p%d", data[0]%16),
					MinFrontierItems:        uint64(data[1]) << 8,
					MinReuseCount:           uint64(data[2] % 16),
					MinAvoidedReadbackBytes: uint64(data[3]),
					PlanningCostNs:          uint64(data[4]),
					ScratchBytes:            uint64(data[5]),
					ExpectedSpeedupBPS:      9_900 + uint32(data[6])*100,
					MandatoryWhenProfitable: data[0]&0x80 != 0,
				})
			}
			sample := BenchmarkPassSelectionSample{FrontierItems: frontier, ReuseCount: 8, AvoidableReadbackBytes: 128,
				PlanningBudgetNs: planningBudget, ScratchBudgetBytes: scratchBudget}
			plan, err := SelectBenchmarkPasses(cands, sample)
			if err != nil {
				if !strings.Contains(err.Error(), "Fix:") {
					t.Fatalf("error without a fix: %v", err)
				}
				return
			}
			checkPassSelection(t, cands, sample, plan)
		})
	})
}

func BenchmarkSelectBenchmarkPasses(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		r := rand.New(rand.NewPCG(uint64(n), 5))
		cands := make([]BenchmarkPassCandidate, n)
		for i := range cands {
			cands[i] = BenchmarkPassCandidate{PassID: fmt.Sprintf("cuda.pass_%07d", i), MinFrontierItems: r.Uint64N(1 << 20),
				MinReuseCount: r.Uint64N(64), MinAvoidedReadbackBytes: r.Uint64N(1 << 30), PlanningCostNs: r.Uint64N(1 << 16),
				ScratchBytes: r.Uint64N(1 << 16), ExpectedSpeedupBPS: 10_001 + r.Uint32N(100), MandatoryWhenProfitable: r.IntN(1000) == 0}
		}
		sample := BenchmarkPassSelectionSample{FrontierItems: 1 << 19, ReuseCount: 32, AvoidableReadbackBytes: 1 << 29,
			PlanningBudgetNs: math.MaxUint64, ScratchBudgetBytes: 1 << 24}
		b.Run(benchName(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := SelectBenchmarkPasses(cands, sample); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
