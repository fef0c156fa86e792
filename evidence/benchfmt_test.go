package evidence

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchmath"
)

func benchfmtFixture(t testing.TB) ([]ResultFile, []byte) {
	files, err := LoadResults("testdata/report")
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, WriteBenchfmt(&buf, files))
	return files, buf.Bytes()
}

// readBenchfmt reads Go benchmark format as benchstat does and returns the
// values of each (benchmark name, tidied unit) and the file configuration
// of the last result.
func readBenchfmt(t testing.TB, data []byte) (map[[2]string][]float64, map[string]string) {
	r := benchfmt.NewReader(bytes.NewReader(data), "export.txt")
	values := map[[2]string][]float64{}
	config := map[string]string{}
	for r.Scan() {
		switch rec := r.Result().(type) {
		case *benchfmt.Result:
			require.Equal(t, 1, rec.Iters)
			for _, v := range rec.Values {
				k := [2]string{string(rec.Name), v.Unit}
				values[k] = append(values[k], v.Value)
			}
			for _, c := range rec.Config {
				config[c.Key] = string(c.Value)
			}
		case *benchfmt.SyntaxError:
			t.Fatalf("benchfmt rejects the export: %v", rec)
		}
	}
	require.NoError(t, r.Err())
	return values, config
}

// The export reads back through benchfmt with one result per sample, and
// benchstat's statistics (benchmath, assuming nothing) over what it reads
// give exactly the report's medians and intervals.
func TestBenchfmtRoundTrip(t *testing.T) {
	files, data := benchfmtFixture(t)
	values, config := readBenchfmt(t, data)
	assert.Equal(t, map[string]string{"run": "run", "device": "Test GPU X", "compute-capability": "9.0", "driver": "580.159.04",
		"gpuplan-version": "devel", "commit": "0123abc", "source-fingerprint": files[0].Samples[0].Provenance.SourceFingerprint}, config)
	for _, metric := range []string{MetricWallNS, MetricDeviceNS} {
		unit, perIt := "sec/op", "sec/iteration"
		if metric == MetricDeviceNS {
			unit, perIt = "device-sec/op", "device-sec/iteration"
		}
		summaries, err := Summarize(files, metric, "host-loop")
		require.NoError(t, err)
		for _, ws := range summaries {
			for _, a := range ws.Arms {
				name := fmt.Sprintf("Evidence/workload=%s/arm=%s", ws.Workload.Name, a.Arm)
				got := values[[2]string{name, unit}]
				require.Len(t, got, a.N, name)
				s := benchmath.AssumeNothing.Summary(benchmath.NewSample(got, &benchmath.DefaultThresholds), Confidence)
				assert.InDelta(t, a.Median.Center, s.Center*1e9, 1e-6, name)
				assert.InDelta(t, a.Median.Lo, s.Lo*1e9, 1e-6, name)
				assert.InDelta(t, a.Median.Hi, s.Hi*1e9, 1e-6, name)
				if a.PerIteration != nil {
					it := values[[2]string{name, perIt}]
					s := benchmath.AssumeNothing.Summary(benchmath.NewSample(it, &benchmath.DefaultThresholds), Confidence)
					assert.InDelta(t, a.PerIteration.Center, s.Center*1e9, 1e-9*a.PerIteration.Center, name)
				}
				if a.Bandwidth != nil && metric == MetricWallNS {
					bw := values[[2]string{name, "B/s"}]
					s := benchmath.AssumeNothing.Summary(benchmath.NewSample(bw, &benchmath.DefaultThresholds), Confidence)
					assert.InDelta(t, a.Bandwidth.Center, s.Center/1e9, 1e-9*a.Bandwidth.Center, "GB/s from B/s")
				}
			}
		}
	}
}

func TestBenchfmtLines(t *testing.T) {
	_, data := benchfmtFixture(t)
	lines := strings.Split(string(data), "\n")
	assert.Equal(t, "run: run", lines[0])
	results := 0
	for _, l := range lines {
		if strings.HasPrefix(l, "Benchmark") {
			results++
			assert.Regexp(t, `^BenchmarkEvidence/workload=[a-z0-9-]+/arm=[a-z-]+ 1 \S+ ns/op`, l)
			if strings.Contains(l, "arm=copy-ceiling") {
				assert.Contains(t, l, " MB/s")
				assert.NotContains(t, l, "ns/iteration", "a copy has no iterations")
			}
		}
	}
	assert.Equal(t, 72, results, "one line per sample")
}

// benchstatBinary builds golang.org/x/perf/cmd/benchstat from the module
// graph. It skips with -short or without the go command.
func benchstatBinary(t *testing.T) string {
	if testing.Short() {
		t.Skip("builds benchstat; skipped with -short")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH")
	}
	bin := filepath.Join(t.TempDir(), "benchstat")
	out, err := exec.Command(goTool, "build", "-o", bin, "golang.org/x/perf/cmd/benchstat").CombinedOutput()
	require.NoError(t, err, "building benchstat: %s", out)
	return bin
}

// benchstat itself reads the export: its CSV table has the report's
// medians, and its ± is the report's interval (as a whole percentage).
func TestBenchstatReadsTheExport(t *testing.T) {
	bin := benchstatBinary(t)
	files, data := benchfmtFixture(t)
	path := filepath.Join(t.TempDir(), "run.txt")
	require.NoError(t, os.WriteFile(path, data, 0o600))
	out, err := exec.Command(bin, "-format", "csv", "-filter", ".unit:sec/op", path).Output()
	require.NoError(t, err)
	rows := benchstatCSVRows(t, out)
	summaries, err := Summarize(files, MetricWallNS, "host-loop")
	require.NoError(t, err)
	checked := 0
	for _, ws := range summaries {
		for _, a := range ws.Arms {
			row, ok := rows[fmt.Sprintf("Evidence/workload=%s/arm=%s", ws.Workload.Name, a.Arm)]
			require.True(t, ok, "benchstat has no row for %s/%s", ws.Workload.Name, a.Arm)
			center, err := strconv.ParseFloat(row[1], 64)
			require.NoError(t, err)
			assert.InDelta(t, a.Median.Center, center*1e9, 1e-6)
			spread := math.Max(a.Median.Center-a.Median.Lo, a.Median.Hi-a.Median.Center) / a.Median.Center * 100
			assert.Equal(t, fmt.Sprintf("%.0f%%", spread), row[2])
			checked++
		}
	}
	assert.Equal(t, 6, checked)
}

func benchstatCSVRows(t *testing.T, out []byte) map[string][]string {
	cr := csv.NewReader(bytes.NewReader(out))
	cr.FieldsPerRecord = -1
	recs, err := cr.ReadAll()
	require.NoError(t, err)
	rows := map[string][]string{}
	for _, rec := range recs {
		if len(rec) >= 3 && strings.HasPrefix(rec[0], "Evidence/") {
			rows[rec[0]] = rec
		}
	}
	return rows
}

func ExampleWriteBenchfmt() {
	s := testSample("megakernel", 0, 1.8e6)
	s.Workload = Workload{Name: "grid-2048", Nodes: 4194304, Edges: 8384512, Iterations: 4095}
	s.DeviceNS = 0
	if err := WriteBenchfmt(os.Stdout, []ResultFile{{Path: "results/corners.csv", Samples: []Sample{s}}}); err != nil {
		fmt.Println(err)
	}
	// Output:
	// run: corners
	// device: Test GPU X
	// compute-capability: 9.0
	// driver: 580.159.04
	// gpuplan-version: devel
	// commit: 0123abc
	// source-fingerprint: sha256:0000000000000000000000000000000000000000000000000000000000000001
	//
	// BenchmarkEvidence/workload=grid-2048/arm=megakernel 1 1.8e+06 ns/op 439.56043956043953 ns/iteration
}
