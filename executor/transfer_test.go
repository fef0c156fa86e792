package executor

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStagingRingTurns: a batch larger than the staging ring (eight chunks)
// waits each time the ring comes round to a buffer in flight, and once at
// its end; the bytes arrive intact both ways.
func TestStagingRingTurns(t *testing.T) {
	for _, c := range []struct {
		n     int
		waits uint64
	}{
		{1, 1}, {64, 1}, {65, 1}, {512, 1}, {513, 2}, {1000, 9}, {64 * 24, 17},
	} {
		x, f := newFakeExec(t, h100(t, 1<<30)) // 64-byte chunks: a 512-byte ring
		b, err := x.Alloc(uint64(c.n))
		require.NoError(t, err)
		data := make([]byte, c.n)
		r := rand.New(rand.NewPCG(uint64(c.n), 1))
		for i := range data {
			data[i] = byte(r.Uint32())
		}
		w0, before := f.HostWaits(), x.Telemetry()
		require.NoError(t, x.Upload(b, data))
		got, err := x.Download(b)
		require.NoError(t, err)
		assert.Equal(t, data, got, "%d bytes", c.n)
		d := x.Telemetry().Sub(before)
		assert.Equal(t, 2*c.waits, d.SyncPoints, "%d bytes: waits of the upload and the download", c.n)
		assert.EqualValues(t, f.HostWaits()-w0, d.SyncPoints)
		assert.EqualValues(t, 1, d.HostUploadOperations, "one fused copy, however it is staged")
		require.NoError(t, x.Free(b))
		require.NoError(t, x.Close())
		assert.Zero(t, f.Stats().HostAllocations, "staging freed at close")
	}
}

// TestBatchFailureSettlesTheStream: a copy that fails after others were
// enqueued synchronises the stream (a counted wait) before its staging is
// reused; nothing leaks.
func TestBatchFailureSettlesTheStream(t *testing.T) {
	x, f := newFakeExec(t, h100(t, 1<<30))
	b, err := x.Alloc(256)
	require.NoError(t, err)
	f.Fail("cuMemcpyDtoHAsync", cuErrIllegalAddress)
	w0, before := f.HostWaits(), x.Telemetry()
	_, err = x.Download(b)
	var de *DriverError
	require.ErrorAs(t, err, &de)
	d := x.Telemetry().Sub(before)
	assert.EqualValues(t, 1, d.SyncPoints)
	assert.EqualValues(t, f.HostWaits()-w0, d.SyncPoints)
	assert.Zero(t, d.DeviceReadbackOperations, "a failed batch counts no readback")
	f.Fail("cuMemcpyDtoHAsync", 0)
	require.NoError(t, x.Free(b))
	require.NoError(t, x.Close())
	s := f.Stats()
	assert.Zero(t, s.HostAllocations+s.Streams+s.Events)
}

// TestTimedWallIncludesUploads: vyre starts a timed dispatch's wall clock
// before its host uploads; the fake's copies take 20 ms each here.
func TestTimedWallIncludesUploads(t *testing.T) {
	f := NewFake(FakeConfig{Device: h100(t, 1<<30), Kernels: fakeKernels(), CopyDelay: 20 * time.Millisecond})
	x, err := New(f, Options{})
	require.NoError(t, err)
	defer x.Close()
	m, err := x.LoadModule([]byte(fakePTX))
	require.NoError(t, err)
	k, err := m.Kernel("heavy")
	require.NoError(t, err)
	tm, err := x.Launch(k, Linear(1, 32), Params(make([]byte, 16)))
	require.NoError(t, err)
	assert.GreaterOrEqual(t, tm.WallNs, uint64(20*time.Millisecond))
	assert.GreaterOrEqual(t, tm.EnqueueNs, uint64(20*time.Millisecond), "the parameter upload is part of the enqueue")
	assert.Less(t, tm.WaitNs, uint64(20*time.Millisecond), "and not of the wait")
}

// TestProfilerRangesAroundLaunchesAndCopies: every executor call that
// reaches the driver opens its range and closes it.
func TestProfilerRangesAroundLaunchesAndCopies(t *testing.T) {
	x, f, addOne, _ := newParityFake(t, Options{})
	assert.True(t, x.ProfilerRangesActive())
	b, err := x.Alloc(64)
	require.NoError(t, err)
	f.ranges = nil
	require.NoError(t, x.Upload(b, make([]byte, 64)))
	_, err = x.Launch(addOne, Linear(1, 32), Ptr(b), U64(16))
	require.NoError(t, err)
	_, err = x.Download(b)
	require.NoError(t, err)
	_, err = x.RunHostLoop(func(*HostLoop) error { return nil })
	require.NoError(t, err)
	assert.Equal(t, []string{"push gpuplan.upload", "pop", "push gpuplan.launch", "pop", "push gpuplan.wait", "pop",
		"push gpuplan.download", "pop", "push gpuplan.host_loop", "pop"}, f.Ranges())
	y, g, _, _ := newParityFake(t, Options{DisableProfilerRanges: true})
	assert.False(t, y.ProfilerRangesActive())
	c, err := y.Alloc(8)
	require.NoError(t, err)
	require.NoError(t, y.Upload(c, make([]byte, 8)))
	assert.Empty(t, g.Ranges())
}

// TestProfilerRangeCatalog ports vyre's catalog checks: every range is
// namespaced, a valid NVTX label, unique, described, and its String is its
// name.
func TestProfilerRangeCatalog(t *testing.T) {
	seen := map[string]bool{}
	for i, r := range ProfilerRanges() {
		assert.Equal(t, ProfilerRange(i), r.Range)
		assert.True(t, validRangeLabel(r.Name), r.Name)
		assert.NotEmpty(t, r.Description, r.Name)
		assert.False(t, seen[r.Name], "duplicate %s", r.Name)
		seen[r.Name] = true
		assert.Equal(t, r.Name, r.Range.String())
	}
	assert.Len(t, seen, int(numProfilerRanges))
	assert.Equal(t, "ProfilerRange(99)", ProfilerRange(99).String())
	for _, bad := range []string{"", "gpuplan.", "vyre.cuda.launch", "gpuplan.a\x00b"} {
		assert.False(t, validRangeLabel(bad), "%q", bad)
	}
}

// TestRangeCheckProperty: for random offsets, lengths and buffer sizes,
// an upload and a download are refused exactly when vyre's checked range
// arithmetic refuses them, with the kind it names, and change nothing.
func TestRangeCheckProperty(t *testing.T) {
	x, f := newFakeExec(t, h100(t, 1<<30))
	defer x.Close()
	r := rand.New(rand.NewPCG(7, 12))
	for i := 0; i < 300; i++ {
		size := uint64(1 + r.IntN(200))
		b, err := x.Alloc(size)
		require.NoError(t, err)
		off := uint64(r.IntN(260))
		if r.IntN(8) == 0 {
			off = math.MaxUint64 - uint64(r.IntN(300))
		}
		n := uint64(r.IntN(120))
		var want ResidentErrorKind
		switch end := off + n; {
		case end < off:
			want = ResidentOverflow
		case end > size:
			want = ResidentOutOfRange
		}
		w0 := f.HostWaits()
		_, derr := x.DownloadRange(b, off, n)
		var uerr error
		if n < 1<<20 {
			uerr = x.UploadAt(b, off, bytes.Repeat([]byte{1}, int(n)))
		}
		for _, err := range []error{derr, uerr} {
			if want == 0 {
				assert.NoError(t, err)
				continue
			}
			var re *ResidentError
			require.ErrorAs(t, err, &re)
			assert.Equal(t, want, re.Kind)
			assert.Equal(t, ResidentError{Kind: want, Op: re.Op, Buffer: b.ID, Offset: off, Len: n, BufferLen: size}, *re)
		}
		if want != 0 {
			assert.Equal(t, w0, f.HostWaits(), "a refused range waits for nothing")
		}
		require.NoError(t, x.Free(b))
	}
}

// TestStagingPoolKeepsSmallBuffers: once large staging buffers fill the
// pinned pool, a small readback's buffer still stays pooled (larger pooled
// buffers are freed, largest first, to make room), so repeated small
// readbacks allocate no pinned memory; a buffer larger than the whole pool
// is freed.
func TestStagingPoolKeepsSmallBuffers(t *testing.T) {
	x, f := newFakeExec(t, h100(t, 1<<30))
	defer x.Close()
	x.stagingLimit = 4096
	var big []PinnedMem
	for _, n := range []int{2048, 1024, 1024} {
		p, err := x.stagingLocked(n)
		require.NoError(t, err)
		big = append(big, p)
	}
	for _, p := range big {
		x.releaseStagingLocked(p)
	}
	require.Equal(t, 4096, x.stagingBytes, "the large buffers fill the pool")
	b, err := x.Alloc(64)
	require.NoError(t, err)
	word := make([]byte, 8)
	require.NoError(t, x.DownloadRangeInto(b, 8, word))
	assert.Equal(t, 2048+8, x.stagingBytes, "the 2048-byte buffer was freed for the 8-byte one")
	allocs := f.Calls()["cuMemHostAlloc"]
	for range 10 {
		require.NoError(t, x.DownloadRangeInto(b, 8, word))
	}
	assert.Equal(t, allocs, f.Calls()["cuMemHostAlloc"], "repeated small readbacks reuse the pooled buffer")
	assert.Len(t, x.staging[1024], 2, "buffers no larger than the released one stay")
	huge, err := x.stagingLocked(8192)
	require.NoError(t, err)
	frees := f.Calls()["cuMemFreeHost"]
	x.releaseStagingLocked(huge)
	assert.Equal(t, frees+1, f.Calls()["cuMemFreeHost"], "a buffer larger than the pool is freed")
	assert.Equal(t, 2048+8, x.stagingBytes)
}
