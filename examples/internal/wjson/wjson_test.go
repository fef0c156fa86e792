package wjson

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/megakernel"
)

func TestMarshal(t *testing.T) {
	for _, tc := range []struct {
		name, text string
	}{
		{"plain", "chain"},
		{"separators in strings", `a:b, "c": d\e, {f}`},
		{"unicode", "décode – ünïcode"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &Workload{Name: tc.text, Description: tc.text, Device: "h200", Module: "m.ptx",
				Buffers: []Buffer{{Name: "x", Bytes: 64, Init: RandomRange(1, "f32", -0.5, 0.5)}, {Name: "y", Bytes: 64}},
				Outputs: []Output{{Buffer: "y", Type: "f32", Tolerance: Ptr(1e-6)}},
				Waves: []Wave{
					{ID: 0, Name: tc.text, Kernel: Kernel{Function: "f", Tiles: 1, Block: 32, Args: []Arg{Buf("y"), BufAt("x", 16, 16), U32(0), F32(0.25)}}},
					{ID: 1, Kernel: Kernel{Function: "f", Tiles: 1, Block: 32, SharedBytes: 16, Prologue: true, Args: []Arg{Buf("y"), Buf("x"), U32(7), F32(-1)}}},
				},
				Dependencies: []Dep{{Before: 0, After: 1, Tiles: "same"}},
			}
			b, err := Marshal(w)
			require.NoError(t, err)
			var back struct {
				Name  string `json:"name"`
				Waves []struct {
					Name string `json:"name"`
				} `json:"waves"`
			}
			require.NoError(t, json.Unmarshal(b, &back))
			require.Equal(t, tc.text, back.Name)
			require.Equal(t, tc.text, back.Waves[0].Name)
			d, err := megakernel.DecodeWorkload("w.json", b)
			require.NoError(t, err)
			require.Len(t, d.Waves, 2)
			require.True(t, d.Waves[1].Kernel.Prologue)
			require.Equal(t, megakernel.TileSame, d.DependencyTiles(0).Kind)
			require.True(t, strings.HasSuffix(string(b), "\n}\n"))
			require.Contains(t, string(b), `{"buffer": "x", "offset": 16, "bytes": 16}`)
		})
	}
}

func TestMarshalEmptyArrays(t *testing.T) {
	b, err := Marshal(&Workload{Device: "h200", Module: "m.ptx"})
	require.NoError(t, err)
	require.Contains(t, string(b), `"dependencies": []`)
}

func TestMarshalRefusesNaN(t *testing.T) {
	_, err := Marshal(&Workload{Device: "h200", Module: "m.ptx", LaunchOverheadNS: Ptr(math.NaN())})
	require.Error(t, err)
}
