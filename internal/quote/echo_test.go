package quote

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/internal/memcheck"
)

func TestEcho(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain", "grid:4", `"grid:4"`},
		{"plain with spaces", "grid megakernel", `"grid megakernel"`},
		{"empty", "", `""`},
		{"newline", "x\n gate passed: 5 of 5 claims hold", `"x\n gate passed: 5 of 5 claims hold"`},
		{"ESC", "k\x1b[2K", `"k\x1b[2K"`},
		{"NUL", "a\x00b", `"a\x00b"`},
		{"invalid UTF-8", "bad\xffutf8", `"bad\xffutf8"`},
		{"less than", "<script>", `"<script>"`},
		{"quote and backslash", `a"b\c`, `"a\"b\\c"`},
		{"direction override", "rtl\u202eoverride", `"rtl\u202eoverride"`},
		{"multi-byte", "µs ≤ 2", `"µs ≤ 2"`},
		// The quotes count: 198 bytes quote to exactly MaxEcho and stand whole.
		{"quoted form exactly 200 bytes", strings.Repeat("a", 198), `"` + strings.Repeat("a", 198) + `"`},
		// One byte more and the quoted form is 201 bytes: it is cut, and
		// the cut leaves room for the marker.
		{"quoted form 201 bytes", strings.Repeat("a", 199), `"` + strings.Repeat("a", 195) + `"...`},
		{"input exactly 200 bytes", strings.Repeat("a", 200), `"` + strings.Repeat("a", 195) + `"...`},
		{"input 201 bytes", strings.Repeat("a", 201), `"` + strings.Repeat("a", 195) + `"...`},
		{"cut before an escape", strings.Repeat("a", 194) + "\x1b[2J", `"` + strings.Repeat("a", 194) + `"...`},
		{"10 MB", strings.Repeat("9", 10<<20), `"` + strings.Repeat("9", 195) + `"...`},
		{"10 MB of escapes", strings.Repeat("\x1b", 10<<20), `"` + strings.Repeat(`\x1b`, 48) + `"...`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Echo(tc.in)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, Cut(tc.in, MaxEcho), got)
			assert.LessOrEqual(t, len(got), MaxEcho)
		})
	}
}

// checkEcho checks what every message relies on when it repeats an input
// through Echo: at most MaxEcho bytes of valid UTF-8 on one line, with no
// raw control character, that unquotes to the input or, marked with "...",
// to a prefix of it that ends on a character boundary.
func checkEcho(t *testing.T, s string) {
	t.Helper()
	out := Echo(s)
	require.LessOrEqual(t, len(out), MaxEcho, "%q", out)
	require.True(t, utf8.ValidString(out), "%q", out)
	require.False(t, strings.ContainsAny(out, "\n\r\x1b\x00\x7f"), "%q", out)
	for _, r := range out {
		require.True(t, r >= ' ' && r != 0x7f && !(r >= 0x80 && r < 0xa0), "%q holds %U", out, r)
	}
	body, cut := strings.CutSuffix(out, `"...`)
	if cut {
		body += `"`
	}
	u, err := strconv.Unquote(body)
	require.NoError(t, err, "%q", out)
	if !cut {
		require.Equal(t, s, u)
		return
	}
	require.True(t, strings.HasPrefix(s, u), "%q is not a prefix of the input", u)
	require.Less(t, len(u), len(s))
	// The cut falls between two characters as the input decodes (an
	// invalid byte is a character of its own), and keeps as much as fits:
	// with the next character, the quoted prefix and "..." would not.
	k := 0
	for k < len(u) {
		_, w := utf8.DecodeRuneInString(s[k:])
		k += w
	}
	require.Equal(t, len(u), k, "cut inside a character at %d", len(u))
	_, w := utf8.DecodeRuneInString(s[k:])
	require.Greater(t, len(strconv.Quote(s[:k+w]))+len("..."), MaxEcho, "%q was cut too soon", out)
}

// TestEchoProperties checks checkEcho's properties on random strings of
// printable, escaped, multi-byte and invalid characters, short and long.
func TestEchoProperties(t *testing.T) {
	pieces := []string{"a", " ", "<", "é", "世", "\x1b", "\x1b[2J", "\n", "\r", "\t", "\"", "\\", "\xff", "\xe9", "\xe4\xb8", "\u202e", "\u009b", "\x00", "\x7f", "\U0001F600"}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 5000 {
		var b strings.Builder
		for range rng.IntN(300) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		checkEcho(t, b.String())
	}
}

// TestEchoAllocatesLittle checks that echoing a 10 MB input costs about
// the echo, not the input.
func TestEchoAllocatesLittle(t *testing.T) {
	s := strings.Repeat("\x1b", 10<<20)
	memcheck.Check(t, memcheck.Bound{Base: 4 << 10}, len(s), func() { _ = Echo(s) })
}

// FuzzEcho checks checkEcho's properties on any input.
func FuzzEcho(f *testing.F) {
	for _, s := range []string{
		"", "grid:4", "x\n gate passed: 5 of 5 claims hold\x1b[2K", "a\x00b", "bad\xffutf8", "<script>",
		"rtl\u202eoverride", strings.Repeat("a", 198), strings.Repeat("a", 199),
		strings.Repeat("é", 120), strings.Repeat("a", 194) + "\x1b[2J", strings.Repeat("\xe9", 300),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkEcho(t, s) })
}
