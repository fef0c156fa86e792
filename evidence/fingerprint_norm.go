package evidence

import (
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

// stripPTX removes a PTX module's comments, its line information (.loc and
// .file directives, which move with every comment edit of the source) and
// its debug sections, and collapses whitespace.
func stripPTX(src []byte) []byte {
	var out bytes.Buffer
	for _, line := range strings.Split(string(src), "\n") {
		if i := strings.Index(line, "//"); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		if len(f) == 0 || f[0] == ".loc" || f[0] == ".file" {
			continue
		}
		if f[0] == ".section" && len(f) > 1 && strings.HasPrefix(f[1], ".debug") {
			break // the debug sections run to the end of the module
		}
		out.WriteString(strings.Join(f, " ") + "\n")
	}
	return out.Bytes()
}
