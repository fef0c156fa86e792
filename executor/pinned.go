package executor

import (
	"errors"
	"fmt"
	"unsafe"
)

// hostPin is caller memory registered with the driver (PinHostBuffer).
type hostPin struct {
	start, n uintptr
	mem      PinnedMem
	// queued counts the asynchronous uploads from it since the last
	// SynchronizeUploads.
	queued int
}

// asyncUploads is the state of the asynchronous uploads: the stream they
// are queued on (0: none) and what they hold in flight.
type asyncUploads struct {
	s       StreamRef
	queued  int
	buffers []uint64
	pins    []*hostPin
}

// addr returns the address of buf's first byte.
func addr(buf []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(buf))) }

// PinHostBuffer page-locks buf, caller memory, for asynchronous uploads
// (vyre's pin_host_buffer, cuMemHostRegister): UploadAsyncAt then copies
// from any part of it without staging. buf must stay untouched while an
// upload from it is queued, and must be unpinned (UnpinHostBuffer, or
// Close) before it is dropped. Pinning an empty slice, or memory that
// overlaps a pinned buffer, is an error and pins nothing.
func (x *Executor) PinHostBuffer(buf []byte) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return ErrClosed
	}
	if len(buf) == 0 {
		return invalidArg("host buffer", "Fix: pin a non-empty buffer; keep empty host buffers unpinned.", "pin_host_buffer requires a non-zero byte length")
	}
	start, n := addr(buf), uintptr(len(buf))
	for _, p := range x.pins {
		if start < p.start+p.n && p.start < start+n {
			return newDriverError("cuMemHostRegister", cuErrHostMemoryAlreadyRegistered,
				fmt.Sprintf("host buffer of %d bytes at %#x overlaps the pinned buffer of %d bytes at %#x", n, start, p.n, p.start))
		}
	}
	mem, err := x.b.HostRegister(buf)
	if err != nil {
		return err
	}
	x.pins = append(x.pins, &hostPin{start: start, n: n, mem: mem})
	return nil
}

// UnpinHostBuffer unregisters a buffer pinned with PinHostBuffer (vyre's
// unpin_host_buffer, cuMemHostUnregister); buf must start where the pinned
// buffer starts. It refuses memory that was not pinned and memory that a
// queued asynchronous upload still reads (call SynchronizeUploads first),
// leaving it pinned.
func (x *Executor) UnpinHostBuffer(buf []byte) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return ErrClosed
	}
	start := addr(buf)
	for i, p := range x.pins {
		if p.start != start || len(buf) == 0 {
			continue
		}
		if p.queued > 0 {
			return &PinnedInFlightError{Addr: p.start, Len: uint64(p.n), Queued: p.queued}
		}
		if err := x.b.HostUnregister(p.mem); err != nil {
			return err
		}
		x.pins = append(x.pins[:i], x.pins[i+1:]...)
		return nil
	}
	return newDriverError("cuMemHostUnregister", cuErrHostMemoryNotRegistered, fmt.Sprintf("host buffer of %d bytes at %#x was not pinned with PinHostBuffer", len(buf), start))
}

// PinnedInFlightError refuses to unpin caller memory that queued
// asynchronous uploads still read.
type PinnedInFlightError struct {
	Addr   uintptr
	Len    uint64
	Queued int
}

func (e *PinnedInFlightError) Error() string {
	return fmt.Sprintf("pinned host buffer of %d bytes at %#x is still read by %d queued asynchronous upload(s). Fix: call SynchronizeUploads before UnpinHostBuffer.", e.Len, e.Addr, e.Queued)
}

// pinFor returns the pinned buffer holding all of src.
func (x *Executor) pinFor(src []byte) *hostPin {
	start, n := addr(src), uintptr(len(src))
	for _, p := range x.pins {
		if start >= p.start && start+n <= p.start+p.n {
			return p
		}
	}
	return nil
}

// UploadAsyncAt queues the upload of src, which must lie inside a buffer
// pinned with PinHostBuffer, into b at byte offset off, and returns without
// waiting (vyre's upload_resident_async_at). Uploads queue in order on one
// stream of the executor until SynchronizeUploads; until then b counts as
// in flight (Free refuses it) and the pinned buffer cannot be unpinned. An
// empty src does nothing. It counts as a host upload of len(src) bytes.
func (x *Executor) UploadAsyncAt(b Buffer, off uint64, src []byte) error {
	if len(src) == 0 {
		return nil
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return ErrClosed
	}
	dst, err := x.rangeLocked(b, off, uint64(len(src)), opUpload)
	if err != nil {
		return err
	}
	pin := x.pinFor(src)
	if pin == nil {
		return invalidArg("asynchronous upload source", "Fix: pin the host buffer with PinHostBuffer and upload from inside it, or use UploadAt, which stages the copy.",
			"%d bytes at %#x are not inside a pinned host buffer", len(src), addr(src))
	}
	err = x.onDriver(func() error {
		x.rangePush(RangeAsyncUpload)
		defer x.rangePop()
		created := x.async.s == 0
		if created {
			s, err := x.streamLocked()
			if err != nil {
				return err
			}
			x.async.s = s
		}
		mem := PinnedMem{Data: src, ref: pin.mem.ref}
		if err := x.b.CopyHtoDAsync(dst, mem, uint64(len(src)), x.async.s); err != nil {
			if created {
				x.releaseStreamLocked(x.async.s)
				x.async.s = 0
			}
			return err
		}
		return nil
	})
	if err != nil {
		return err
	}
	x.markAsyncLocked(b.ID, pin)
	x.tel.add(cHostUploadOps, 1)
	x.tel.add(cHostToDeviceBytes, uint64(len(src)))
	return nil
}

// markAsyncLocked holds buffer id and pin in flight for one queued upload.
func (x *Executor) markAsyncLocked(id uint64, pin *hostPin) {
	x.buffers[id].inFlight++
	pin.queued++
	x.async.queued++
	x.async.buffers = append(x.async.buffers, id)
	x.async.pins = append(x.async.pins, pin)
}

// SynchronizeUploads waits for every queued asynchronous upload (vyre's
// synchronize_uploads): one host wait, none when nothing is queued. It then
// releases their buffers and pinned memory.
func (x *Executor) SynchronizeUploads() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return ErrClosed
	}
	if x.async.s == 0 {
		return nil
	}
	err := x.onDriver(func() error {
		x.rangePush(RangeSyncUploads)
		defer x.rangePop()
		return x.b.StreamSync(x.async.s)
	})
	if err != nil {
		return err
	}
	x.tel.add(cSyncPoints, 1)
	x.releaseStreamLocked(x.async.s)
	x.clearAsyncLocked()
	return nil
}

// clearAsyncLocked drops the in-flight marks of the queued uploads.
func (x *Executor) clearAsyncLocked() {
	for _, id := range x.async.buffers {
		if r, ok := x.buffers[id]; ok && r.inFlight > 0 {
			r.inFlight--
		}
	}
	for _, p := range x.async.pins {
		p.queued--
	}
	x.async = asyncUploads{}
}

// unpinAllLocked unregisters every pinned buffer (Close).
func (x *Executor) unpinAllLocked() error {
	var errs []error
	for _, p := range x.pins {
		errs = append(errs, x.b.HostUnregister(p.mem))
	}
	x.pins = nil
	return errors.Join(errs...)
}
