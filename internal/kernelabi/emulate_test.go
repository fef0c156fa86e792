package kernelabi

import (
	"encoding/binary"
	"testing"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/occupancy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type copyParams[P Ptr] struct {
	Src   P      `c:"const unsigned int *src"`
	Dst   P      `c:"unsigned int *dst"`
	Words uint64 `c:"unsigned long long words"`
}

const emulatePTX = `.version 7.8
.target sm_80
.address_size 64
.visible .entry copy(.param .u64 p0, .param .u64 p1, .param .u64 p2) { ret; }
.visible .entry bump(.param .u64 p0, .param .u64 p1, .param .u64 p2) { ret; }
.visible .entry idle(.param .u64 p0, .param .u64 p1, .param .u64 p2) { ret; }
`

// emulated runs kernels on the fake backend and returns the executor and
// the loaded module.
func emulated(t *testing.T, kernels map[string]executor.FakeKernel) (*executor.Executor, *executor.Module) {
	t.Helper()
	dev, err := occupancy.Lookup("h100-sxm")
	require.NoError(t, err)
	x, err := executor.New(executor.NewFake(executor.FakeConfig{Device: dev, Kernels: kernels}), executor.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { x.Close() })
	mod, err := x.LoadModule([]byte(emulatePTX))
	require.NoError(t, err)
	return x, mod
}

func TestFakeKernelsEmulate(t *testing.T) {
	var seen []copyParams[executor.DevPtr]
	fakes := FakeKernels(map[string]Fake{
		"copy": {Run: Emulate(func(l *executor.FakeLaunch, p copyParams[executor.DevPtr]) error {
			seen = append(seen, p)
			return CopyBytes(l, p.Src, p.Dst, 4*p.Words)
		}), Regs: 12},
		"bump": {Run: Emulate(func(l *executor.FakeLaunch, p copyParams[executor.DevPtr]) error {
			w, err := View[uint32](l, p.Dst, p.Words)
			for i := range w {
				w[i]++
			}
			return err
		}), Regs: 20, Smem: 256, MaxThreads: 512},
		"idle": {Regs: 16, Smem: 8},
	})
	require.Len(t, fakes, 3)
	assert.Equal(t, executor.FuncAttributes{NumRegs: 12, MaxThreadsPerBlock: 1024}, fakes["copy"].Attrs)
	assert.Equal(t, executor.FuncAttributes{NumRegs: 20, StaticSharedBytes: 256, MaxThreadsPerBlock: 512}, fakes["bump"].Attrs)
	require.NotNil(t, fakes["idle"].Run, "a fake without a run does nothing")
	assert.NoError(t, fakes["idle"].Run(nil))

	x, mod := emulated(t, fakes)
	src, err := x.Alloc(16)
	require.NoError(t, err)
	dst, err := x.Alloc(16)
	require.NoError(t, err)
	in := make([]byte, 16)
	for i := range 4 {
		binary.LittleEndian.PutUint32(in[4*i:], uint32(10+i))
	}
	require.NoError(t, x.Upload(src, in))
	for _, name := range []string{"copy", "bump", "idle"} {
		k, err := mod.Kernel(name)
		require.NoError(t, err)
		_, err = x.Launch(k, executor.Linear(1, 32), MustArgs(copyParams[executor.Buffer]{Src: src, Dst: dst, Words: 3})...)
		require.NoError(t, err, name)
	}
	out, err := x.DownloadRange(dst, 0, 16)
	require.NoError(t, err)
	assert.Equal(t, []uint32{11, 12, 13, 0}, []uint32{binary.LittleEndian.Uint32(out), binary.LittleEndian.Uint32(out[4:]),
		binary.LittleEndian.Uint32(out[8:]), binary.LittleEndian.Uint32(out[12:])}, "copied three words, then bumped them")
	require.Len(t, seen, 1)
	assert.EqualValues(t, 3, seen[0].Words)
	assert.NotZero(t, seen[0].Src)

	k, err := mod.Kernel("copy")
	require.NoError(t, err)
	_, err = x.Launch(k, executor.Linear(1, 32), MustArgs(copyParams[executor.Buffer]{Src: src, Dst: dst, Words: 5})...)
	assert.Error(t, err, "a copy past the buffers fails")
}

// TestEmulateCopy copies 16-byte words with the shared copy kernel's
// emulation, and refuses a copy past the buffers.
func TestEmulateCopy(t *testing.T) {
	x, mod := emulated(t, FakeKernels(map[string]Fake{"copy": {Run: Emulate(EmulateCopy)}}))
	src, err := x.Alloc(48)
	require.NoError(t, err)
	dst, err := x.Alloc(48)
	require.NoError(t, err)
	in := make([]byte, 48)
	for i := range in {
		in[i] = byte(i + 1)
	}
	require.NoError(t, x.Upload(src, in))
	k, err := mod.Kernel("copy")
	require.NoError(t, err)
	_, err = x.Launch(k, executor.Linear(1, 32), MustArgs(CopyParams[executor.Buffer]{Src: src, Dst: dst, N16: 2})...)
	require.NoError(t, err)
	out, err := x.DownloadRange(dst, 0, 48)
	require.NoError(t, err)
	assert.Equal(t, append(in[:32:32], make([]byte, 16)...), out, "two words copied, the third left")
	_, err = x.Launch(k, executor.Linear(1, 32), MustArgs(CopyParams[executor.Buffer]{Src: src, Dst: dst, N16: 4})...)
	assert.Error(t, err, "a copy past the buffers fails")
}

func TestEmulateDecodeError(t *testing.T) {
	run := Emulate(func(*executor.FakeLaunch, copyParams[executor.DevPtr]) error { return nil })
	err := run(&executor.FakeLaunch{Args: []uint64{1}})
	assert.ErrorContains(t, err, "the launch passed 1 arguments, the ABI declares 3")
}

func TestLaunchSeeds(t *testing.T) {
	a, b := NewLaunchSeeds(7), NewLaunchSeeds(7)
	first := a.Next()
	assert.Equal(t, first, b.Next(), "the same seed gives the same launches")
	assert.NotEqual(t, first, a.Next(), "each launch its own seed")
	c := NewLaunchSeeds(8)
	assert.NotEqual(t, first, c.Next(), "another seed, other launches")
	seed := uint64(7)
	assert.Equal(t, seed*0x9e3779b97f4a7c15+1, first)
}

// TestEmulation checks that an emulation's entry points draw their
// launches' seeds from the emulation's seed, in launch order, and that its
// kernels and fake backend are those entry points.
func TestEmulation(t *testing.T) {
	var drawn []uint64
	e := NewEmulation(7, func(seeds *LaunchSeeds) map[string]Fake {
		run := func(*executor.FakeLaunch) error { drawn = append(drawn, seeds.Next()); return nil }
		return map[string]Fake{"bump": {Run: run, Regs: 12}, "idle": {}}
	})
	kernels := e.Kernels()
	require.Len(t, kernels, 2)
	assert.Equal(t, 12, kernels["bump"].Attrs.NumRegs)
	require.NoError(t, kernels["bump"].Run(&executor.FakeLaunch{}))
	require.NoError(t, kernels["bump"].Run(&executor.FakeLaunch{}))
	want := NewLaunchSeeds(7)
	assert.Equal(t, []uint64{want.Next(), want.Next()}, drawn)
	dev, err := occupancy.Lookup("h100-sxm")
	require.NoError(t, err)
	x, err := executor.New(e.NewFake(dev), executor.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { x.Close() })
	mod, err := x.LoadModule([]byte(emulatePTX))
	require.NoError(t, err)
	_, err = mod.Kernel("bump")
	require.NoError(t, err)
}
