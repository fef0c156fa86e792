package main

import "github.com/gpuplan/gpuplan/internal/quote"

// maxEchoBytes is the most bytes of a user's text that a message repeats.
const maxEchoBytes = quote.MaxEcho

// echoText returns s as a message repeats it: quoted and cut to
// maxEchoBytes (quote.Cut).
func echoText(s string) string { return quote.Cut(s, maxEchoBytes) }
