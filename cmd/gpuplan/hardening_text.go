package main

import (
	"strconv"
	"unicode/utf8"

	"github.com/gpuplan/gpuplan/internal/quote"
)

// maxEchoBytes is the most bytes of a user's text that a message repeats.
const maxEchoBytes = 200

// echoText returns s as a message repeats it: in double quotes, escaped by
// quote.Text where it is not plain text, and, when that is longer than
// maxEchoBytes, cut at a character boundary and followed by "...", so the
// whole stays within maxEchoBytes.
func echoText(s string) string {
	q := quoted(s)
	if len(q) <= maxEchoBytes {
		return q
	}
	const more = "..."
	for n := min(len(s), maxEchoBytes); n > 0; n-- {
		if n < len(s) && !utf8.RuneStart(s[n]) {
			continue
		}
		if q = quoted(s[:n]); len(q)+len(more) <= maxEchoBytes {
			return q + more
		}
	}
	return `""` + more
}

// quoted is s through quote.Text, in double quotes even where quote.Text
// leaves it as it is.
func quoted(s string) string {
	t := quote.Text(s)
	if t == s {
		t = strconv.Quote(s)
	}
	return t
}
