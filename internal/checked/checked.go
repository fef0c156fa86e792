// Package checked provides overflow-checked unsigned arithmetic and the
// basis-point ratio helpers shared by gpuplan's planners.
//
// Every planner in gpuplan sizes buffers and counts work with uint64. A sum
// or product that does not fit is reported as an error naming the quantity,
// never wrapped or saturated silently.
package checked

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
)

// BasisPoints is the fixed-point scale used for ratios: 1.0 == 10000 bps.
const BasisPoints = 10000

// OverflowError reports that an arithmetic step on a byte or item count did
// not fit its integer width. Field names the quantity being computed.
type OverflowError struct {
	Field string
	// Bits is the width of the quantity, for example 32 for a uint32
	// result; 0 means 64, the width of every Add and Mul.
	Bits int
	// Inputs names the input fields whose values produced the quantity,
	// for example "stages[3].input_bytes + stages[3].output_bytes"; empty
	// when the caller did not say.
	Inputs string
}

// Error describes the failure, names the width that was exceeded and the
// input fields behind it, and ends with a "Fix:" sentence.
func (e *OverflowError) Error() string {
	bits := e.Bits
	if bits == 0 {
		bits = 64
	}
	if e.Inputs != "" {
		return fmt.Sprintf("%s (%s) overflows %d bits. Fix: reduce the values in %s so it fits %d bits", e.Field, e.Inputs, bits, e.Inputs, bits)
	}
	return fmt.Sprintf("%s overflows %d bits. Fix: reduce the sizes or counts that feed %s", e.Field, bits, e.Field)
}

// Inputs records, on an *OverflowError in err, the input fields whose
// values produced the quantity (the first caller to say wins), and returns
// err. Other errors and nil pass through unchanged. Call it on the error
// path only, so the description is built only when it is printed.
func Inputs(err error, inputs string) error {
	var oe *OverflowError
	if errors.As(err, &oe) && oe.Inputs == "" {
		oe.Inputs = inputs
	}
	return err
}

// Add returns a+b, or an *OverflowError naming field when the sum does not fit.
func Add(a, b uint64, field string) (uint64, error) {
	s, carry := bits.Add64(a, b, 0)
	if carry != 0 {
		return 0, &OverflowError{Field: field}
	}
	return s, nil
}

// Mul returns a*b, or an *OverflowError naming field when the product does not fit.
func Mul(a, b uint64, field string) (uint64, error) {
	hi, lo := bits.Mul64(a, b)
	if hi != 0 {
		return 0, &OverflowError{Field: field}
	}
	return lo, nil
}

// Sum adds all values, failing with an *OverflowError naming field on overflow.
func Sum(field string, values ...uint64) (uint64, error) {
	var total uint64
	for _, v := range values {
		var err error
		if total, err = Add(total, v, field); err != nil {
			return 0, err
		}
	}
	return total, nil
}

// SaturatingAdd returns a+b, or the largest uint64 when the sum does not
// fit: for totals that are only compared against a limit.
func SaturatingAdd(a, b uint64) uint64 {
	s, carry := bits.Add64(a, b, 0)
	if carry != 0 {
		return math.MaxUint64
	}
	return s
}

// CeilDiv returns ceil(v/d). ok is false when d is zero.
func CeilDiv(v, d uint64) (q uint64, ok bool) {
	if d == 0 {
		return 0, false
	}
	if v == 0 {
		return 0, true
	}
	return (v-1)/d + 1, true
}

// MulDiv returns floor(a*b/c) computed with a 128-bit intermediate, and
// whether the quotient fits in 64 bits. c must be non-zero.
func MulDiv(a, b, c uint64) (uint64, bool) {
	hi, lo := bits.Mul64(a, b)
	if hi >= c {
		return math.MaxUint64, false
	}
	q, _ := bits.Div64(hi, lo, c)
	return q, true
}

// RatioBPS returns floor(part*10000/whole) computed exactly, pinned at
// math.MaxUint32 when larger. When whole is zero it returns zeroValue.
func RatioBPS(part, whole uint64, zeroValue uint32) uint32 {
	if whole == 0 {
		return zeroValue
	}
	q, ok := MulDiv(part, BasisPoints, whole)
	if !ok || q > math.MaxUint32 {
		return math.MaxUint32
	}
	return uint32(q)
}

// RatioBPSWide is RatioBPS with a 64-bit result, pinned at math.MaxUint64.
func RatioBPSWide(part, whole uint64, zeroValue uint64) uint64 {
	if whole == 0 {
		return zeroValue
	}
	q, _ := MulDiv(part, BasisPoints, whole)
	return q
}

// Finite reports whether f is neither NaN nor an infinity.
func Finite(f float64) bool {
	return !math.IsNaN(f) && !math.IsInf(f, 0)
}

// Clamp01 clamps f to [0, 1], mapping NaN and infinities to 0.
func Clamp01(f float64) float64 {
	if !Finite(f) || f < 0 {
		return 0
	}
	if f > 1 {
		return 1
	}
	return f
}
