package examples

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/examples/decode"
	"github.com/gpuplan/gpuplan/examples/quickstart"
	"github.com/gpuplan/gpuplan/examples/synthetic"
	"github.com/gpuplan/gpuplan/examples/taint"
	"github.com/gpuplan/gpuplan/internal/ptxsym"
	"github.com/gpuplan/gpuplan/workloads/wavedag"
)

func TestFuncsDistinct(t *testing.T) {
	seen := map[string]int{}
	total := 0
	for i, f := range sources {
		for name := range f() {
			j, dup := seen[name]
			require.False(t, dup, "wave function %s is in examples %d and %d", name, j, i)
			seen[name] = i
			total++
		}
	}
	require.Len(t, Funcs(), total)
}

// TestFuncsMatchModules checks that every example's references are
// exactly the wave functions its PTX defines, each with its prefix.
func TestFuncsMatchModules(t *testing.T) {
	for _, tc := range []struct {
		name, prefix string
		ptx          []byte
		funcs        func() map[string]wavedag.HostFunc
	}{
		{"quickstart", "qs_", quickstart.PTX(), quickstart.Funcs},
		{"taint", "taint_", taint.PTX(), taint.Funcs},
		{"decode", "decode_", decode.PTX(), decode.Funcs},
		{"synthetic", "syn_", synthetic.PTX(), synthetic.Funcs},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := ptxsym.Parse(tc.ptx)
			require.NoError(t, err)
			var defined []string
			for _, f := range m.Funcs {
				defined = append(defined, f.Name)
			}
			var refs []string
			for name := range tc.funcs() {
				require.True(t, strings.HasPrefix(name, tc.prefix), name)
				refs = append(refs, name)
			}
			require.ElementsMatch(t, defined, refs)
			require.Empty(t, m.Entries, "a wave module defines no kernels")
			for _, e := range m.Externs {
				require.Contains(t, []string{"gp_wait", "gp_sync", "gp_shared", "gp_threads"}, e.Name)
			}
		})
	}
}
