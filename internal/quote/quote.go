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

// Echo returns s in the form every message uses to repeat text that came
// from an input (a flag's value, a field, a name, a path): in double
// quotes, escaped as Text escapes it (strconv.Quote: a newline, an escape
// sequence, a NUL byte, invalid UTF-8 and every other character that is
// not printable become Go escapes), and, when that is longer than MaxEcho
// bytes, cut at a character boundary and followed by "...", so that the
// whole is at most MaxEcho bytes and a megabyte input does not make a
// megabyte message. It is Cut(s, MaxEcho). The quotes count towards
// MaxEcho, so an input of more than MaxEcho-2 printable bytes is cut.
func Echo(s string) string { return Cut(s, MaxEcho) }

// Cut returns s as a message repeats it: in double quotes, escaped as Text
// escapes it, and, when that is longer than n bytes, cut at a character
// boundary and followed by "...", so that the whole is at most n bytes
// (and never less than `""...`).
func Cut(s string, n int) string {
	const more = "..."
	// A quoted string's length is 2 plus the sum of its characters' escaped
	// lengths, so one pass finds the longest prefix that leaves room for
	// more, reading no further than n bytes of the quoted form.
	var buf [16]byte
	size, cut := 2, -1
	for k := 0; k < len(s); {
		if size+len(more) <= n {
			cut = k
		}
		_, w := utf8.DecodeRuneInString(s[k:])
		size += len(strconv.AppendQuote(buf[:0], s[k:k+w])) - 2
		k += w
		if size > n {
			return strconv.Quote(s[:max(cut, 0)]) + more
		}
	}
	if size > n {
		return `""` + more
	}
	return strconv.Quote(s)
}
