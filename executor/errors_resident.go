package executor

import (
	"fmt"
	"strings"
)

// ResidentErrorKind says what a ResidentError refused.
type ResidentErrorKind int

// The kinds of ResidentError.
const (
	// ResidentZeroLength is an allocation of 0 bytes.
	ResidentZeroLength ResidentErrorKind = iota + 1
	// ResidentLengthMismatch is a whole-buffer upload whose data is not the
	// buffer's length.
	ResidentLengthMismatch
	// ResidentOutOfRange is a byte range that ends past the buffer.
	ResidentOutOfRange
	// ResidentOverflow is an offset plus length that overflows 64 bits.
	ResidentOverflow
	// ResidentPointerOverflow is a device address plus offset that
	// overflows 64 bits.
	ResidentPointerOverflow
	// ResidentCountMismatch is a batch whose ranges and outputs (or buffers
	// and data) differ in number: Len and BufferLen hold the two counts.
	ResidentCountMismatch
	// ResidentOutputLength is an output slot whose length is not its
	// range's (Index names the slot).
	ResidentOutputLength
	// ResidentLengthDrift is a handle whose Len is not the length the
	// buffer was allocated with.
	ResidentLengthDrift
)

// ResidentError is a resident buffer operation refused before anything was
// copied, so the buffer is unchanged. Its message is vyre's (resident_io),
// naming the buffer, the offset and the length, followed by a "Fix:"
// sentence (vyre's messages start with "Fix:" and carry the remedy in the
// same sentence).
type ResidentError struct {
	Kind ResidentErrorKind
	// Op is the operation in vyre's words: "upload", "sequence upload",
	// "ranged batch download", "readback", "sequence compact readback",
	// "sequence ranged readback", "repeated sequence ranged readback".
	Op string
	// Buffer is the buffer's id (0 for a count mismatch).
	Buffer uint64
	// Offset and Len are the requested range.
	Offset, Len uint64
	// BufferLen is the buffer's length (for ResidentLengthDrift, the
	// allocated length; Len is the handle's).
	BufferLen uint64
	// Index is the batch item (ResidentOutputLength).
	Index int
}

func (e *ResidentError) Error() string {
	switch e.Kind {
	case ResidentZeroLength:
		return "CUDA resident buffers must have a non-zero byte length (requested 0 bytes). Fix: allocate at least 1 byte."
	case ResidentLengthMismatch:
		return fmt.Sprintf("%s for handle %d expected %d bytes but received %d. Fix: upload exactly the buffer's %d bytes, or write a part of it with UploadAt.",
			e.subject(), e.Buffer, e.BufferLen, e.Len, e.BufferLen)
	case ResidentOutOfRange:
		return e.outOfRange()
	case ResidentOverflow:
		if e.upload() {
			return fmt.Sprintf("%s at offset %d for handle %d would overflow uint64 (length %d). Fix: pass an offset and a length whose sum fits in 64 bits.", e.subject(), e.Offset, e.Buffer, e.Len)
		}
		return fmt.Sprintf("%s for handle %d overflows uint64 at offset %d len %d. Fix: pass an offset and a length whose sum fits in 64 bits.", e.subject(), e.Buffer, e.Offset, e.Len)
	case ResidentPointerOverflow:
		return fmt.Sprintf("%s pointer arithmetic overflowed for handle %d at offset %d (length %d). Fix: pass an offset inside the buffer.", e.subject(), e.Buffer, e.Offset, e.Len)
	case ResidentCountMismatch:
		return e.countMismatch()
	case ResidentOutputLength:
		return fmt.Sprintf("%s output %d has %d bytes but its range of handle %d at offset %d has %d. Fix: give every output slot exactly its range's length.", e.subject(), e.Index, e.BufferLen, e.Buffer, e.Offset, e.Len)
	case ResidentLengthDrift:
		return fmt.Sprintf("CUDA resident buffer handle %d byte length drifted from %d to %d. Fix: pass the Buffer value that Alloc returned.", e.Buffer, e.Len, e.BufferLen)
	}
	return fmt.Sprintf("%s for handle %d refused. Fix: check the buffer, offset and length.", e.subject(), e.Buffer)
}

// subject is vyre's start of the message: "CUDA resident upload", or
// "CUDA repeated resident sequence ranged readback" for the repeated
// sequence.
func (e *ResidentError) subject() string {
	if rest, ok := strings.CutPrefix(e.Op, "repeated "); ok {
		return "CUDA repeated resident " + rest
	}
	return "CUDA resident " + e.Op
}

// upload reports whether the operation writes the buffer.
func (e *ResidentError) upload() bool { return e.Op == opUpload || e.Op == opSequenceUpload }

func (e *ResidentError) outOfRange() string {
	end := e.Offset + e.Len // no overflow: that is ResidentOverflow
	if e.upload() {
		return fmt.Sprintf("%s for handle %d writes [%d..%d) but buffer is only %d bytes. Fix: resize the resident slot or trim the source slice so that it does not exceed the buffer.",
			e.subject(), e.Buffer, e.Offset, end, e.BufferLen)
	}
	return fmt.Sprintf("%s for handle %d requested bytes [%d..%d) but buffer has %d bytes. Fix: request a range that does not exceed the buffer's %d bytes.",
		e.subject(), e.Buffer, e.Offset, end, e.BufferLen, e.BufferLen)
}

func (e *ResidentError) countMismatch() string {
	if e.upload() {
		return fmt.Sprintf("%s expected matching buffer/data counts but got %d buffer(s) and %d data slice(s). Fix: pass one data slice per buffer.", e.subject(), e.BufferLen, e.Len)
	}
	return fmt.Sprintf("%s expected matching range/output counts but got %d range(s) and %d output(s). Fix: pass one output slot per range.", e.subject(), e.BufferLen, e.Len)
}

// Operation names of ResidentError and UnknownBufferError, in vyre's words.
const (
	opUpload         = "upload"
	opSequenceUpload = "sequence upload"
	opDownload       = "ranged batch download"
	opReadback       = "readback"
	opSequenceRead   = "sequence compact readback"
	opSequenceRanged = "sequence ranged readback"
	opRepeatedRanged = "repeated sequence ranged readback"
	opKernelArgument = "kernel argument"
	opFree           = "free"
)
