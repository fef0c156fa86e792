package evidence

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/internal/memcheck"
	"github.com/gpuplan/gpuplan/internal/quote"
)

// baseSpeedupSample is vyre's test base: cuda, 32 GiB, sm 12.0, 10k nodes,
// 80k edges, setup 250 µs, no pollution.
func baseSpeedupSample(hostNS, residentNS float64, reps uint64) SpeedupSample {
	return SpeedupSample{
		BackendID: "cuda", DeviceMemoryBytes: 32 << 30, ComputeCapabilityMajor: 12,
		GraphNodes: 10_000, GraphEdges: 80_000, Repetitions: reps,
		HostOrchestratedNS: hostNS, ResidentMegakernelNS: residentNS, SetupNS: 250_000,
	}
}

func twoSpecSamples() []SpeedupSample {
	return []SpeedupSample{baseSpeedupSample(1e6, 1e4, 64), baseSpeedupSample(2.5e6, 2e4, 128)}
}

var specProof = SpeedupProof{MinSpeedupX: 100, MaxSpeedupX: 125, SampleCount: 2, TotalRepetitions: 192}

const specCSV = MegakernelSpeedupCSVHeader + `
cuda,0,34359738368,12,0,10000,80000,64,1000000,10000,250000,0,0,0
cuda,0,34359738368,12,0,10000,80000,128,2500000,20000,250000,0,0,0
`

func TestValidateSpeedupSamplesSpecProof(t *testing.T) {
	proof, err := ValidateSpeedupSamples(twoSpecSamples(), 100)
	require.NoError(t, err)
	assert.Equal(t, specProof, proof)
	assert.Equal(t, "validated_cuda_megakernel_speedup,min_x=100.000,max_x=125.000,samples=2,repetitions=192", proof.SummaryLine())
}

func TestValidateSpeedupCSVSpecProof(t *testing.T) {
	proof, err := ValidateSpeedupCSV(specCSV, 100)
	require.NoError(t, err)
	assert.Equal(t, specProof, proof)

	// Blank lines are dropped before numbering.
	proof, err = ValidateSpeedupCSV("\n  \n"+strings.ReplaceAll(specCSV, "\n", "\n\n"), 100)
	require.NoError(t, err)
	assert.Equal(t, specProof, proof)
}

func TestFormatSpeedupCSVRoundTrip(t *testing.T) {
	proof, csv, err := FormatSpeedupCSV(twoSpecSamples(), 100)
	require.NoError(t, err)
	assert.Equal(t, specProof, proof)
	assert.Equal(t, specCSV, csv)
	assert.Len(t, strings.Split(strings.TrimRight(csv, "\n"), "\n"), 3)
	again, err := ValidateSpeedupCSV(csv, 100)
	require.NoError(t, err)
	assert.Equal(t, proof, again)
	parsed, err := ParseSpeedupCSV(csv)
	require.NoError(t, err)
	assert.Equal(t, twoSpecSamples(), parsed)
}

func TestFormatSpeedupCSVFloatsWithoutExponent(t *testing.T) {
	s := baseSpeedupSample(1e21, 0.5, 64)
	s.SetupNS = 1.25e-7
	_, csv, err := FormatSpeedupCSV([]SpeedupSample{s, s}, 100)
	require.NoError(t, err)
	assert.Contains(t, csv, ",1000000000000000000000,0.5,0.000000125,")
	assert.NotContains(t, strings.SplitN(csv, "\n", 2)[1], "e")
}

func TestSpeedupCSVCapacity(t *testing.T) {
	c, err := SpeedupCSVCapacity(2)
	require.NoError(t, err)
	assert.Equal(t, uint64(len(MegakernelSpeedupCSVHeader)+1+256), c)
	_, err = SpeedupCSVCapacity(math.MaxUint64/128 + 1)
	require.Equal(t, &SpeedupError{Kind: EvidenceCSVCapacityOverflow}, err)
	_, err = SpeedupCSVCapacity(math.MaxUint64 / 128)
	require.Equal(t, &SpeedupError{Kind: EvidenceCSVCapacityOverflow}, err, "header plus samples overflows")
}

func TestValidateSpeedupCSVMalformed(t *testing.T) {
	row := "cuda,0,34359738368,12,0,10000,80000,64,1000000,10000,250000,0,0,0"
	tests := []struct {
		name string
		csv  string
		want *SpeedupError
	}{
		{"empty", "", &SpeedupError{Kind: EmptySamples}},
		{"blank only", " \n\t\n", &SpeedupError{Kind: EmptySamples}},
		{"bad header", "nodes,edges\n" + row, &SpeedupError{Kind: InvalidEvidenceHeader, Observed: "nodes,edges",
			Line: 1, Column: 1, Field: "backend_id", Value: "nodes", Fields: 2}},
		{"header untrimmed in error", "  nodes \n", &SpeedupError{Kind: InvalidEvidenceHeader, Observed: "  nodes ",
			Line: 1, Column: 1, Field: "backend_id", Value: "nodes", Fields: 1}},
		{"13 fields", MegakernelSpeedupCSVHeader + "\ncuda,0,34359738368,12,0,10000,80000,64,1000000,10000,250000,0,0",
			&SpeedupError{Kind: InvalidEvidenceRow, Line: 2, Column: 14, Field: "timed_host_syncs", Fields: 13, WantFields: 14}},
		{"15 fields under 14 header", MegakernelSpeedupCSVHeader + "\n" + row + ",0",
			&SpeedupError{Kind: InvalidEvidenceRow, Line: 2, Column: 15, Field: "(extra)", Value: "0", Fields: 15, WantFields: 14}},
		{"many repetitions", MegakernelSpeedupCSVHeader + "\ncuda,0,34359738368,12,0,10000,80000,many,1000000,10000,250000,0,0,0",
			&SpeedupError{Kind: InvalidEvidenceValue, Line: 2, Column: 8, Field: "repetitions", Value: "many"}},
		{"wgpu row", MegakernelSpeedupCSVHeader + "\nwgpu,0,34359738368,12,0,10000,80000,64,1000000,10000,250000,0,0,0",
			&SpeedupError{Kind: InvalidEvidenceValue, Line: 2, Column: 1, Field: "backend_id", Value: "wgpu"}},
		{"negative integer", MegakernelSpeedupCSVHeader + "\n" + row + "\ncuda,0,34359738368,12,0,10000,-1,64,1000000,10000,250000,0,0,0",
			&SpeedupError{Kind: InvalidEvidenceValue, Line: 3, Column: 7, Field: "graph_edges", Value: "-1"}},
		{"u32 overflow", MegakernelSpeedupCSVHeader + "\ncuda,0,34359738368,4294967296,0,10000,80000,64,1000000,10000,250000,0,0,0",
			&SpeedupError{Kind: InvalidEvidenceValue, Line: 2, Column: 4, Field: "compute_capability_major", Value: "4294967296"}},
		{"hex float", MegakernelSpeedupCSVHeader + "\ncuda,0,34359738368,12,0,10000,80000,64,0x1p20,10000,250000,0,0,0",
			&SpeedupError{Kind: InvalidEvidenceValue, Line: 2, Column: 9, Field: "host_orchestrated_ns", Value: "0x1p20"}},
		{"NaN time parses then fails timing", MegakernelSpeedupCSVHeader + "\ncuda,0,34359738368,12,0,10000,80000,64,NaN,10000,250000,0,0,0",
			&SpeedupError{Kind: InvalidTiming, Line: 2, Column: 9, Field: "host_orchestrated_ns", Value: "NaN"}},
		{"inf time", MegakernelSpeedupCSVHeader + "\ncuda,0,34359738368,12,0,10000,80000,64,1000000,inf,250000,0,0,0",
			&SpeedupError{Kind: InvalidTiming, Line: 2, Column: 10, Field: "resident_megakernel_ns", Value: "inf"}},
		{"negative setup", MegakernelSpeedupCSVHeader + "\ncuda,0,34359738368,12,0,10000,80000,64,1000000,10000,-1,0,0,0",
			&SpeedupError{Kind: InvalidTiming, Line: 2, Column: 11, Field: "setup_ns", Value: "-1"}},
		{"huge float is infinite", MegakernelSpeedupCSVHeader + "\ncuda,0,34359738368,12,0,10000,80000,64,1e400,10000,250000,0,0,0",
			&SpeedupError{Kind: InvalidTiming, Line: 2, Column: 9, Field: "host_orchestrated_ns", Value: "1e400"}},
		{"plus sign is accepted like Rust", MegakernelSpeedupCSVHeader + "\n" + row + "\ncuda,+0,34359738368,+12,0,10000,80000,+1,1000000,10000,250000,0,0,0",
			&SpeedupError{Kind: NotRepeatedFixedGraph, Index: 1, Line: 3}},
		{"double sign", MegakernelSpeedupCSVHeader + "\ncuda,++0,34359738368,12,0,10000,80000,64,1000000,10000,250000,0,0,0",
			&SpeedupError{Kind: InvalidEvidenceValue, Line: 2, Column: 2, Field: "device_ordinal", Value: "++0"}},
		{"one row", MegakernelSpeedupCSVHeader + "\n" + row, &SpeedupError{Kind: InsufficientSampleCount, N: 1}},
		{"header only", MegakernelSpeedupCSVHeader, &SpeedupError{Kind: InsufficientSampleCount, N: 0}},
		{"second row below threshold", MegakernelSpeedupCSVHeader + "\n" + row + "\ncuda,0,34359738368,12,0,10000,80000,64,500000,10000,250000,0,0,0",
			&SpeedupError{Kind: SpeedupBelowThreshold, Index: 1, ObservedX: 50, RequiredX: 100, Line: 3}},
		{"polluted", MegakernelSpeedupCSVHeader + "\ncuda,0,34359738368,12,0,10000,80000,64,1000000,10000,250000,0,2,0",
			&SpeedupError{Kind: PollutedTimedRegion, HostAllocations: 2, Line: 2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ValidateSpeedupCSV(tc.csv, 100)
			require.Equal(t, tc.want, err)
			assert.Contains(t, err.Error(), "Fix:")
		})
	}
}

func TestValidateSpeedupCSV15Columns(t *testing.T) {
	csv := MegakernelSpeedupCSVHeader15 + `
cuda,0,34359738368,12,0,10000,80000,64,1000000,10000,250000,0,0,0,0
cuda,0,34359738368,12,0,10000,80000,128,2500000,20000,250000,0,0,0,0
`
	proof, err := ValidateSpeedupCSV(csv, 100)
	require.NoError(t, err)
	assert.Equal(t, specProof, proof)

	bad := strings.Replace(csv, "0,0,0,0\ncuda", "0,0,0,3\ncuda", 1)
	_, err = ValidateSpeedupCSV(bad, 100)
	require.Equal(t, &SpeedupError{Kind: PollutedTimedRegion, BorrowedFallbackDispatches: 3, Line: 2}, err)
	assert.True(t, strings.HasPrefix(err.Error(), "line 2: sample 0: timed region has"), err.Error())

	_, err = ValidateSpeedupCSV(MegakernelSpeedupCSVHeader15+"\ncuda,0,34359738368,12,0,10000,80000,64,1000000,10000,250000,0,0,0", 100)
	require.Equal(t, &SpeedupError{Kind: InvalidEvidenceRow, Line: 2, Column: 15, Field: "resident_borrowed_fallback_dispatches", Fields: 14, WantFields: 15}, err)
	_, err = ValidateSpeedupCSV(MegakernelSpeedupCSVHeader15+"\ncuda,0,34359738368,12,0,10000,80000,64,1000000,10000,250000,0,0,0,x", 100)
	require.Equal(t, &SpeedupError{Kind: InvalidEvidenceValue, Line: 2, Column: 15, Field: "resident_borrowed_fallback_dispatches", Value: "x"}, err)
}

// Header, field-count and timing errors of the speedup CSV name the line
// (vyre's numbering: blank lines dropped, header = 1), the column and its
// name, and end with a fix.
func TestSpeedupCSVErrorPositions(t *testing.T) {
	row := "cuda,0,34359738368,12,0,10000,80000,64,1000000,10000,250000,0,0,0"
	headerFix := ". Fix: start the file with " + MegakernelSpeedupCSVHeader
	tests := []struct {
		name string
		csv  string
		kind SpeedupErrorKind
		line int
		col  int
		fld  string
		want string
	}{
		{"header column renamed", strings.Replace(MegakernelSpeedupCSVHeader, ",setup_ns,", ",setup,", 1) + "\n" + row, InvalidEvidenceHeader, 1, 11, "setup_ns",
			`line 1, column 11 (setup_ns): evidence header ` + quote.Echo(strings.Replace(MegakernelSpeedupCSVHeader, ",setup_ns,", ",setup,", 1)) +
				` is not the megakernel speedup header; header column 11 is "setup", want "setup_ns"` + headerFix},
		{"header column missing", "\n" + strings.TrimSuffix(MegakernelSpeedupCSVHeader, ",timed_host_syncs") + "\n" + row, InvalidEvidenceHeader, 1, 14, "timed_host_syncs",
			`line 1, column 14 (timed_host_syncs): evidence header ` + quote.Echo(strings.TrimSuffix(MegakernelSpeedupCSVHeader, ",timed_host_syncs")) +
				` is not the megakernel speedup header; the header has 13 columns; column 14 (timed_host_syncs) is missing` + headerFix},
		{"header 15th column wrong", MegakernelSpeedupCSVHeader + ",fallbacks\n", InvalidEvidenceHeader, 1, 15, "resident_borrowed_fallback_dispatches",
			`line 1, column 15 (resident_borrowed_fallback_dispatches): evidence header ` + quote.Echo(MegakernelSpeedupCSVHeader+",fallbacks") +
				` is not the megakernel speedup header; header column 15 is "fallbacks", want "resident_borrowed_fallback_dispatches"` + headerFix},
		{"header column extra", MegakernelSpeedupCSVHeader15 + ",note\n", InvalidEvidenceHeader, 1, 16, "(extra)",
			`line 1, column 16 (extra): evidence header ` + quote.Echo(MegakernelSpeedupCSVHeader15+",note") +
				` is not the megakernel speedup header; the header has 16 columns; column 16 "note" is extra` + headerFix},
		{"row missing one field", MegakernelSpeedupCSVHeader + "\n" + strings.TrimSuffix(row, ",0"), InvalidEvidenceRow, 2, 14, "timed_host_syncs",
			"line 2, column 14 (timed_host_syncs): row has 13 fields but the header has 14; column 14 is missing. Fix: give every row exactly the 14 comma-separated fields of the header"},
		{"row missing two fields after blank lines", MegakernelSpeedupCSVHeader + "\n\n" + row + "\n \n" + strings.TrimSuffix(row, ",0,0"), InvalidEvidenceRow, 3, 13, "timed_host_allocations",
			"line 3, column 13 (timed_host_allocations): row has 12 fields but the header has 14; columns 13 to 14 are missing. Fix: give every row exactly the 14 comma-separated fields of the header"},
		{"row with an extra field", MegakernelSpeedupCSVHeader + "\n" + row + ", 7 ", InvalidEvidenceRow, 2, 15, "(extra)",
			`line 2, column 15 (extra): row has 15 fields but the header has 14; column 15 "7" is extra. Fix: give every row exactly the 14 comma-separated fields of the header`},
		{"row with extra fields", MegakernelSpeedupCSVHeader + "\n" + row + ",0,0", InvalidEvidenceRow, 2, 15, "(extra)",
			`line 2, column 15 (extra): row has 16 fields but the header has 14; columns 15 to 16 are extra, starting with "0". Fix: give every row exactly the 14 comma-separated fields of the header`},
		{"14 fields under the 15-column header", MegakernelSpeedupCSVHeader15 + "\n" + row, InvalidEvidenceRow, 2, 15, "resident_borrowed_fallback_dispatches",
			"line 2, column 15 (resident_borrowed_fallback_dispatches): row has 14 fields but the header has 15; column 15 is missing. Fix: give every row exactly the 15 comma-separated fields of the header"},
		{"NaN host time", MegakernelSpeedupCSVHeader + "\n" + strings.Replace(row, ",1000000,", ",NaN,", 1), InvalidTiming, 2, 9, "host_orchestrated_ns",
			`line 2, column 9 (host_orchestrated_ns): sample 0: host_orchestrated_ns "NaN" is not a finite number above 0. Fix: re-measure the sample; NaN, infinite, zero and negative times are not evidence`},
		{"zero resident time on the second row", MegakernelSpeedupCSVHeader + "\n" + row + "\n\n" + strings.Replace(row, ",10000,250000,", ",0,250000,", 1), InvalidTiming, 3, 10, "resident_megakernel_ns",
			`line 3, column 10 (resident_megakernel_ns): sample 1: resident_megakernel_ns "0" is not a finite number above 0. Fix: re-measure the sample; NaN, infinite, zero and negative times are not evidence`},
		{"negative infinite resident time", MegakernelSpeedupCSVHeader + "\n" + strings.Replace(row, ",10000,250000,", ",-inf,250000,", 1), InvalidTiming, 2, 10, "resident_megakernel_ns",
			`line 2, column 10 (resident_megakernel_ns): sample 0: resident_megakernel_ns "-inf" is not a finite number above 0. Fix: re-measure the sample; NaN, infinite, zero and negative times are not evidence`},
		{"negative setup, trimmed", MegakernelSpeedupCSVHeader + "\n" + strings.Replace(row, ",250000,", ", -1 ,", 1), InvalidTiming, 2, 11, "setup_ns",
			`line 2, column 11 (setup_ns): sample 0: setup_ns "-1" is not a finite number, 0 or above. Fix: re-measure the sample; NaN, infinite and negative setup times are not evidence`},
		{"infinite setup under the 15-column header", MegakernelSpeedupCSVHeader15 + "\n" + strings.Replace(row, ",250000,", ",Infinity,", 1) + ",0", InvalidTiming, 2, 11, "setup_ns",
			`line 2, column 11 (setup_ns): sample 0: setup_ns "Infinity" is not a finite number, 0 or above. Fix: re-measure the sample; NaN, infinite and negative setup times are not evidence`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ValidateSpeedupCSV(tc.csv, 100)
			var se *SpeedupError
			require.True(t, errors.As(err, &se), "%v", err)
			assert.Equal(t, tc.kind, se.Kind)
			assert.Equal(t, tc.line, se.Line)
			assert.Equal(t, tc.col, se.Column)
			assert.Equal(t, tc.fld, se.Field)
			assert.Equal(t, tc.want, err.Error())
			if tc.kind != InvalidTiming {
				// ParseSpeedupCSV reports the same malformed input.
				_, perr := ParseSpeedupCSV(tc.csv)
				require.Equal(t, err, perr)
			}
		})
	}

	// The struct path has no CSV: InvalidTiming names only the sample.
	s := twoSpecSamples()
	s[1].SetupNS = math.Inf(1)
	_, err := ValidateSpeedupSamples(s, 100)
	require.Equal(t, &SpeedupError{Kind: InvalidTiming, Index: 1}, err)
	assert.Equal(t, "sample 1: host and resident times must be finite and above 0 and setup finite and not negative. Fix: re-measure the sample", err.Error())
}

func TestValidateSpeedupSamplesErrors(t *testing.T) {
	tests := []struct {
		name     string
		edit     func([]SpeedupSample) []SpeedupSample
		required float64
		want     *SpeedupError
	}{
		{"empty", func([]SpeedupSample) []SpeedupSample { return nil }, 100, &SpeedupError{Kind: EmptySamples}},
		{"wgpu", func(s []SpeedupSample) []SpeedupSample { s[0].BackendID = "wgpu"; return s }, 100,
			&SpeedupError{Kind: NonCudaEvidence, BackendID: "wgpu"}},
		{"8 GiB sm 7.5", func(s []SpeedupSample) []SpeedupSample {
			s[0].DeviceMemoryBytes, s[0].ComputeCapabilityMajor, s[0].ComputeCapabilityMinor = 8<<30, 7, 5
			return s
		}, 100, &SpeedupError{Kind: InsufficientCudaDevice, DeviceMemoryBytes: 8 << 30, Major: 7, Minor: 5}},
		{"sm 7.9 with memory", func(s []SpeedupSample) []SpeedupSample {
			s[1].ComputeCapabilityMajor, s[1].ComputeCapabilityMinor = 7, 9
			return s
		}, 100, &SpeedupError{Kind: InsufficientCudaDevice, Index: 1, DeviceMemoryBytes: 32 << 30, Major: 7, Minor: 9}},
		{"one timed upload", func(s []SpeedupSample) []SpeedupSample { s[0].TimedGraphUploads = 1; return s }, 100,
			&SpeedupError{Kind: PollutedTimedRegion, GraphUploads: 1}},
		{"speedup 50x", func(s []SpeedupSample) []SpeedupSample { s[0].HostOrchestratedNS = 5e5; return s }, 100,
			&SpeedupError{Kind: SpeedupBelowThreshold, ObservedX: 50, RequiredX: 100}},
		{"repetitions 1", func(s []SpeedupSample) []SpeedupSample { s[0].Repetitions = 1; return s }, 100,
			&SpeedupError{Kind: NotRepeatedFixedGraph}},
		{"zero nodes", func(s []SpeedupSample) []SpeedupSample { s[0].GraphNodes = 0; return s }, 100,
			&SpeedupError{Kind: NotRepeatedFixedGraph}},
		{"128 nodes 512 edges", func(s []SpeedupSample) []SpeedupSample { s[0].GraphNodes, s[0].GraphEdges = 128, 512; return s }, 100,
			&SpeedupError{Kind: InsufficientScale, Nodes: 128, Edges: 512, Repetitions: 64}},
		{"repetitions 8", func(s []SpeedupSample) []SpeedupSample { s[0].Repetitions = 8; return s }, 100,
			&SpeedupError{Kind: InsufficientScale, Nodes: 10_000, Edges: 80_000, Repetitions: 8}},
		{"one valid sample", func(s []SpeedupSample) []SpeedupSample { return s[:1] }, 100,
			&SpeedupError{Kind: InsufficientSampleCount, N: 1}},
		{"NaN threshold", func(s []SpeedupSample) []SpeedupSample { return s }, math.NaN(),
			&SpeedupError{Kind: InvalidRequiredSpeedup, RequiredX: math.NaN()}},
		{"NaN setup", func(s []SpeedupSample) []SpeedupSample { s[0].SetupNS = math.NaN(); return s }, 100,
			&SpeedupError{Kind: InvalidTiming}},
		{"zero resident time", func(s []SpeedupSample) []SpeedupSample { s[1].ResidentMegakernelNS = 0; return s }, 100,
			&SpeedupError{Kind: InvalidTiming, Index: 1}},
		{"repetition overflow", func(s []SpeedupSample) []SpeedupSample {
			s[0].Repetitions, s[1].Repetitions = math.MaxUint64, 64
			return s
		}, 100, &SpeedupError{Kind: RepetitionCountOverflow, Index: 1}},
		{"order: backend before device", func(s []SpeedupSample) []SpeedupSample {
			s[0].BackendID, s[0].DeviceMemoryBytes = "metal", 1
			return s
		}, 100, &SpeedupError{Kind: NonCudaEvidence, BackendID: "metal"}},
		{"order: pollution before timing", func(s []SpeedupSample) []SpeedupSample {
			s[0].TimedHostSyncs, s[0].SetupNS = 1, math.NaN()
			return s
		}, 100, &SpeedupError{Kind: PollutedTimedRegion, HostSyncs: 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ValidateSpeedupSamples(tc.edit(twoSpecSamples()), tc.required)
			var se *SpeedupError
			require.True(t, errors.As(err, &se), "%v", err)
			if math.IsNaN(tc.want.RequiredX) {
				assert.Equal(t, tc.want.Kind, se.Kind)
				assert.True(t, math.IsNaN(se.RequiredX))
			} else {
				require.Equal(t, tc.want, se)
			}
			assert.Contains(t, err.Error(), "Fix:")
		})
	}
}

// The quirk fix: a bad required speedup is rejected on every path.
func TestRequiredSpeedupRejectedOnEveryPath(t *testing.T) {
	for _, x := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, -1, math.Copysign(0, -1)} {
		t.Run(fmt.Sprint(x), func(t *testing.T) {
			_, err := ValidateSpeedupSamples(twoSpecSamples(), x)
			assertKind(t, err, InvalidRequiredSpeedup)
			_, err = ValidateSpeedupCSV(specCSV, x)
			assertKind(t, err, InvalidRequiredSpeedup)
			_, _, err = FormatSpeedupCSV(twoSpecSamples(), x)
			assertKind(t, err, InvalidRequiredSpeedup)
			_, _, err = ConvertSessionCSV(specSessionCSV, x)
			assertKind(t, err, InvalidRequiredSpeedup)
		})
	}
}

func assertKind(t *testing.T, err error, kind SpeedupErrorKind) {
	t.Helper()
	var se *SpeedupError
	require.True(t, errors.As(err, &se), "%v", err)
	assert.Equal(t, kind, se.Kind)
}

func TestSpeedupErrorMessages(t *testing.T) {
	for k := EmptySamples; k <= EvidenceCSVCapacityOverflow+1; k++ {
		msg := (&SpeedupError{Kind: k, Field: "setup_ns"}).Error()
		assert.Contains(t, msg, "Fix:", k.String())
	}
	assert.Equal(t, "EvidenceCsvCapacityOverflow", EvidenceCSVCapacityOverflow.String())
}

func TestParseRustFloat(t *testing.T) {
	good := map[string]float64{"1": 1, "1.5": 1.5, ".5": 0.5, "5.": 5, "1e6": 1e6, "1E6": 1e6, "+2": 2, "-2": -2, "inf": math.Inf(1), "-Infinity": math.Inf(-1), "1e400": math.Inf(1)}
	for s, want := range good {
		v, ok := parseRustFloat(s)
		require.True(t, ok, s)
		assert.Equal(t, want, v, s)
	}
	for _, s := range []string{"NaN", "nan", "-NaN", "+nan"} {
		v, ok := parseRustFloat(s)
		require.True(t, ok, s)
		assert.True(t, math.IsNaN(v), s)
	}
	for _, s := range []string{"", "+", "--1", "+-1", "0x10", "1_000", "1p3", "abc", "1e", "one"} {
		_, ok := parseRustFloat(s)
		assert.False(t, ok, s)
	}
}

func FuzzValidateSpeedupCSV(f *testing.F) {
	f.Add(specCSV, 100.0)
	f.Add(MegakernelSpeedupCSVHeader15+"\ncuda,0,34359738368,12,0,10000,80000,64,1000000,10000,250000,0,0,0,0\n", 1.0)
	f.Add("nodes,edges\n1,2", 100.0)
	f.Add(MegakernelSpeedupCSVHeader+"\ncuda,0,34359738368,12,0,10000,80000,64,NaN,10000,250000,0,0\n", 100.0)
	f.Fuzz(func(t *testing.T, csv string, required float64) {
		// No input makes memory grow faster than the input itself.
		memcheck.Check(t, memcheck.Bound{Base: 1 << 20, PerByte: 256}, len(csv)+8, func() {
			proof, err := ValidateSpeedupCSV(csv, required)
			if err != nil {
				require.Contains(t, err.Error(), "Fix:")
				var se *SpeedupError
				require.True(t, errors.As(err, &se), "%v", err)
				switch se.Kind {
				case InvalidEvidenceHeader, InvalidEvidenceRow, InvalidEvidenceValue, InvalidTiming:
					// Errors about the CSV's text name the line and the column.
					require.Positive(t, se.Line, err.Error())
					require.Positive(t, se.Column, err.Error())
					require.NotEmpty(t, se.Field, err.Error())
					require.True(t, strings.HasPrefix(err.Error(), fmt.Sprintf("line %d, column %d ", se.Line, se.Column)), err.Error())
				case NonCudaEvidence, InsufficientCudaDevice, NotRepeatedFixedGraph, InsufficientScale, PollutedTimedRegion,
					SpeedupBelowThreshold, RepetitionCountOverflow:
					// A sample that fails a check names its row's line.
					require.True(t, strings.HasPrefix(err.Error(), fmt.Sprintf("line %d: sample %d: ", se.Line, se.Index)), err.Error())
					require.Equal(t, se.Index+2, se.Line, err.Error())
				}
				return
			}
			require.True(t, required > 0 && !math.IsInf(required, 0))
			require.GreaterOrEqual(t, proof.SampleCount, uint64(MinReleaseSampleCount))
			require.GreaterOrEqual(t, proof.MinSpeedupX, required)
			require.LessOrEqual(t, proof.MinSpeedupX, proof.MaxSpeedupX)
			// Re-formatting the parsed samples reproduces the proof.
			samples, err := ParseSpeedupCSV(csv)
			require.NoError(t, err)
			again, out, err := FormatSpeedupCSV(samples, required)
			require.NoError(t, err)
			require.Equal(t, proof, again)
			reparsed, err := ValidateSpeedupCSV(out, required)
			require.NoError(t, err)
			require.Equal(t, proof, reparsed)
		})
	})
}

func BenchmarkValidateSpeedupCSV(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(MegakernelSpeedupCSVHeader + "\n")
	for i := range 100_000 {
		fmt.Fprintf(&sb, "cuda,0,34359738368,9,0,10000,80000,%d,1000000,9000,250000,0,0,0\n", 64+i%64)
	}
	csv := sb.String()
	b.SetBytes(int64(len(csv)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ValidateSpeedupCSV(csv, 100); err != nil {
			b.Fatal(err)
		}
	}
}

func ExampleValidateSpeedupCSV() {
	csv := MegakernelSpeedupCSVHeader + `
cuda,0,34359738368,12,0,10000,80000,64,1000000,10000,250000,0,0,0
cuda,0,34359738368,12,0,10000,80000,128,2500000,20000,250000,0,0,0
`
	proof, err := ValidateSpeedupCSV(csv, DefaultRequiredSpeedupX)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(proof.SummaryLine())
	// Output:
	// validated_cuda_megakernel_speedup,min_x=100.000,max_x=125.000,samples=2,repetitions=192
}

func ExampleFormatSpeedupCSV() {
	s := SpeedupSample{BackendID: "cuda", DeviceMemoryBytes: 32 << 30, ComputeCapabilityMajor: 9,
		GraphNodes: 10_000, GraphEdges: 80_000, Repetitions: 64,
		HostOrchestratedNS: 1e6, ResidentMegakernelNS: 8000.5, SetupNS: 250_000}
	_, csv, err := FormatSpeedupCSV([]SpeedupSample{s, s}, 100)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(csv)
	// Output:
	// backend_id,device_ordinal,device_memory_bytes,compute_capability_major,compute_capability_minor,graph_nodes,graph_edges,repetitions,host_orchestrated_ns,resident_megakernel_ns,setup_ns,timed_graph_uploads,timed_host_allocations,timed_host_syncs
	// cuda,0,34359738368,9,0,10000,80000,64,1000000,8000.5,250000,0,0,0
	// cuda,0,34359738368,9,0,10000,80000,64,1000000,8000.5,250000,0,0,0
}
