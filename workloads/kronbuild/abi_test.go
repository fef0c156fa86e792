package kronbuild

import (
	"bufio"
	"fmt"
	"os"
	"testing"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/internal/kernelabi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestABIHeaderIsGenerated checks that the committed C header is what the
// Go ABI generates, so the kernels and the host share every number.
func TestABIHeaderIsGenerated(t *testing.T) {
	require.NoError(t, ABI.Validate())
	require.NoError(t, ABI.CheckHeaderFile("kernels/kronbuild_abi.h", "./workloads/kronbuild"))
}

// TestABIMatchesPTX checks every PTX entry's parameter list against the Go
// ABI, and that the PTX has no other entry.
func TestABIMatchesPTX(t *testing.T) {
	require.NoError(t, ABI.CheckPTX(KernelPTX()))
	assert.Equal(t, []string{KernelPermDraw, KernelPermLinks, KernelPermLabels, KernelCount, KernelGenerate, KernelSortHist,
		KernelScan, KernelSortScatter, KernelUniqueCount, KernelCompact, KernelFill}, KernelNames())
}

// TestABIArgsRoundTrip fills the compaction's parameters on the host side
// and decodes what the launch passes on the emulation side.
func TestABIArgsRoundTrip(t *testing.T) {
	x, _ := newFakeExecutor(t, 1<<30, 1)
	b, err := x.Alloc(64)
	require.NoError(t, err)
	ptr, err := x.DevicePtr(b)
	require.NoError(t, err)
	host := GenerateParams[executor.Buffer]{EdgeParams: EdgeParams[executor.Buffer]{Perm: b, Seed: 1, Scale: 2, Edges: 3, TAB: 4, TA: 5, TC: 6},
		Keys: b, Ctl: b, RowFirst: 7, Rows: 8, Capacity: 9}
	args := kernelabi.MustArgs(host)
	require.Len(t, args, 12)
	vals := []uint64{uint64(ptr), 1, 2, 3, 4, 5, 6, uint64(ptr), uint64(ptr), 7, 8, 9}
	var got GenerateParams[executor.DevPtr]
	require.NoError(t, kernelabi.Decode(vals, &got))
	assert.Equal(t, GenerateParams[executor.DevPtr]{EdgeParams: EdgeParams[executor.DevPtr]{Perm: ptr, Seed: 1, Scale: 2, Edges: 3, TAB: 4, TA: 5, TC: 6},
		Keys: ptr, Ctl: ptr, RowFirst: 7, Rows: 8, Capacity: 9}, got)
}

// TestEmulationResources holds every emulated kernel's registers and
// shared memory equal to ptxas's report (kronbuild.resources, which make
// ptx writes), so that the occupancy model sees the fake's kernels as the
// GPU's.
func TestEmulationResources(t *testing.T) {
	f, err := os.Open("kronbuild.resources")
	require.NoError(t, err)
	defer f.Close()
	type usage struct{ regs, smem int }
	report := map[string]usage{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var name string
		var u usage
		var stack, stores, loads int
		if _, err := fmt.Sscanf(sc.Text(), "%s registers=%d stack=%d spill_stores=%d spill_loads=%d smem=%d", &name, &u.regs, &stack, &stores, &loads, &u.smem); err == nil {
			report[name] = u
			assert.Zero(t, stores, "%s spills", name)
		}
	}
	require.NoError(t, sc.Err())
	fakes := NewEmulation(1).Kernels()
	require.Len(t, fakes, len(ABI.Kernels), "every kernel is emulated")
	require.Len(t, report, len(ABI.Kernels), "every kernel is in the report, and nothing else")
	for _, name := range KernelNames() {
		u, ok := report[name]
		require.True(t, ok, "%s is in kronbuild.resources", name)
		a := fakes[name].Attrs
		assert.Equal(t, u.regs, a.NumRegs, "%s registers", name)
		assert.Equal(t, u.smem, a.StaticSharedBytes, "%s shared memory", name)
	}
}
