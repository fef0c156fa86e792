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
// (vyre's): n must be positive (a *ResidentError of kind
// ResidentZeroLength otherwise) and resident+n must not exceed
// LiveResidentBudget (a *BudgetError otherwise); nothing is allocated when
// it fails. The contents are undefined until uploaded.
func (x *Executor) Alloc(n uint64) (Buffer, error) {
	if n == 0 {
		return Buffer{}, &ResidentError{Kind: ResidentZeroLength, Op: "allocation"}
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

// Free frees a resident buffer. It refuses a buffer bound to a pending
// dispatch or a queued asynchronous upload (*InFlightError) and an unknown
// or already freed handle (*UnknownBufferError).
func (x *Executor) Free(b Buffer) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return ErrClosed
	}
	r, err := x.residentLocked(b, opFree, 0, b.Len)
	if err != nil {
		return err
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
	r, err := x.residentLocked(b, "device address", 0, 0)
	if err != nil {
		return 0, err
	}
	return r.ptr, nil
}

// InFlight returns the number of pending dispatches and queued
// asynchronous uploads using b.
func (x *Executor) InFlight(b Buffer) uint32 {
	x.mu.Lock()
	defer x.mu.Unlock()
	if r, ok := x.buffers[b.ID]; ok {
		return r.inFlight
	}
	return 0
}

// residentLocked resolves a live handle as vyre's resident store does: an
// unknown or freed handle is a *UnknownBufferError naming op and the range
// it asked for, and a handle whose Len is not the allocated length is a
// *ResidentError of kind ResidentLengthDrift.
func (x *Executor) residentLocked(b Buffer, op string, off, n uint64) (*resident, error) {
	r, ok := x.buffers[b.ID]
	if !ok {
		return nil, &UnknownBufferError{Buffer: b.ID, Op: op, Offset: off, Len: n}
	}
	if b.Len != r.len {
		return nil, &ResidentError{Kind: ResidentLengthDrift, Op: op, Buffer: b.ID, Len: b.Len, BufferLen: r.len}
	}
	return r, nil
}

// rangeLocked resolves the bytes [off, off+n) of b for op with vyre's
// checks, in vyre's order: the handle, the end offset (overflow, then past
// the buffer), then the device address of off (not computed for n = 0). It
// returns that address.
func (x *Executor) rangeLocked(b Buffer, off, n uint64, op string) (DevPtr, error) {
	r, err := x.residentLocked(b, op, off, n)
	if err != nil {
		return 0, err
	}
	fail := func(k ResidentErrorKind) error {
		return &ResidentError{Kind: k, Op: op, Buffer: b.ID, Offset: off, Len: n, BufferLen: r.len}
	}
	end, carry := bits.Add64(off, n, 0)
	if carry != 0 {
		return 0, fail(ResidentOverflow)
	}
	if end > r.len {
		return 0, fail(ResidentOutOfRange)
	}
	if n == 0 {
		return 0, nil
	}
	ptr, carry := bits.Add64(uint64(r.ptr), off, 0)
	if carry != 0 {
		return 0, fail(ResidentPointerOverflow)
	}
	return DevPtr(ptr), nil
}
