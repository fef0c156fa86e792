package planners

import "strconv"

// benchName labels a benchmark size, for example "n=100000".
func benchName(n int) string { return "n=" + strconv.Itoa(n) }
