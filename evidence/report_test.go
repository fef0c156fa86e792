package evidence

import (
	"bytes"
	"flag"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite golden files")

func reportSummaries(t testing.TB, metric string) []WorkloadSummary {
	files, err := LoadResults("testdata/report")
	require.NoError(t, err)
	s, err := Summarize(files, metric, "host-loop")
	require.NoError(t, err)
	return s
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -update to create %s", path)
	assert.Equal(t, string(want), got)
}

func TestMarkdownTableGolden(t *testing.T) {
	golden(t, "report.golden.md", MarkdownTable(reportSummaries(t, MetricWallNS)))
	golden(t, "report_device.golden.md", MarkdownTable(reportSummaries(t, MetricDeviceNS)))
	assert.Equal(t, "No evidence recorded.\n", MarkdownTable(nil))
}

func TestSummarize(t *testing.T) {
	s := reportSummaries(t, MetricWallNS)
	require.Len(t, s, 2)
	grid := s[0]
	assert.Equal(t, "grid-512", grid.Workload.Name)
	assert.Equal(t, "host-loop", grid.Baseline)
	require.Len(t, grid.Arms, 3)
	assert.Equal(t, []string{"host-loop", "device-loop", "megakernel"}, []string{grid.Arms[0].Arm, grid.Arms[1].Arm, grid.Arms[2].Arm})
	assert.Nil(t, grid.Arms[0].Speedup)
	assert.InDelta(t, 10, grid.Arms[2].Speedup.Center, 0.3)
	assert.InDelta(t, 2.6, grid.Arms[1].Speedup.Center, 0.1)
	for _, a := range grid.Arms {
		assert.Equal(t, 12, a.N)
		assert.Less(t, a.Median.Lo, a.Median.Center)
		assert.Greater(t, a.Median.Hi, a.Median.Center)
		assert.Zero(t, a.BandwidthGBs)
	}
	rmat := s[1]
	copyArm := rmat.Arms[2]
	assert.Equal(t, "copy-ceiling", copyArm.Arm)
	assert.InDelta(t, 3000, copyArm.BandwidthGBs, 400)

	// A missing baseline falls back to the slowest arm.
	s2, err := Summarize([]ResultFile{{Path: "x.csv", Samples: []Sample{
		testSample("fast", 0, 10), testSample("slow", 0, 100)}}}, MetricWallNS, "host-loop")
	require.NoError(t, err)
	assert.Equal(t, "slow", s2[0].Baseline)
	assert.InDelta(t, 10, s2[0].Arms[0].Speedup.Center, 1e-9)

	// Device time left out where not recorded.
	noDev := testSample("megakernel", 0, 10)
	noDev.DeviceNS = 0
	s3, err := Summarize([]ResultFile{{Path: "x.csv", Samples: []Sample{noDev}}, {Path: "empty.csv"}}, MetricDeviceNS, "host-loop")
	require.NoError(t, err)
	assert.Empty(t, s3)
	_, err = Summarize(nil, "cycles", "host-loop")
	require.ErrorContains(t, err, "Fix:")
}

func TestWriteChart(t *testing.T) {
	s := reportSummaries(t, MetricWallNS)
	var buf bytes.Buffer
	require.NoError(t, WriteChart(&buf, s, ChartPNG))
	img, err := png.Decode(bytes.NewReader(buf.Bytes()))
	require.NoError(t, err)
	assert.Greater(t, img.Bounds().Dx(), 400)

	buf.Reset()
	require.NoError(t, WriteChart(&buf, s, ChartSVG))
	svg := buf.String()
	assert.True(t, strings.HasPrefix(strings.TrimSpace(svg), "<?xml"), svg[:40])
	for _, want := range []string{"grid-512", "rmat-16", "megakernel", "copy-ceiling", "baseline", "x</text>"} {
		assert.Contains(t, svg, want)
	}

	// One sample per arm: no finite interval, still a chart.
	few := []ResultFile{{Path: "x.csv", Samples: []Sample{testSample("host-loop", 0, 1e6), testSample("megakernel", 0, 1e5)}}}
	fs, err := Summarize(few, MetricWallNS, "host-loop")
	require.NoError(t, err)
	require.NoError(t, WriteChart(&bytes.Buffer{}, fs, ChartPNG))

	require.ErrorContains(t, WriteChart(&buf, s, "gif"), "Fix:")
	require.ErrorContains(t, WriteChart(&buf, nil, ChartPNG), "Fix:")

	if dir := os.Getenv("GPUPLAN_CHART_DIR"); dir != "" {
		f, err := os.Create(filepath.Join(dir, "report.png"))
		require.NoError(t, err)
		require.NoError(t, WriteChart(f, s, ChartPNG))
		require.NoError(t, f.Close())
	}
}

func BenchmarkSummarize(b *testing.B) {
	f := armFile("run.csv", 100_000, map[string]float64{"host-loop": 1e7, "device-loop": 4e6, "megakernel": 1e6})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Summarize([]ResultFile{f}, MetricWallNS, "host-loop"); err != nil {
			b.Fatal(err)
		}
	}
}

func ExampleMarkdownTable() {
	files := []ResultFile{{Path: "run.csv"}}
	for i := range uint64(10) {
		for _, a := range []struct {
			arm string
			ns  float64
		}{{"host-loop", 12e6}, {"megakernel", 1.2e6}} {
			s := testSample(a.arm, i, a.ns+float64(i)*1000)
			files[0].Samples = append(files[0].Samples, s)
		}
	}
	s, err := Summarize(files, MetricWallNS, "host-loop")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(MarkdownTable(s))
	// Output:
	// | workload | device | arm | n | median wall_ns | 95% CI | speedup | 95% CI | bandwidth |
	// |---|---|---|--:|--:|---|--:|---|--:|
	// | grid-64 (4096 nodes, 16128 edges, 126 iterations) | Test GPU X (9.0) | host-loop | 10 | 12.005 ms | [12.001, 12.008] ms | 1.00x (baseline) |  |  |
	// | grid-64 (4096 nodes, 16128 edges, 126 iterations) | Test GPU X (9.0) | megakernel | 10 | 1.204 ms | [1.201, 1.208] ms | 9.97x | [9.93x, 10.00x] |  |
	//
	// Speedup is the baseline arm's median wall_ns over the arm's; intervals are 95% (benchmath medians; the speedup interval is conservative, see package evidence).
}
