package bytesize

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	good := map[string]uint64{
		"0": 0, "85899345920": 85899345920, "80GiB": 80 << 30, " 80 GiB ": 80 << 30, "141GB": 141e9,
		"512B": 512, "4KiB": 4096, "3MiB": 3 << 20, "2TiB": 2 << 40, "5kB": 5000, "7MB": 7e6, "1TB": 1e12,
		"18446744073709551615": math.MaxUint64, "16777215TiB": 16777215 << 40,
	}
	for in, want := range good {
		got, err := Parse(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	bad := []string{"", "GiB", "-1", "+5", "1.5GiB", "80 gib", "80GiBB", "0x10", "18446744073709551616", "16777216TiB", "1 2", "80Gi"}
	for _, in := range bad {
		_, err := Parse(in)
		var e *Error
		require.ErrorAs(t, err, &e, in)
		assert.Equal(t, 1, strings.Count(err.Error(), "Fix:"), in)
		assert.Contains(t, err.Error(), strconv.Quote(in))
	}
}

// FuzzParse checks that Parse never panics, and that what it accepts is
// the number times its unit.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"80GiB", "141 GB", "0", "99999999999999999999", "1.5MiB", "KiB"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := Parse(s)
		if err != nil {
			require.Contains(t, err.Error(), "Fix:")
			return
		}
		// Parse allows any white space around the number and the unit.
		digits := strings.TrimRightFunc(strings.TrimSpace(s), func(r rune) bool { return unicode.IsSpace(r) || strings.ContainsRune("KMGTiBk", r) })
		v, perr := strconv.ParseUint(digits, 10, 64)
		require.NoError(t, perr, "accepted %q", s)
		require.LessOrEqual(t, v, n, "%q", s)
		if v > 0 {
			require.Zero(t, n%v, "%q is a multiple of its number", s)
		}
	})
}

func ExampleParse() {
	n, err := Parse("80GiB")
	fmt.Println(n, err)
	_, err = Parse("1.5GiB")
	fmt.Println(err)
	// Output:
	// 85899345920 <nil>
	// byte count "1.5GiB" is not a whole number with a unit. Fix: write a whole number of bytes with an optional unit (B, KiB, MiB, GiB, TiB, kB, MB, GB or TB), for example 85899345920 or 80GiB
}
