package bfs

import (
	"testing"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/internal/kernelabi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestABIHeaderIsGenerated checks that the committed C header is what the Go
// ABI generates, so the kernels and the host share every number.
func TestABIHeaderIsGenerated(t *testing.T) {
	require.NoError(t, ABI.CheckHeaderFile("kernels/bfs_abi.h", "./workloads/bfs"))
}

// TestABIMatchesPTX checks every PTX entry's parameter list against the Go
// ABI.
func TestABIMatchesPTX(t *testing.T) {
	require.NoError(t, ABI.CheckPTX(KernelPTX()))
	assert.Equal(t, []string{KernelInit, KernelWaveScan, KernelQueueLevel, KernelDoLevel, KernelMegakernel, KernelMegakernelNarrow, KernelMegakernelAsync, KernelBarrierOnly, KernelCopy,
		KernelMSInit, KernelMSLevel, KernelMSFinish, KernelGather, KernelLevelCounts, KernelMSGather, KernelMSLevelCounts}, KernelNames())
}

// TestABIArgsRoundTrip fills each kernel's parameters on the host side and
// decodes what the launch passes on the emulation side.
func TestABIArgsRoundTrip(t *testing.T) {
	x, _ := newFakeExecutor(t, 1<<30, 1)
	b, err := x.Alloc(64)
	require.NoError(t, err)
	ptr, err := x.DevicePtr(b)
	require.NoError(t, err)
	args := kernelabi.MustArgs(MegakernelParams[executor.Buffer]{TraversalParams: TraversalParams[executor.Buffer]{Offsets: b, Targets: b,
		Level: b, Q0: b, Q1: b, Vis0: b, Vis1: b, Ctl: b, Log: b, N: 7, Chunk: 256, QCap: 9, LowDegree: 1},
		MaxSteps: 11, Ahead: 4, Adapt: 1, Direction: MegaAuto, LogCap: 12, Keep: 384})
	require.Len(t, args, 19)
	var got MegakernelParams[executor.DevPtr]
	vals := make([]uint64, 19)
	for i := range vals[:9] {
		vals[i] = uint64(ptr)
	}
	copy(vals[9:], []uint64{7, 256, 9, 1, 11, 4, 1, MegaAuto, 12, 384})
	require.NoError(t, kernelabi.Decode(vals, &got))
	assert.Equal(t, MegakernelParams[executor.DevPtr]{TraversalParams: TraversalParams[executor.DevPtr]{Offsets: ptr, Targets: ptr,
		Level: ptr, Q0: ptr, Q1: ptr, Vis0: ptr, Vis1: ptr, Ctl: ptr, Log: ptr, N: 7, Chunk: 256, QCap: 9, LowDegree: 1},
		MaxSteps: 11, Ahead: 4, Adapt: 1, Direction: MegaAuto, LogCap: 12, Keep: 384}, got)
	split, err := kernelabi.SplitArgs(QueueLevelParams[executor.Buffer]{})
	require.NoError(t, err)
	assert.Len(t, split, 10, "the split dispatch appends the phase range")
	split, err = kernelabi.SplitArgs(DoLevelParams[executor.Buffer]{})
	require.NoError(t, err)
	assert.Len(t, split, 16, "the split dispatch appends the phase range")
}
