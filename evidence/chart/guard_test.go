package chart

import (
	"bytes"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/evidence"
)

// A median that a log scale cannot show (0, negative, NaN or infinite, as a
// denormal time once became) is an error naming the arm, never a panic.
func TestWriteEvidenceRefusesMediansALogScaleCannotShow(t *testing.T) {
	for _, median := range []float64{0, -1, 1e-320, math.NaN(), math.Inf(1)} {
		s := []evidence.WorkloadSummary{{File: "x.csv", Workload: evidence.Workload{Name: "w"}, Metric: evidence.MetricWallNS,
			Arms: []evidence.ArmSummary{{Arm: "megakernel", N: 1, Median: evidence.Interval{Center: median, Lo: median, Hi: median}}}}}
		var err error
		require.NotPanics(t, func() { err = WriteEvidence(&bytes.Buffer{}, s, PNG) }, "median %g", median)
		require.Error(t, err, "median %g", median)
		assert.Contains(t, err.Error(), "megakernel")
		assert.Contains(t, err.Error(), "Fix:")
	}
}
