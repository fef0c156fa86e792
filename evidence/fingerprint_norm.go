package evidence

import (
	"bufio"
	"bytes"
	"strings"
)

// stripC removes C and C++ comments (outside string and character
// literals) and collapses every run of whitespace into one space, so that
// comment and layout edits do not change what is hashed.
func stripC(src []byte) []byte {
	var out bytes.Buffer
	space := false
	emit := func(c byte) {
		if space && out.Len() > 0 {
			out.WriteByte(' ')
		}
		space = false
		out.WriteByte(c)
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			for i < len(src) && src[i] != '\n' {
				i++
			}
			space = true
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			end := bytes.Index(src[i+2:], []byte("*/"))
			if end < 0 {
				i = len(src)
			} else {
				i += end + 3
			}
			space = true
		case c == '"' || c == '\'':
			j := i + 1
			for j < len(src) && src[j] != c && src[j] != '\n' {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			for k := i; k <= j && k < len(src); k++ {
				emit(src[k])
			}
			i = j
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			// A preprocessor line ends at its newline: keep it.
			if c == '\n' {
				out.WriteByte('\n')
				space = false
				continue
			}
			space = true
		default:
			emit(c)
		}
	}
	return dropBlankLines(out.Bytes())
}

// dropBlankLines removes empty lines and trailing spaces.
func dropBlankLines(b []byte) []byte {
	var out bytes.Buffer
	for _, line := range strings.Split(string(b), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			out.WriteString(line + "\n")
		}
	}
	return out.Bytes()
}

// writePTX writes a PTX module without its comments, its line information
// (.loc and .file directives, which move with every comment edit of the
// source) and its debug sections, one space between fields, without
// allocating per line.
func writePTX(w *bufio.Writer, src []byte) {
	for len(src) > 0 {
		line := src
		if i := bytes.IndexByte(src, '\n'); i >= 0 {
			line, src = src[:i], src[i+1:]
		} else {
			src = nil
		}
		if i := bytes.Index(line, []byte("//")); i >= 0 {
			line = line[:i]
		}
		first, rest := nextField(line)
		if len(first) == 0 || string(first) == ".loc" || string(first) == ".file" {
			continue
		}
		if second, _ := nextField(rest); string(first) == ".section" && bytes.HasPrefix(second, []byte(".debug")) {
			return // the debug sections run to the end of the module
		}
		for f := first; len(f) > 0; f, rest = nextField(rest) {
			if &f[0] != &first[0] {
				w.WriteByte(' ')
			}
			w.Write(f)
		}
		w.WriteByte('\n')
	}
}

// nextField returns the first whitespace-separated field of b and what
// follows it.
func nextField(b []byte) (field, rest []byte) {
	i := 0
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	j := i
	for j < len(b) && !isSpace(b[j]) {
		j++
	}
	return b[i:j], b[j:]
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f' }
