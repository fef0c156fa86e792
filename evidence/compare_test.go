package evidence

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scaledRun copies f with every sample of arm scaled by factor (a faster
// or slower build) and another path.
func scaledRun(f ResultFile, path, arm string, factor float64) ResultFile {
	out := ResultFile{Path: path}
	for _, s := range f.Samples {
		if s.Arm == arm {
			s.WallNS *= factor
			s.DeviceNS *= factor
		}
		out.Samples = append(out.Samples, s)
	}
	return out
}

func fixtureRun(t testing.TB) ResultFile {
	files, err := LoadResults("testdata/report")
	require.NoError(t, err)
	require.Len(t, files, 1)
	return files[0]
}

func TestCompareSameRun(t *testing.T) {
	f := fixtureRun(t)
	rep, err := Compare(f, f, MetricWallNS)
	require.NoError(t, err)
	require.Len(t, rep.Rows, 6)
	for _, c := range rep.Rows {
		assert.Zero(t, c.Delta)
		assert.False(t, c.Significant)
		assert.InDelta(t, 1, c.P, 1e-12, "identical samples")
		assert.Equal(t, "~", c.DeltaText())
		assert.False(t, c.PerIteration)
	}
	assert.Empty(t, rep.OnlyOld)
	assert.Empty(t, rep.OnlyNew)
	assert.Equal(t, 0.05, rep.Alpha)
}

func TestCompareFinds3PercentFaster(t *testing.T) {
	f := fixtureRun(t)
	faster := scaledRun(f, "new.csv", "megakernel", 0.97)
	rep, err := Compare(f, faster, MetricDeviceNS)
	require.NoError(t, err)
	for _, c := range rep.Rows {
		if c.Arm != "megakernel" {
			assert.False(t, c.Significant, c.Arm)
			continue
		}
		assert.InDelta(t, -0.03, c.Delta, 1e-9)
		assert.True(t, c.Significant)
		assert.Less(t, c.P, 0.01)
		assert.Equal(t, "-3.00%", c.DeltaText())
		assert.Equal(t, 12, c.Old.N)
		assert.Equal(t, 12, c.New.N)
	}
	var buf bytes.Buffer
	require.NoError(t, rep.WriteText(&buf))
	assert.Contains(t, buf.String(), "old: run.csv\nnew: new.csv\nmedians of device_ns with 95% CI")
	assert.Regexp(t, `grid-512\s+megakernel\s+1\.\d+ ms ± \d+%\s+1\.\d+ ms ± \d+%\s+-3\.00%\s+0\.000\s+12\+12`, buf.String())
}

func TestComparePerIterationAndOneSided(t *testing.T) {
	f := fixtureRun(t)
	other := ResultFile{Path: "other.csv"}
	for _, s := range f.Samples {
		switch s.Arm {
		case "device-loop":
			continue // measured in the old run only
		case "host-loop":
			s.Workload.Iterations *= 2 // another root set: twice the levels,
			s.WallNS *= 2              // twice the time, the same per level
		}
		if s.Workload.Name == "grid-512" {
			s.Workload.Iterations = 2044
		}
		other.Samples = append(other.Samples, s)
	}
	g := testSample("gunrock", 0, 5e5)
	g.Workload.Name = "grid-512"
	g.Workload = other.Samples[0].Workload
	other.Samples = append(other.Samples, g)
	rep, err := Compare(f, other, MetricWallNS)
	require.NoError(t, err)
	assert.Equal(t, []string{"grid-512/device-loop"}, rep.OnlyOld)
	assert.Equal(t, []string{"grid-512/gunrock"}, rep.OnlyNew)
	for _, c := range rep.Rows {
		if c.Workload != "grid-512" {
			continue
		}
		assert.True(t, c.PerIteration, c.Arm)
		assert.Equal(t, uint64(1022), c.Old.Iterations)
		assert.Equal(t, uint64(2044), c.New.Iterations)
	}
	var buf bytes.Buffer
	require.NoError(t, rep.WriteText(&buf))
	out := buf.String()
	assert.Contains(t, out, "grid-512: 1,022 iterations, then 2,044: times compared per iteration")
	assert.Contains(t, out, "grid-512/device-loop: measured in the old run only")
	assert.Contains(t, out, "grid-512/gunrock: measured in the new run only")
	assert.Contains(t, out, "µs/iteration ± ")
}

func TestCompareWarnings(t *testing.T) {
	a := ResultFile{Path: "a.csv", Samples: []Sample{testSample("megakernel", 0, 10), testSample("megakernel", 1, 11)}}
	b := ResultFile{Path: "b.csv", Samples: []Sample{testSample("megakernel", 0, 20), testSample("megakernel", 1, 21)}}
	b.Samples[0].Workload.Nodes, b.Samples[1].Workload.Nodes = 8192, 8192
	rep, err := Compare(a, b, MetricWallNS)
	require.NoError(t, err)
	require.Len(t, rep.Rows, 1)
	c := rep.Rows[0]
	assert.False(t, c.Significant, "two samples a side cannot show a change")
	require.Len(t, c.Warnings, 2)
	assert.Contains(t, c.Warnings[0], "need >= 4 samples to detect a difference")
	assert.Contains(t, c.Warnings[1], "the graphs differ: 4096 nodes")
	var buf bytes.Buffer
	require.NoError(t, rep.WriteText(&buf))
	assert.Contains(t, buf.String(), "± ∞")

	noDevice := testSample("megakernel", 0, 10)
	noDevice.DeviceNS = 0
	rep, err = Compare(ResultFile{Samples: []Sample{noDevice}}, a, MetricDeviceNS)
	require.NoError(t, err)
	assert.Empty(t, rep.Rows, "no device time on one side: nothing to compare")
	_, err = Compare(a, b, "cycles")
	require.ErrorContains(t, err, "Fix:")
}

// Property: Compare is antisymmetric in its verdict and consistent in its
// delta: swapping the runs keeps the p-value and inverts the ratio.
func TestCompareSwapProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	for trial := range 100 {
		var a, b ResultFile
		for i := range 2 + r.IntN(20) {
			a.Samples = append(a.Samples, testSample("megakernel", uint64(i), 1e6*(1+r.Float64())))
		}
		for i := range 2 + r.IntN(20) {
			b.Samples = append(b.Samples, testSample("megakernel", uint64(i), 1e6*(1+r.Float64())*(0.5+r.Float64())))
		}
		ab, err := Compare(a, b, MetricWallNS)
		require.NoError(t, err)
		ba, err := Compare(b, a, MetricWallNS)
		require.NoError(t, err)
		x, y := ab.Rows[0], ba.Rows[0]
		assert.InDelta(t, x.P, y.P, 1e-12, "trial %d", trial)
		assert.Equal(t, x.Significant, y.Significant)
		assert.InDelta(t, 1, (1+x.Delta)*(1+y.Delta), 1e-12)
	}
}

// benchstat reading the two runs exported with WriteBenchfmt finds the
// same changes and p-values as Compare.
func TestCompareAgreesWithBenchstat(t *testing.T) {
	bin := benchstatBinary(t)
	f := fixtureRun(t)
	faster := scaledRun(f, "new.csv", "megakernel", 0.97)
	faster = scaledRun(faster, "new.csv", "device-loop", 1.01)
	dir := t.TempDir()
	paths := []string{filepath.Join(dir, "old.txt"), filepath.Join(dir, "new.txt")}
	for i, run := range []ResultFile{f, faster} {
		var buf bytes.Buffer
		require.NoError(t, WriteBenchfmt(&buf, []ResultFile{run}))
		require.NoError(t, os.WriteFile(paths[i], buf.Bytes(), 0o600))
	}
	out, err := exec.Command(bin, "-format", "csv", "-filter", ".unit:sec/op",
		"-ignore", "run,commit,gpuplan-version,source-fingerprint", paths[0], paths[1]).Output()
	require.NoError(t, err)
	rows := benchstatCSVRows(t, out)
	rep, err := Compare(f, faster, MetricWallNS)
	require.NoError(t, err)
	for _, c := range rep.Rows {
		row := rows[fmt.Sprintf("Evidence/workload=%s/arm=%s", c.Workload, c.Arm)]
		require.Len(t, row, 7, "%s/%s", c.Workload, c.Arm)
		assert.Equal(t, c.DeltaText(), row[5], "%s/%s", c.Workload, c.Arm)
		assert.True(t, strings.HasPrefix(row[6], fmt.Sprintf("p=%.3f ", c.P)), "%s/%s: benchstat %q, ours p=%.3f", c.Workload, c.Arm, row[6], c.P)
	}
}

func ExampleCompare() {
	var before, after ResultFile
	for i := range uint64(10) {
		before.Samples = append(before.Samples, testSample("megakernel", i, 1.80e6+float64(i)*1e3))
		after.Samples = append(after.Samples, testSample("megakernel", i, 1.70e6+float64(i)*1e3))
	}
	before.Path, after.Path = "old.csv", "new.csv"
	rep, err := Compare(before, after, MetricWallNS)
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := rep.WriteText(os.Stdout); err != nil {
		fmt.Println(err)
	}
	// Output:
	// old: old.csv
	// new: new.csv
	// medians of wall_ns with 95% CI; delta where the Mann-Whitney U test gives p < 0.05, else ~
	//
	// workload  arm         old            new            delta   p      n
	// grid-64   megakernel  1.804 ms ± 0%  1.704 ms ± 0%  -5.54%  0.000  10+10
}
