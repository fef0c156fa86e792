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

// MaxSettleSamples caps the samples per arm an unknown verdict suggests:
// an estimate above it means the point estimate lies within noise of the
// claim's bound, which more samples would not settle in practice (the
// committed runs record 10 to 30 samples per arm).
const MaxSettleSamples = 10000

// SamplesToSettle estimates how many samples per arm would settle a claim
// whose interval straddles its bound. halfWidth is the distance from the
// point estimate to the interval's end on the bound's side, margin the
// distance from the point estimate to the bound, and n the samples per arm
// behind the interval (the larger arm's count, for two arms). The
// half-width of a median's interval shrinks as 1/sqrt(n), so it falls to
// margin at n' = n * (halfWidth/margin)^2, rounded up and at least n+1.
// ok is false, and the count 0, when n' is above MaxSettleSamples or
// cannot be computed (a margin of 0: the point estimate is on the bound;
// an infinite half-width; a negative length).
func SamplesToSettle(n int, halfWidth, margin float64) (samples int, ok bool) {
	if n <= 0 || !finite(halfWidth) || !finite(margin) || halfWidth < 0 || margin <= 0 {
		return 0, false
	}
	r := halfWidth / margin
	est := math.Ceil(float64(n) * r * r)
	if !(est <= MaxSettleSamples) || n+1 > MaxSettleSamples {
		return 0, false
	}
	return max(int(est), n+1), true
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }
