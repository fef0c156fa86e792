package bfsquery

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/internal/quote"
)

// TestReadDirectedLongLines reads edge lists with lines over 1 MiB: a
// directed list takes or refuses each as frontier's edge-list loader does
// (a comment line, or spaces between fields, of any length; a longer field
// refused), and a refusal names the file and the line, quotes the line's
// head cut, and ends with a Fix.
func TestReadDirectedLongLines(t *testing.T) {
	mib := MaxLineBytes
	cases := []struct {
		name, text string
		line       int    // the line refused, 0: taken
		head       string // the start of the refused line, as quoted
	}{
		{"a long # comment", "0 1\n# " + strings.Repeat("x", 2*mib) + "\n1 2\n", 0, ""},
		{"a long % comment", "0 1\n%" + strings.Repeat("%", 3*mib) + "\n1 2\n", 0, ""},
		{"a long comment, last, without a newline", "0 1\n1 2\n#" + strings.Repeat("x", mib+1), 0, ""},
		{"spaces before a comment", strings.Repeat(" ", 2*mib) + "# x\n0 1\n1 2\n", 0, ""},
		{"spaces between the fields", "0 1\n1" + strings.Repeat(" \t", mib) + "2\n", 0, ""},
		{"spaces after the fields", "0 1\n1 2" + strings.Repeat(" ", 2*mib) + "\n", 0, ""},
		{"a line of exactly 1 MiB", "0 1\n1 " + strings.Repeat(" ", mib-4) + "2\n", 0, ""},
		{"a long vertex id", "0 1\n1 " + strings.Repeat("2", 2*mib) + "\n1 2\n", 2, `"1 222`},
		{"a long id after long spaces", "0 1\n1 2\n" + strings.Repeat(" ", 2*mib) + strings.Repeat("7", mib+1) + "\n", 3, `"777`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, fileErr := frontier.ParseEdgeList([]byte(c.text), "d.txt", frontier.Limits{})
			g, err := ReadDirected(strings.NewReader(c.text), "d.txt", int64(len(c.text)), frontier.Limits{})
			if c.line == 0 {
				require.NoError(t, fileErr, "the file: loader takes it")
				require.NoError(t, err)
				assert.Equal(t, 3, g.NumVertices())
				return
			}
			require.Error(t, fileErr, "the file: loader refuses it")
			var pe *frontier.ParseError
			require.True(t, errors.As(err, &pe), "%v", err)
			assert.Equal(t, c.line, pe.Line)
			msg := err.Error()
			assert.True(t, strings.HasPrefix(msg, "d.txt:"+string(rune('0'+c.line))+": the line's fields are longer than 1048576 bytes"), msg)
			assert.Contains(t, msg, "(1 MiB): "+c.head)
			assert.Contains(t, msg, `"....`, "the line's head, quoted and cut")
			assert.Contains(t, msg, "Fix: write one edge per line")
			assert.NotContains(t, msg, "bufio")
			assert.Less(t, len(msg), 2*quote.MaxEcho+200)
		})
	}
}

// TestDirectedNamesAreFileNames loads directed:PATH files whose names hold
// an escape, a newline, spaces and a dot: the graph is named as file:PATH
// names it, after "directed-".
func TestDirectedNamesAreFileNames(t *testing.T) {
	cases := []struct{ base, want string }{
		{"web.txt", "directed-web"},
		{"e\x1b[2J\nx y.el", "directed-e--2J-x-y"},
		{"road.v2.el", "directed-road.v2"},
		{"\u202eevil.el", "directed--evil"},
	}
	dir := t.TempDir()
	for _, c := range cases {
		t.Run(c.want, func(t *testing.T) {
			path := filepath.Join(dir, c.base)
			require.NoError(t, os.WriteFile(path, []byte("0 1\n1 2\n"), 0o644))
			g, directed, err := LoadSpec(DirectedPrefix+path, 1, frontier.Limits{})
			require.NoError(t, err)
			assert.True(t, directed)
			assert.Equal(t, c.want, g.Name)
			spec, err := frontier.ParseSpec("file:" + path)
			require.NoError(t, err)
			assert.Equal(t, "directed-"+spec.Name(), g.Name, "the file: loader's rule")
			assert.True(t, quote.Plain(g.Name))
		})
	}
}
