package abitest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
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

// fakeBuffer opens an executor over a bare fake backend and returns a
// buffer of it (Buffer).
func fakeBuffer(t *testing.T) (executor.Buffer, executor.DevPtr) {
	t.Helper()
	dev, err := occupancy.Lookup("h100")
	require.NoError(t, err)
	x, err := executor.New(executor.NewFake(executor.FakeConfig{Device: dev}), executor.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = x.Close() })
	b, p := Buffer(t, x)
	require.NotZero(t, p)
	return b, p
}

// TestRoundTrip fills a parameter struct with a fake backend's buffer and
// decodes what a launch passes.
func TestRoundTrip(t *testing.T) {
	b, p := fakeBuffer(t)
	RoundTrip(t, fillParams[executor.Buffer]{Data: b, Extra: b, N: 3, Value: -2}, fillParams[executor.DevPtr]{Data: p, Extra: p, N: 3, Value: -2},
		p, 2, []uint64{3, ^uint64(1)})
}

// mixedParams interleaves pointers and scalars.
type mixedParams[P ptr] struct {
	Data  P      `c:"int *data"`
	N     uint64 `c:"unsigned long long n"`
	Extra P      `c:"int *extra"`
}

// TestRoundTripValues round-trips a struct whose pointers and scalars
// interleave, the values given in parameter order.
func TestRoundTripValues(t *testing.T) {
	b, p := fakeBuffer(t)
	RoundTripValues(t, mixedParams[executor.Buffer]{Data: b, N: 5, Extra: b}, mixedParams[executor.DevPtr]{Data: p, N: 5, Extra: p},
		[]uint64{uint64(p), 5, uint64(p)})
}

// TestCheckResources reads a report in the form ptxas's is written in and
// holds fakes of the same registers and shared memory to it.
func TestCheckResources(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fill.resources")
	require.NoError(t, os.WriteFile(path, []byte("# ptxas sm_90 resource usage of each entry point\n"+
		"fill registers=12 stack=0 spill_stores=4 spill_loads=4 smem=260\n"+
		"copy registers=8 stack=0 spill_stores=0 spill_loads=0 smem=0\n"), 0o644))
	fakes := kernelabi.FakeKernels(map[string]kernelabi.Fake{"fill": {Regs: 12, Smem: 260}})
	report := CheckResources(t, path, fakes, []string{"fill"})
	assert.Equal(t, map[string]Resource{"fill": {Regs: 12, Smem: 260, SpillStores: 4}, "copy": {Regs: 8}}, report)
}
