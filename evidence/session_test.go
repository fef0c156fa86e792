package evidence

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/planners"

	"github.com/gpuplan/gpuplan/internal/memcheck"
	"github.com/gpuplan/gpuplan/internal/quote"
)

// specSessionCSV holds vyre's two CLI test rows.
const specSessionCSV = ResidentGraphSessionCSVHeader + `
cuda,0,34359738368,12,0,10000,80000,2748,1048576,128,4096,65536,2048,2000000,1e6,1e4,250000
cuda,0,34359738368,12,0,10000,80000,3567,2097152,256,8192,131072,4096,4000000,2.5e6,2e4,350000
`

func sessionEvidence(t *testing.T, runs uint64, hostNS, residentNS float64) ResidentGraphSessionEvidence {
	t.Helper()
	plan, err := planners.PlanResidentGraphSession(planners.ResidentGraphSessionProfile{
		GraphLayoutHash: 0xabc, GraphBytes: 1 << 20, RunCount: runs, PerRunFrontierBytes: 4096,
		ReusableScratchBytes: 65536, PerRunOutputBytes: 2048, BudgetBytes: 2_000_000,
	})
	require.NoError(t, err)
	return ResidentGraphSessionEvidence{BackendID: "cuda", DeviceMemoryBytes: 32 << 30, ComputeCapabilityMajor: 12,
		GraphNodes: 10_000, GraphEdges: 80_000, Plan: plan, HostOrchestratedNS: hostNS, ResidentMegakernelNS: residentNS, SetupNS: 250_000}
}

func TestSessionSpeedupSample(t *testing.T) {
	s, err := SessionSpeedupSample(sessionEvidence(t, 128, 1e6, 1e4))
	require.NoError(t, err)
	assert.Equal(t, uint64(128), s.Repetitions)
	assert.Zero(t, s.TimedGraphUploads+s.TimedHostAllocations+s.TimedHostSyncs+s.BorrowedFallbackDispatches)

	for _, edit := range []func(*planners.ResidentGraphSessionPlan){
		func(p *planners.ResidentGraphSessionPlan) { p.GraphTopologyResident = false },
		func(p *planners.ResidentGraphSessionPlan) { p.ScratchReused = false },
		func(p *planners.ResidentGraphSessionPlan) { p.FinalOnlyHostReadback = false },
	} {
		ev := sessionEvidence(t, 128, 1e6, 1e4)
		edit(&ev.Plan)
		_, err := SessionSpeedupSample(ev)
		require.ErrorIs(t, err, ErrNonResidentEvidence)
	}
	ev := sessionEvidence(t, 2, 1e6, 1e4)
	ev.Plan.AvoidedHostFences = math.MaxUint64
	_, err = SessionSpeedupSample(ev)
	require.ErrorContains(t, err, "repetitions overflows")
}

func TestFormatSessionSpeedupCSV(t *testing.T) {
	proof, csv, err := FormatSessionSpeedupCSV([]ResidentGraphSessionEvidence{
		sessionEvidence(t, 128, 1e6, 1e4), sessionEvidence(t, 128, 2.5e6, 2e4)}, 100)
	require.NoError(t, err)
	assert.Equal(t, SpeedupProof{MinSpeedupX: 100, MaxSpeedupX: 125, SampleCount: 2, TotalRepetitions: 256}, proof)
	assert.Len(t, strings.Split(strings.TrimRight(csv, "\n"), "\n"), 3)

	bad := sessionEvidence(t, 128, 1e6, 1e4)
	bad.Plan.ScratchReused = false
	_, _, err = FormatSessionSpeedupCSV([]ResidentGraphSessionEvidence{sessionEvidence(t, 128, 1e6, 1e4), bad}, 100)
	require.ErrorIs(t, err, ErrNonResidentEvidence)
	assert.Contains(t, err.Error(), "resident graph evidence 1")
}

func TestConvertSessionCSVSpecRows(t *testing.T) {
	proof, csv, err := ConvertSessionCSV(specSessionCSV, 100)
	require.NoError(t, err)
	assert.Equal(t, uint64(2), proof.SampleCount)
	assert.Equal(t, uint64(384), proof.TotalRepetitions)
	assert.True(t, strings.HasPrefix(csv, MegakernelSpeedupCSVHeader+"\n"))
	assert.Equal(t, MegakernelSpeedupCSVHeader+`
cuda,0,34359738368,12,0,10000,80000,128,1000000,10000,250000,0,0,0
cuda,0,34359738368,12,0,10000,80000,256,2500000,20000,350000,0,0,0
`, csv)
	again, err := ValidateSpeedupCSV(csv, 100)
	require.NoError(t, err)
	assert.Equal(t, proof, again)
}

func TestConvertSessionCSVRejects(t *testing.T) {
	row := "cuda,0,34359738368,12,0,10000,80000,2748,1048576,128,4096,65536,2048,2000000,1e6,1e4,250000"
	tests := []struct {
		name    string
		csv     string
		line    int
		column  int
		field   string
		message string
	}{
		{"bad header", MegakernelSpeedupCSVHeader + "\n" + row, 1, 8, "graph_layout_hash", "not the resident graph session header"},
		{"not bytes", ResidentGraphSessionCSVHeader + "\n" + strings.Replace(row, "1048576", "not_bytes", 1), 2, 9, "graph_bytes", "graph_bytes"},
		{"wgpu", ResidentGraphSessionCSVHeader + "\nwgpu" + strings.TrimPrefix(row, "cuda"), 2, 1, "backend_id", "release evidence must be produced by the CUDA backend"},
		{"16 fields", ResidentGraphSessionCSVHeader + "\n" + strings.TrimSuffix(row, ",250000"), 2, 17, "setup_ns", "must have 17 fields"},
		{"bad float", ResidentGraphSessionCSVHeader + "\n" + row + "\n" + strings.Replace(row, "1e4", "fast", 1), 3, 16, "resident_megakernel_ns", "resident_megakernel_ns"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := ConvertSessionCSV(tc.csv, 100)
			var ce *SessionCSVError
			require.True(t, errors.As(err, &ce), "%v", err)
			assert.Equal(t, tc.line, ce.Line)
			assert.Equal(t, tc.column, ce.Column)
			assert.Equal(t, tc.field, ce.Field)
			assert.Contains(t, err.Error(), tc.message)
			assert.Contains(t, err.Error(), "Fix:")
		})
	}
}

// Header and field-count errors of the session CSV, and the InvalidTiming
// its times lead to, name the line, the column and its name, and end with a
// fix.
func TestSessionCSVErrorPositions(t *testing.T) {
	row := "cuda,0,34359738368,12,0,10000,80000,2748,1048576,128,4096,65536,2048,2000000,1e6,1e4,250000"
	headerFix := ". Fix: start the file with " + ResidentGraphSessionCSVHeader
	rowFix := ". Fix: give every row the 17 comma-separated fields of the header"
	tests := []struct {
		name  string
		csv   string
		line  int
		col   int
		field string
		value string
		want  string
	}{
		{"speedup header", MegakernelSpeedupCSVHeader + "\n" + row, 1, 8, "graph_layout_hash", "repetitions",
			`resident graph evidence line 1, column 8 (graph_layout_hash): header ` + quote.Echo(MegakernelSpeedupCSVHeader) +
				` is not the resident graph session header; header column 8 is "repetitions", want "graph_layout_hash"` + headerFix},
		{"header column missing", strings.TrimSuffix(ResidentGraphSessionCSVHeader, ",setup_ns") + "\n" + row, 1, 17, "setup_ns", "",
			`resident graph evidence line 1, column 17 (setup_ns): header ` + quote.Echo(strings.TrimSuffix(ResidentGraphSessionCSVHeader, ",setup_ns")) +
				` is not the resident graph session header; the header has 16 columns; column 17 (setup_ns) is missing` + headerFix},
		{"header column extra", ResidentGraphSessionCSVHeader + ",note\n" + row, 1, 18, "(extra)", "note",
			`resident graph evidence line 1, column 18 (extra): header ` + quote.Echo(ResidentGraphSessionCSVHeader+",note") +
				` is not the resident graph session header; the header has 18 columns; column 18 "note" is extra` + headerFix},
		{"16 fields", ResidentGraphSessionCSVHeader + "\n" + strings.TrimSuffix(row, ",250000"), 2, 17, "setup_ns", "",
			"resident graph evidence line 2, column 17 (setup_ns): row has 16 fields but must have 17 fields; column 17 is missing" + rowFix},
		{"9 fields after a blank line", ResidentGraphSessionCSVHeader + "\n" + row + "\n\n" + "cuda,0,34359738368,12,0,10000,80000,2748,1048576", 3, 10, "run_count", "",
			"resident graph evidence line 3, column 10 (run_count): row has 9 fields but must have 17 fields; columns 10 to 17 are missing" + rowFix},
		{"18 fields", ResidentGraphSessionCSVHeader + "\n" + row + ",0", 2, 18, "(extra)", "0",
			`resident graph evidence line 2, column 18 (extra): row has 18 fields but must have 17 fields; column 18 "0" is extra` + rowFix},
		{"19 fields", ResidentGraphSessionCSVHeader + "\n" + row + ", 1 ,2", 2, 18, "(extra)", "1",
			`resident graph evidence line 2, column 18 (extra): row has 19 fields but must have 17 fields; columns 18 to 19 are extra, starting with "1"` + rowFix},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := ConvertSessionCSV(tc.csv, 100)
			var ce *SessionCSVError
			require.True(t, errors.As(err, &ce), "%v", err)
			assert.Equal(t, tc.line, ce.Line)
			assert.Equal(t, tc.col, ce.Column)
			assert.Equal(t, tc.field, ce.Field)
			assert.Equal(t, tc.value, ce.Value)
			assert.Equal(t, tc.want, err.Error())
			_, perr := ParseSessionCSV(tc.csv)
			require.Equal(t, err, perr)
		})
	}

	timing := []struct {
		name string
		csv  string
		want *SpeedupError
		msg  string
	}{
		{"NaN host time", ResidentGraphSessionCSVHeader + "\n" + strings.Replace(row, ",1e6,", ",NaN,", 1),
			&SpeedupError{Kind: InvalidTiming, Line: 2, Column: 15, Field: "host_orchestrated_ns", Value: "NaN"},
			`line 2, column 15 (host_orchestrated_ns): sample 0: host_orchestrated_ns "NaN" is not a finite number above 0. Fix: re-measure the sample; NaN, infinite, zero and negative times are not evidence`},
		{"infinite resident time on the second row", ResidentGraphSessionCSVHeader + "\n\n" + row + "\n" + strings.Replace(row, ",1e4,", ",inf,", 1),
			&SpeedupError{Kind: InvalidTiming, Index: 1, Line: 3, Column: 16, Field: "resident_megakernel_ns", Value: "inf"},
			`line 3, column 16 (resident_megakernel_ns): sample 1: resident_megakernel_ns "inf" is not a finite number above 0. Fix: re-measure the sample; NaN, infinite, zero and negative times are not evidence`},
		{"negative setup", ResidentGraphSessionCSVHeader + "\n" + strings.Replace(row, ",250000", ",-5", 1),
			&SpeedupError{Kind: InvalidTiming, Line: 2, Column: 17, Field: "setup_ns", Value: "-5"},
			`line 2, column 17 (setup_ns): sample 0: setup_ns "-5" is not a finite number, 0 or above. Fix: re-measure the sample; NaN, infinite and negative setup times are not evidence`},
	}
	for _, tc := range timing {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseSessionCSV(tc.csv)
			require.NoError(t, err, "parsing accepts any float; the speedup checks judge it")
			_, _, err = ConvertSessionCSV(tc.csv, 100)
			require.Equal(t, tc.want, err)
			assert.Equal(t, tc.msg, err.Error())
		})
	}
}

func TestConvertSessionCSVPlanningErrors(t *testing.T) {
	over := ResidentGraphSessionCSVHeader + "\ncuda,0,34359738368,12,0,10000,80000,1,128,1,16,16,16,127,1e6,1e4,0"
	_, _, err := ConvertSessionCSV(over, 100)
	var se *planners.SessionError
	require.True(t, errors.As(err, &se), "%v", err)
	assert.Equal(t, &planners.SessionError{Kind: planners.OverBudget, RequiredBytes: 176, BudgetBytes: 127}, se)
	assert.True(t, strings.HasPrefix(err.Error(), "resident graph evidence line 2: "), err.Error())
	assert.Contains(t, err.Error(), "Fix:")

	zeroRuns := strings.Replace(specSessionCSV, ",128,4096,", ",0,4096,", 1)
	_, _, err = ConvertSessionCSV(zeroRuns, 100)
	require.True(t, errors.As(err, &se))
	assert.Equal(t, planners.ZeroRuns, se.Kind)

	// Speedup checks run after conversion: 128 runs of a 10k-node graph at 50x fails.
	slow := strings.Replace(specSessionCSV, ",1e6,1e4,", ",5e5,1e4,", 1)
	_, _, err = ConvertSessionCSV(slow, 100)
	assertKind(t, err, SpeedupBelowThreshold)

	_, _, err = ConvertSessionCSV("\n\n", 100)
	assertKind(t, err, EmptySamples)
	_, _, err = ConvertSessionCSV(ResidentGraphSessionCSVHeader, 100)
	assertKind(t, err, EmptySamples)
}

func FuzzConvertSessionCSV(f *testing.F) {
	f.Add(specSessionCSV, 100.0)
	f.Add(ResidentGraphSessionCSVHeader+"\ncuda,0,1,1,0,1,1,1,128,1,16,16,16,127,1e6,1e4,0", 2.0)
	f.Add(ResidentGraphSessionCSVHeader+"\ncuda,0,34359738368,12,0,10000,80000,2748,1048576,128,4096,65536,2048,2000000,NaN,1e4\n", 100.0)
	f.Fuzz(func(t *testing.T, csv string, required float64) {
		// No input makes memory grow faster than the input itself.
		memcheck.Check(t, memcheck.Bound{Base: 1 << 20, PerByte: 256}, len(csv)+8, func() {
			proof, out, err := ConvertSessionCSV(csv, required)
			if err != nil {
				require.Contains(t, err.Error(), "Fix:")
				var ce *SessionCSVError
				var se *SpeedupError
				switch {
				case errors.As(err, &ce):
					// Only a planning error concerns the whole row.
					if ce.Err == nil {
						require.Positive(t, ce.Column, err.Error())
						require.NotEmpty(t, ce.Field, err.Error())
					}
					require.True(t, strings.HasPrefix(err.Error(), fmt.Sprintf("resident graph evidence line %d", ce.Line)), err.Error())
				case errors.As(err, &se) && se.Kind == InvalidTiming:
					require.Positive(t, se.Line, err.Error())
					require.Positive(t, se.Column, err.Error())
					require.True(t, strings.HasPrefix(err.Error(), fmt.Sprintf("line %d, column %d (%s)", se.Line, se.Column, se.Field)), err.Error())
				}
				return
			}
			again, err := ValidateSpeedupCSV(out, required)
			require.NoError(t, err)
			require.Equal(t, proof, again)
		})
	})
}

func ExampleConvertSessionCSV() {
	csv := ResidentGraphSessionCSVHeader + `
cuda,0,34359738368,12,0,10000,80000,2748,1048576,128,4096,65536,2048,2000000,1e6,1e4,250000
cuda,0,34359738368,12,0,10000,80000,3567,2097152,256,8192,131072,4096,4000000,2.5e6,2e4,350000
`
	proof, out, err := ConvertSessionCSV(csv, 100)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(proof.SummaryLine())
	fmt.Print(out[len(MegakernelSpeedupCSVHeader)+1:])
	// Output:
	// validated_cuda_megakernel_speedup,min_x=100.000,max_x=125.000,samples=2,repetitions=384
	// cuda,0,34359738368,12,0,10000,80000,128,1000000,10000,250000,0,0,0
	// cuda,0,34359738368,12,0,10000,80000,256,2500000,20000,350000,0,0,0
}

func TestParseSessionCSV(t *testing.T) {
	evs, err := ParseSessionCSV(specSessionCSV)
	require.NoError(t, err)
	require.Len(t, evs, 2)
	// Row 1: 128 runs over a 1 MiB graph uploaded once.
	assert.Equal(t, "cuda", evs[0].BackendID)
	assert.Equal(t, uint64(10_000), evs[0].GraphNodes)
	assert.Equal(t, uint64(2748), evs[0].Plan.GraphLayoutHash)
	assert.Equal(t, uint64(1<<20), evs[0].Plan.OneTimeGraphUploadBytes)
	assert.Equal(t, uint64(127), evs[0].Plan.AvoidedHostFences)
	assert.Equal(t, uint64(127<<20), evs[0].Plan.AvoidedGraphUploadBytes)
	assert.True(t, evs[0].Plan.FinalOnlyHostReadback)
	assert.Equal(t, 1e6, evs[0].HostOrchestratedNS)
	// Row 2: 256 runs over a 2 MiB graph.
	assert.Equal(t, uint64(255), evs[1].Plan.AvoidedHostFences)
	assert.Equal(t, uint64(255*(2<<20)), evs[1].Plan.AvoidedGraphUploadBytes)

	for _, bad := range []string{
		"",
		"backend_id\ncuda\n",
		ResidentGraphSessionCSVHeader + "\ncuda,0,34359738368,12,0,10000,80000,2748,1048576,many,4096,65536,2048,2000000,1e6,1e4,250000\n",
		ResidentGraphSessionCSVHeader + "\ncuda,0,34359738368,12,0,10000,80000,0,1048576,128,4096,65536,2048,2000000,1e6,1e4,250000\n",
	} {
		_, err := ParseSessionCSV(bad)
		require.Error(t, err, bad)
		assert.Equal(t, 1, strings.Count(err.Error(), "Fix:"), err.Error())
	}
}

func TestValidateSpeedupRequired(t *testing.T) {
	for _, ok := range []float64{1, 1.5, 100, math.SmallestNonzeroFloat64} {
		assert.NoError(t, ValidateSpeedupRequired(ok), ok)
	}
	for _, bad := range []float64{0, math.Copysign(0, -1), -1, math.NaN(), math.Inf(1), math.Inf(-1)} {
		err := ValidateSpeedupRequired(bad)
		var se *SpeedupError
		require.ErrorAs(t, err, &se, bad)
		assert.Equal(t, InvalidRequiredSpeedup, se.Kind)
		assert.Contains(t, err.Error(), "Fix:")
	}
}
