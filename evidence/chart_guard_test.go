package evidence

import (
	"bytes"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A median that a log scale cannot show (0, negative, NaN or infinite, as a
// denormal time once became) is an error naming the arm, never a panic.
func TestWriteChartRefusesMediansALogScaleCannotShow(t *testing.T) {
	for _, median := range []float64{0, -1, 1e-320, math.NaN(), math.Inf(1)} {
		s := []WorkloadSummary{{File: "x.csv", Workload: Workload{Name: "w"}, Metric: MetricWallNS,
			Arms: []ArmSummary{{Arm: "megakernel", N: 1, Median: Interval{Center: median, Lo: median, Hi: median}}}}}
		var err error
		require.NotPanics(t, func() { err = WriteChart(&bytes.Buffer{}, s, ChartPNG) }, "median %g", median)
		require.Error(t, err, "median %g", median)
		assert.Contains(t, err.Error(), "megakernel")
		assert.Contains(t, err.Error(), "Fix:")
	}
}
