// Package hexhash writes 64-bit hashes in JSON as hexadecimal strings
// ("0x0000000000000abc"). JSON consumers that read every number as a
// double (jq, JavaScript) round integers above 2^53, so a hash written as
// a number comes back as a different hash.
package hexhash

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Hex is a 64-bit hash that marshals as "0x" and 16 lowercase hex digits.
type Hex uint64

// MarshalText writes h as "0x" and 16 hex digits.
func (h Hex) MarshalText() ([]byte, error) {
	return fmt.Appendf(nil, "0x%016x", uint64(h)), nil
}

// UnmarshalText reads "0x" and 1 to 16 hex digits.
func (h *Hex) UnmarshalText(b []byte) error {
	s := string(b)
	digits, ok := strings.CutPrefix(s, "0x")
	if !ok || digits == "" || len(digits) > 16 {
		return fmt.Errorf("hash %q is not 0x and 1 to 16 hex digits. Fix: write the hash as a hex string such as \"0x0000000000000abc\", or as a JSON integer", clip(s))
	}
	v, err := strconv.ParseUint(digits, 16, 64)
	if err != nil {
		return fmt.Errorf("hash %q is not 0x and 1 to 16 hex digits. Fix: write the hash as a hex string such as \"0x0000000000000abc\", or as a JSON integer", clip(s))
	}
	*h = Hex(v)
	return nil
}

// UnmarshalJSON reads a hex string (as MarshalText writes it) or a JSON
// integer, so output read back and older inputs both decode.
func (h *Hex) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		return h.UnmarshalText([]byte(s))
	}
	var v uint64
	if err := json.Unmarshal(b, &v); err != nil {
		return fmt.Errorf("hash %s is not an integer in 0..18446744073709551615 or a hex string. Fix: write the hash as a hex string such as \"0x0000000000000abc\"", clip(string(b)))
	}
	*h = Hex(v)
	return nil
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:37] + "..."
	}
	return s
}
