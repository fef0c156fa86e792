package evidence

import (
	"math"

	"github.com/gpuplan/gpuplan/internal/benchstats"
)

// Confidence is the confidence level of every interval the gate and the
// report state.
const Confidence = benchstats.Confidence

// MinSamplesPerArm is the fewest samples an arm needs before a claim can be
// judged on it.
const MinSamplesPerArm = 10

// Interval is a point estimate with a confidence interval [Lo, Hi].
type Interval = benchstats.Interval

// MedianCI returns the median of values and its distribution-free
// confidence interval at the given level (benchmath.AssumeNothing, as
// benchstat computes it). With too few values the bounds are infinite.
func MedianCI(values []float64, confidence float64) Interval {
	return benchstats.MedianCI(values, confidence)
}

// SpeedupCI returns the ratio of medians baseline/candidate and a
// confidence interval for it at level Confidence: each arm's median
// interval is taken at sqrt(Confidence), so both hold together with
// probability at least Confidence for independent arms, and the ratio then
// lies in [baseline.Lo/candidate.Hi, baseline.Hi/candidate.Lo]. Times must
// be positive. The bounds are infinite or zero when an arm has too few
// samples for a finite interval.
func SpeedupCI(baseline, candidate []float64) Interval {
	return benchstats.SpeedupCI(baseline, candidate)
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }
