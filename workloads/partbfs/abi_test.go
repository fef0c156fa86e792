package partbfs

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/internal/kernelabi"
	"github.com/gpuplan/gpuplan/internal/kernelabi/abitest"
)

// TestABI checks the committed header and PTX against the Go ABI, and that
// every kernel is emulated.
func TestABI(t *testing.T) {
	want := []string{KernelInit, KernelExpand, KernelCount, KernelCompact, KernelApply, KernelBottomUp, KernelCopy}
	abitest.Check(t, abitest.Module{ABI: ABI, Header: "kernels/partbfs_abi.h", Package: "./workloads/partbfs", PTX: KernelPTX(), Names: KernelNames(), Want: want,
		Fakes: NewEmulation(1).Kernels()})
}

// TestMisuseIsFlagged launches the kernels against their contract: a part
// whose vertices exceed its slice, a part index outside the parts, a
// queued index outside the part. The flags stop Levels.
func TestMisuseIsFlagged(t *testing.T) {
	x := fakeExecutor(t, 1<<26, 1)
	mod, err := x.LoadModule(partPTX)
	require.NoError(t, err)
	alloc := func(n uint64) executor.Buffer {
		b, err := x.Alloc(n)
		require.NoError(t, err)
		require.NoError(t, x.Upload(b, make([]byte, n)))
		return b
	}
	ctl := alloc(ControlBytes)
	word := func(i int) uint64 {
		raw, err := x.DownloadRange(ctl, uint64(8*i), 8)
		require.NoError(t, err)
		return uint64(raw[0])
	}
	launch := func(name string, params any) {
		k, err := mod.Kernel(name)
		require.NoError(t, err)
		_, err = x.Launch(k, executor.Linear(1, 64), kernelabi.MustArgs(params)...)
		require.NoError(t, err)
	}
	b := alloc(1024)
	launch(KernelInit, InitParams[executor.Buffer]{Level: b, Front0: b, Front1: b, Next: b, Counts: b, Ctl: ctl, N: 65, S: 1, Parts: 1, Root: 0})
	assert.EqualValues(t, MisuseShape, word(CtlMisuse), "65 vertices do not fit a 1-word slice")
	require.NoError(t, x.Upload(ctl, make([]byte, ControlBytes)))
	launch(KernelCount, CountParams[executor.Buffer]{Next: b, Bounds: b, Counts: b, Ctl: ctl, ShapeParams: ShapeParams{S: 1, Parts: 2, Self: 2}})
	assert.EqualValues(t, MisuseShape, word(CtlMisuse), "self 2 of 2 parts")

	// One part of 64 vertices receives index 70 from part 1.
	require.NoError(t, x.Upload(ctl, make([]byte, ControlBytes)))
	offsets, level, front, next, xbuf, counts := alloc(4*65), alloc(4*64), alloc(16), alloc(16), alloc(16), alloc(8*6)
	launch(KernelInit, InitParams[executor.Buffer]{Level: level, Front0: front, Front1: front, Next: next, Counts: counts, Ctl: ctl, N: 64, S: 1, Parts: 2, Root: NoRoot})
	require.NoError(t, x.UploadAt(xbuf, 8, []byte{70, 0, 0, 0}))
	require.NoError(t, x.UploadAt(counts, 8*(2+1*2+0), []byte{1}))
	launch(KernelApply, ApplyParams[executor.Buffer]{Offsets: offsets, Level: level, Front: front, FrontNext: front, Next: next, Xbuf: xbuf,
		Counts: counts, Ctl: ctl, N: 64, ShapeParams: ShapeParams{S: 1, Parts: 2}, Depth: 0, QueueMask: 2})
	assert.EqualValues(t, MisuseVertex, word(CtlMisuse))
}
