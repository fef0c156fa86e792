package kronbuild

import (
	"testing"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/internal/kernelabi/abitest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestABI checks the committed header and PTX against the Go ABI (the
// PTX has no other entry), and that every kernel is emulated.
func TestABI(t *testing.T) {
	want := []string{KernelPermDraw, KernelPermLinks, KernelPermLabels, KernelCount, KernelGenerate, KernelSortHist,
		KernelScan, KernelSortScatter, KernelUniqueCount, KernelCompact, KernelFill}
	abitest.Check(t, abitest.Module{ABI: ABI, Header: "kernels/kronbuild_abi.h", Package: "./workloads/kronbuild", PTX: KernelPTX(), Names: KernelNames(), Want: want,
		Fakes: NewEmulation(1).Kernels()})
}

// TestABIArgsRoundTrip fills the generation's parameters on the host side
// and decodes what the launch passes on the emulation side: the labels and
// the generator's scalars, then the keys and control words, then the
// part's scalars.
func TestABIArgsRoundTrip(t *testing.T) {
	x, _ := newFakeExecutor(t, 1<<30, 1)
	b, ptr := abitest.Buffer(t, x)
	host := GenerateParams[executor.Buffer]{EdgeParams: EdgeParams[executor.Buffer]{Perm: b, Seed: 1, Scale: 2, Edges: 3, TAB: 4, TA: 5, TC: 6},
		Keys: b, Ctl: b, RowFirst: 7, Rows: 8, Capacity: 9}
	abitest.RoundTripValues(t, host, GenerateParams[executor.DevPtr]{EdgeParams: EdgeParams[executor.DevPtr]{Perm: ptr, Seed: 1, Scale: 2, Edges: 3, TAB: 4, TA: 5, TC: 6},
		Keys: ptr, Ctl: ptr, RowFirst: 7, Rows: 8, Capacity: 9}, []uint64{uint64(ptr), 1, 2, 3, 4, 5, 6, uint64(ptr), uint64(ptr), 7, 8, 9})
}

// TestEmulationResources holds every emulated kernel's registers and
// shared memory equal to ptxas's report (kronbuild.resources, which make
// ptx writes), so that the occupancy model sees the fake's kernels as the
// GPU's, and checks that no kernel spills.
func TestEmulationResources(t *testing.T) {
	fakes := NewEmulation(1).Kernels()
	require.Len(t, fakes, len(ABI.Kernels), "every kernel is emulated")
	report := abitest.CheckResources(t, "kronbuild.resources", fakes, KernelNames())
	require.Len(t, report, len(ABI.Kernels), "every kernel is in the report, and nothing else")
	for name, r := range report {
		assert.Zero(t, r.SpillStores, "%s spills", name)
	}
}
