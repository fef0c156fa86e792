package frontier

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
)

// EachPiece calls its function once for every piece, and not at all for
// none.
func TestEachPiece(t *testing.T) {
	for _, pieces := range []int{0, 1, 2, 7, 1000} {
		calls := make([]atomic.Int32, pieces)
		EachPiece(pieces, func(p int) { calls[p].Add(1) })
		for p := range calls {
			assert.EqualValues(t, 1, calls[p].Load(), "piece %d of %d", p, pieces)
		}
	}
}
