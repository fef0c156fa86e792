package megakernel_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/megakernel"
)

// editModule decodes moduleWorkload, applies edit and re-encodes it.
func editModule(t *testing.T, edit func(w map[string]any)) []byte {
	t.Helper()
	var w map[string]any
	require.NoError(t, json.Unmarshal([]byte(moduleWorkload), &w))
	edit(w)
	data, err := json.Marshal(w)
	require.NoError(t, err)
	return data
}

func wave(w map[string]any, i int) map[string]any {
	return w["waves"].([]any)[i].(map[string]any)["kernel"].(map[string]any)
}

func buffer(w map[string]any, i int) map[string]any { return w["buffers"].([]any)[i].(map[string]any) }

func TestModuleWorkloadDecodes(t *testing.T) {
	w, err := megakernel.DecodeWorkload("m.json", []byte(moduleWorkload))
	require.NoError(t, err)
	require.True(t, w.HasModule())
	require.Equal(t, megakernel.TileMap{Kind: megakernel.TileBlock, Block: 2}, w.DependencyTiles(1))
	require.Equal(t, megakernel.TileMap{}, w.DependencyTiles(2))
	a := w.Waves[0].Kernel.Args
	require.Equal(t, megakernel.ArgBuffer, a[0].Kind())
	require.Equal(t, 0, a[0].BufferIndex())
	require.Equal(t, megakernel.ArgScalar, a[1].Kind())
	require.Equal(t, uint64(3), a[1].Slot())
	require.Equal(t, uint64(0x3fc00000), w.Waves[1].Kernel.Args[0].Slot(), "f32 1.5 as its bits")
	require.Equal(t, "custom:0", *w.Analysis, "a module workload may leave planning fields out")
	require.Equal(t, float64(megakernel.DefaultRunLaunchOverheadNS), *w.LaunchOverheadNS)
	require.Equal(t, uint64(128), *w.Graph.NodeCount, "the buffers' bytes are the resident state")
	require.Equal(t, 0.001, w.Outputs[0].OutputTolerance())
	require.Equal(t, megakernel.TypeF32, w.Outputs[0].OutputType())
	p, err := megakernel.PlanWorkload("m.json", w, h100(t), "h100-sxm", nil)
	require.NoError(t, err)
	require.NotNil(t, p.Tiles)
	var b strings.Builder
	require.NoError(t, p.WriteText(&b))
	require.Contains(t, b.String(), "Tile plan (persistent waits arm): ")
}

func TestModuleWorkloadErrors(t *testing.T) {
	cases := []struct {
		name string
		edit func(w map[string]any)
		want string
	}{
		{"empty module", func(w map[string]any) { w["module"] = "" }, `"module": module is empty`},
		{"buffer twice", func(w map[string]any) { buffer(w, 1)["name"] = "a" }, "buffer name a is already used by buffers[0]"},
		{"zero bytes", func(w map[string]any) { buffer(w, 0)["bytes"] = 0 }, `"buffers[0].bytes": buffer a has 0 bytes`},
		{"bad name", func(w map[string]any) { buffer(w, 0)["name"] = "a b" }, `buffer name "a b" is not a plain name`},
		{"random without seed", func(w map[string]any) { buffer(w, 1)["init"] = map[string]any{"fill": "random"} }, `"buffers[1].init.seed": required`},
		{"empty range", func(w map[string]any) {
			buffer(w, 1)["init"] = map[string]any{"fill": "random", "seed": 1, "type": "f32", "min": 2, "max": 1}
		}, "range [2, 1) is empty"},
		{"range on integers", func(w map[string]any) {
			buffer(w, 1)["init"] = map[string]any{"fill": "random", "seed": 1, "type": "u32", "max": 1}
		}, "type u32 has min or max"},
		{"unaligned type", func(w map[string]any) {
			buffer(w, 1)["bytes"] = 63
		}, "make buffer b's bytes a multiple of 4"},
		{"file without path", func(w map[string]any) { buffer(w, 0)["init"] = map[string]any{"fill": "file"} }, `"buffers[0].init.path"`},
		{"zeros with a seed", func(w map[string]any) { buffer(w, 0)["init"] = map[string]any{"fill": "zeros", "seed": 2} }, "a zeros fill has seed"},
		{"unknown fill", func(w map[string]any) { buffer(w, 0)["init"] = map[string]any{"fill": "ones"} }, `fill "ones" is unknown`},
		{"output of no buffer", func(w map[string]any) { w["outputs"] = []any{map[string]any{"buffer": "c"}} }, `"outputs[0].buffer": unknown buffer "c"`},
		{"output twice", func(w map[string]any) {
			w["outputs"] = []any{map[string]any{"buffer": "a"}, map[string]any{"buffer": "a"}}
		}, "buffer a is already read back by outputs[0]"},
		{"tolerance on integers", func(w map[string]any) {
			w["outputs"] = []any{map[string]any{"buffer": "a", "type": "u32", "tolerance": 0.1}}
		}, "integer and byte outputs are compared exactly"},
		{"no kernel", func(w map[string]any) {
			delete(w["waves"].([]any)[2].(map[string]any), "kernel")
			w["waves"].([]any)[2].(map[string]any)["frontier_bytes"] = 0
			w["waves"].([]any)[2].(map[string]any)["scratch_bytes"] = 0
			w["waves"].([]any)[2].(map[string]any)["output_bytes"] = 0
		}, `"waves[2].kernel": required`},
		{"reserved function", func(w map[string]any) { wave(w, 0)["function"] = "gp_f" }, "reserved prefix gp_"},
		{"bad symbol", func(w map[string]any) { wave(w, 0)["function"] = "f-1" }, `function name "f-1" is not a PTX symbol`},
		{"no tiles", func(w map[string]any) { wave(w, 0)["tiles"] = 0 }, "wave 0 has 0 tiles"},
		{"odd block", func(w map[string]any) { wave(w, 0)["block"] = 48 }, "block of 48 threads"},
		{"shared too large", func(w map[string]any) { wave(w, 0)["shared_bytes"] = 1 << 20 }, `"waves[0].kernel.shared_bytes"`},
		{"two kinds", func(w map[string]any) { wave(w, 0)["args"] = []any{map[string]any{"u32": 1, "f32": 2}} }, "the argument sets 2 of them"},
		{"offset on a scalar", func(w map[string]any) { wave(w, 0)["args"] = []any{map[string]any{"u32": 1, "offset": 2}} }, "a scalar argument has offset or bytes"},
		{"too many arguments", func(w map[string]any) {
			args := make([]any, megakernel.MaxWaveArgs+1)
			for i := range args {
				args[i] = map[string]any{"u32": i}
			}
			wave(w, 0)["args"] = args
		}, "pass at most 256 arguments"},
		{"bad tile map", func(w map[string]any) {
			w["dependencies"].([]any)[0].(map[string]any)["tiles"] = "some"
		}, `tile map "some" is not "all", "same" or "block:K"`},
		{"block of zero", func(w map[string]any) {
			w["dependencies"].([]any)[0].(map[string]any)["tiles"] = "block:0"
		}, "has no block size"},
		{"block past the producer", func(w map[string]any) {
			w["dependencies"].([]any)[1].(map[string]any)["tiles"] = "block:4"
		}, "tile 1 of wave 2 would read no tile of wave 0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := megakernel.DecodeWorkload("m.json", editModule(t, c.edit))
			require.ErrorContains(t, err, c.want)
			require.Contains(t, err.Error(), "Fix:")
		})
	}
}

func TestPlanWorkloadRefusesRunFieldsWithoutAModule(t *testing.T) {
	for _, edit := range []func(w map[string]any){
		func(w map[string]any) { w["buffers"] = []any{map[string]any{"name": "a", "bytes": 4}} },
		func(w map[string]any) { w["bytes_moved"] = 10 },
		func(w map[string]any) {
			w["waves"].([]any)[0].(map[string]any)["kernel"] = map[string]any{"function": "f", "tiles": 1, "block": 32, "args": []any{}}
		},
	} {
		var w map[string]any
		require.NoError(t, json.Unmarshal([]byte(minimalWorkload), &w))
		edit(w)
		data, err := json.Marshal(w)
		require.NoError(t, err)
		_, err = megakernel.DecodeWorkload("plain.json", data)
		require.ErrorContains(t, err, "without a module")
		require.ErrorContains(t, err, "Fix: add \"module\"")
	}
}
