package evidence

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/internal/memcheck"
)

const testFingerprint = "sha256:0000000000000000000000000000000000000000000000000000000000000001"

// testFingerprints is a tree whose one workload has testFingerprint.
var testFingerprints = Fingerprints{"workloads/x": testFingerprint}

func testProvenance() Provenance {
	return Provenance{Version: "devel", Commit: "0123abc", SourceFingerprint: testFingerprint,
		DeviceName: "Test GPU X", ComputeMajor: 9, ComputeMinor: 0, DriverVersion: "580.159.04",
		Date: time.Date(2026, 11, 22, 2, 0, 0, 0, time.UTC)}
}

func testSample(arm string, index uint64, wallNS float64) Sample {
	return Sample{Provenance: testProvenance(),
		Workload: Workload{Name: "grid-64", Nodes: 4096, Edges: 16128, Iterations: 126},
		Arm:      arm, Index: index, WallNS: wallNS, DeviceNS: wallNS * 0.9, Checksum: "9f3c2a71d0e4b5c6"}
}

func TestWriteReadRoundTrip(t *testing.T) {
	var samples []Sample
	for i := range uint64(3) {
		samples = append(samples, testSample("host-loop", i, 1500000+float64(i)*1000.25))
		samples = append(samples, testSample("megakernel", i, 150000.5+float64(i)))
	}
	c := testSample("copy-ceiling", 0, 2000)
	c.BytesMoved = 8 << 20
	c.Provenance.DeviceName = "Test GPU X"
	samples = append(samples, c)
	var buf bytes.Buffer
	require.NoError(t, WriteSamples(&buf, samples))
	lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
	require.Len(t, lines, 8)
	assert.Equal(t, SampleCSVHeader, lines[0])
	assert.Equal(t, "devel,0123abc,"+testFingerprint+",Test GPU X,9.0,580.159.04,2026-11-22T02:00:00Z,grid-64,4096,16128,126,host-loop,0,1500000,1350000,9f3c2a71d0e4b5c6,0,0,0,0", lines[1])
	got, err := ReadSamples("mem", &buf)
	require.NoError(t, err)
	assert.Equal(t, samples, got)
}

func TestWriterQuotesDeviceNames(t *testing.T) {
	s := testSample("megakernel", 0, 10)
	s.Provenance.DeviceName = `Card "A", rev 2`
	var buf bytes.Buffer
	require.NoError(t, WriteSamples(&buf, []Sample{s}))
	got, err := ReadSamples("mem", &buf)
	require.NoError(t, err)
	assert.Equal(t, []Sample{s}, got)
}

func TestWriterRejects(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(*Sample)
		field string
	}{
		{"empty version", func(s *Sample) { s.Provenance.Version = "" }, "gpuplan_version"},
		{"commit with space", func(s *Sample) { s.Provenance.Commit = "a b" }, "gpuplan_commit"},
		{"short fingerprint", func(s *Sample) { s.Provenance.SourceFingerprint = "sha256:abc" }, "source_fingerprint"},
		{"upper-case fingerprint", func(s *Sample) { s.Provenance.SourceFingerprint = strings.ToUpper(testFingerprint) }, "source_fingerprint"},
		{"empty device", func(s *Sample) { s.Provenance.DeviceName = "" }, "device_name"},
		{"device with newline", func(s *Sample) { s.Provenance.DeviceName = "a\nb" }, "device_name"},
		{"empty driver", func(s *Sample) { s.Provenance.DriverVersion = "" }, "driver_version"},
		{"no date", func(s *Sample) { s.Provenance.Date = time.Time{} }, "date"},
		{"workload with comma", func(s *Sample) { s.Workload.Name = "a,b" }, "workload"},
		{"upper-case arm", func(s *Sample) { s.Arm = "Megakernel" }, "arm"},
		{"NaN wall", func(s *Sample) { s.WallNS = math.NaN() }, "wall_ns"},
		{"zero wall", func(s *Sample) { s.WallNS = 0 }, "wall_ns"},
		{"infinite device", func(s *Sample) { s.DeviceNS = math.Inf(1) }, "device_ns"},
		{"negative device", func(s *Sample) { s.DeviceNS = -1 }, "device_ns"},
		{"denormal wall", func(s *Sample) { s.WallNS = 1e-320 }, "wall_ns"},
		{"wall above a day", func(s *Sample) { s.WallNS = 86400e9 + 1 }, "wall_ns"},
		{"sub-ns device", func(s *Sample) { s.DeviceNS = 0.5 }, "device_ns"},
		{"empty checksum", func(s *Sample) { s.Checksum = "" }, "checksum"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := testSample("megakernel", 0, 100)
			tc.edit(&s)
			var buf bytes.Buffer
			err := WriteSamples(&buf, []Sample{s})
			var fe *FormatError
			require.True(t, errors.As(err, &fe), "%v", err)
			assert.Equal(t, tc.field, fe.Field)
			assert.Equal(t, 2, fe.Line)
			assert.Contains(t, err.Error(), "Fix:")
		})
	}
}

func TestWriterRejectsCrossRowProblems(t *testing.T) {
	a := testSample("megakernel", 0, 100)
	dup := a
	other := testSample("megakernel", 1, 100)
	other.Provenance.DeviceName = "Other GPU"
	resized := testSample("host-loop", 0, 100)
	resized.Workload.Edges++
	w := NewWriter(&bytes.Buffer{})
	require.NoError(t, w.Write(a))
	var fe *FormatError
	require.True(t, errors.As(w.Write(dup), &fe))
	assert.Equal(t, "sample", fe.Field)
	require.True(t, errors.As(w.Write(other), &fe))
	assert.Equal(t, "device_name", fe.Field)
	require.True(t, errors.As(w.Write(resized), &fe))
	assert.Equal(t, "graph_edges", fe.Field)
	require.NoError(t, w.Write(testSample("megakernel", 1, 100)))
	require.NoError(t, w.Flush())
}

func TestReadSamplesMalformed(t *testing.T) {
	good := "devel,0123abc," + testFingerprint + ",Test GPU X,9.0,580.159.04,2026-11-22T02:00:00Z,grid-64,4096,16128,126,megakernel,0,150000,140000,9f3c,0,0,0,0"
	row := func(col int, v string) string {
		f := strings.Split(good, ",")
		f[col] = v
		return strings.Join(f, ",")
	}
	h := SampleCSVHeader + "\n"
	tests := []struct {
		name     string
		csv      string
		line     int
		column   int
		contains string
	}{
		{"empty", "", 1, 0, "empty"},
		{"vyre header", MegakernelSpeedupCSVHeader + "\n", 1, 1, "this is a vyre evidence CSV"},
		{"vyre session header", ResidentGraphSessionCSVHeader + "\n", 1, 1, "gpuplan gate --vyre FILE"},
		{"wrong column name", strings.Replace(SampleCSVHeader, "wall_ns", "wall", 1) + "\n", 1, 14, `header column 14 is "wall", want "wall_ns"`},
		{"short header", strings.TrimSuffix(SampleCSVHeader, ",bytes_moved") + "\n", 1, 20, "header has 19 columns"},
		{"long header", SampleCSVHeader + ",extra\n", 1, 21, "header has 21 columns"},
		{"19 fields", h + strings.TrimSuffix(good, ",0"), 2, 20, "row has 19 fields, want 20"},
		{"non-numeric nodes", h + row(colNodes, "many"), 2, 9, `graph_nodes "many" is not a non-negative integer`},
		{"negative edges", h + row(colEdges, "-5"), 2, 10, "not a non-negative integer"},
		{"NaN wall", h + row(colWallNS, "NaN"), 2, 14, "not finite"},
		{"inf device", h + row(colDeviceNS, "+Inf"), 2, 15, "not finite"},
		{"negative wall", h + row(colWallNS, "-3"), 2, 14, "negative"},
		{"zero wall", h + row(colWallNS, "0"), 2, 14, "above 0"},
		{"text wall", h + row(colWallNS, "fast"), 2, 14, "not a number"},
		{"denormal wall (the chart panic)", h + row(colWallNS, "1e-320"), 2, 14, "wall_ns 1e-320 is below 1 ns"},
		{"sub-ns wall", h + row(colWallNS, "0.999"), 2, 14, "below 1 ns"},
		{"wall above a day", h + row(colWallNS, "86400000000001"), 2, 14, "above one day"},
		{"device above a day", h + row(colDeviceNS, "1e20"), 2, 15, "device_ns 1e+20 is above one day"},
		{"bad compute", h + row(colCompute, "9"), 2, 5, "MAJOR.MINOR"},
		{"bad date", h + row(colDate, "yesterday"), 2, 7, "RFC 3339"},
		{"bad fingerprint", h + row(colFingerprint, "abc"), 2, 3, "sha256:"},
		{"duplicate sample", h + good + "\n" + good + "\n", 3, 13, "duplicate sample 0 of arm megakernel on workload grid-64 (first on line 2)"},
		{"mixed devices", h + good + "\n" + row(colDevice, "Other GPU") + "\n" + "", 3, 4, "one file mixes devices"},
		{"mixed compute", h + good + "\n" + row(colSample, "1") + "\n" + strings.Replace(row(colSample, "2"), ",9.0,", ",8.0,", 1), 4, 5, `compute_capability "8.0" differs from "9.0"`},
		{"mixed sizes", h + good + "\n" + strings.Replace(row(colSample, "1"), ",126,", ",127,", 1), 3, 11, "workload grid-64 has iterations 127 here but 126 on line 2"},
		{"bare quote", h + `devel,"x"y,` + "\n", 2, 0, "CSV syntax error"},
		{"line after comment", "# measured by hand\n" + h + "\n" + row(colNodes, "x"), 4, 9, "graph_nodes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadSamples("r.csv", strings.NewReader(tc.csv))
			var fe *FormatError
			require.True(t, errors.As(err, &fe), "%v", err)
			assert.Equal(t, tc.line, fe.Line, err.Error())
			assert.Equal(t, tc.column, fe.Column, err.Error())
			assert.Equal(t, "r.csv", fe.Source)
			assert.Contains(t, err.Error(), tc.contains)
			assert.Contains(t, err.Error(), "Fix:")
			assert.True(t, strings.HasPrefix(err.Error(), fmt.Sprintf("r.csv:%d", tc.line)), err.Error())
		})
	}
}

// A row with the wrong number of fields is reported at its first missing
// or extra column, with both counts.
func TestReadSamplesFieldCount(t *testing.T) {
	good := "devel,0123abc," + testFingerprint + ",Test GPU X,9.0,580.159.04,2026-11-22T02:00:00Z,grid-64,4096,16128,126,megakernel,0,150000,140000,9f3c,0,0,0,0"
	h := SampleCSVHeader + "\n"
	fix := ". Fix: give every row the 20 fields of the header, quoting fields that contain commas"
	tests := []struct {
		name   string
		csv    string
		column int
		field  string
		value  string
		want   string
	}{
		{"19 fields", h + strings.TrimSuffix(good, ",0"), 20, "bytes_moved", "",
			"r.csv:2:20 (bytes_moved): row has 19 fields, want 20; column 20 is missing" + fix},
		{"2 fields", h + "devel,abc", 3, "source_fingerprint", "",
			"r.csv:2:3 (source_fingerprint): row has 2 fields, want 20; columns 3 to 20 are missing" + fix},
		{"21 fields", h + good + ",x", 21, "(extra)", "x",
			`r.csv:2:21 (extra): row has 21 fields, want 20; column 21 "x" is extra` + fix},
		{"trailing comma", h + good + ",", 21, "(extra)", "",
			`r.csv:2:21 (extra): row has 21 fields, want 20; column 21 "" is extra` + fix},
		{"23 fields", h + good + ",x,y,z", 21, "(extra)", "x",
			`r.csv:2:21 (extra): row has 23 fields, want 20; columns 21 to 23 are extra, starting with "x"` + fix},
		{"unquoted comma in device name", h + good + "\n" + strings.Replace(strings.Replace(good, "Test GPU X", "Card A, rev 2", 1), ",0,150000,", ",1,150000,", 1), 21, "(extra)", "0",
			`r.csv:3:21 (extra): row has 21 fields, want 20; column 21 "0" is extra` + fix},
		{"after comment and blank line", "# note\n" + h + "\n" + good + "\n" + strings.TrimSuffix(good, ",0,0"), 19, "timed_host_syncs", "",
			"r.csv:5:19 (timed_host_syncs): row has 18 fields, want 20; columns 19 to 20 are missing" + fix},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadSamples("r.csv", strings.NewReader(tc.csv))
			var fe *FormatError
			require.True(t, errors.As(err, &fe), "%v", err)
			assert.Equal(t, tc.column, fe.Column)
			assert.Equal(t, tc.field, fe.Field)
			assert.Equal(t, tc.value, fe.Value)
			assert.Equal(t, tc.want, err.Error())
		})
	}
}

func TestReadSamplesTestdata(t *testing.T) {
	f, err := os.Open("testdata/results/grid-demo.csv")
	require.NoError(t, err)
	defer f.Close()
	samples, err := ReadSamples("grid-demo.csv", f)
	require.NoError(t, err)
	assert.Len(t, samples, 60)
}

func FuzzReadSamples(f *testing.F) {
	data, err := os.ReadFile("testdata/results/grid-demo.csv")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(data))
	f.Add(SampleCSVHeader + "\n")
	f.Add(MegakernelSpeedupCSVHeader + "\n")
	f.Add(SampleCSVHeader + "\ndevel,abc\n")
	f.Fuzz(func(t *testing.T, csv string) {
		// No input makes memory grow faster than the input itself.
		memcheck.Check(t, memcheck.Bound{Base: 1 << 20, PerByte: 256}, len(csv), func() {
			samples, err := ReadSamples("fuzz", strings.NewReader(csv))
			if err != nil {
				require.Contains(t, err.Error(), "Fix:")
				var fe *FormatError
				require.True(t, errors.As(err, &fe), "%v", err)
				require.Positive(t, fe.Line, err.Error())
				// Every error names a column except a CSV syntax error and an
				// empty file, where no field can be named.
				if fe.Column == 0 {
					require.True(t, strings.Contains(fe.Msg, "CSV syntax error") || fe.Msg == "the file is empty", err.Error())
				} else {
					require.NotEmpty(t, fe.Field, err.Error())
					require.True(t, strings.HasPrefix(err.Error(), fmt.Sprintf("fuzz:%d:%d ", fe.Line, fe.Column)), err.Error())
				}
				return
			}
			// Whatever reads writes back identically in meaning.
			var buf bytes.Buffer
			require.NoError(t, WriteSamples(&buf, samples))
			again, err := ReadSamples("again", &buf)
			require.NoError(t, err)
			require.Equal(t, len(samples), len(again))
			for i := range samples {
				require.True(t, samples[i].Provenance.Date.Equal(again[i].Provenance.Date))
				samples[i].Provenance.Date, again[i].Provenance.Date = time.Time{}, time.Time{}
			}
			require.Equal(t, samples, again)
		})
	})
}

func BenchmarkReadSamples(b *testing.B) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for i := range 100_000 {
		arm := []string{"host-loop", "device-loop", "megakernel"}[i%3]
		if err := w.Write(testSample(arm, uint64(i/3), 1e6+float64(i))); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ReadSamples("bench", bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
}

func ExampleNewWriter() {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	prov := Provenance{Version: "devel", Commit: "unknown",
		SourceFingerprint: "sha256:" + strings.Repeat("ab", 32),
		DeviceName:        "NVIDIA H200", ComputeMajor: 9, ComputeMinor: 0, DriverVersion: "580.159.04",
		Date: time.Date(2026, 11, 22, 2, 0, 0, 0, time.UTC)}
	grid := Workload{Name: "grid-2048", Nodes: 2048 * 2048, Edges: 4 * 2048 * 2047, Iterations: 4094}
	err := w.Write(Sample{Provenance: prov, Workload: grid, Arm: "megakernel", Index: 0,
		WallNS: 9.5e6, DeviceNS: 9.41e6, Checksum: "5b1d0c7e9a2f4433"})
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(buf.String())
	// Output:
	// gpuplan_version,gpuplan_commit,source_fingerprint,device_name,compute_capability,driver_version,date,workload,graph_nodes,graph_edges,iterations,arm,sample,wall_ns,device_ns,checksum,timed_uploads,timed_allocations,timed_host_syncs,bytes_moved
	// devel,unknown,sha256:abababababababababababababababababababababababababababababababab,NVIDIA H200,9.0,580.159.04,2026-11-22T02:00:00Z,grid-2048,4194304,16769024,4094,megakernel,0,9500000,9410000,5b1d0c7e9a2f4433,0,0,0,0
}

func ExampleReadSamples() {
	csv := SampleCSVHeader + "\n" +
		"devel,unknown,sha256:" + strings.Repeat("ab", 32) + ",NVIDIA H200,9.0,580.159.04,2026-11-22T02:00:00Z,grid-2048,4194304,16769024,4094,megakernel,0,9500000,9410000,5b1d0c7e9a2f4433,0,0,0,0\n" +
		"devel,unknown,sha256:" + strings.Repeat("ab", 32) + ",NVIDIA H200,9.0,580.159.04,2026-11-22T02:00:00Z,grid-2048,4194304,16769024,4094,megakernel,0,9600000,9510000,5b1d0c7e9a2f4433,0,0,0,0\n"
	_, err := ReadSamples("results/h200.csv", strings.NewReader(csv))
	fmt.Println(err)
	// Output:
	// results/h200.csv:3:13 (sample): duplicate sample 0 of arm megakernel on workload grid-2048 (first on line 2). Fix: number the samples of each arm and workload 0, 1, 2, ... without repeats
}

func TestPlausibleTimeBoundsReadBack(t *testing.T) {
	for _, ns := range []float64{MinPlausibleNS, 1.5, 1e9, MaxPlausibleNS} {
		s := testSample("megakernel", 0, ns)
		s.DeviceNS = ns
		var buf bytes.Buffer
		require.NoError(t, WriteSamples(&buf, []Sample{s}), "ns=%g", ns)
		got, err := ReadSamples("r.csv", &buf)
		require.NoError(t, err, "ns=%g", ns)
		assert.Equal(t, ns, got[0].WallNS)
	}
}
