package abitest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/internal/kernelabi"
	"github.com/gpuplan/gpuplan/occupancy"
)

type ptr interface {
	executor.Buffer | executor.DevPtr
}

type fillParams[P ptr] struct {
	Data  P      `c:"int *data"`
	Extra P      `c:"int *extra"`
	N     uint64 `c:"unsigned long long n"`
	Value int64  `c:"long long value"`
}

var fillModule = kernelabi.Module{Name: "fill", Doc: "A test module.",
	Kernels: []kernelabi.Kernel{{Name: "fill", Doc: "Fills data.", Params: fillParams[executor.DevPtr]{}}}}

const fillPTX = `.visible .entry fill(.param .u64 a, .param .u64 b, .param .u64 c, .param .u64 d)`

// TestCheck checks a module whose header, PTX, names and fakes agree.
func TestCheck(t *testing.T) {
	h, err := fillModule.Header()
	require.NoError(t, err)
	header := filepath.Join(t.TempDir(), "fill_abi.h")
	require.NoError(t, os.WriteFile(header, h, 0o644))
	Check(t, Module{ABI: fillModule, Header: header, Package: "./x", PTX: []byte(fillPTX), Names: fillModule.Names(), Want: []string{"fill"},
		Fakes: kernelabi.FakeKernels(map[string]kernelabi.Fake{"fill": {Regs: 8}})})
}

// TestRoundTrip fills a parameter struct with a fake backend's buffer and
// decodes what a launch passes.
func TestRoundTrip(t *testing.T) {
	dev, err := occupancy.Lookup("h100")
	require.NoError(t, err)
	x, err := executor.New(executor.NewFake(executor.FakeConfig{Device: dev}), executor.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = x.Close() })
	b, p := Buffer(t, x)
	require.NotZero(t, p)
	RoundTrip(t, fillParams[executor.Buffer]{Data: b, Extra: b, N: 3, Value: -2}, fillParams[executor.DevPtr]{Data: p, Extra: p, N: 3, Value: -2},
		p, 2, []uint64{3, ^uint64(1)})
}
