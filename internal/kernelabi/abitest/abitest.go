// Package abitest holds the checks every workload's tests run on its
// kernel ABI (a kernelabi.Module), written once: the committed C header is
// what the Go declaration generates, the committed PTX's entry points take
// exactly the declared parameters, in the order the workload lists them,
// every entry point is emulated, with the registers and shared memory
// ptxas reports for it, and the launch arguments the host fills decode on
// the emulation side.
package abitest

import (
	"bufio"
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/internal/kernelabi"
)

// Module is one workload's kernel ABI and what its package commits and
// lists of it.
type Module struct {
	// ABI is the workload's declaration.
	ABI kernelabi.Module
	// Header is the committed C header's path from the package's folder
	// (for example "kernels/bfs_abi.h"), and Package the package's path
	// from the repository root ("./workloads/bfs"), whose go generate
	// rewrites the header.
	Header, Package string
	// PTX is the committed PTX module (the workload's KernelPTX).
	PTX []byte
	// Names are the entry points the workload lists (its KernelNames), and
	// Want the entry points the test expects there, in order.
	Names, Want []string
	// Fakes are the workload's emulated entry points (its
	// Emulation.Kernels); nil skips that check.
	Fakes map[string]executor.FakeKernel
}

// Check checks m in subtests: "header", the committed header is what the
// ABI generates, so the kernels and the host share every number; "ptx",
// every PTX entry's parameter list matches the ABI and the package lists
// the entry points in ABI order; "emulation", when m.Fakes is set, every
// entry point and no other is emulated.
func Check(t *testing.T, m Module) {
	t.Helper()
	t.Run("header", func(t *testing.T) {
		require.NoError(t, m.ABI.CheckHeaderFile(m.Header, m.Package))
	})
	t.Run("ptx", func(t *testing.T) {
		require.NoError(t, m.ABI.CheckPTX(m.PTX))
		assert.Equal(t, m.Want, m.Names)
	})
	if m.Fakes == nil {
		return
	}
	t.Run("emulation", func(t *testing.T) {
		assert.Len(t, m.Fakes, len(m.ABI.Kernels), "every kernel is emulated")
		for _, name := range m.ABI.Names() {
			assert.Contains(t, m.Fakes, name, "kernel %s is emulated", name)
		}
	})
}

// Buffer allocates a buffer of 64 bytes on x for a round trip and returns
// its handle and its device address.
func Buffer(t testing.TB, x *executor.Executor) (executor.Buffer, executor.DevPtr) {
	t.Helper()
	b, err := x.Alloc(64)
	require.NoError(t, err)
	ptr, err := x.DevicePtr(b)
	require.NoError(t, err)
	return b, ptr
}

// RoundTrip checks one kernel's launch arguments both ways. host is its
// parameter struct filled on the host side (executor.Buffer handles of the
// buffer at ptr, then scalars) and want the same struct filled on the
// emulation side (executor.DevPtr ptr): host passes pointers plus
// len(scalars) arguments, and the values a launch passes, ptr pointers
// times and then scalars, decode into want.
func RoundTrip[D any](t testing.TB, host any, want D, ptr executor.DevPtr, pointers int, scalars []uint64) {
	t.Helper()
	vals := make([]uint64, pointers+len(scalars))
	for i := range vals[:pointers] {
		vals[i] = uint64(ptr)
	}
	copy(vals[pointers:], scalars)
	RoundTripValues(t, host, want, vals)
}

// RoundTripValues is RoundTrip for a parameter struct whose pointers and
// scalars interleave: vals are the values a launch passes, in parameter
// order (the buffer's device address for each pointer). host passes
// len(vals) arguments, and vals decode into want.
func RoundTripValues[D any](t testing.TB, host any, want D, vals []uint64) {
	t.Helper()
	require.Len(t, kernelabi.MustArgs(host), len(vals))
	var got D
	require.NoError(t, kernelabi.Decode(vals, &got))
	assert.Equal(t, want, got)
}

// Resource is one entry point's line of a ptxas resource report (a
// workload's .resources file, which scripts/ptx.sh build writes).
type Resource struct {
	// Regs is the registers a thread, Smem the static shared memory of a
	// block in bytes, and SpillStores the spill stores ptxas reports.
	Regs, Smem, SpillStores int
}

// Resources reads the ptxas resource report at path, by entry point name;
// lines of another form (the header comment) are skipped.
func Resources(t testing.TB, path string) map[string]Resource {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	report := map[string]Resource{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var name string
		var r Resource
		var stack, loads int
		if _, err := fmt.Sscanf(sc.Text(), "%s registers=%d stack=%d spill_stores=%d spill_loads=%d smem=%d", &name, &r.Regs, &stack, &r.SpillStores, &loads, &r.Smem); err == nil {
			report[name] = r
		}
	}
	require.NoError(t, sc.Err())
	return report
}

// CheckResources holds the emulated entry points names of fakes (a
// workload's Emulation.Kernels) to the registers and shared memory of the
// ptxas report at path, so that the occupancy model sees the fake's
// kernels as the GPU's: each is in the report, with the same registers and
// static shared memory. It returns the report (Resources).
func CheckResources(t testing.TB, path string, fakes map[string]executor.FakeKernel, names []string) map[string]Resource {
	t.Helper()
	report := Resources(t, path)
	for _, name := range names {
		r, ok := report[name]
		require.True(t, ok, "%s is in %s", name, path)
		a := fakes[name].Attrs
		assert.Equal(t, r.Regs, a.NumRegs, "%s registers", name)
		assert.Equal(t, r.Smem, a.StaticSharedBytes, "%s shared memory", name)
	}
	return report
}
