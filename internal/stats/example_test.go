package stats_test

import (
	"fmt"

	"github.com/gpuplan/gpuplan/internal/stats"
)

func ExampleMedian() {
	fmt.Println(stats.Median([]float64{20.99, 11.98, 1.81}), stats.FormatNs(1810))
	// Output: 11.98 1.81 µs
}
