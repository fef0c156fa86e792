package examples

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/examples/decode"
	"github.com/gpuplan/gpuplan/examples/internal/extest"
	"github.com/gpuplan/gpuplan/examples/quickstart"
	"github.com/gpuplan/gpuplan/examples/synthetic"
	"github.com/gpuplan/gpuplan/examples/taint"
	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/workloads/wavedag"
)

// TestEmulatedArms runs a small instance of every example in every arm
// of the CPU emulation (tiles in random orders, persistent blocks
// interleaved, prologue waves run up to their Wait while producers are
// unfinished) and checks each arm's outputs against wavedag.Reference.
func TestEmulatedArms(t *testing.T) {
	must := func(b []byte, err error) []byte {
		require.NoError(t, err)
		return b
	}
	for _, tc := range []struct {
		name   string
		data   []byte
		module string
		ptx    []byte
	}{
		{"quickstart", quickstart.Workload(), quickstart.ModulePath, quickstart.PTX()},
		{"taint", must(taint.Scaled(taint.MaxShift)), taint.ModulePath, taint.PTX()},
		{"decode", must(decode.Workload(2, 256, 512)), decode.ModulePath, decode.PTX()},
		{"chain", must(synthetic.Chain(50, 3)), synthetic.ModuleName, synthetic.PTX()},
		{"wide", must(synthetic.Wide(200, 800, 1)), synthetic.ModuleName, synthetic.PTX()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, want := extest.Run(t, tc.name+".json", tc.data, extest.Files(tc.module, tc.ptx), Funcs())
			for seed := uint64(1); seed <= 2; seed++ {
				x, err := executor.New(wavedag.NewFake(p.Device, Funcs(), seed), executor.Options{})
				require.NoError(t, err)
				s, err := wavedag.Open(x, p, wavedag.Options{})
				require.NoError(t, err)
				for _, arm := range wavedag.Arms() {
					t.Run(fmt.Sprintf("%s/seed%d", arm, seed), func(t *testing.T) {
						require.NoError(t, s.Reset())
						_, err := s.Run(arm)
						require.NoError(t, err)
						got, err := s.Outputs()
						require.NoError(t, err)
						for i, o := range p.Workload.Outputs {
							require.NoError(t, wavedag.Compare(o, got[i], want[i]))
						}
					})
				}
				require.NoError(t, s.Close())
			}
		})
	}
}
