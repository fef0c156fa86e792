// Package stats holds the small statistics and formatting helpers shared by
// the benchmark protocols and the evidence reports.
package stats

import (
	"fmt"
	"math"
	"slices"
)

// Median returns the median of xs (the mean of the middle two for an even
// count), or 0 for none. xs is not modified.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}

// TimeUnit picks the unit a time in nanoseconds is shown in: its scale
// (ns per unit), the unit's symbol and the number format for the scaled
// value: seconds and milliseconds with three decimals, microseconds with
// two, nanoseconds with one.
func TimeUnit(ns float64) (scale float64, unit, format string) {
	switch {
	case ns >= 1e9:
		return 1e9, "s", "%.3f"
	case ns >= 1e6:
		return 1e6, "ms", "%.3f"
	case ns >= 1e3:
		return 1e3, "µs", "%.2f"
	}
	return 1, "ns", "%.1f"
}

// FormatNs prints a duration in nanoseconds in its unit (TimeUnit): "850.0
// ns", "1.81 µs", "2.840 ms", "1.200 s"; "-" for zero, negative or NaN.
func FormatNs(ns float64) string {
	if math.IsNaN(ns) || ns <= 0 {
		return "-"
	}
	scale, unit, format := TimeUnit(ns)
	return fmt.Sprintf(format, ns/scale) + " " + unit
}
