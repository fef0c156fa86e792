package quote

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"

	"github.com/gpuplan/gpuplan/internal/memcheck"
)

// cutByPrefixes is Cut as it was first written, quoting every prefix from
// the longest down: the reference of the one-pass Cut.
func cutByPrefixes(s string, n int) string {
	if q := strconv.Quote(s); len(q) <= n {
		return q
	}
	for k := min(len(s), n); k > 0; k-- {
		if k < len(s) && !utf8.RuneStart(s[k]) {
			continue
		}
		if q := strconv.Quote(s[:k]); len(q)+3 <= n {
			return q + "..."
		}
	}
	return `""...`
}

// TestCutMatchesPrefixQuoting checks the one-pass Cut against quoting
// every prefix, on random strings of printable, escaped, multi-byte and
// invalid characters and on every width up to 40 bytes.
func TestCutMatchesPrefixQuoting(t *testing.T) {
	pieces := []string{"a", " ", "é", "世", "\x1b", "\n", "\"", "\\", "\xff", "\xe9", "\u202e", "\x00"}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		var b strings.Builder
		for range rng.IntN(30) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		s := b.String()
		for n := range 41 {
			assert.Equal(t, cutByPrefixes(s, n), Cut(s, n), "%q at %d", s, n)
		}
	}
}

// TestCutAllocatesLittle checks that cutting a long input costs about the
// cut, not the input: a 3 KiB string of invalid bytes, cut to MaxEcho.
func TestCutAllocatesLittle(t *testing.T) {
	s := strings.Repeat("\xe9", 3000)
	memcheck.Check(t, memcheck.Bound{Base: 4 << 10}, len(s), func() { _ = Cut(s, MaxEcho) })
}
