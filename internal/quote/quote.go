// Package quote makes strings that come from inputs safe to print in text
// output. A name read from a file can hold a newline, a carriage return,
// an ANSI escape sequence or a Unicode direction override; printed raw, it
// could forge a line such as "gate passed: 5 of 5 claims hold" or rewrite
// the terminal. Every text printer passes such strings through Text.
package quote

import (
	"strconv"
	"unicode"
	"unicode/utf8"
)

// Text returns s unchanged when it is plain printable text (letters,
// marks, numbers, punctuation, symbols and the ASCII space, valid UTF-8,
// not empty and without leading or trailing space), and otherwise s as a
// Go string literal with every other character escaped, so the printed
// form is always one line of visible characters.
func Text(s string) string {
	if Plain(s) {
		return s
	}
	return strconv.Quote(s)
}

// Plain reports whether Text prints s unchanged.
func Plain(s string) bool {
	if s == "" || s[0] == ' ' || s[len(s)-1] == ' ' || s[0] == '"' {
		return false
	}
	for _, r := range s {
		if r == utf8.RuneError || (r != ' ' && !unicode.IsGraphic(r)) || unicode.IsSpace(r) && r != ' ' {
			return false
		}
	}
	return true
}

// All applies Text to every string of ss, in place, and returns ss.
func All(ss []string) []string {
	for i, s := range ss {
		ss[i] = Text(s)
	}
	return ss
}

// MaxEcho is the most bytes of an input that a message repeats.
const MaxEcho = 200

// Cut returns s as a message repeats it: in double quotes, escaped as Text
// escapes it, and, when that is longer than n bytes, cut at a character
// boundary and followed by "...", so that the whole is at most n bytes
// (and never less than `""...`).
func Cut(s string, n int) string {
	q := quoted(s)
	if len(q) <= n {
		return q
	}
	const more = "..."
	for k := min(len(s), n); k > 0; k-- {
		if k < len(s) && !utf8.RuneStart(s[k]) {
			continue
		}
		if q = quoted(s[:k]); len(q)+len(more) <= n {
			return q + more
		}
	}
	return `""` + more
}

// quoted is s through Text, in double quotes even where Text leaves it as
// it is.
func quoted(s string) string {
	if t := Text(s); t != s {
		return t
	}
	return strconv.Quote(s)
}
