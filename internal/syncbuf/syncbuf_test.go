package syncbuf

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Concurrent writers lose no line, and a reader may read meanwhile.
func TestBufferConcurrentWrites(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 100 {
				fmt.Fprintf(&b, "w%d-%d\n", w, i)
				_ = b.String()
			}
		})
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	assert.Len(t, lines, 800)
	for w := range 8 {
		assert.Contains(t, b.String(), fmt.Sprintf("w%d-99\n", w))
	}
}

func ExampleBuffer() {
	var b Buffer
	fmt.Fprintln(&b, "served on 127.0.0.1")
	fmt.Print(b.String())
	// Output: served on 127.0.0.1
}
