// Package syncbuf is a text buffer that goroutines may write while another
// reads it: the destination of a server's or a command's log in tests.
package syncbuf

import (
	"strings"
	"sync"
)

// Buffer collects what is written to it; its methods may be called from
// several goroutines at once. The zero value is an empty buffer.
type Buffer struct {
	mu sync.Mutex
	b  strings.Builder
}

// Write appends p.
func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what was written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
