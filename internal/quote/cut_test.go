package quote

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

func TestCut(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain", "grid:4", `"grid:4"`},
		{"empty", "", `""`},
		{"escape", "k\x1b[2K", `"k\x1b[2K"`},
		{"newline", "a\nb", `"a\nb"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, Cut(tc.in, MaxEcho))
		})
	}
	for _, long := range []string{strings.Repeat("a", 5000), strings.Repeat("\x1b", 300), strings.Repeat("é", 300), strings.Repeat("a", 199) + "\x00"} {
		got := Cut(long, MaxEcho)
		assert.LessOrEqual(t, len(got), MaxEcho, got)
		assert.True(t, strings.HasSuffix(got, `"...`), got)
		assert.True(t, utf8.ValidString(got), got)
	}
}
