package executor

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// parityEnv is what the parity cases run against: an executor over the CPU
// fake or over a GPU, with the kernels add_one(buf, n) and
// add_one_params(p) (p[0] = buf, p[1] = n), which add 1 to n uint32 words.
// The cases port the behaviours vyre's host dispatch, resident IO and
// resident dispatch show, with vyre's messages, and assert the host waits
// and copies of each call exactly (on the fake, the waits the driver saw
// too). TestParityOnFake runs them on the fake; TestGPU runs them on a GPU.
type parityEnv struct {
	x       *Executor
	addOne  *Kernel
	addPars *Kernel
	fake    *Fake
	// fallback opens an executor with Options.ResidentBorrowedFallback on
	// the same kind of backend and returns it with its add_one.
	fallback func(t *testing.T) (*Executor, *Kernel)
}

type parityCase struct {
	name string
	run  func(t *testing.T, e *parityEnv)
}

// measure runs f and returns the telemetry it added. On the fake it also
// checks that the host waits counted are the waits the driver saw.
func (e *parityEnv) measure(t *testing.T, f func()) TelemetrySnapshot {
	before := e.x.Telemetry()
	w0 := 0
	if e.fake != nil {
		w0 = e.fake.HostWaits()
	}
	f()
	d := e.x.Telemetry().Sub(before)
	if e.fake != nil {
		assert.EqualValues(t, e.fake.HostWaits()-w0, d.SyncPoints, "the waits counted are the waits made")
	}
	return d
}

// buffer allocates n bytes filled with fill, freed when the test ends.
func (e *parityEnv) buffer(t *testing.T, n uint64, fill byte) Buffer {
	b, err := e.x.Alloc(n)
	require.NoError(t, err)
	require.NoError(t, e.x.Upload(b, bytes.Repeat([]byte{fill}, int(n))))
	t.Cleanup(func() { _ = e.x.Free(b) })
	return b
}

// words downloads b as uint32 words.
func (e *parityEnv) words(t *testing.T, b Buffer) []uint32 {
	raw, err := e.x.Download(b)
	require.NoError(t, err)
	out := make([]uint32, len(raw)/4)
	for i := range out {
		out[i] = binary.LittleEndian.Uint32(raw[4*i:])
	}
	return out
}

// cost is the transfers, waits and launches one call is expected to make.
type cost struct{ syncs, uploads, upBytes, reads, readBytes, launches uint64 }

func assertIO(t *testing.T, d TelemetrySnapshot, want cost, msg string) {
	t.Helper()
	got := cost{d.SyncPoints, d.HostUploadOperations, d.HostToDeviceBytes, d.DeviceReadbackOperations, d.DeviceToHostBytes, d.KernelLaunches}
	assert.Equal(t, want, got, "%s: {syncs uploads upBytes reads readBytes launches}", msg)
}

// repeat returns n copies of v as uint32 words.
func repeat(v uint32, n int) []uint32 {
	out := make([]uint32, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// u32bytes encodes words little-endian.
func u32bytes(v []uint32) []byte {
	out := make([]byte, 4*len(v))
	for i, w := range v {
		binary.LittleEndian.PutUint32(out[4*i:], w)
	}
	return out
}

// fill32 is four bytes of fill as a uint32 word.
func fill32(fill byte) uint32 { return uint32(fill) * 0x01010101 }

func parityCases() []parityCase {
	return append(append(append(residentIOCases(), errorCases()...), dispatchCases()...), sequenceCases()...)
}

func residentIOCases() []parityCase {
	return []parityCase{
		{"whole upload refuses another length", parityWholeUpload},
		{"batched upload waits once", parityBatchUpload},
		{"batched download fuses ranges and waits once", parityBatchDownload},
		{"pinned staging is not a transient allocation", parityStagingNotTransient},
		{"pinned caller memory and asynchronous uploads", parityAsyncUploads},
		{"pinning twice and unpinning in flight are refused", parityPinErrors},
	}
}

// parityWholeUpload: vyre refuses a 32-byte (or 0-byte) upload into a
// 64-byte buffer, "expected 64 bytes but received 32", and copies nothing.
func parityWholeUpload(t *testing.T, e *parityEnv) {
	b := e.buffer(t, 64, 0x11)
	for _, n := range []int{32, 0, 65} {
		var err error
		d := e.measure(t, func() { err = e.x.Upload(b, make([]byte, n)) })
		var re *ResidentError
		require.ErrorAs(t, err, &re, "%d bytes", n)
		assert.Equal(t, ResidentError{Kind: ResidentLengthMismatch, Op: "upload", Buffer: b.ID, Len: uint64(n), BufferLen: 64}, *re)
		assert.Contains(t, err.Error(), fmt.Sprintf("CUDA resident upload for handle %d expected 64 bytes but received %d.", b.ID, n))
		assert.Contains(t, err.Error(), "Fix:")
		assertIO(t, d, cost{}, "a refused upload")
	}
	assert.Equal(t, repeat(fill32(0x11), 16), e.words(t, b), "the buffer is unchanged")
	d := e.measure(t, func() { require.NoError(t, e.x.Upload(b, bytes.Repeat([]byte{2}, 64))) })
	assertIO(t, d, cost{syncs: 1, uploads: 1, upBytes: 64}, "a whole upload")
}

// parityBatchUpload: vyre uploads several buffers with one stream
// synchronisation, and fuses overlapping or touching offset uploads.
func parityBatchUpload(t *testing.T, e *parityEnv) {
	bufs := make([]Buffer, 8)
	data := make([][]byte, 8)
	for i := range bufs {
		bufs[i] = e.buffer(t, 64, 0)
		data[i] = bytes.Repeat([]byte{byte(i + 1)}, 64)
	}
	d := e.measure(t, func() { require.NoError(t, e.x.UploadBuffers(bufs, data)) })
	assertIO(t, d, cost{syncs: 1, uploads: 8, upBytes: 512}, "eight whole buffers")
	for i, b := range bufs {
		assert.Equal(t, repeat(fill32(byte(i+1)), 16), e.words(t, b))
	}
	a, c := bufs[0], bufs[1]
	ups := []Upload{
		{Buffer: a, Offset: 0, Data: bytes.Repeat([]byte{9}, 16)},
		{Buffer: a, Offset: 16, Data: bytes.Repeat([]byte{9}, 16)}, // touches the first: fused
		{Buffer: a, Offset: 40, Data: bytes.Repeat([]byte{9}, 8)},  // apart: its own copy
		{Buffer: c, Offset: 0, Data: bytes.Repeat([]byte{9}, 64)},
	}
	d = e.measure(t, func() { require.NoError(t, e.x.UploadMany(ups)) })
	assertIO(t, d, cost{syncs: 1, uploads: 3, upBytes: 32 + 8 + 64}, "fused offset uploads")
	assert.Equal(t, append(append(append(repeat(fill32(9), 8), repeat(fill32(1), 2)...), repeat(fill32(9), 2)...), repeat(fill32(1), 4)...), e.words(t, a))
}

// parityBatchDownload: vyre's readback fusion drops empty ranges and merges
// overlapping or touching ranges of one buffer; one stream fence.
func parityBatchDownload(t *testing.T, e *parityEnv) {
	a, b := e.buffer(t, 64, 0), e.buffer(t, 64, 0)
	pattern := make([]byte, 64)
	for i := range pattern {
		pattern[i] = byte(i)
	}
	require.NoError(t, e.x.UploadBuffers([]Buffer{a, b}, [][]byte{pattern, pattern}))
	reqs := []ReadRequest{{a, 0, 8}, {a, 4, 8}, {a, 20, 4}, {b, 0, 64}, {b, 10, 0}}
	var got [][]byte
	d := e.measure(t, func() {
		var err error
		got, err = e.x.DownloadMany(reqs)
		require.NoError(t, err)
	})
	assertIO(t, d, cost{syncs: 1, reads: 3, readBytes: 12 + 4 + 64}, "fused ranges")
	for i, q := range reqs {
		assert.Equal(t, pattern[q.Offset:q.Offset+q.Len], got[i], "request %d", i)
	}
	d = e.measure(t, func() {
		all, err := e.x.DownloadBuffers([]Buffer{a, b})
		require.NoError(t, err)
		assert.Equal(t, [][]byte{pattern, pattern}, all)
	})
	assertIO(t, d, cost{syncs: 1, reads: 2, readBytes: 128}, "two whole buffers")
	d = e.measure(t, func() { require.NoError(t, e.x.DownloadManyInto([]ReadRequest{{a, 3, 0}}, [][]byte{{}})) })
	assertIO(t, d, cost{}, "an empty range copies nothing and does not wait")
}

// parityStagingNotTransient: pinned staging is reused host memory; only
// device allocations count as transient.
func parityStagingNotTransient(t *testing.T, e *parityEnv) {
	b := e.buffer(t, 4096, 1)
	d := e.measure(t, func() {
		require.NoError(t, e.x.Upload(b, make([]byte, 4096)))
		_, err := e.x.Download(b)
		require.NoError(t, err)
	})
	assert.Zero(t, d.TransientAllocationBytesRequested)
	assertIO(t, d, cost{syncs: 2, uploads: 1, upBytes: 4096, reads: 1, readBytes: 4096}, "upload and download")
}

// parityAsyncUploads: vyre's pinned caller-buffer uploads queue on one
// stream without waiting; synchronize_uploads waits once (not at all when
// nothing is queued).
func parityAsyncUploads(t *testing.T, e *parityEnv) {
	a, b := e.buffer(t, 64, 0), e.buffer(t, 64, 0)
	host := make([]byte, 256)
	for i := range host {
		host[i] = byte(i)
	}
	require.NoError(t, e.x.PinHostBuffer(host))
	defer func() { require.NoError(t, e.x.UnpinHostBuffer(host)) }()
	d := e.measure(t, func() {
		require.NoError(t, e.x.UploadAsyncAt(a, 0, host[:64]))
		require.NoError(t, e.x.UploadAsyncAt(b, 0, host[64:128]))
		require.NoError(t, e.x.UploadAsyncAt(a, 8, host[200:208]))
		require.NoError(t, e.x.UploadAsyncAt(a, 0, nil), "an empty upload does nothing")
	})
	assertIO(t, d, cost{uploads: 3, upBytes: 136}, "queued uploads do not wait")
	assert.EqualValues(t, 2, e.x.InFlight(a))
	var ife *InFlightError
	require.ErrorAs(t, e.x.Free(a), &ife, "a buffer with a queued upload cannot be freed")
	var pe *PinnedInFlightError
	require.ErrorAs(t, e.x.UnpinHostBuffer(host), &pe)
	assert.Equal(t, 3, pe.Queued)
	d = e.measure(t, func() { require.NoError(t, e.x.SynchronizeUploads()) })
	assertIO(t, d, cost{syncs: 1}, "synchronize_uploads")
	d = e.measure(t, func() { require.NoError(t, e.x.SynchronizeUploads()) })
	assertIO(t, d, cost{}, "nothing queued: no wait")
	want := append(append([]byte(nil), host[:64]...), host[64:128]...)
	copy(want[8:], host[200:208])
	got, err := e.x.DownloadBuffers([]Buffer{a, b})
	require.NoError(t, err)
	assert.Equal(t, want, append(got[0], got[1]...))
	assert.Zero(t, e.x.InFlight(a))
	err = e.x.UploadAsyncAt(a, 60, host[:8])
	var re *ResidentError
	require.ErrorAs(t, err, &re)
	assert.Contains(t, err.Error(), fmt.Sprintf("CUDA resident upload for handle %d writes [60..68) but buffer is only 64 bytes", a.ID))
	d = e.measure(t, func() { require.NoError(t, e.x.SynchronizeUploads()) })
	assertIO(t, d, cost{}, "a refused upload queues nothing")
	assert.ErrorContains(t, e.x.UploadAsyncAt(a, 0, make([]byte, 8)), "not inside a pinned host buffer")
}

// parityPinErrors: pinning overlapping memory fails as the driver does
// (CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED), unpinning what was not
// pinned too, and an empty pin is refused before the driver.
func parityPinErrors(t *testing.T, e *parityEnv) {
	host := make([]byte, 4096)
	require.NoError(t, e.x.PinHostBuffer(host))
	var de *DriverError
	err := e.x.PinHostBuffer(host[100:200])
	require.ErrorAs(t, err, &de)
	assert.Equal(t, cuErrHostMemoryAlreadyRegistered, de.Code)
	assert.Contains(t, err.Error(), "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED")
	assert.Contains(t, err.Error(), "host buffer of 100 bytes")
	assert.ErrorContains(t, e.x.PinHostBuffer(nil), "non-zero byte length")
	require.NoError(t, e.x.UnpinHostBuffer(host))
	err = e.x.UnpinHostBuffer(host)
	require.ErrorAs(t, err, &de)
	assert.Equal(t, cuErrHostMemoryNotRegistered, de.Code)
	require.NoError(t, e.x.PinHostBuffer(host[100:200]), "after unpinning, the range can be pinned again")
	require.NoError(t, e.x.UnpinHostBuffer(host[100:200]))
}

func errorCases() []parityCase {
	return []parityCase{
		{"offset uploads and downloads out of range or overflowing", parityRanges},
		{"using a buffer after free", parityAfterFree},
		{"zero-byte allocation and drifted handles", parityHandles},
		{"batch count mismatches", parityCounts},
	}
}

// parityRanges ports vyre's checked ranges: the end offset overflows, or
// passes the buffer; a range ending at the buffer's end is fine.
func parityRanges(t *testing.T, e *parityEnv) {
	b := e.buffer(t, 64, 0x22)
	for _, c := range []struct {
		off, n  uint64
		kind    ResidentErrorKind
		up, dow string
	}{
		{60, 8, ResidentOutOfRange, "writes [60..68) but buffer is only 64 bytes", "requested bytes [60..68) but buffer has 64 bytes"},
		{65, 0, ResidentOutOfRange, "writes [65..65) but buffer is only 64 bytes", "requested bytes [65..65) but buffer has 64 bytes"},
		{math.MaxUint64 - 3, 8, ResidentOverflow, "at offset 18446744073709551612 for handle %d would overflow uint64", "for handle %d overflows uint64 at offset 18446744073709551612 len 8"},
		{64, 0, 0, "", ""},
	} {
		var upErr, downErr error
		d := e.measure(t, func() {
			upErr = e.x.UploadMany([]Upload{{Buffer: b, Offset: c.off, Data: make([]byte, c.n)}})
			_, downErr = e.x.DownloadMany([]ReadRequest{{Buffer: b, Offset: c.off, Len: c.n}})
		})
		assertIO(t, d, cost{}, "nothing copied")
		if c.kind == 0 {
			assert.NoError(t, upErr)
			assert.NoError(t, downErr)
			continue
		}
		for _, x := range []struct {
			err  error
			op   string
			text string
		}{{upErr, "upload", c.up}, {downErr, "ranged batch download", c.dow}} {
			var re *ResidentError
			require.ErrorAs(t, x.err, &re)
			assert.Equal(t, ResidentError{Kind: c.kind, Op: x.op, Buffer: b.ID, Offset: c.off, Len: c.n, BufferLen: 64}, *re)
			text := x.text
			if c.kind == ResidentOverflow {
				text = fmt.Sprintf(text, b.ID)
			}
			assert.Contains(t, x.err.Error(), text)
			assert.Contains(t, x.err.Error(), "Fix:")
		}
	}
	assert.Equal(t, repeat(fill32(0x22), 16), e.words(t, b), "the buffer is unchanged")
}

// parityAfterFree: every use of a freed handle is vyre's "is not owned by
// this backend", naming the buffer, the operation, the offset and length.
func parityAfterFree(t *testing.T, e *parityEnv) {
	b, err := e.x.Alloc(64)
	require.NoError(t, err)
	require.NoError(t, e.x.Free(b))
	host := make([]byte, 64)
	require.NoError(t, e.x.PinHostBuffer(host))
	defer func() { require.NoError(t, e.x.UnpinHostBuffer(host)) }()
	for _, c := range []struct {
		op      string
		off, n  uint64
		use     func() error
		message string
	}{
		{"upload", 0, 64, func() error { return e.x.Upload(b, make([]byte, 64)) }, "upload of 64 bytes at offset 0"},
		{"upload", 8, 4, func() error { return e.x.UploadAt(b, 8, make([]byte, 4)) }, "upload of 4 bytes at offset 8"},
		{"upload", 4, 8, func() error { return e.x.UploadAsyncAt(b, 4, host[:8]) }, "upload of 8 bytes at offset 4"},
		{"ranged batch download", 0, 64, func() error { _, err := e.x.Download(b); return err }, "ranged batch download of 64 bytes at offset 0"},
		{"ranged batch download", 16, 4, func() error { return e.x.DownloadRangeInto(b, 16, make([]byte, 4)) }, "of 4 bytes at offset 16"},
		{"kernel argument", 0, 64, func() error { _, err := e.x.Launch(e.addOne, Linear(1, 32), Ptr(b), U64(16)); return err }, "kernel argument of 64 bytes"},
		{"readback", 0, 4, func() error {
			_, err := e.x.LaunchRead(e.addOne, Linear(1, 32), b, 0, make([]byte, 4), U64(0), U64(0))
			return err
		}, "readback of 4 bytes at offset 0"},
		{"sequence compact readback", 4, 4, func() error {
			_, err := e.x.RunSequence(Sequence{Reads: []ReadRequest{{b, 4, 4}}}, [][]byte{make([]byte, 4)})
			return err
		}, "sequence compact readback of 4 bytes at offset 4"},
		{"free", 0, 64, func() error { return e.x.Free(b) }, "free of 64 bytes"},
	} {
		var err error
		d := e.measure(t, func() { err = c.use() })
		var ub *UnknownBufferError
		require.ErrorAs(t, err, &ub, c.message)
		assert.Equal(t, UnknownBufferError{Buffer: b.ID, Op: c.op, Offset: c.off, Len: c.n}, *ub)
		assert.Contains(t, err.Error(), fmt.Sprintf("CUDA resident buffer handle %d is not owned by this backend", b.ID))
		assert.Contains(t, err.Error(), c.message)
		assertIO(t, d, cost{}, c.message)
	}
	require.NoError(t, e.x.SynchronizeUploads())
}

// parityHandles: vyre refuses a zero-byte buffer and a handle whose
// length drifted from the allocation's.
func parityHandles(t *testing.T, e *parityEnv) {
	_, err := e.x.Alloc(0)
	var re *ResidentError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, ResidentZeroLength, re.Kind)
	assert.Contains(t, err.Error(), "CUDA resident buffers must have a non-zero byte length")
	b := e.buffer(t, 64, 0)
	err = e.x.Upload(Buffer{ID: b.ID, Len: 32}, make([]byte, 32))
	require.ErrorAs(t, err, &re)
	assert.Equal(t, ResidentError{Kind: ResidentLengthDrift, Op: "upload", Buffer: b.ID, Len: 32, BufferLen: 64}, *re)
	assert.Contains(t, err.Error(), fmt.Sprintf("CUDA resident buffer handle %d byte length drifted from 32 to 64", b.ID))
}

// parityCounts: vyre's "expected matching range/output counts" and ours
// for a slot of the wrong length.
func parityCounts(t *testing.T, e *parityEnv) {
	b := e.buffer(t, 64, 0)
	err := e.x.DownloadManyInto([]ReadRequest{{b, 0, 4}, {b, 4, 4}}, [][]byte{make([]byte, 4)})
	assert.EqualError(t, err, "CUDA resident ranged batch download expected matching range/output counts but got 2 range(s) and 1 output(s). Fix: pass one output slot per range.")
	err = e.x.UploadBuffers([]Buffer{b, b}, [][]byte{make([]byte, 64)})
	assert.ErrorContains(t, err, "CUDA resident upload expected matching buffer/data counts but got 2 buffer(s) and 1 data slice(s).")
	err = e.x.DownloadManyInto([]ReadRequest{{b, 0, 4}}, [][]byte{make([]byte, 3)})
	var re *ResidentError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, ResidentOutputLength, re.Kind)
	assert.Contains(t, err.Error(), "output 0 has 3 bytes")
}

func dispatchCases() []parityCase {
	return []parityCase{
		{"parameter upload is an asynchronous host upload", parityParams},
		{"LaunchRead waits once", parityLaunchRead},
		{"output-only buffers are zeroed before the launch", parityOut},
		{"fixpoint iterations", parityFixpoint},
		{"freeing a buffer in flight", parityInFlight},
		{"metric snapshot by stable names", parityMetrics},
		{"recorded launch measurements", parityMeasurements},
		{"borrowed fallback is counted", parityBorrowed},
	}
}

// parityParams: vyre uploads launch parameters on the launch's stream with
// the other host uploads and counts them as uploads and parameter bytes;
// the dispatch waits once.
func parityParams(t *testing.T, e *parityEnv) {
	b := e.buffer(t, 64, 0)
	ptr, err := e.x.DevicePtr(b)
	require.NoError(t, err)
	p := make([]byte, 16)
	binary.LittleEndian.PutUint64(p, uint64(ptr))
	binary.LittleEndian.PutUint64(p[8:], 16)
	d := e.measure(t, func() {
		_, err := e.x.Launch(e.addPars, Linear(1, 32), Params(p))
		require.NoError(t, err)
	})
	assertIO(t, d, cost{syncs: 1, uploads: 1, upBytes: 16, launches: 1}, "a launch with a parameter buffer")
	assert.EqualValues(t, 16, d.ParamUploadBytes)
	assert.EqualValues(t, 16, d.TransientAllocationBytesRequested, "the parameter buffer is transient device memory")
	assert.Equal(t, repeat(1, 16), e.words(t, b))
}

// parityLaunchRead: one launch and its readback, one wait.
func parityLaunchRead(t *testing.T, e *parityEnv) {
	b := e.buffer(t, 16, 0)
	word := make([]byte, 4)
	for step := uint32(1); step <= 3; step++ {
		d := e.measure(t, func() {
			tm, err := e.x.LaunchRead(e.addOne, Linear(1, 32), b, 12, word, Ptr(b), U64(4))
			require.NoError(t, err)
			assert.True(t, tm.HasDeviceTime)
		})
		assertIO(t, d, cost{syncs: 1, reads: 1, readBytes: 4, launches: 1}, "a wave step")
		assert.Equal(t, step, binary.LittleEndian.Uint32(word))
	}
	assert.Zero(t, e.x.InFlight(b))
}

// parityOut: vyre zeroes a dispatch's output-only buffers on its stream
// before the launch.
func parityOut(t *testing.T, e *parityEnv) {
	b := e.buffer(t, 64, 0x5a)
	d := e.measure(t, func() {
		_, err := e.x.Launch(e.addOne, Linear(1, 32), Out(b), U64(16))
		require.NoError(t, err)
	})
	assertIO(t, d, cost{syncs: 1, launches: 1}, "a launch with an output-only buffer")
	assert.Equal(t, repeat(1, 16), e.words(t, b))
}

// parityFixpoint: vyre's fixpoint iterations replay the launch on one
// stream; each sees the previous one's writes; one wait.
func parityFixpoint(t *testing.T, e *parityEnv) {
	b := e.buffer(t, 64, 0)
	cfg := Linear(1, 32)
	cfg.FixpointIterations = 5
	d := e.measure(t, func() {
		_, err := e.x.Launch(e.addOne, cfg, Ptr(b), U64(16))
		require.NoError(t, err)
	})
	assertIO(t, d, cost{syncs: 1, launches: 5}, "five iterations")
	assert.Equal(t, repeat(5, 16), e.words(t, b))
	cfg.FixpointIterations = MaxLaunchesPerDispatch + 1
	_, err := e.x.Launch(e.addOne, cfg, Ptr(b), U64(16))
	assert.ErrorContains(t, err, "fixpoint iterations")
}

// parityInFlight: vyre refuses to free a handle bound to an in-flight
// dispatch.
func parityInFlight(t *testing.T, e *parityEnv) {
	b := e.buffer(t, 64, 0)
	p, err := e.x.LaunchAsync(e.addOne, Linear(1, 32), Ptr(b), U64(16))
	require.NoError(t, err)
	err = e.x.Free(b)
	var ife *InFlightError
	require.ErrorAs(t, err, &ife)
	assert.Contains(t, err.Error(), fmt.Sprintf("CUDA resident buffer handle %d is bound to 1 in-flight dispatch(es).", b.ID))
	_, err = p.Wait()
	require.NoError(t, err)
}

// parityMetrics: vyre's backend_metric_snapshot, by stable names in a fixed
// order, agreeing with the telemetry.
func parityMetrics(t *testing.T, e *parityEnv) {
	b := e.buffer(t, 64, 0)
	_, err := e.x.Launch(e.addOne, Linear(1, 32), Ptr(b), U64(16))
	require.NoError(t, err)
	m := e.x.MetricSnapshot()
	tel := e.x.Telemetry()
	names := make([]string, len(m))
	for i, v := range m {
		names[i] = v.Name
	}
	assert.Equal(t, []string{"cuda_module_cache_entries", "cuda_module_cache_hits", "cuda_module_cache_misses",
		"cuda_timed_dispatches", "cuda_timed_device_measurements", "cuda_timed_dispatches_missing_device_time",
		"cuda_timed_wall_ns_total", "cuda_timed_device_ns_total", "cuda_timed_device_ns_max",
		"cuda_timed_enqueue_ns_total", "cuda_timed_wait_ns_total"}, names)
	assert.Positive(t, m[0].Value, "a module is loaded")
	assert.Positive(t, m[2].Value, "its first load was a miss")
	assert.Equal(t, tel.TimedDispatches, m[3].Value)
	assert.Equal(t, tel.TimedDeviceNs, m[7].Value)
}

// parityMeasurements: vyre records a timed launch's device time by block
// width for the program and its element count, and refuses non-1-D blocks.
func parityMeasurements(t *testing.T, e *parityEnv) {
	b := e.buffer(t, 128, 0)
	for _, cfg := range []LaunchConfig{Linear(1, 32), Linear(2, 16)} {
		_, err := e.x.Launch(e.addOne, cfg, Ptr(b), U64(32))
		require.NoError(t, err)
	}
	twoD := LaunchConfig{Grid: [3]uint32{1, 1, 1}, Block: [3]uint32{16, 2, 1}}
	_, err := e.x.Launch(e.addOne, twoD, Ptr(b), U64(32))
	require.NoError(t, err)
	m := e.x.LaunchWidthMeasurements(e.addOne, 32)
	assert.Len(t, m, 2, "widths 32 and 16; the 2-D block is not recorded")
	assert.Positive(t, m[32])
	assert.Positive(t, m[16])
	assert.Empty(t, e.x.LaunchWidthMeasurements(e.addOne, 31))
}

// parityBorrowed: vyre's borrowed fallback runs a resident dispatch through
// host buffers and counts it.
func parityBorrowed(t *testing.T, e *parityEnv) {
	y, addOne := e.fallback(t)
	b, err := y.Alloc(64)
	require.NoError(t, err)
	require.NoError(t, y.Upload(b, bytes.Repeat([]byte{1, 0, 0, 0}, 16)))
	before := y.Telemetry()
	_, err = y.Launch(addOne, Linear(1, 32), Ptr(b), U64(16))
	require.NoError(t, err)
	d := y.Telemetry().Sub(before)
	assert.EqualValues(t, 1, d.ResidentBorrowedFallbackDispatches)
	assertIO(t, d, cost{syncs: 5, uploads: 2, upBytes: 128, reads: 2, readBytes: 128, launches: 1}, "read, stage, launch, read, write back")
	before = y.Telemetry()
	_, err = y.Launch(addOne, Linear(1, 32), Out(b), U64(16))
	require.NoError(t, err)
	d = y.Telemetry().Sub(before)
	assertIO(t, d, cost{syncs: 4, uploads: 2, upBytes: 128, reads: 1, readBytes: 64, launches: 1}, "an output-only buffer is not read first")
	got, err := y.Download(b)
	require.NoError(t, err)
	assert.Equal(t, bytes.Repeat([]byte{1, 0, 0, 0}, 16), got)
	before = y.Telemetry()
	word := make([]byte, 4)
	_, err = y.RunSequence(Sequence{Prefix: []Step{{addOne, Linear(1, 32), []Arg{Ptr(b), U64(16)}}},
		Repeated: []Step{{addOne, Linear(1, 32), []Arg{Ptr(b), U64(16)}}}, Repeat: 2,
		Reads: []ReadRequest{{b, 0, 4}}}, [][]byte{word})
	require.NoError(t, err)
	assert.EqualValues(t, 3, y.Telemetry().Sub(before).ResidentBorrowedFallbackDispatches, "one per step")
	assert.EqualValues(t, 4, binary.LittleEndian.Uint32(word))
}

func sequenceCases() []parityCase {
	return []parityCase{
		{"repeated sequence with read ranges waits once", paritySequence},
		{"sequence checks before it launches", paritySequenceErrors},
		{"host loop waits once per read and once at the end", parityHostLoop},
	}
}

// paritySequence: vyre's repeated resident sequence: prefix once, repeated
// steps repeat times, ranged reads fused, one stream, one wait; identical
// parameter buffers uploaded once.
func paritySequence(t *testing.T, e *parityEnv) {
	a, b := e.buffer(t, 32, 0), e.buffer(t, 32, 0)
	outs := [][]byte{make([]byte, 8), make([]byte, 8), make([]byte, 4)}
	s := Sequence{
		Prefix:   []Step{{e.addOne, Linear(1, 32), []Arg{Ptr(a), U64(8)}}},
		Repeated: []Step{{e.addOne, Linear(1, 32), []Arg{Ptr(b), U64(8)}}, {e.addOne, Linear(1, 32), []Arg{Ptr(a), U64(8)}}},
		Repeat:   3,
		Reads:    []ReadRequest{{a, 0, 8}, {b, 4, 8}, {a, 4, 4}},
	}
	var tm Timing
	d := e.measure(t, func() {
		var err error
		tm, err = e.x.RunSequence(s, outs)
		require.NoError(t, err)
	})
	assertIO(t, d, cost{syncs: 1, reads: 2, readBytes: 16, launches: 7}, "a repeated sequence")
	assert.True(t, tm.HasDeviceTime)
	u := func(v ...uint32) []byte { return u32bytes(v) }
	assert.Equal(t, [][]byte{u(4, 4), u(3, 3), u(4)}, outs)
	d = e.measure(t, func() {
		_, err := e.x.RunSequence(Sequence{Prefix: s.Prefix, Repeated: s.Repeated}, nil)
		require.NoError(t, err)
	})
	assertIO(t, d, cost{syncs: 1, launches: 1}, "no repeats: the prefix alone, and a wait")
	d = e.measure(t, func() {
		_, err := e.x.RunSequence(Sequence{Repeated: s.Repeated, Repeat: 0}, nil)
		require.NoError(t, err)
	})
	assertIO(t, d, cost{}, "nothing to run: no wait")
	ptr, err := e.x.DevicePtr(b)
	require.NoError(t, err)
	p := make([]byte, 16)
	binary.LittleEndian.PutUint64(p, uint64(ptr))
	binary.LittleEndian.PutUint64(p[8:], 8)
	word := make([]byte, 4)
	d = e.measure(t, func() {
		_, err := e.x.RunSequence(Sequence{Repeated: []Step{{e.addPars, Linear(1, 32), []Arg{Params(p)}}}, Repeat: 4,
			Reads: []ReadRequest{{b, 28, 4}}}, [][]byte{word})
		require.NoError(t, err)
	})
	assertIO(t, d, cost{syncs: 1, uploads: 1, upBytes: 16, reads: 1, readBytes: 4, launches: 4}, "identical parameters uploaded once")
	assert.EqualValues(t, 3+4, binary.LittleEndian.Uint32(word))
}

// paritySequenceErrors: vyre checks counts and ranges before anything runs.
func paritySequenceErrors(t *testing.T, e *parityEnv) {
	a := e.buffer(t, 64, 0)
	step := []Step{{e.addOne, Linear(1, 32), []Arg{Ptr(a), U64(16)}}}
	var err error
	d := e.measure(t, func() {
		_, err = e.x.RunSequence(Sequence{Prefix: step, Reads: []ReadRequest{{a, 0, 4}, {a, 4, 4}}}, [][]byte{make([]byte, 4)})
	})
	assert.EqualError(t, err, "CUDA resident sequence ranged readback expected matching range/output counts but got 2 range(s) and 1 output(s). Fix: pass one output slot per range.")
	assertIO(t, d, cost{}, "refused")
	_, err = e.x.RunSequence(Sequence{Repeated: step, Repeat: 2, Reads: []ReadRequest{{a, 0, 4}}}, nil)
	assert.ErrorContains(t, err, "CUDA repeated resident sequence ranged readback expected matching range/output counts but got 1 range(s) and 0 output(s).")
	d = e.measure(t, func() {
		_, err = e.x.RunSequence(Sequence{Prefix: step, Reads: []ReadRequest{{a, 60, 8}}}, [][]byte{make([]byte, 8)})
	})
	assert.ErrorContains(t, err, fmt.Sprintf("CUDA resident sequence compact readback for handle %d requested bytes [60..68) but buffer has 64 bytes.", a.ID))
	assertIO(t, d, cost{}, "nothing launched")
	_, err = e.x.RunSequence(Sequence{Repeated: []Step{{nil, Linear(1, 32), nil}}, Repeat: 1}, nil)
	assert.ErrorContains(t, err, "sequence repeated step 0: kernel")
	assert.Equal(t, repeat(0, 16), e.words(t, a))
}

// parityHostLoop: a host loop waits for each read and once at its end, and
// no more.
func parityHostLoop(t *testing.T, e *parityEnv) {
	b := e.buffer(t, 4, 0)
	word := make([]byte, 4)
	d := e.measure(t, func() {
		_, err := e.x.RunHostLoop(func(l *HostLoop) error {
			vals, err := l.Resolve([]Arg{Ptr(b), U64(1)})
			if err != nil {
				return err
			}
			for range 3 {
				if err := l.Launch(e.addOne, Linear(1, 32), vals); err != nil {
					return err
				}
				if err := l.Read(b, 0, word); err != nil {
					return err
				}
			}
			return nil
		})
		require.NoError(t, err)
	})
	assertIO(t, d, cost{syncs: 4, reads: 3, readBytes: 12, launches: 3}, "three launches and reads")
	assert.EqualValues(t, 3, binary.LittleEndian.Uint32(word))
}

// newParityFake returns an executor over a fake with the parity kernels.
func newParityFake(t *testing.T, opts Options) (*Executor, *Fake, *Kernel, *Kernel) {
	f := NewFake(FakeConfig{Device: h100(t, 1<<30), Kernels: fakeKernels()})
	x, err := New(f, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = x.Close() })
	m, err := x.LoadModule([]byte(fakePTX))
	require.NoError(t, err)
	addOne, err := m.Kernel("add_one")
	require.NoError(t, err)
	addPars, err := m.Kernel("add_one_params")
	require.NoError(t, err)
	return x, f, addOne, addPars
}

func TestParityOnFake(t *testing.T) {
	for _, c := range parityCases() {
		t.Run(c.name, func(t *testing.T) {
			x, f, addOne, addPars := newParityFake(t, Options{})
			e := &parityEnv{x: x, addOne: addOne, addPars: addPars, fake: f, fallback: func(t *testing.T) (*Executor, *Kernel) {
				y, _, k, _ := newParityFake(t, Options{ResidentBorrowedFallback: true})
				return y, k
			}}
			c.run(t, e)
		})
	}
}
