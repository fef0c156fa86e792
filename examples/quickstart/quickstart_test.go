package quickstart_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/examples/internal/extest"
	"github.com/gpuplan/gpuplan/examples/quickstart"
	"github.com/gpuplan/gpuplan/megakernel"
	"github.com/gpuplan/gpuplan/workloads/wavedag"
)

func TestReference(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files wavedag.Files
	}{
		{"embedded", extest.Files(quickstart.ModulePath, quickstart.PTX())},
		{"directory", wavedag.DirFiles(".", 0)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, outs := extest.Run(t, "quickstart.json", quickstart.Workload(), tc.files, quickstart.Funcs())
			require.Equal(t, 4, p.Waves())
			x := extest.F32s(extest.Initial(t, p, "x"))
			require.Len(t, x, 4096)
			const a, b = float32(3), float32(0.5)
			want := make([]float32, len(x))
			for i, v := range x {
				sq := v * v
				want[i] = (a*sq + v) + b*sq
			}
			require.NoError(t, wavedag.Compare(p.Workload.Outputs[0], outs[0], extest.F32Bytes(want)))
			require.Equal(t, extest.F32Bytes(want), outs[0], "the reference is the same float32 math")
		})
	}
}

func TestWorkload(t *testing.T) {
	committed, err := os.ReadFile("quickstart.json")
	require.NoError(t, err)
	require.True(t, bytes.Equal(committed, quickstart.Workload()))
	w, err := megakernel.DecodeWorkload("quickstart.json", committed)
	require.NoError(t, err)
	require.Equal(t, quickstart.ModulePath, *w.Module)
	funcs := quickstart.Funcs()
	for _, wv := range w.Waves {
		require.Contains(t, funcs, wv.Kernel.Function)
		require.Equal(t, uint64(16), *wv.Kernel.Tiles)
		require.Equal(t, uint64(256), *wv.Kernel.Block)
	}
	var deps [][2]int64
	for _, d := range w.Dependencies {
		deps = append(deps, [2]int64{*d.Before, *d.After})
	}
	require.Equal(t, [][2]int64{{0, 1}, {0, 2}, {1, 3}, {2, 3}}, deps)
}
