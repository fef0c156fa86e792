package main

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBenchArgs(t *testing.T) {
	e := &env{stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}}
	o, err := parseBenchArgs(e, []string{"frontier", "--graph", "grid:2048", "--roots", "16", "--samples", "30", "-o", "x.csv"})
	require.NoError(t, err)
	assert.Equal(t, "grid-2048", o.spec.Name())
	assert.Equal(t, 16, o.roots)
	assert.Equal(t, 30, o.samples)
	assert.Equal(t, "x.csv", o.out)
	assert.Equal(t, defaultBenchArms, o.arms)
	assert.False(t, o.progress, "a buffer is not a terminal")
	assert.EqualValues(t, 1<<30, o.copyBytes)

	o, err = parseBenchArgs(e, []string{"frontier", "--graph", "kron:10", "--root-ids", "3, 5", "--arms", "megakernel,host-loop-scan"})
	require.NoError(t, err)
	assert.Equal(t, []int64{3, 5}, o.rootIDs)
	assert.Equal(t, 2, o.roots)
	assert.Equal(t, []string{"megakernel", "host-loop-scan"}, o.arms)

	bad := map[string][]string{
		"no benchmark":   {},
		"flags first":    {"--graph", "grid:4"},
		"unknown bench":  {"pagerank", "--graph", "grid:4"},
		"no graph":       {"frontier"},
		"bad graph":      {"frontier", "--graph", "cube:3"},
		"zero roots":     {"frontier", "--graph", "grid:4", "--roots", "0"},
		"bad root id":    {"frontier", "--graph", "grid:4", "--root-ids", "1,x"},
		"zero samples":   {"frontier", "--graph", "grid:4", "--samples", "0"},
		"bad arm":        {"frontier", "--graph", "grid:4", "--arms", "host-loop,warp-drive"},
		"repeated arm":   {"frontier", "--graph", "grid:4", "--arms", "host-loop,host-loop"},
		"check every":    {"frontier", "--graph", "grid:4", "--check-every", "0"},
		"chunk":          {"frontier", "--graph", "grid:4", "--chunk", "0"},
		"mega per sm":    {"frontier", "--graph", "grid:4", "--mega-blocks-per-sm", "-1"},
		"mega threads":   {"frontier", "--graph", "grid:4", "--mega-threads", "100"},
		"mega ahead":     {"frontier", "--graph", "grid:4", "--mega-ahead", "-1"},
		"mega ahead big": {"frontier", "--graph", "grid:4", "--mega-ahead", "65537"},
		"copy":           {"frontier", "--graph", "grid:4", "--copy-mib", "-1"},
		"device":         {"frontier", "--graph", "grid:4", "--device", "-1"},
		"extra argument": {"frontier", "--graph", "grid:4", "more"},
	}
	for name, args := range bad {
		_, err := parseBenchArgs(e, args)
		var ue *usageError
		require.ErrorAs(t, err, &ue, name)
	}
}

func TestBenchCommand(t *testing.T) {
	out, _, code := runCLI(t, "", "bench", "--help")
	assert.Equal(t, exitOK, code)
	assert.Contains(t, out, "host-loop")
	_, errs, code := runCLI(t, "", "bench", "frontier", "--graph", "grid:8")
	if code == exitFailure {
		// The pure-Go build cannot measure: a clear error with the fix.
		assert.Contains(t, errs, "built without CUDA support")
		assert.Contains(t, errs, "Fix: make build-cuda")
	}
	_, _, code = runCLI(t, "", "bench", "frontier")
	assert.Equal(t, exitUsage, code)
}

func TestBenchSummary(t *testing.T) {
	roots := []rootStat{{Root: 0, Levels: 3, Reached: 10, Edges: 100}, {Root: 1, Levels: 5, Reached: 10, Edges: 300}}
	perRoot := [][]float64{{100, 110, 90}, {300, 600, 300}}
	s := summarize("megakernel", []float64{400, 700, 390}, []float64{1, 2, 3}, perRoot, roots, 8)
	assert.Equal(t, 400.0, s.MedianSampleNs)
	assert.Equal(t, 2.0, s.MedianDeviceNs)
	assert.Equal(t, 200.0, s.MedianRootNs) // medians 100 and 300
	assert.Equal(t, 50.0, s.LevelNs)
	// Harmonic mean of 100/100 and 300/300 edges per ns = 1 G edges/s.
	assert.InDelta(t, 1.0, s.GTEPS, 1e-12)
	assert.InDelta(t, (16*400+28*20)/400.0, s.ModeledGBps, 1e-9)

	host := summarize("host-loop", []float64{2000}, nil, [][]float64{{500}, {1500}}, roots, 8)
	sum := &benchSummary{Workload: "w", Arms: []armSummary{host, s}, CopyGBps: 100}
	finishSummary(sum)
	assert.InDelta(t, 5.0, sum.Arms[1].SpeedupVsHostLoop, 1e-12)
	assert.InDelta(t, s.ModeledGBps/100, sum.Arms[1].CeilingFraction, 1e-12)
	var b bytes.Buffer
	require.NoError(t, writeSummaryTable(&b, sum))
	assert.Contains(t, b.String(), "| megakernel | 200 ns | 50 ns | 1.000 | 5.00x |")
	assert.Contains(t, b.String(), "copy ceiling")

	assert.Equal(t, 0.0, median(nil))
	assert.Equal(t, 2.5, median([]float64{4, 1, 2, 3}))
	assert.Equal(t, "-", fmtNs(math.NaN()))
	assert.Equal(t, "1.500 ms", fmtNs(1.5e6))
	assert.Equal(t, "2.000 s", fmtNs(2e9))
}

func TestBenchHelpers(t *testing.T) {
	assert.Equal(t, "580.159.04", driverVersionFromProc("NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Release Build"))
	assert.Equal(t, "580.82.07", driverVersionFromProc("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.82.07  Release Build"))
	assert.Equal(t, "", driverVersionFromProc("garbage"))
	a := combinedChecksum([]uint64{1, 2})
	assert.True(t, strings.HasPrefix(a, "fnv64-"))
	assert.NotEqual(t, a, combinedChecksum([]uint64{2, 1}))
	root, err := findModuleRoot(".")
	require.NoError(t, err)
	assert.FileExists(t, root+"/go.mod")
	var b bytes.Buffer
	p := &progressBar{w: &b, on: true, total: 2}
	p.step("one")
	p.step("two")
	assert.Contains(t, b.String(), "100%")
	q := &progressBar{w: &b, on: false, total: 2}
	b.Reset()
	q.step("x")
	assert.Empty(t, b.String())
	assert.False(t, isTerminal(&b))
}
