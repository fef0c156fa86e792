package executor

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/gpuplan/gpuplan/occupancy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakePTX declares the fake kernels as PTX entry points.
const fakePTX = `.version 7.8
.target sm_80
.address_size 64
.visible .entry add_one(.param .u64 p0, .param .u64 p1) { ret; }
.visible .entry heavy(.param .u64 p0) { ret; }
.visible .entry phased(.param .u64 p0, .param .u64 p1, .param .u64 p2, .param .u64 p3) { ret; }
.visible .entry add_one_params(.param .u64 p0) { ret; }
`

func h100(t testing.TB, totalMem int64) occupancy.Device {
	d, err := occupancy.Lookup("h100-sxm")
	require.NoError(t, err)
	if totalMem > 0 {
		d.TotalMemoryBytes = totalMem
	}
	return d
}

// fakeKernels: add_one(buf, n) adds 1 to n uint32 words (add_one_params
// does the same with p[0] = buf, p[1] = n in a parameter buffer); heavy uses 128
// registers and 16 KiB static shared memory; phased(buf, n, begin, end)
// appends phase numbers: word[0] counts phases, word[1+p] = p.
func fakeKernels() map[string]FakeKernel {
	return map[string]FakeKernel{
		"add_one": {Attrs: FuncAttributes{NumRegs: 16, MaxThreadsPerBlock: 1024}, Run: func(l *FakeLaunch) error {
			b, err := l.Bytes(DevPtr(l.Args[0]), 4*l.Args[1])
			if err != nil {
				return err
			}
			for i := uint64(0); i < l.Args[1]; i++ {
				binary.LittleEndian.PutUint32(b[4*i:], binary.LittleEndian.Uint32(b[4*i:])+1)
			}
			return nil
		}},
		"add_one_params": {Attrs: FuncAttributes{NumRegs: 16, MaxThreadsPerBlock: 1024}, Run: func(l *FakeLaunch) error {
			p, err := l.Bytes(DevPtr(l.Args[0]), 16)
			if err != nil {
				return err
			}
			ptr, n := binary.LittleEndian.Uint64(p), binary.LittleEndian.Uint64(p[8:])
			b, err := l.Bytes(DevPtr(ptr), 4*n)
			if err != nil {
				return err
			}
			for i := uint64(0); i < n; i++ {
				binary.LittleEndian.PutUint32(b[4*i:], binary.LittleEndian.Uint32(b[4*i:])+1)
			}
			return nil
		}},
		"heavy": {Attrs: FuncAttributes{NumRegs: 128, StaticSharedBytes: 16 << 10, MaxThreadsPerBlock: 512}, DeviceNs: 5000},
		"phased": {Attrs: FuncAttributes{NumRegs: 32, MaxThreadsPerBlock: 1024}, Run: func(l *FakeLaunch) error {
			b, err := l.Bytes(DevPtr(l.Args[0]), 4*l.Args[1])
			if err != nil {
				return err
			}
			for p := l.Args[2]; p < l.Args[3]; p++ {
				c := binary.LittleEndian.Uint32(b)
				binary.LittleEndian.PutUint32(b[4*(1+c):], uint32(p))
				binary.LittleEndian.PutUint32(b, c+1)
			}
			return nil
		}},
	}
}

func newFakeExec(t testing.TB, dev occupancy.Device) (*Executor, *Fake) {
	f := NewFake(FakeConfig{Device: dev, Kernels: fakeKernels()})
	x, err := New(f, Options{StagingChunkBytes: 64})
	require.NoError(t, err)
	return x, f
}

func TestExecutorOpenProbesPTXTarget(t *testing.T) {
	x, _ := newFakeExec(t, h100(t, 1<<30))
	// The fake driver loads PTX up to 8.0: sm_90 maps to 8.0 and loads.
	assert.Equal(t, 90, x.PTXTarget())
	f := NewFake(FakeConfig{Device: h100(t, 1<<30), MaxPTXVersion: 78})
	_, err := New(f, Options{})
	var pe *PTXTargetProbeError
	require.ErrorAs(t, err, &pe)
	assert.Len(t, pe.Failures, 6) // sm_90, 89, 86, 80, 75, 70
	assert.Contains(t, err.Error(), "Fix:")
}

func TestExecutorResidentRoundTripAndRanges(t *testing.T) {
	x, f := newFakeExec(t, h100(t, 1<<30))
	r := rand.New(rand.NewPCG(1, 2))
	data := make([]byte, 1000)
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	b, err := x.Alloc(1000)
	require.NoError(t, err)
	assert.Equal(t, uint64(1), b.ID)
	require.NoError(t, x.Upload(b, data))
	got, err := x.Download(b)
	require.NoError(t, err)
	assert.Equal(t, data, got)
	patch := []byte{1, 2, 3, 4, 5}
	require.NoError(t, x.UploadAt(b, 995, patch))
	copy(data[995:], patch)
	rs, err := x.DownloadRanges(b, []Range{{990, 10}, {0, 7}, {3, 10}, {500, 0}})
	require.NoError(t, err)
	assert.Equal(t, data[990:1000], rs[0])
	assert.Equal(t, data[0:7], rs[1])
	assert.Equal(t, data[3:13], rs[2])
	assert.Equal(t, []byte{}, rs[3])
	// out of range, unknown handle
	_, err = x.DownloadRange(b, 999, 2)
	assert.ErrorContains(t, err, "Fix:")
	assert.ErrorContains(t, x.UploadAt(b, 996, patch), "exceed")
	require.NoError(t, x.Free(b))
	var ub *UnknownBufferError
	require.ErrorAs(t, x.Free(b), &ub)
	require.NoError(t, x.Close())
	s := f.Stats()
	assert.Zero(t, s.HostAllocations)
	assert.Zero(t, s.Streams)
	assert.Zero(t, s.Events)
	assert.Equal(t, x.FreeMemoryAtOpen(), x.FreeMemoryAtClose())
}

func TestExecutorBudgetRefusesOverBudget(t *testing.T) {
	x, _ := newFakeExec(t, h100(t, 10_000))
	_, err := x.Alloc(9_001)
	var be *BudgetError
	require.ErrorAs(t, err, &be)
	assert.Equal(t, uint64(9_001), be.Required)
	assert.Equal(t, uint64(9_000), be.Budget)
	b, err := x.Alloc(2_000)
	require.NoError(t, err)
	// free is 8000: budget = 2000 + min(7000, 7200) = 9000
	_, err = x.Alloc(7_001)
	require.ErrorAs(t, err, &be)
	_, err = x.Alloc(7_000)
	require.NoError(t, err)
	require.NoError(t, x.Free(b))
	_, err = x.Alloc(0)
	assert.ErrorContains(t, err, "Fix:")
}

func TestExecutorLaunchTimedAndInFlight(t *testing.T) {
	x, _ := newFakeExec(t, h100(t, 1<<30))
	m, err := x.LoadModule([]byte(fakePTX))
	require.NoError(t, err)
	m2, err := x.LoadModule([]byte(fakePTX))
	require.NoError(t, err)
	assert.Same(t, m, m2, "cached by content")
	k, err := m.Kernel("add_one")
	require.NoError(t, err)
	b, err := x.Alloc(64)
	require.NoError(t, err)
	require.NoError(t, x.Upload(b, make([]byte, 64)))
	p, err := x.LaunchAsync(k, Linear(1, 16), Ptr(b), U64(16))
	require.NoError(t, err)
	assert.Equal(t, uint32(1), x.InFlight(b))
	var ife *InFlightError
	require.ErrorAs(t, x.Free(b), &ife)
	require.ErrorAs(t, x.Close(), &ife)
	tm, err := p.Wait()
	require.NoError(t, err)
	assert.True(t, tm.HasDeviceTime)
	assert.Equal(t, uint64(1000), tm.DeviceNs)
	got, err := x.Download(b)
	require.NoError(t, err)
	assert.Equal(t, uint32(1), binary.LittleEndian.Uint32(got[60:]))
	snap := x.Telemetry()
	assert.Equal(t, uint64(1), snap.KernelLaunches)
	assert.Equal(t, uint64(16), snap.ScheduledThreadSlots)
	assert.Equal(t, uint64(1), snap.TimedDeviceMeasurements)
	require.NoError(t, x.Free(b))
	_, err = m.Kernel("nope")
	var de *DriverError
	require.ErrorAs(t, err, &de)
	assert.Equal(t, "cuModuleGetFunction", de.Call)
	require.NoError(t, x.Close())
	_, err = x.Alloc(1)
	assert.ErrorIs(t, err, ErrClosed)
}

// TestClosePendingScalarDispatch: a pending dispatch that pins no buffer
// still holds Close off, so its Wait never asks a driver that is gone.
func TestClosePendingScalarDispatch(t *testing.T) {
	x, _ := newFakeExec(t, h100(t, 1<<30))
	m, err := x.LoadModule([]byte(fakePTX))
	require.NoError(t, err)
	k, err := m.Kernel("heavy")
	require.NoError(t, err)
	p, err := x.LaunchAsync(k, Linear(1, 32), U64(7))
	require.NoError(t, err)
	var pe *PendingError
	require.ErrorAs(t, x.Close(), &pe)
	assert.Equal(t, 1, pe.Dispatches)
	assert.Contains(t, pe.Error(), "Fix:")
	_, err = p.Wait()
	require.NoError(t, err)
	require.NoError(t, x.Close())
	_, err = p.Wait()
	require.NoError(t, err, "a finished dispatch keeps its result")
}

func TestNilKernelIsAnError(t *testing.T) {
	x, _ := newFakeExec(t, h100(t, 1<<30))
	defer x.Close()
	_, err := x.CooperativeGrid(nil, 128, 0)
	require.ErrorContains(t, err, "kernel")
	_, err = x.DriverMaxActiveBlocksPerSM(nil, 128, 0)
	require.ErrorContains(t, err, "kernel")
	_, err = x.LaunchAsync(nil, Linear(1, 32))
	require.ErrorContains(t, err, "kernel")
}

func TestExecutorCooperativeGridAndRefusal(t *testing.T) {
	x, f := newFakeExec(t, h100(t, 1<<30))
	m, err := x.LoadModule([]byte(fakePTX))
	require.NoError(t, err)
	k, err := m.Kernel("heavy")
	require.NoError(t, err)
	g, err := x.CooperativeGrid(k, 256, 0)
	require.NoError(t, err)
	// 128 regs x 32 = 4096 per warp; 8 warps per block -> 2 blocks (registers);
	// shared: 16 KiB + 1 KiB reserved -> 13; so 2 blocks/SM.
	assert.Equal(t, 2, g.BlocksPerSM)
	assert.True(t, g.Agrees())
	assert.Equal(t, uint32(264), g.GridBlocks)
	_, err = x.Launch(k, g.Config(), Ptr(Buffer{}))
	var ub *UnknownBufferError
	require.ErrorAs(t, err, &ub)
	cfg := g.Config()
	cfg.Grid[0]++
	before := len(f.Launches())
	_, err = x.Launch(k, cfg, U64(0))
	var ce *CoResidencyError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, uint64(264), ce.Limit)
	assert.Contains(t, err.Error(), "Fix:")
	assert.Equal(t, before, len(f.Launches()), "an oversized cooperative grid is never launched")
	tm, err := x.Launch(k, g.Config(), U64(0))
	require.NoError(t, err)
	assert.Equal(t, uint64(5000), tm.DeviceNs)
	_, err = x.Launch(k, Linear(1, 1024), U64(0))
	assert.ErrorContains(t, err, "threads per block")
}

func TestDispatchWithGridSyncSplit(t *testing.T) {
	for _, tc := range []struct {
		name        string
		coopDevice  bool
		force       bool
		launches    int
		cooperative bool
	}{
		{"cooperative", true, false, 1, true},
		{"forced split", true, true, 5, false},
		{"no cooperative launch", false, false, 5, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dev := h100(t, 1<<30)
			dev.CooperativeLaunch = tc.coopDevice
			x, f := newFakeExec(t, dev)
			m, err := x.LoadModule([]byte(fakePTX))
			require.NoError(t, err)
			k, err := m.Kernel("phased")
			require.NoError(t, err)
			b, err := x.Alloc(4 * 8)
			require.NoError(t, err)
			require.NoError(t, x.Upload(b, make([]byte, 32)))
			cfg := Linear(132, 256)
			cfg.Cooperative = true
			res, err := x.DispatchWithGridSyncSplit(k, cfg, 5, tc.force, Ptr(b), U64(8))
			require.NoError(t, err)
			assert.Equal(t, tc.launches, res.Launches)
			assert.Equal(t, tc.cooperative, res.Cooperative)
			assert.Len(t, f.Launches(), tc.launches)
			for _, l := range f.Launches() {
				assert.Equal(t, tc.cooperative, l.Cooperative)
			}
			got, err := x.Download(b)
			require.NoError(t, err)
			assert.Equal(t, uint32(5), binary.LittleEndian.Uint32(got))
			for p := 0; p < 5; p++ {
				assert.Equal(t, uint32(p), binary.LittleEndian.Uint32(got[4*(1+p):]))
			}
			assert.Equal(t, uint64(tc.launches)*1000, res.Timing.DeviceNs)
		})
	}
}

func TestDriverErrorsNameTheCallAndFix(t *testing.T) {
	x, f := newFakeExec(t, h100(t, 1<<30))
	f.Fail("cuMemAlloc", cuErrOutOfMemory)
	_, err := x.Alloc(16)
	var de *DriverError
	require.ErrorAs(t, err, &de)
	assert.Equal(t, "cuMemAlloc", de.Call)
	assert.Contains(t, err.Error(), "CUDA_ERROR_OUT_OF_MEMORY")
	assert.Contains(t, err.Error(), "Fix:")
	assert.Zero(t, x.ResidentBytes(), "a failed allocation does not keep budget")
	f.Fail("cuMemAlloc", 0)
	b, err := x.Alloc(16)
	require.NoError(t, err)
	f.Fail("cuMemcpyHtoDAsync", cuErrIllegalAddress)
	err = x.UploadAt(b, 0, []byte{1})
	require.ErrorAs(t, err, &de)
	assert.Equal(t, "cuMemcpyHtoDAsync", de.Call)
	f.Fail("cuMemcpyHtoDAsync", 0)
	f.Fail("cuMemHostAlloc", cuErrOutOfMemory)
	_, err = x.Download(b)
	require.ErrorAs(t, err, &de)
	assert.Equal(t, "cuMemHostAlloc", de.Call)
	assert.False(t, errors.Is(err, ErrUnavailable))
	assert.True(t, errors.Is(newDriverError("cuInit", cuErrNoDevice, ""), ErrUnavailable))
}

func TestLaunchReadIsOneWaveStep(t *testing.T) {
	x, _ := newFakeExec(t, h100(t, 1<<30))
	m, err := x.LoadModule([]byte(fakePTX))
	require.NoError(t, err)
	k, err := m.Kernel("add_one")
	require.NoError(t, err)
	b, err := x.Alloc(16)
	require.NoError(t, err)
	require.NoError(t, x.Upload(b, make([]byte, 16)))
	word := make([]byte, 4)
	for step := uint32(1); step <= 3; step++ {
		tm, err := x.LaunchRead(k, Linear(1, 4), b, 12, word, Ptr(b), U64(4))
		require.NoError(t, err)
		assert.True(t, tm.HasDeviceTime)
		assert.Equal(t, step, binary.LittleEndian.Uint32(word))
	}
	assert.Zero(t, x.InFlight(b))
	_, err = x.LaunchRead(k, Linear(1, 4), b, 14, word, Ptr(b), U64(4))
	assert.ErrorContains(t, err, "exceed")
	big, err := x.Alloc(128)
	require.NoError(t, err)
	_, err = x.LaunchRead(k, Linear(1, 4), big, 0, make([]byte, 65), Ptr(b), U64(4))
	assert.ErrorContains(t, err, "staging chunk")
}
