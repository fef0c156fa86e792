package memcheck

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

var sink []byte

func TestAllocatedCountsAnAllocation(t *testing.T) {
	for _, n := range []int{1 << 10, 1 << 16, 1 << 20} {
		got := Allocated(func() { sink = make([]byte, n) })
		assert.GreaterOrEqual(t, got, uint64(n), "n=%d", n)
		assert.Less(t, got, uint64(n)+1<<16, "n=%d", n)
	}
}

func TestBoundLimit(t *testing.T) {
	b := Bound{Base: 100, PerByte: 8}
	assert.Equal(t, uint64(100), b.Limit(0))
	assert.Equal(t, uint64(100), b.Limit(-5))
	assert.Equal(t, uint64(180), b.Limit(10))
}

func TestCheckFailsAboveTheBound(t *testing.T) {
	inner := &testing.T{}
	Check(inner, Bound{Base: 1 << 10}, 0, func() { sink = make([]byte, 1<<20) })
	assert.True(t, inner.Failed())
	ok := &testing.T{}
	Check(ok, Bound{Base: 1 << 21}, 0, func() { sink = make([]byte, 1<<20) })
	assert.False(t, ok.Failed())
}
