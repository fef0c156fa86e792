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

// FormatNs prints a duration in nanoseconds with a readable unit: "850
// ns", "1.81 us", "2.840 ms", "1.200 s"; "-" for zero, negative or NaN.
func FormatNs(ns float64) string {
	switch {
	case math.IsNaN(ns) || ns <= 0:
		return "-"
	case ns < 1e3:
		return fmt.Sprintf("%.0f ns", ns)
	case ns < 1e6:
		return fmt.Sprintf("%.2f us", ns/1e3)
	case ns < 1e9:
		return fmt.Sprintf("%.3f ms", ns/1e6)
	}
	return fmt.Sprintf("%.3f s", ns/1e9)
}
