package main

import (
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGeneratedGraphsTooLargeAreRefused runs the commands that build a
// graph spec at sizes whose products wrap or whose graphs no machine here
// holds: each refuses before allocating, exit 1, with a fix.
func TestGeneratedGraphsTooLargeAreRefused(t *testing.T) {
	for _, args := range [][]string{
		{"partition", "--device", "h200", "--graph", "grid:4294967296"},
		{"partition", "--device", "h200", "--graph", "road:8589934592"},
		{"partition", "--device", "h200", "--graph", "rgg:9223372036854775807:8"},
		{"bfs", "--graph", "grid:4294967296", "--cpu"},
		{"bfs", "--graph", "kron:30", "--cpu"},
		{"load", "--graph", "road:4294967296", "--cpu"},
		{"serve", "--graph", "g=grid:4294967296", "--cpu", "--listen", "127.0.0.1:0"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			_, errs, code := runCLI(t, "", args...)
			assert.Equal(t, exitFailure, code, errs)
			assert.Contains(t, errs, "Fix:")
			assert.NotContains(t, errs, "panic")
		})
	}
}

// TestHugeMessagesAreCut loads an edge list whose vertex id is a megabyte
// long: the refusal keeps its head and its Fix, not the megabyte.
func TestHugeMessagesAreCut(t *testing.T) {
	path := t.TempDir() + "/huge.txt"
	require.NoError(t, os.WriteFile(path, []byte("0 "+strings.Repeat("9", 1<<20)+"\n"), 0o644))
	_, errs, code := runCLI(t, "", "bfs", "--graph", "file:"+path, "--cpu")
	assert.Equal(t, exitFailure, code)
	assert.Less(t, len(errs), 8192)
	assert.Contains(t, errs, "Fix:")
	for _, c := range []struct {
		msg  string
		want int
	}{
		{"short", 5},
		{strings.Repeat("é", 5000), -1},
	} {
		got := boundedMessage(c.msg)
		if c.want >= 0 {
			assert.Len(t, got, c.want)
			continue
		}
		assert.True(t, utf8.ValidString(got))
		assert.Contains(t, got, "bytes left out")
		assert.LessOrEqual(t, len(got), maxMessageBytes)
	}
}
