package planners

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/internal/checked"

	"github.com/gpuplan/gpuplan/internal/memcheck"
)

const mib = 1 << 20

func specSessionProfile() ResidentGraphSessionProfile {
	return ResidentGraphSessionProfile{
		GraphLayoutHash:      0xabc,
		GraphBytes:           mib,
		RunCount:             128,
		PerRunFrontierBytes:  4096,
		ReusableScratchBytes: 65536,
		PerRunOutputBytes:    2048,
		BudgetBytes:          2_000_000,
		Readback:             ReadbackFinalOnly,
	}
}

func TestPlanResidentGraphSessionSpecVector(t *testing.T) {
	plan, err := PlanResidentGraphSession(specSessionProfile())
	require.NoError(t, err)
	assert.Equal(t, ResidentGraphSessionPlan{
		GraphLayoutHash:           0xabc,
		OneTimeGraphUploadBytes:   mib,
		TotalFrontierRefreshBytes: 524_288,
		PeakResidentBytes:         mib + 4096 + 65536 + 2048,
		AvoidedGraphUploadBytes:   133_169_152,
		GraphReuse:                GraphReuseTelemetry{ColdUploads: 1, WarmReuses: 127, UploadBytes: mib, AvoidedUploadBytes: 133_169_152},
		AvoidedDeviceAllocations:  381,
		AvoidedHostFences:         127,
		HostReadbackBytes:         2048,
		GraphTopologyResident:     true,
		ScratchReused:             true,
		FinalOnlyHostReadback:     true,
	}, plan)
}

func TestResidentGraphSessionPlanJSON(t *testing.T) {
	plan, err := PlanResidentGraphSession(specSessionProfile())
	require.NoError(t, err)
	data, err := json.Marshal(plan)
	require.NoError(t, err)
	assert.JSONEq(t, `{"graph_layout_hash": "0x0000000000000abc", "one_time_graph_upload_bytes": 1048576,
	  "total_frontier_refresh_bytes": 524288, "peak_resident_bytes": 1120256,
	  "avoided_graph_upload_bytes": 133169152,
	  "graph_reuse": {"cold_uploads": 1, "warm_reuses": 127, "upload_bytes": 1048576, "avoided_upload_bytes": 133169152},
	  "avoided_device_allocations": 381, "avoided_host_fences": 127, "host_readback_bytes": 2048,
	  "graph_topology_resident": true, "scratch_reused": true, "final_only_host_readback": true}`, string(data))
}

func TestPlanResidentGraphSessionSingleRun(t *testing.T) {
	p := specSessionProfile()
	p.RunCount = 1
	plan, err := PlanResidentGraphSession(p)
	require.NoError(t, err)
	assert.Equal(t, GraphReuseTelemetry{ColdUploads: 1, UploadBytes: mib}, plan.GraphReuse)
	assert.Zero(t, plan.AvoidedGraphUploadBytes)
	assert.Zero(t, plan.AvoidedDeviceAllocations)
	assert.Zero(t, plan.AvoidedHostFences)
	assert.Equal(t, uint64(4096), plan.TotalFrontierRefreshBytes)
	assert.True(t, plan.GraphTopologyResident && plan.ScratchReused && plan.FinalOnlyHostReadback)
}

func TestPlanResidentGraphSessionErrors(t *testing.T) {
	tests := []struct {
		name string
		edit func(*ResidentGraphSessionProfile)
		want error
	}{
		{"per-run readback", func(p *ResidentGraphSessionProfile) { p.Readback = ReadbackPerRun }, &SessionError{Kind: PerRunReadbackRejected}},
		{"zero hash", func(p *ResidentGraphSessionProfile) { p.GraphLayoutHash = 0 }, &SessionError{Kind: ZeroGraphHash}},
		{"zero graph bytes", func(p *ResidentGraphSessionProfile) { p.GraphBytes = 0 }, &SessionError{Kind: ZeroGraphBytes}},
		{"zero runs", func(p *ResidentGraphSessionProfile) { p.RunCount = 0 }, &SessionError{Kind: ZeroRuns}},
		{"zero budget", func(p *ResidentGraphSessionProfile) { p.BudgetBytes = 0 }, &SessionError{Kind: ZeroBudget}},
		{"over budget", func(p *ResidentGraphSessionProfile) {
			*p = ResidentGraphSessionProfile{GraphLayoutHash: 1, GraphBytes: 128, RunCount: 1,
				PerRunFrontierBytes: 16, ReusableScratchBytes: 16, PerRunOutputBytes: 16, BudgetBytes: 127}
		}, &SessionError{Kind: OverBudget, RequiredBytes: 176, BudgetBytes: 127}},
		{"order: hash before runs", func(p *ResidentGraphSessionProfile) { p.GraphLayoutHash, p.RunCount = 0, 0 }, &SessionError{Kind: ZeroGraphHash}},
		{"order: budget before readback", func(p *ResidentGraphSessionProfile) { p.BudgetBytes, p.Readback = 0, ReadbackPerRun }, &SessionError{Kind: ZeroBudget}},
		{"overflow graph plus frontier", func(p *ResidentGraphSessionProfile) { p.PerRunFrontierBytes = math.MaxUint64 }, &checked.OverflowError{Field: "graph plus frontier bytes", Inputs: "graph_bytes + per_run_frontier_bytes"}},
		{"overflow scratch", func(p *ResidentGraphSessionProfile) { p.ReusableScratchBytes = math.MaxUint64 }, &checked.OverflowError{Field: "graph frontier scratch bytes", Inputs: "graph_bytes + per_run_frontier_bytes + reusable_scratch_bytes"}},
		{"overflow peak", func(p *ResidentGraphSessionProfile) { p.PerRunOutputBytes = math.MaxUint64 }, &checked.OverflowError{Field: "peak resident bytes", Inputs: "graph_bytes + per_run_frontier_bytes + reusable_scratch_bytes + per_run_output_bytes"}},
		{"overflow avoided upload", func(p *ResidentGraphSessionProfile) {
			p.GraphBytes, p.RunCount, p.PerRunFrontierBytes, p.BudgetBytes = 1<<40, 1<<30, 0, math.MaxUint64
		}, &checked.OverflowError{Field: "avoided graph upload bytes", Inputs: "(run_count - 1) x graph_bytes"}},
		{"overflow frontier refresh", func(p *ResidentGraphSessionProfile) {
			p.PerRunFrontierBytes, p.RunCount, p.BudgetBytes = 1<<40, 1<<30, math.MaxUint64
		}, &checked.OverflowError{Field: "total frontier refresh bytes", Inputs: "run_count x per_run_frontier_bytes"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := specSessionProfile()
			tc.edit(&p)
			_, err := PlanResidentGraphSession(p)
			require.Equal(t, tc.want, err)
			assert.Contains(t, err.Error(), "Fix:")
			if se, ok := tc.want.(*SessionError); ok {
				requireKindError(t, err, se.Kind, func(e *SessionError) SessionErrorKind { return e.Kind })
			}
		})
	}
}

func TestSessionErrorField(t *testing.T) {
	tests := []struct {
		kind  SessionErrorKind
		field string
	}{
		{ZeroGraphHash, "graph_layout_hash"},
		{ZeroGraphBytes, "graph_bytes"},
		{ZeroRuns, "run_count"},
		{ZeroBudget, "budget_bytes"},
		{PerRunReadbackRejected, "readback"},
		{OverBudget, "budget_bytes"},
		{SessionErrorKind(42), ""},
	}
	for _, tc := range tests {
		t.Run(tc.kind.String(), func(t *testing.T) {
			e := &SessionError{Kind: tc.kind, RequiredBytes: 176, BudgetBytes: 127}
			assert.Equal(t, tc.field, e.Field())
			assert.Contains(t, e.Error(), tc.field)
			assert.Equal(t, 1, strings.Count(e.Error(), "Fix:"), e.Error())
		})
	}
	assert.Equal(t, "resident graph session: peak resident bytes 176 exceed budget_bytes 127. Fix: raise budget_bytes to at least 176 or shrink the graph, frontier, scratch or output",
		(&SessionError{Kind: OverBudget, RequiredBytes: 176, BudgetBytes: 127}).Error())
}

func TestResidentGraphSessionProfileJSON(t *testing.T) {
	var p ResidentGraphSessionProfile
	require.NoError(t, json.Unmarshal([]byte(`{"graph_layout_hash": 2748, "graph_bytes": 1048576, "run_count": 128,
	  "per_run_frontier_bytes": 4096, "reusable_scratch_bytes": 65536, "per_run_output_bytes": 2048,
	  "budget_bytes": 2000000, "readback": "final_only"}`), &p))
	assert.Equal(t, specSessionProfile(), p)
	p.Readback = ReadbackPerRun
	data, err := json.Marshal(p)
	require.NoError(t, err)
	assert.Contains(t, string(data), `"readback":"per_run"`)

	err = json.Unmarshal([]byte(`{"readback": "sometimes"}`), &p)
	assert.ErrorContains(t, err, `readback "sometimes" is not a readback policy. Fix: use "final_only" or "per_run"`)
	_, err = json.Marshal(ResidentGraphSessionProfile{Readback: 7})
	assert.ErrorContains(t, err, "Fix:")
}

func TestSessionErrorKindString(t *testing.T) {
	assert.Equal(t, "OverBudget", OverBudget.String())
	assert.Equal(t, "SessionErrorKind(99)", SessionErrorKind(99).String())
	assert.Equal(t, "final_only", ReadbackFinalOnly.String())
	assert.Equal(t, "per_run", ReadbackPerRun.String())
	assert.Equal(t, "ResidentGraphReadback(7)", ResidentGraphReadback(7).String())
	assert.Contains(t, (&SessionError{Kind: 42}).Error(), "Fix:")
}

// checkSessionInvariants states what every accepted plan satisfies.
func checkSessionInvariants(t *testing.T, p ResidentGraphSessionProfile, plan ResidentGraphSessionPlan) {
	t.Helper()
	require.Equal(t, p.GraphLayoutHash, plan.GraphLayoutHash)
	require.Equal(t, p.GraphBytes, plan.OneTimeGraphUploadBytes)
	require.LessOrEqual(t, plan.PeakResidentBytes, p.BudgetBytes)
	require.GreaterOrEqual(t, plan.PeakResidentBytes, p.GraphBytes)
	require.Equal(t, p.RunCount-1, plan.AvoidedHostFences)
	require.Equal(t, plan.AvoidedHostFences, plan.GraphReuse.WarmReuses)
	require.Equal(t, uint64(1), plan.GraphReuse.ColdUploads)
	require.Equal(t, 3*plan.AvoidedHostFences, plan.AvoidedDeviceAllocations)
	require.Equal(t, plan.AvoidedGraphUploadBytes, plan.GraphReuse.AvoidedUploadBytes)
	require.Equal(t, p.PerRunOutputBytes, plan.HostReadbackBytes)
	if p.PerRunFrontierBytes > 0 {
		require.Equal(t, p.RunCount, plan.TotalFrontierRefreshBytes/p.PerRunFrontierBytes)
	}
	require.True(t, plan.GraphTopologyResident && plan.ScratchReused && plan.FinalOnlyHostReadback)
}

func TestPlanResidentGraphSessionProperties(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		r := rand.New(rand.NewPCG(seed, 0x5e55))
		for range 2000 {
			p := ResidentGraphSessionProfile{
				GraphLayoutHash:      r.Uint64N(4),
				GraphBytes:           r.Uint64N(1 << 30),
				RunCount:             r.Uint64N(1 << 12),
				PerRunFrontierBytes:  r.Uint64N(1 << 24),
				ReusableScratchBytes: r.Uint64N(1 << 24),
				PerRunOutputBytes:    r.Uint64N(1 << 20),
				BudgetBytes:          r.Uint64N(1 << 31),
				Readback:             ResidentGraphReadback(r.IntN(8) / 7),
			}
			plan, err := PlanResidentGraphSession(p)
			if err != nil {
				var se *SessionError
				require.True(t, errors.As(err, &se), "%v", err)
				if se.Kind == OverBudget {
					require.Greater(t, se.RequiredBytes, p.BudgetBytes)
				}
				continue
			}
			checkSessionInvariants(t, p, plan)
		}
	}
}

func FuzzPlanResidentGraphSession(f *testing.F) {
	p := specSessionProfile()
	f.Add(p.GraphLayoutHash, p.GraphBytes, p.RunCount, p.PerRunFrontierBytes, p.ReusableScratchBytes, p.PerRunOutputBytes, p.BudgetBytes, uint8(0))
	f.Add(uint64(1), uint64(math.MaxUint64), uint64(math.MaxUint64), uint64(1), uint64(1), uint64(1), uint64(math.MaxUint64), uint8(1))
	f.Fuzz(func(t *testing.T, hash, graph, runs, frontier, scratch, output, budget uint64, readback uint8) {
		// No input makes memory grow faster than the input itself.
		memcheck.Check(t, memcheck.Bound{Base: 1 << 20, PerByte: 256}, 64, func() {
			p := ResidentGraphSessionProfile{hash, graph, runs, frontier, scratch, output, budget, ResidentGraphReadback(readback % 3)}
			plan, err := PlanResidentGraphSession(p)
			if err != nil {
				require.True(t, strings.Contains(err.Error(), "Fix:"), err.Error())
				return
			}
			checkSessionInvariants(t, p, plan)
		})
	})
}

// BenchmarkPlanResidentGraphSession plans 10^5 and 10^6 session profiles
// per iteration, with run counts drawn from 1..2^16.
func BenchmarkPlanResidentGraphSession(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		profiles := make([]ResidentGraphSessionProfile, n)
		r := rand.New(rand.NewPCG(7, 7))
		for i := range profiles {
			profiles[i] = specSessionProfile()
			profiles[i].RunCount = 1 + r.Uint64N(1<<16)
		}
		b.Run(benchName(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, p := range profiles {
					if _, err := PlanResidentGraphSession(p); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

func ExamplePlanResidentGraphSession() {
	plan, err := PlanResidentGraphSession(ResidentGraphSessionProfile{
		GraphLayoutHash:      0xabc,
		GraphBytes:           1 << 20,
		RunCount:             128,
		PerRunFrontierBytes:  4096,
		ReusableScratchBytes: 65536,
		PerRunOutputBytes:    2048,
		BudgetBytes:          2_000_000,
		Readback:             ReadbackFinalOnly,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("peak resident bytes:", plan.PeakResidentBytes)
	fmt.Println("avoided graph upload bytes:", plan.AvoidedGraphUploadBytes)
	fmt.Println("avoided host fences:", plan.AvoidedHostFences)
	// Output:
	// peak resident bytes: 1120256
	// avoided graph upload bytes: 133169152
	// avoided host fences: 127
}
