package executor

import "math/bits"

// MaxStagingRing is the most staging buffers (each at most StagingChunkBytes)
// one batch of copies uses: a batch of up to MaxStagingRing chunks waits on
// the host once, at its end; a larger one also waits each time the ring of
// staging buffers comes round to a buffer whose copy is still in flight.
// With the default chunk the ring is 128 MiB, the pinned pool's size.
const MaxStagingRing = PinnedHostPoolBytes / DefaultStagingChunkBytes

// stagingRing carries one batch of copies through pinned staging memory on
// one stream. Copies are packed one after another into the staging buffers
// (a copy larger than the room left is split); a buffer that fills up is
// fenced with an event and the next one is used. Only when the ring comes
// round to a buffer still in flight does the host wait for it. finish
// waits for the stream once and then copies the downloaded bytes out of
// staging.
type stagingRing struct {
	x     *Executor
	s     StreamRef
	buf   []PinnedMem
	ev    []EventRef
	busy  []bool
	drain [][]drainCopy
	cur   int
	used  int
	// waits counts the host waits: ring turns and the final one.
	waits uint64
}

// drainCopy is a download's bytes waiting in staging for their wait.
type drainCopy struct{ dst, src []byte }

// newRingLocked sizes a ring for total bytes on stream s: one buffer of the
// total (rounded up to a power of two) when it fits in a chunk, else up to
// MaxStagingRing chunks with one event each. The executor's one ring is
// reused (its slices keep their capacity), so a batch allocates nothing for
// its staging once warm; a ring taken while another is in use is new.
func (x *Executor) newRingLocked(s StreamRef, total uint64) (*stagingRing, error) {
	chunk := uint64(x.opts.StagingChunkBytes)
	n := min((total+chunk-1)/chunk, MaxStagingRing)
	size := int(chunk)
	if n <= 1 {
		n, size = 1, int(max(total, 1))
	}
	r := &stagingRing{}
	if !x.ringInUse {
		r = &x.ring
		x.ringInUse = true
	}
	r.reset(x, s, int(n))
	for range n {
		p, err := x.stagingLocked(size)
		if err != nil {
			r.release()
			return nil, err
		}
		r.buf = append(r.buf, p)
		if n > 1 {
			e, err := x.eventLocked()
			if err != nil {
				r.release()
				return nil, err
			}
			r.ev = append(r.ev, e)
		}
	}
	return r, nil
}

// reset empties the ring for a batch of n buffers on stream s.
func (r *stagingRing) reset(x *Executor, s StreamRef, n int) {
	r.x, r.s, r.cur, r.used, r.waits = x, s, 0, 0, 0
	r.buf, r.ev = r.buf[:0], r.ev[:0]
	r.busy = append(r.busy[:0], make([]bool, n)...)
	for len(r.drain) < n {
		r.drain = append(r.drain, nil)
	}
	for k := range r.drain {
		r.drain[k] = r.drain[k][:0]
	}
}

// release returns the ring's staging buffers and events to the pools, and
// the ring to the executor.
func (r *stagingRing) release() {
	for _, p := range r.buf {
		r.x.releaseStagingLocked(p)
	}
	for _, e := range r.ev {
		r.x.releaseEventLocked(e)
	}
	r.buf, r.ev = r.buf[:0], r.ev[:0]
	if r == &r.x.ring {
		r.x.ringInUse = false
	}
}

// abandon gives up the ring's staging and events (a copy may still be in
// flight) without returning them to the pools.
func (r *stagingRing) abandon() {
	r.buf, r.ev = nil, nil
	r.release()
}

// room returns the staging bytes [used, end) of the current buffer, moving
// to the next buffer when the current one is full.
func (r *stagingRing) room() (PinnedMem, error) {
	if r.used == len(r.buf[r.cur].Data) {
		if err := r.advance(); err != nil {
			return PinnedMem{}, err
		}
	}
	b := r.buf[r.cur]
	return b.slice(r.used, len(b.Data)), nil
}

// advance fences the current buffer and moves to the next, waiting for it
// if its copies are still in flight.
func (r *stagingRing) advance() error {
	b := r.x.b
	if len(r.ev) == 0 { // a one-buffer ring: wait for it in place
		if err := b.StreamSync(r.s); err != nil {
			return err
		}
		r.waits++
		r.drainBuffer(r.cur)
		r.used = 0
		return nil
	}
	if err := b.EventRecord(r.ev[r.cur], r.s); err != nil {
		return err
	}
	r.busy[r.cur] = true
	r.cur = (r.cur + 1) % len(r.buf)
	r.used = 0
	if !r.busy[r.cur] {
		return nil
	}
	if err := b.EventSync(r.ev[r.cur]); err != nil {
		return err
	}
	r.waits++
	r.busy[r.cur] = false
	r.drainBuffer(r.cur)
	return nil
}

// put enqueues the upload of data to dst.
func (r *stagingRing) put(dst DevPtr, data []byte) error {
	for len(data) > 0 {
		room, err := r.room()
		if err != nil {
			return err
		}
		n := min(len(room.Data), len(data))
		copyParallel(room.Data, data[:n])
		if err := r.x.b.CopyHtoDAsync(dst, room.slice(0, n), uint64(n), r.s); err != nil {
			return err
		}
		r.used += n
		dst += DevPtr(n)
		data = data[n:]
	}
	return nil
}

// get enqueues the download of len(dst) bytes at src into dst; dst holds
// them after finish.
func (r *stagingRing) get(src DevPtr, dst []byte) error {
	for len(dst) > 0 {
		room, err := r.room()
		if err != nil {
			return err
		}
		n := min(len(room.Data), len(dst))
		if err := r.x.b.CopyDtoHAsync(room.slice(0, n), src, uint64(n), r.s); err != nil {
			return err
		}
		r.drain[r.cur] = append(r.drain[r.cur], drainCopy{dst: dst[:n], src: room.Data[:n]})
		r.used += n
		src += DevPtr(n)
		dst = dst[n:]
	}
	return nil
}

// finish waits once for everything enqueued on the stream and copies the
// downloaded bytes out of staging.
func (r *stagingRing) finish() error {
	if err := r.x.b.StreamSync(r.s); err != nil {
		return err
	}
	r.waits++
	for k := range r.buf {
		r.drainBuffer(k)
	}
	return nil
}

// drainBuffer copies the downloads staged in buffer k to their
// destinations.
func (r *stagingRing) drainBuffer(k int) {
	for _, d := range r.drain[k] {
		copyParallel(d.dst, d.src)
	}
	r.drain[k] = r.drain[k][:0]
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
// power of two) from the pool, or allocates one. Pinned staging is host
// memory reused across transfers, not a transient device allocation, so it
// is not counted in TransientAllocationBytesRequested (vyre counts only its
// transient device pool there).
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
	return x.b.HostAlloc(size)
}

// releaseStagingLocked returns a staging buffer to the pool while the pool
// stays within PinnedHostPoolBytes, making room by freeing pooled buffers
// larger than it, largest first; otherwise it frees the buffer. Without the
// eviction, one large transfer (a graph upload through a full ring) would
// fill the pool for good, and every later small readback would allocate
// and free pinned memory, about a millisecond each.
func (x *Executor) releaseStagingLocked(p PinnedMem) {
	size := len(p.Data)
	slots := min(1024, max(1, x.stagingLimit/max(size, 1)))
	if size <= x.stagingLimit && len(x.staging[size]) < slots {
		x.evictLargerLocked(size, x.stagingLimit-size)
	}
	if x.stagingBytes+size <= x.stagingLimit && len(x.staging[size]) < slots {
		x.staging[size] = append(x.staging[size], p)
		x.stagingBytes += size
		return
	}
	_ = x.b.HostFree(p)
}

// evictLargerLocked frees pooled staging buffers larger than size, largest
// first, until the pool holds at most limit bytes or none is left.
func (x *Executor) evictLargerLocked(size, limit int) {
	for x.stagingBytes > limit {
		big := 0
		for s, list := range x.staging {
			if s > size && s > big && len(list) > 0 {
				big = s
			}
		}
		if big == 0 {
			return
		}
		list := x.staging[big]
		_ = x.b.HostFree(list[len(list)-1])
		x.staging[big] = list[:len(list)-1]
		x.stagingBytes -= big
	}
}
