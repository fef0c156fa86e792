package wavedag

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"

	"github.com/gpuplan/gpuplan/executor"
)

// Memory resolves device addresses: the fake backend's memory in the
// emulation, host buffers in the CPU reference.
type Memory interface {
	// Bytes returns the n bytes at ptr, writable, or an error when they are
	// not inside one allocation.
	Bytes(ptr executor.DevPtr, n uint64) ([]byte, error)
}

// HostFunc is the Go reference of a wave function: it runs one tile, as
// the wave's block of threads does on the GPU, and returns t.Err().
type HostFunc func(t *Tile) error

// Tile is what a HostFunc sees of the tile it runs: its index, the wave's
// tile count and block size, the argument slots, device memory, the
// wave's dynamic shared memory and gp_wait. An accessor that fails (an
// argument that is not there, memory outside a buffer) records the first
// error, which Err returns, and gives a zero value or an empty slice.
type Tile struct {
	Index, Count, Threads uint32
	args                  executor.DevPtr
	mem                   Memory
	shared                []byte
	wait                  func()
	err                   error
}

// Err returns the first failed access.
func (t *Tile) Err() error { return t.err }

func (t *Tile) fail(format string, a ...any) {
	if t.err == nil {
		t.err = fmt.Errorf(format, a...)
	}
}

// Arg returns argument slot i.
func (t *Tile) Arg(i int) uint64 {
	if i < 0 || i >= MaxArgs {
		t.fail("argument %d is outside 0..%d", i, MaxArgs-1)
		return 0
	}
	b, err := t.mem.Bytes(t.args+executor.DevPtr(8*i), 8)
	if err != nil {
		t.fail("argument %d: %w", i, err)
		return 0
	}
	return binary.LittleEndian.Uint64(b)
}

// MaxArgs is the most arguments of a wave (the header's GP_MAX_ARGS).
const MaxArgs = 256

// U32, I32, U64, I64, F32 and F64 read scalar argument i as gp_arg_* do.
func (t *Tile) U32(i int) uint32  { return uint32(t.Arg(i)) }
func (t *Tile) I32(i int) int32   { return int32(t.Arg(i)) }
func (t *Tile) U64(i int) uint64  { return t.Arg(i) }
func (t *Tile) I64(i int) int64   { return int64(t.Arg(i)) }
func (t *Tile) F32(i int) float32 { return math.Float32frombits(uint32(t.Arg(i))) }
func (t *Tile) F64(i int) float64 { return math.Float64frombits(t.Arg(i)) }

// Bytes returns n bytes from off bytes past buffer argument i's address.
func (t *Tile) Bytes(i int, off, n uint64) []byte {
	p := t.Arg(i)
	if t.err != nil || n == 0 {
		return nil
	}
	b, err := t.mem.Bytes(executor.DevPtr(p+off), n)
	if err != nil {
		t.fail("argument %d, %d bytes at offset %d: %w", i, n, off, err)
		return nil
	}
	return b
}

// view returns n elements of T from element off of buffer argument i.
func view[T any](t *Tile, i int, off, n uint64) []T {
	var z T
	size := uint64(unsafe.Sizeof(z))
	if n > math.MaxUint64/size || off > math.MaxUint64/size {
		t.fail("argument %d: %d elements at %d overflow", i, n, off)
		return nil
	}
	b := t.Bytes(i, off*size, n*size)
	if len(b) == 0 {
		return nil
	}
	if uintptr(unsafe.Pointer(&b[0]))%unsafe.Alignof(z) != 0 {
		t.fail("argument %d: element %d is misaligned", i, off)
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), n)
}

// Float32s, Float64s, Uint32s, Uint64s and Uint16s (bfloat16 words) view
// n elements from element off of buffer argument i.
func (t *Tile) Float32s(i int, off, n uint64) []float32 { return view[float32](t, i, off, n) }
func (t *Tile) Float64s(i int, off, n uint64) []float64 { return view[float64](t, i, off, n) }
func (t *Tile) Uint32s(i int, off, n uint64) []uint32   { return view[uint32](t, i, off, n) }
func (t *Tile) Uint64s(i int, off, n uint64) []uint64   { return view[uint64](t, i, off, n) }
func (t *Tile) Uint16s(i int, off, n uint64) []uint16   { return view[uint16](t, i, off, n) }

// Shared returns the wave's dynamic shared memory, zeroed for each tile.
func (t *Tile) Shared() []byte { return t.shared }

// Wait is gp_wait: in a wave with a prologue it returns once the producer
// tiles this tile reads are done.
func (t *Tile) Wait() {
	if t.wait != nil {
		t.wait()
	}
}

// callTile runs fn on t and turns a panic (an index out of range, say)
// into an error, as a kernel fault.
func callTile(name string, fn HostFunc, t *Tile) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("wave function %s, tile %d: %v", name, t.Index, r)
		}
	}()
	if err := fn(t); err != nil {
		return fmt.Errorf("wave function %s, tile %d: %w", name, t.Index, err)
	}
	return nil
}
