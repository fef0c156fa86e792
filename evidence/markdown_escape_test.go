package evidence

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A name in the Markdown report reads as the text it is: it makes no link,
// no image and no character reference, wherever it appears (the run label
// of a heading, the file, the device, an arm).
func TestMarkdownNamesAreLiteral(t *testing.T) {
	tests := []struct {
		name, in string
		// want is how the name is written; absent must not appear.
		want, absent string
	}{
		{"image", "![x](https://evil.example/p.png)", `!\[x\](https://evil.example/p.png)`, "![x]("},
		{"link", "[click](javascript:alert(1))", `\[click\](javascript:alert(1))`, "[click]("},
		{"reference link", "[x][1]", `\[x\]\[1\]`, "[x][1]"},
		{"character reference", "a&lt;b&#62;", "a&amp;lt;b&amp;#62;", "a&lt;b"},
		{"ampersand", "R&D", "R&amp;D", "R&D"},
		{"raw HTML", "<img src=x>", "&lt;img src=x>", "<img"},
		{"table cell", "a|b", `a\|b`, "a|b"},
		{"emphasis", "*a*_b_", `\*a\*\_b\_`, "*a*"},
		{"plain", "NVIDIA H200", "NVIDIA H200", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, mdEscape(tc.in))
			files := hostileCases(t, tc.in, false)["all names"]
			out := MarkdownTable(hostileSummaries(t, files))
			assert.Contains(t, out, tc.want)
			if tc.absent != "" {
				assert.NotContains(t, out, tc.absent)
			}
		})
	}
}
