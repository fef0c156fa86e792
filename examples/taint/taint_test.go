package taint_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/gpuplan/gpuplan/examples/internal/mix"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/examples/internal/extest"
	"github.com/gpuplan/gpuplan/examples/taint"
	"github.com/gpuplan/gpuplan/megakernel"
	"github.com/gpuplan/gpuplan/workloads/wavedag"
)

// defaultExample is the part of cmd/gpuplan/plan_default.json the taint
// workload copies.
type defaultExample struct {
	Analysis         string          `json:"analysis"`
	LaunchOverheadNS float64         `json:"launch_overhead_ns"`
	Graph            json.RawMessage `json:"graph"`
	Sample           json.RawMessage `json:"schedule_sample"`
	MaxIters         uint32          `json:"max_device_iterations"`
	Waves            []struct {
		ID            int    `json:"id"`
		Name          string `json:"name"`
		FrontierBytes uint64 `json:"frontier_bytes"`
		ScratchBytes  uint64 `json:"scratch_bytes"`
		OutputBytes   uint64 `json:"output_bytes"`
	} `json:"waves"`
	Dependencies []struct{ Before, After int } `json:"dependencies"`
}

func loadDefault(t *testing.T) defaultExample {
	t.Helper()
	data, err := os.ReadFile("../../cmd/gpuplan/plan_default.json")
	require.NoError(t, err)
	var d defaultExample
	require.NoError(t, json.Unmarshal(data, &d))
	return d
}

// expected computes every wave's output straight from the default
// example's DAG and the program buffer, wave by wave in id order (the
// default example's ids are topological).
func expected(d defaultExample, program []uint32, shift int) [][]uint32 {
	out := make([][]uint32, len(d.Waves))
	var prods = make([][]int, len(d.Waves))
	for _, dep := range d.Dependencies {
		prods[dep.After] = append(prods[dep.After], dep.Before)
	}
	source := 0
	for _, wv := range d.Waves {
		var ins [][]uint32
		if len(prods[wv.ID]) == 0 {
			q := len(program) / 4
			ins = append(ins, program[source*q:(source+1)*q])
			source++
		}
		for _, p := range prods[wv.ID] {
			ins = append(ins, out[p])
		}
		n := (wv.OutputBytes >> shift) / 4
		o := make([]uint32, n)
		for i := range o {
			h := mix.Fmix32(taint.Salt(wv.ID) ^ uint32(i)*0x9e3779b9)
			for p, in := range ins {
				h = mix.Fmix32((h^in[i%len(in)])*0x27d4eb2d + uint32(p))
			}
			o[i] = h
		}
		out[wv.ID] = o
	}
	return out
}

// TestReference runs the workload at 1/1024 and 1/16 of its size (and at
// full size with GPUPLAN_FULL_EXAMPLES=1) and checks both outputs exactly.
func TestReference(t *testing.T) {
	d := loadDefault(t)
	shifts := []int{taint.MaxShift, 4}
	if os.Getenv("GPUPLAN_FULL_EXAMPLES") != "" {
		shifts = append(shifts, 0) // taint.json itself: about 3 s
	}
	for _, shift := range shifts {
		t.Run(fmt.Sprintf("div%d", 1<<shift), func(t *testing.T) {
			data, err := taint.Scaled(shift)
			require.NoError(t, err)
			p, outs := extest.Run(t, "taint.json", data, extest.Files(taint.ModulePath, taint.PTX()), taint.Funcs())
			want := expected(d, extest.U32s(extest.Initial(t, p, "program")), shift)
			require.Len(t, outs, 2)
			for i, w := range []int{30, 29} {
				o := p.Workload.Outputs[i]
				require.Equal(t, taint.OutputBuffer(w), o.Buffer)
				require.NoError(t, wavedag.Compare(o, outs[i], extest.U32Bytes(want[w])))
			}
		})
	}
}

func TestWorkloadMatchesDefaultExample(t *testing.T) {
	d := loadDefault(t)
	w, err := megakernel.DecodeWorkload("taint.json", taint.Workload())
	require.NoError(t, err)
	require.Equal(t, d.Analysis, *w.Analysis)
	require.Equal(t, "h200", *w.Device)
	require.Equal(t, d.LaunchOverheadNS, *w.LaunchOverheadNS)
	require.Equal(t, d.MaxIters, *w.MaxDeviceIters)
	graph, err := json.Marshal(w.Graph)
	require.NoError(t, err)
	require.JSONEq(t, string(d.Graph), string(graph))
	sample, err := json.Marshal(w.ScheduleSample)
	require.NoError(t, err)
	require.JSONEq(t, string(d.Sample), string(sample))
	require.Len(t, w.Waves, len(d.Waves))
	for i, dw := range d.Waves {
		wv := w.Waves[i]
		require.Equal(t, int64(dw.ID), *wv.ID)
		require.Equal(t, dw.Name, wv.Name)
		require.Equal(t, []uint64{dw.FrontierBytes, dw.ScratchBytes, dw.OutputBytes}, []uint64{*wv.FrontierBytes, *wv.ScratchBytes, *wv.OutputBytes})
		require.Equal(t, "taint_step", wv.Kernel.Function)
		require.Equal(t, uint64(taint.Block), *wv.Kernel.Block)
		n := dw.OutputBytes / 4
		require.Equal(t, (n+taint.Block*taint.PerThread-1)/(taint.Block*taint.PerThread), *wv.Kernel.Tiles, "wave %d", i)
	}
	require.Len(t, w.Dependencies, len(d.Dependencies))
	for i, dd := range d.Dependencies {
		got := w.Dependencies[i]
		require.Equal(t, []int64{int64(dd.Before), int64(dd.After)}, []int64{*got.Before, *got.After})
		require.Equal(t, megakernel.TileAll, w.DependencyTiles(i).Kind)
	}
}

func TestCommittedJSON(t *testing.T) {
	committed, err := os.ReadFile("taint.json")
	require.NoError(t, err)
	require.Equal(t, string(taint.Workload()), string(committed), "taint.json is stale. Fix: run go generate in examples/taint")
	p, err := wavedag.Load("taint.json", wavedag.LoadOptions{})
	require.NoError(t, err)
	require.Equal(t, 31, p.Waves())
	require.Equal(t, []string{"taint_step"}, p.Funcs)
}

func TestDeterministic(t *testing.T) {
	for _, shift := range []int{0, 3, taint.MaxShift} {
		a, err := taint.Scaled(shift)
		require.NoError(t, err)
		b, err := taint.Scaled(shift)
		require.NoError(t, err)
		require.True(t, bytes.Equal(a, b), "shift %d", shift)
	}
	a, _ := taint.Scaled(0)
	require.Equal(t, a, taint.Workload())
}

func TestScaledBadInput(t *testing.T) {
	for _, tc := range []struct {
		shift int
	}{{-1}, {taint.MaxShift + 1}, {64}} {
		_, err := taint.Scaled(tc.shift)
		require.Error(t, err, "shift %d", tc.shift)
		require.Contains(t, err.Error(), "shift")
		require.Contains(t, err.Error(), "Fix:")
		require.True(t, strings.HasPrefix(err.Error(), "taint: "))
	}
}
