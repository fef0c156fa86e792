// Package bytesize parses byte counts written with an optional unit, such
// as "85899345920", "80GiB" or "141GB", exactly and with overflow checked.
package bytesize

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gpuplan/gpuplan/internal/checked"
)

// units are the accepted units and their sizes, longest first within each
// family so that "GiB" is not read as "B".
var units = []struct {
	name string
	size uint64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"kB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1},
}

// Error is a byte count that does not parse.
type Error struct {
	Input string
	Msg   string
}

// Error quotes the input and ends with a "Fix:" sentence.
func (e *Error) Error() string {
	return fmt.Sprintf("byte count %q %s. Fix: write a whole number of bytes with an optional unit (B, KiB, MiB, GiB, TiB, kB, MB, GB or TB), for example 85899345920 or 80GiB", e.Input, e.Msg)
}

// Parse reads a whole number of bytes with an optional unit: binary (KiB,
// MiB, GiB, TiB) or decimal (kB, MB, GB, TB) multiples, or B. White space
// (spaces, tabs, line ends) around the number and between it and the unit
// is allowed; anything
// else, a fraction, a sign or a value above 2^64-1 bytes is an *Error.
func Parse(s string) (uint64, error) {
	t := strings.TrimSpace(s)
	mult := uint64(1)
	for _, u := range units {
		if strings.HasSuffix(t, u.name) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.name)), u.size
			break
		}
	}
	if t == "" || strings.IndexFunc(t, func(r rune) bool { return r < '0' || r > '9' }) >= 0 {
		return 0, &Error{Input: s, Msg: "is not a whole number with a unit"}
	}
	v, err := strconv.ParseUint(t, 10, 64)
	if err != nil {
		return 0, &Error{Input: s, Msg: "does not fit 64 bits"}
	}
	n, err := checked.Mul(v, mult, "byte count")
	if err != nil {
		return 0, &Error{Input: s, Msg: "does not fit 64 bits"}
	}
	return n, nil
}
