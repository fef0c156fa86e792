package executor

import (
	"math/bits"

	"github.com/gpuplan/gpuplan/internal/checked"
)

// Buffer is a handle to a resident device buffer (vyre's
// CudaResidentBuffer): a process-unique id, starting at 1, and its length in
// bytes.
type Buffer struct {
	ID  uint64
	Len uint64
}

// Range is a byte range [Offset, Offset+Len).
type Range struct {
	Offset uint64
	Len    uint64
}

// ResidentBytes returns the bytes held by resident buffers.
func (x *Executor) ResidentBytes() uint64 {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.resBytes
}

// Budget returns the live resident budget now (LiveResidentBudget of the
// device's total memory, the live free memory and the resident bytes).
func (x *Executor) Budget() (uint64, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return 0, ErrClosed
	}
	free, _, err := x.b.MemInfo()
	if err != nil {
		return 0, err
	}
	return LiveResidentBudget(x.total, free, x.resBytes), nil
}

// Alloc allocates a resident buffer of n bytes under the budget rule
// (vyre's): n must be positive and resident+n must not exceed
// LiveResidentBudget; otherwise a *BudgetError is returned and nothing is
// allocated. The contents are undefined until uploaded.
func (x *Executor) Alloc(n uint64) (Buffer, error) {
	if n == 0 {
		return Buffer{}, invalidArg("resident buffer length", "Fix: allocate at least 1 byte.", "is 0")
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return Buffer{}, ErrClosed
	}
	free, _, err := x.b.MemInfo()
	if err != nil {
		return Buffer{}, err
	}
	budget := LiveResidentBudget(x.total, free, x.resBytes)
	need, err := checked.Add(x.resBytes, n, "resident bytes")
	if err != nil {
		return Buffer{}, err
	}
	if need > budget {
		return Buffer{}, &BudgetError{Required: need, Budget: budget}
	}
	ptr, err := x.b.MemAlloc(n)
	if err != nil {
		return Buffer{}, err
	}
	id := x.nextID
	if id == 0 || x.nextID == ^uint64(0) {
		_ = x.b.MemFree(ptr)
		return Buffer{}, &checked.OverflowError{Field: "resident buffer id"}
	}
	x.nextID++
	x.buffers[id] = &resident{ptr: ptr, len: n}
	x.resBytes = need
	x.tel.add(cResidentAllocBytes, n)
	return Buffer{ID: id, Len: n}, nil
}

// Free frees a resident buffer. It refuses a buffer with in-flight
// dispatches (*InFlightError) and an unknown or already freed handle
// (*UnknownBufferError).
func (x *Executor) Free(b Buffer) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return ErrClosed
	}
	r, ok := x.buffers[b.ID]
	if !ok {
		return &UnknownBufferError{Buffer: b.ID}
	}
	if r.inFlight > 0 {
		return &InFlightError{Buffer: b.ID, InFlight: r.inFlight}
	}
	if err := x.b.MemFree(r.ptr); err != nil {
		return err
	}
	delete(x.buffers, b.ID)
	if x.resBytes >= r.len {
		x.resBytes -= r.len
	} else { // accounting drifted: rebuild it (vyre does the same)
		x.resBytes = 0
		for _, o := range x.buffers {
			x.resBytes += o.len
		}
	}
	return nil
}

// DevicePtr returns the device address of a resident buffer, for kernels
// that take pointers inside parameter structs.
func (x *Executor) DevicePtr(b Buffer) (DevPtr, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	r, ok := x.buffers[b.ID]
	if !ok {
		return 0, &UnknownBufferError{Buffer: b.ID}
	}
	return r.ptr, nil
}

// InFlight returns the number of pending dispatches using b.
func (x *Executor) InFlight(b Buffer) uint32 {
	x.mu.Lock()
	defer x.mu.Unlock()
	if r, ok := x.buffers[b.ID]; ok {
		return r.inFlight
	}
	return 0
}

// lookupRangeLocked resolves a byte range of a live buffer.
func (x *Executor) lookupRangeLocked(b Buffer, off, n uint64, what string) (*resident, error) {
	r, ok := x.buffers[b.ID]
	if !ok {
		return nil, &UnknownBufferError{Buffer: b.ID}
	}
	stop, err := checked.Add(off, n, what+" end offset")
	if err != nil {
		return nil, err
	}
	if stop > r.len {
		return nil, invalidArg(what, "Fix: keep offset+length within the buffer.", "bytes [%d, %d) exceed buffer %d of %d bytes", off, stop, b.ID, r.len)
	}
	return r, nil
}

// Upload copies data to the start of b.
func (x *Executor) Upload(b Buffer, data []byte) error { return x.UploadAt(b, 0, data) }

// UploadAt copies data into b at byte offset off.
func (x *Executor) UploadAt(b Buffer, off uint64, data []byte) error {
	return x.UploadMany([]Upload{{Buffer: b, Offset: off, Data: data}})
}

// UploadMany validates every upload, fuses them (FuseUploads) and copies the
// fused uploads through pinned staging on one pooled non-blocking stream.
// Nothing is copied if any upload is invalid.
func (x *Executor) UploadMany(ups []Upload) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return ErrClosed
	}
	for _, u := range ups {
		if _, err := x.lookupRangeLocked(u.Buffer, u.Offset, uint64(len(u.Data)), "upload"); err != nil {
			return err
		}
	}
	fused, err := FuseUploads(ups)
	if err != nil || len(fused) == 0 {
		return err
	}
	s, err := x.streamLocked()
	if err != nil {
		return err
	}
	defer x.releaseStreamLocked(s)
	for _, u := range fused {
		r := x.buffers[u.Buffer.ID]
		if err := x.copyInLocked(r.ptr+DevPtr(u.Offset), u.Data, s); err != nil {
			return err
		}
		x.tel.add(cHostUploadOps, 1)
		x.tel.add(cHostToDeviceBytes, uint64(len(u.Data)))
	}
	return nil
}

// stagePair holds up to two pinned staging buffers and their events for a
// double-buffered copy: while the DMA engine moves one chunk, the host
// copies the other.
type stagePair struct {
	x     *Executor
	stage [2]PinnedMem
	ev    [2]EventRef
	used  [2]bool
}

func (x *Executor) newStagePair(total int) (*stagePair, error) {
	p := &stagePair{x: x}
	chunk := min(x.opts.StagingChunkBytes, total)
	n := 1
	if total > chunk {
		n = 2
	}
	for k := 0; k < n; k++ {
		var err error
		if p.stage[k], err = x.stagingLocked(chunk); err != nil {
			p.release()
			return nil, err
		}
		p.used[k] = true
		if n == 2 {
			if p.ev[k], err = x.eventLocked(); err != nil {
				p.release()
				return nil, err
			}
		}
	}
	return p, nil
}

func (p *stagePair) release() {
	for k := range 2 {
		if p.used[k] {
			p.x.releaseStagingLocked(p.stage[k])
		}
		if p.ev[k] != 0 {
			p.x.releaseEventLocked(p.ev[k])
		}
	}
}

// copyInLocked copies data to dst through pinned staging on stream s,
// double-buffered in chunks of at most StagingChunkBytes, and waits for it.
func (x *Executor) copyInLocked(dst DevPtr, data []byte, s StreamRef) error {
	if len(data) == 0 {
		return nil
	}
	sp, err := x.newStagePair(len(data))
	if err != nil {
		return err
	}
	defer sp.release()
	return x.onDriver(func() error {
		chunk := len(sp.stage[0].Data)
		var inFlight [2]bool
		for i, done := 0, 0; done < len(data); i++ {
			k := i % 2
			if inFlight[k] { // the DMA that last used this stage must be done
				if err := x.b.EventSync(sp.ev[k]); err != nil {
					return err
				}
			}
			n := min(chunk, len(data)-done)
			copy(sp.stage[k].Data, data[done:done+n])
			if err := x.b.CopyHtoDAsync(dst+DevPtr(done), sp.stage[k], uint64(n), s); err != nil {
				return err
			}
			if sp.ev[k] != 0 {
				if err := x.b.EventRecord(sp.ev[k], s); err != nil {
					return err
				}
				inFlight[k] = true
			}
			done += n
		}
		x.tel.add(cSyncPoints, 1)
		return x.b.StreamSync(s)
	})
}

// Download returns the whole of b.
func (x *Executor) Download(b Buffer) ([]byte, error) {
	out, err := x.DownloadMany([]ReadRequest{{Buffer: b, Offset: 0, Len: b.Len}})
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// DownloadRange returns n bytes of b from byte offset off.
func (x *Executor) DownloadRange(b Buffer, off, n uint64) ([]byte, error) {
	out, err := x.DownloadMany([]ReadRequest{{Buffer: b, Offset: off, Len: n}})
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// DownloadRanges returns several ranges of b, fused into as few copies as
// possible.
func (x *Executor) DownloadRanges(b Buffer, ranges []Range) ([][]byte, error) {
	reqs := make([]ReadRequest, len(ranges))
	for i, r := range ranges {
		reqs[i] = ReadRequest{Buffer: b, Offset: r.Offset, Len: r.Len}
	}
	return x.DownloadMany(reqs)
}

// DownloadRangeInto copies len(dst) bytes of b from byte offset off into
// dst, without allocating a result.
func (x *Executor) DownloadRangeInto(b Buffer, off uint64, dst []byte) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return ErrClosed
	}
	r, err := x.lookupRangeLocked(b, off, uint64(len(dst)), "download")
	if err != nil || len(dst) == 0 {
		return err
	}
	return x.copyOutLocked(r.ptr+DevPtr(off), dst)
}

// DownloadMany reads ranges of any buffers. Requests are fused
// (FuseReadbacks): each fused copy goes through pinned staging on a pooled
// non-blocking stream, and each request gets its own slice (a zero-length
// request gets an empty, non-nil slice).
func (x *Executor) DownloadMany(reqs []ReadRequest) ([][]byte, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return nil, ErrClosed
	}
	for _, q := range reqs {
		if _, err := x.lookupRangeLocked(q.Buffer, q.Offset, q.Len, "download"); err != nil {
			return nil, err
		}
	}
	copies, views, err := FuseReadbacks(reqs)
	if err != nil {
		return nil, err
	}
	users := make([]int, len(copies))
	for _, v := range views {
		if v.CopySlot >= 0 {
			users[v.CopySlot]++
		}
	}
	host := make([][]byte, len(copies))
	for i, c := range copies {
		host[i] = make([]byte, c.Len)
		if err := x.copyOutLocked(x.buffers[c.Buffer.ID].ptr+DevPtr(c.Offset), host[i]); err != nil {
			return nil, err
		}
		x.tel.add(cReadbackBytes, c.Len)
	}
	out := make([][]byte, len(reqs))
	for i, v := range views {
		switch {
		case v.CopySlot < 0:
			out[i] = []byte{}
		case users[v.CopySlot] == 1:
			out[i] = host[v.CopySlot][v.ByteOffset : v.ByteOffset+v.ByteLen : v.ByteOffset+v.ByteLen]
		default: // shared copy: give each request its own bytes
			out[i] = append([]byte(nil), host[v.CopySlot][v.ByteOffset:v.ByteOffset+v.ByteLen]...)
		}
	}
	return out, nil
}

// copyOutLocked copies len(dst) bytes from src through pinned staging on a
// pooled stream, double-buffered in chunks of at most StagingChunkBytes.
func (x *Executor) copyOutLocked(src DevPtr, dst []byte) error {
	s, err := x.streamLocked()
	if err != nil {
		return err
	}
	defer x.releaseStreamLocked(s)
	sp, err := x.newStagePair(len(dst))
	if err != nil {
		return err
	}
	defer sp.release()
	err = x.onDriver(func() error {
		chunk := len(sp.stage[0].Data)
		nchunks := (len(dst) + chunk - 1) / chunk
		issue := func(i int) error {
			k, off := i%2, i*chunk
			n := min(chunk, len(dst)-off)
			if err := x.b.CopyDtoHAsync(sp.stage[k], src+DevPtr(off), uint64(n), s); err != nil {
				return err
			}
			if sp.ev[k] != 0 {
				return x.b.EventRecord(sp.ev[k], s)
			}
			return nil
		}
		for i := 0; i < min(2, nchunks); i++ {
			if err := issue(i); err != nil {
				return err
			}
		}
		for i := 0; i < nchunks; i++ {
			k, off := i%2, i*chunk
			n := min(chunk, len(dst)-off)
			var err error
			if sp.ev[k] != 0 {
				err = x.b.EventSync(sp.ev[k])
			} else {
				err = x.b.StreamSync(s)
			}
			if err != nil {
				return err
			}
			x.tel.add(cSyncPoints, 1)
			copy(dst[off:off+n], sp.stage[k].Data[:n])
			if i+2 < nchunks {
				if err := issue(i + 2); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	x.tel.add(cDeviceReadbackOps, 1)
	x.tel.add(cDeviceToHostBytes, uint64(len(dst)))
	return nil
}

// ---- pooled launch resources --------------------------------------------

// streamLocked takes a pooled non-blocking stream (never the null stream).
func (x *Executor) streamLocked() (StreamRef, error) {
	if n := len(x.streams); n > 0 {
		s := x.streams[n-1]
		x.streams = x.streams[:n-1]
		return s, nil
	}
	return x.b.StreamCreate()
}

func (x *Executor) releaseStreamLocked(s StreamRef) {
	if len(x.streams) < LaunchResourceCache {
		x.streams = append(x.streams, s)
		return
	}
	_ = x.b.StreamDestroy(s)
}

func (x *Executor) eventLocked() (EventRef, error) {
	if n := len(x.events); n > 0 {
		e := x.events[n-1]
		x.events = x.events[:n-1]
		return e, nil
	}
	return x.b.EventCreate(true)
}

func (x *Executor) releaseEventLocked(e EventRef) {
	if len(x.events) < LaunchResourceCache {
		x.events = append(x.events, e)
		return
	}
	_ = x.b.EventDestroy(e)
}

// stagingLocked takes a pinned buffer of at least n bytes (rounded up to a
// power of two) from the pool, or allocates one.
func (x *Executor) stagingLocked(n int) (PinnedMem, error) {
	size := 1
	if n > 1 {
		size = 1 << bits.Len(uint(n-1))
	}
	if list := x.staging[size]; len(list) > 0 {
		p := list[len(list)-1]
		x.staging[size] = list[:len(list)-1]
		x.stagingBytes -= size
		return p, nil
	}
	x.tel.add(cTransientAllocBytes, uint64(size))
	p, err := x.b.HostAlloc(size)
	if err != nil {
		return PinnedMem{}, err
	}
	return p, nil
}

// releaseStagingLocked returns a staging buffer to the pool while the pool
// stays within PinnedHostPoolBytes; otherwise frees it.
func (x *Executor) releaseStagingLocked(p PinnedMem) {
	size := len(p.Data)
	slots := min(1024, max(1, PinnedHostPoolBytes/max(size, 1)))
	if x.stagingBytes+size <= PinnedHostPoolBytes && len(x.staging[size]) < slots {
		x.staging[size] = append(x.staging[size], p)
		x.stagingBytes += size
		return
	}
	_ = x.b.HostFree(p)
}
