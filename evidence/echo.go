package evidence

import "github.com/gpuplan/gpuplan/internal/quote"

// echo returns s as an error message repeats text read from an input (a
// header, a field, a claim's name): quoted as %q quotes it and, past
// quote.MaxEcho bytes, cut with "..." (quote.Cut), so that a megabyte
// field does not make a megabyte message.
func echo(s string) string { return quote.Cut(s, quote.MaxEcho) }
