package main

import (
	"fmt"
	"strings"
)

// Formatting shared by the planner commands' text output.

// bps formats basis points as a percentage, for example 2500 -> "25.00%".
func bps(v uint64) string {
	return fmt.Sprintf("%d.%02d%%", v/100, v%100)
}

// joinUints formats ids as "1, 2, 3".
func joinUints[T ~uint32 | ~uint64](ids []T) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprint(id)
	}
	return strings.Join(parts, ", ")
}
