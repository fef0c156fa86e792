package quote

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"

	"github.com/gpuplan/gpuplan/internal/memcheck"
)

func TestText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"grid megakernel", "grid megakernel"},
		{"NVIDIA H200", "NVIDIA H200"},
		{"h200/2026-11-22.csv", "h200/2026-11-22.csv"},
		{"µs ≤ 2", "µs ≤ 2"},
		{"", `""`},
		{" lead", `" lead"`},
		{"trail ", `"trail "`},
		{`"quoted"`, `"\"quoted\""`},
		{"x\n gate passed: 5 of 5 claims hold", `"x\n gate passed: 5 of 5 claims hold"`},
		{"red\x1b[31mtext", `"red\x1b[31mtext"`},
		{"csi\u009b31m", `"csi\u009b31m"`},
		{"a\rb", `"a\rb"`},
		{"tab\there", `"tab\there"`},
		{"rtl\u202eoverride", `"rtl\u202eoverride"`},
		{"bad\xffutf8", `"bad\xffutf8"`},
		{"nbsp\u00a0x", `"nbsp\u00a0x"`},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, Text(tc.in), "%q", tc.in)
	}
	assert.Equal(t, []string{"a", `"b\n"`}, All([]string{"a", "b\n"}))
}

// FuzzText checks the property every printer relies on: the output is one
// line of graphic characters and spaces, and unchanged input is plain.
func FuzzText(f *testing.F) {
	f.Add("name")
	f.Add("x\n gate passed: 5 of 5 claims hold\x1b[2K")
	f.Fuzz(func(t *testing.T, s string) {
		// No input makes memory grow faster than the input itself.
		memcheck.Check(t, memcheck.Bound{Base: 1 << 20, PerByte: 256}, len(s), func() {
			out := Text(s)
			assert.True(t, utf8.ValidString(out))
			assert.False(t, strings.ContainsAny(out, "\n\r\x1b\x00"), "%q", out)
			assert.True(t, Plain(out) || out == s || strings.HasPrefix(out, `"`), "%q", out)
			for _, r := range out {
				assert.True(t, r == ' ' || r > ' ' && r != 0x7f, "%q holds %U", out, r)
			}
			if out == s {
				assert.True(t, Plain(s))
			}
			assert.LessOrEqual(t, len(out), 10*len(s)+2)
		})
	})
}
