package evidence

import (
	"bytes"
	"encoding/csv"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
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

// MarkFreshness marks a run stale exactly where the gate's StaleFiles
// lists its file, and leaves it unknown without fingerprints to compare.
func TestMarkFreshness(t *testing.T) {
	files, err := LoadResults("testdata/report")
	require.NoError(t, err)
	other := Fingerprints{"workloads/x": "sha256:" + strings.Repeat("e", 64)}
	tests := []struct {
		name    string
		files   []ResultFile
		current Fingerprints
		want    Freshness
	}{
		{"no fingerprints", files, nil, FreshnessUnknown},
		{"empty fingerprints", files, Fingerprints{}, FreshnessUnknown},
		{"measured on this tree", files, testFingerprints, Fresh},
		{"measured on other code", files, other, Stale},
		{"file not among the files", nil, testFingerprints, FreshnessUnknown},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Summarize(files, MetricWallNS, "host-loop")
			require.NoError(t, err)
			MarkFreshness(s, tc.files, tc.current)
			for _, ws := range s {
				assert.Equal(t, tc.want, ws.Freshness, ws.Label())
				if tc.want != FreshnessUnknown {
					assert.Equal(t, tc.want == Stale, slices.Contains(StaleFiles(files, tc.current), ws.File))
				}
			}
		})
	}
	assert.Equal(t, []string{"unknown", "fresh", "stale"}, []string{FreshnessUnknown.String(), Fresh.String(), Stale.String()})
}

// The Markdown report marks stale runs in their headings and sections,
// counts them, and says where staleness was not checked.
func TestMarkdownFreshness(t *testing.T) {
	tests := []struct {
		name      string
		freshness []Freshness
		want, not []string
	}{
		{"one stale", []Freshness{Stale, Fresh},
			[]string{"### grid-512 · run run (stale: measured on other code)\n", "**Stale:** its source fingerprint is none of the current tree's",
				"1 of 2 sections are marked (stale: measured on other code): their source fingerprint is none of the current tree's", "gpuplan gate --list-stale"},
			[]string{"### rmat-16 · run run (stale", "Staleness not checked", "No run is stale"}},
		{"all fresh", []Freshness{Fresh, Fresh}, []string{"No run is stale"}, []string{"(stale:", "**Stale:**", "Staleness not checked"}},
		{"unknown", []Freshness{FreshnessUnknown, FreshnessUnknown},
			[]string{"Staleness not checked: no source fingerprints of the current tree were given", "--root DIR"}, []string{"(stale:", "No run is stale"}},
		{"partly unknown", []Freshness{Stale, FreshnessUnknown},
			[]string{"Staleness not checked for 1 of 2 sections", "1 of 2 sections are marked (stale: measured on other code)", "### grid-512 · run run (stale"}, []string{"No run is stale"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := reportSummaries(t, MetricWallNS)
			require.Len(t, s, len(tc.freshness))
			for i := range s {
				s[i].Freshness = tc.freshness[i]
			}
			md := MarkdownTable(s)
			for _, w := range tc.want {
				assert.Contains(t, md, w)
			}
			for _, n := range tc.not {
				assert.NotContains(t, md, n)
			}
		})
	}
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
		assert.Nil(t, a.Bandwidth)
		assert.Equal(t, ArmTimed, a.Kind)
		require.NotNil(t, a.PerIteration)
		assert.InDelta(t, a.Median.Center/1022, a.PerIteration.Center, 1e-9)
		assert.InDelta(t, a.Median.Lo/1022, a.PerIteration.Lo, 1e-9)
		assert.InDelta(t, a.Median.Hi/1022, a.PerIteration.Hi, 1e-9)
	}
	assert.Equal(t, "run", grid.Run)
	assert.Equal(t, "grid-512 · run run", grid.Label())
	rmat := s[1]
	copyArm := rmat.Arms[2]
	assert.Equal(t, "copy-ceiling", copyArm.Arm)
	assert.Equal(t, ArmBandwidth, copyArm.Kind)
	require.NotNil(t, copyArm.Bandwidth)
	assert.InDelta(t, 3000, copyArm.Bandwidth.Center, 400)
	assert.Nil(t, copyArm.Speedup, "a bandwidth ceiling is never a speedup")
	assert.Nil(t, copyArm.PerIteration)

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

// externalSummaries are a run with a peer tool, a one-sample arm and a
// copy ceiling beside gpuplan's arms.
func externalSummaries(t testing.TB) []WorkloadSummary {
	f := ResultFile{Path: "runs/peer.csv"}
	for i := range uint64(12) {
		for arm, ns := range map[string]float64{"host-loop": 4e7, "megakernel": 5e6, "gunrock": 8e6} {
			f.Samples = append(f.Samples, testSample(arm, i, ns+float64(i)*1e4))
		}
		c := testSample("copy-ceiling", i, 1e6+float64(i))
		c.BytesMoved = 2 << 30
		f.Samples = append(f.Samples, c)
	}
	f.Samples = append(f.Samples, testSample("egg", 0, 9e7))
	s, err := Summarize([]ResultFile{f}, MetricWallNS, "host-loop")
	require.NoError(t, err)
	return s
}

func TestExternalAndBandwidthArms(t *testing.T) {
	s := externalSummaries(t)
	require.Len(t, s, 1)
	kinds := map[string]ArmKind{}
	for _, a := range s[0].Arms {
		kinds[a.Arm] = a.Kind
	}
	assert.Equal(t, map[string]ArmKind{"host-loop": ArmTimed, "megakernel": ArmTimed, "gunrock": ArmExternal,
		"egg": ArmExternal, "copy-ceiling": ArmBandwidth}, kinds)
	md := MarkdownTable(s)
	assert.Contains(t, md, "| gunrock (external) | 12 |")
	assert.Contains(t, md, "| egg (external) | 1 | 90.000 ms | too few samples |")
	assert.Contains(t, md, "| copy-ceiling | 12 | 2,386.1 GB/s |")
	assert.True(t, IsExternalArm("gunrock"))
	assert.False(t, IsExternalArm("megakernel"))
	assert.Equal(t, []string{"timed", "external", "bandwidth"}, []string{ArmTimed.String(), ArmExternal.String(), ArmBandwidth.String()})
}

func TestBaselineNeverABandwidthArm(t *testing.T) {
	slowCopy := testSample("copy-ceiling", 0, 1e9)
	slowCopy.BytesMoved = 1 << 20
	files := []ResultFile{{Path: "x.csv", Samples: []Sample{testSample("megakernel", 0, 10), testSample("device-loop", 0, 30),
		testSample("gunrock", 0, 100), slowCopy}}}
	for _, requested := range []string{"host-loop", "copy-ceiling"} {
		s, err := Summarize(files, MetricWallNS, requested)
		require.NoError(t, err)
		assert.Equal(t, "device-loop", s[0].Baseline, "the slowest of gpuplan's arms, not the copy or the peer")
	}
	s, err := Summarize(files, MetricWallNS, "gunrock")
	require.NoError(t, err)
	assert.Equal(t, "gunrock", s[0].Baseline, "a peer tool may be asked for as the baseline")
	onlyCopy := []ResultFile{{Path: "x.csv", Samples: []Sample{slowCopy}}}
	s, err = Summarize(onlyCopy, MetricWallNS, "host-loop")
	require.NoError(t, err)
	assert.Empty(t, s[0].Baseline)
	assert.Nil(t, s[0].Arms[0].Speedup)
}

func TestRunLabels(t *testing.T) {
	files := []ResultFile{{Path: "a/grid.csv"}, {Path: "b/grid.csv"}, {Path: "kron.csv"}, {Path: "kron.csv"}, {Path: "<stdin>"}}
	assert.Equal(t, []string{"a/grid", "b/grid", "kron", "kron #2", "<stdin>"}, RunLabels(files))
	assert.Empty(t, RunLabels(nil))
}

func TestPerIterationNeedsIterations(t *testing.T) {
	s0 := testSample("megakernel", 0, 1000)
	s0.Workload.Iterations = 0
	s, err := Summarize([]ResultFile{{Path: "x.csv", Samples: []Sample{s0}}}, MetricWallNS, "host-loop")
	require.NoError(t, err)
	assert.Nil(t, s[0].Arms[0].PerIteration)
	assert.Contains(t, MarkdownTable(s), "| megakernel | 1 | 1.00 µs | too few samples | — |  | baseline |  |")
}

// Property: for any samples, each arm's median lies in its interval, the
// time per iteration is the median over the iterations, and the speedup is
// the ratio of medians.
func TestSummarizeProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 17))
	for trial := range 200 {
		var f ResultFile
		n := 1 + r.IntN(25)
		iters := uint64(1 + r.IntN(5000))
		for i := range n {
			for _, arm := range []string{"host-loop", "megakernel"} {
				smp := testSample(arm, uint64(i), 1+r.Float64()*1e7)
				smp.Workload.Iterations = iters
				f.Samples = append(f.Samples, smp)
			}
		}
		s, err := Summarize([]ResultFile{f}, MetricWallNS, "host-loop")
		require.NoError(t, err)
		require.Len(t, s, 1, "trial %d", trial)
		base, mega := s[0].Arms[0], s[0].Arms[1]
		for _, a := range s[0].Arms {
			assert.LessOrEqual(t, a.Median.Lo, a.Median.Center)
			assert.GreaterOrEqual(t, a.Median.Hi, a.Median.Center)
			assert.InDelta(t, a.Median.Center/float64(iters), a.PerIteration.Center, 1e-9*a.Median.Center)
		}
		assert.InDelta(t, base.Median.Center/mega.Median.Center, mega.Speedup.Center, 1e-12*mega.Speedup.Center)
		assert.LessOrEqual(t, mega.Speedup.Lo, mega.Speedup.Center)
	}
}

func TestWriteReportCSV(t *testing.T) {
	s := append(reportSummaries(t, MetricWallNS), externalSummaries(t)...)
	var buf bytes.Buffer
	require.NoError(t, WriteReportCSV(&buf, s))
	recs, err := csv.NewReader(&buf).ReadAll()
	require.NoError(t, err)
	require.Equal(t, strings.Split(ReportCSVHeader, ","), recs[0])
	rows := 0
	for _, ws := range s {
		rows += len(ws.Arms)
	}
	require.Len(t, recs, rows+1)
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	byArm := map[string][]string{}
	for _, rec := range recs[1:] {
		require.Len(t, rec, len(recs[0]))
		byArm[rec[col["run"]]+"/"+rec[col["workload"]]+"/"+rec[col["arm"]]] = rec
	}
	mega := byArm["run/grid-512/megakernel"]
	med, err := strconv.ParseFloat(mega[col["median_ns"]], 64)
	require.NoError(t, err)
	assert.Equal(t, s[0].Arms[2].Median.Center, med, "unrounded")
	assert.Equal(t, "timed", mega[col["kind"]])
	assert.Equal(t, "host-loop", mega[col["baseline"]])
	assert.NotEmpty(t, mega[col["speedup_ci_lo"]])
	host := byArm["run/grid-512/host-loop"]
	assert.Empty(t, host[col["speedup"]], "the baseline has no speedup")
	cp := byArm["run/rmat-16/copy-ceiling"]
	assert.Equal(t, "bandwidth", cp[col["kind"]])
	assert.Empty(t, cp[col["speedup"]])
	assert.Empty(t, cp[col["per_iteration_ns"]])
	assert.NotEmpty(t, cp[col["bandwidth_gb_s"]])
	egg := byArm["peer/grid-64/egg"]
	assert.Equal(t, "external", egg[col["kind"]])
	assert.Empty(t, egg[col["median_ci_lo_ns"]], "an infinite bound is an empty field")
	assert.Equal(t, "1", egg[col["n"]])
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
	// The current tree's workload was changed since run.csv was measured.
	MarkFreshness(s, files, Fingerprints{"workloads/bfs": "sha256:" + strings.Repeat("e", 64)})
	fmt.Print(MarkdownTable(s))
	// Output:
	// ### grid-64 · run run (stale: measured on other code)
	//
	// Test GPU X (compute 9.0, driver 580.159.04), commit 0123abc; 4,096 nodes, 16,128 edges, 126 iterations; metric wall_ns; file run.csv. **Stale:** its source fingerprint is none of the current tree's, so it was measured on other code, and the gate judges no claim on it.
	//
	// | arm | n | median | 95% CI | per iteration | 95% CI | speedup | 95% CI |
	// |---|--:|--:|---|--:|---|--:|---|
	// | host-loop | 10 | 12.005 ms | [12.001, 12.008] ms | 95.27 µs | [95.25, 95.30] µs | baseline |  |
	// | megakernel | 10 | 1.204 ms | [1.201, 1.208] ms | 9.56 µs | [9.53, 9.59] µs | 9.97x | [9.93x, 10.00x] |
	//
	// Medians of wall_ns with 95% intervals (benchmath, distribution-free). Per iteration is the median over the workload's iterations (BFS levels). Speedup is the baseline arm's median over the arm's; its interval is conservative (see package evidence). Bandwidth arms measure device memory bandwidth (bytes moved over time) and have no speedup. Arms marked (external) are peer tools.
	//
	// 1 of 1 sections are marked (stale: measured on other code): their source fingerprint is none of the current tree's, so they were measured on other code and the gate judges no claim on them (gpuplan gate --list-stale lists their files).
}

func ExampleWriteReportCSV() {
	files := []ResultFile{{Path: "runs/grid.csv"}}
	for i := range uint64(10) {
		files[0].Samples = append(files[0].Samples, testSample("host-loop", i, 12e6+float64(i)*1000), testSample("megakernel", i, 1.2e6+float64(i)*1000))
	}
	s, err := Summarize(files, MetricWallNS, "host-loop")
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := WriteReportCSV(os.Stdout, s); err != nil {
		fmt.Println(err)
	}
	// Output:
	// run,file,workload,graph_nodes,graph_edges,iterations,device_name,compute_capability,driver_version,commit,metric,baseline,arm,kind,n,median_ns,median_ci_lo_ns,median_ci_hi_ns,per_iteration_ns,per_iteration_ci_lo_ns,per_iteration_ci_hi_ns,speedup,speedup_ci_lo,speedup_ci_hi,bandwidth_gb_s,bandwidth_ci_lo_gb_s,bandwidth_ci_hi_gb_s
	// grid,runs/grid.csv,grid-64,4096,16128,126,Test GPU X,9.0,580.159.04,0123abc,wall_ns,host-loop,host-loop,timed,10,12004500,12001000,12008000,95273.80952380953,95246.03174603175,95301.58730158731,,,,,,
	// grid,runs/grid.csv,grid-64,4096,16128,126,Test GPU X,9.0,580.159.04,0123abc,wall_ns,host-loop,megakernel,timed,10,1204500,1201000,1208000,9559.52380952381,9531.746031746032,9587.301587301587,9.966376089663761,9.934602649006623,9.99833472106578,,,
}

func ExampleIsExternalArm() {
	for _, arm := range []string{"megakernel", "gunrock", "egg"} {
		fmt.Println(arm, IsExternalArm(arm))
	}
	// Output:
	// megakernel false
	// gunrock true
	// egg true
}
