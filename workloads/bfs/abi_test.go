package bfs

import (
	"testing"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/internal/kernelabi"
	"github.com/gpuplan/gpuplan/internal/kernelabi/abitest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestABI checks the committed header and PTX against the Go ABI, and that
// every kernel is emulated.
func TestABI(t *testing.T) {
	want := []string{KernelInit, KernelInitW64, KernelQueueLevelW64, KernelDoLevelW64, KernelWaveScan, KernelQueueLevel, KernelDoLevel, KernelMegakernel, KernelMegakernelNarrow, KernelMegakernelAsync, KernelBarrierOnly, KernelCopy,
		KernelMSInit, KernelMSLevel, KernelMSFinish, KernelGather, KernelLevelCounts, KernelMSGather, KernelMSLevelCounts}
	abitest.Check(t, abitest.Module{ABI: ABI, Header: "kernels/bfs_abi.h", Package: "./workloads/bfs", PTX: KernelPTX(), Names: KernelNames(), Want: want,
		Fakes: NewEmulation(1).Kernels()})
}

// TestABIArgsRoundTrip fills each kernel's parameters on the host side and
// decodes what the launch passes on the emulation side.
func TestABIArgsRoundTrip(t *testing.T) {
	x, _ := newFakeExecutor(t, 1<<30, 1)
	b, ptr := abitest.Buffer(t, x)
	abitest.RoundTrip(t, MegakernelParams[executor.Buffer]{TraversalParams: TraversalParams[executor.Buffer]{Offsets: b, Targets: b,
		Level: b, Q0: b, Q1: b, Vis0: b, Vis1: b, Ctl: b, Log: b, N: 7, Chunk: 256, QCap: 9, LowDegree: 1},
		MaxSteps: 11, Ahead: 4, Adapt: 1, Direction: MegaAuto, LogCap: 12, Keep: 384},
		MegakernelParams[executor.DevPtr]{TraversalParams: TraversalParams[executor.DevPtr]{Offsets: ptr, Targets: ptr,
			Level: ptr, Q0: ptr, Q1: ptr, Vis0: ptr, Vis1: ptr, Ctl: ptr, Log: ptr, N: 7, Chunk: 256, QCap: 9, LowDegree: 1},
			MaxSteps: 11, Ahead: 4, Adapt: 1, Direction: MegaAuto, LogCap: 12, Keep: 384},
		ptr, 9, []uint64{7, 256, 9, 1, 11, 4, 1, MegaAuto, 12, 384})
	split, err := kernelabi.SplitArgs(QueueLevelParams[executor.Buffer]{})
	require.NoError(t, err)
	assert.Len(t, split, 10, "the split dispatch appends the phase range")
	split, err = kernelabi.SplitArgs(DoLevelParams[executor.Buffer]{})
	require.NoError(t, err)
	assert.Len(t, split, 16, "the split dispatch appends the phase range")
}
