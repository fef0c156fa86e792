// Package memcheck bounds the memory a piece of code allocates, for fuzz
// targets and tests that assert no input makes memory grow faster than
// the input itself.
package memcheck

import (
	"runtime"
	"testing"
)

// Allocated runs fn and returns the bytes the process allocated while it
// ran. Other goroutines' allocations count too, so bounds should leave
// room for a few kilobytes of background work.
func Allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// Bound is an allocation budget proportional to an input's size: Base
// bytes plus PerByte bytes for every input byte.
type Bound struct {
	Base    uint64
	PerByte uint64
}

// Limit returns the budget for an input of n bytes.
func (b Bound) Limit(n int) uint64 { return b.Base + b.PerByte*uint64(max(n, 0)) }

// Check runs fn and fails t when it allocated more than b allows for an
// input of n bytes, naming both numbers.
func Check(t testing.TB, b Bound, n int, fn func()) {
	t.Helper()
	got := Allocated(fn)
	if limit := b.Limit(n); got > limit {
		t.Errorf("allocated %d bytes for a %d-byte input; the bound is %d bytes (%d + %d per input byte)", got, n, limit, b.Base, b.PerByte)
	}
}
