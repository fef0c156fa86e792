// Package benchstats gives the statistics every gpuplan benchmark and gate
// states: a median with its distribution-free confidence interval, and the
// interval of a ratio of two independent medians, as benchstat computes
// them (golang.org/x/perf/benchmath).
package benchstats

import (
	"math"

	"golang.org/x/perf/benchmath"
)

// Confidence is the confidence level of every interval gpuplan states.
const Confidence = 0.95

// Interval is a point estimate with a confidence interval [Lo, Hi].
type Interval struct {
	Center float64
	Lo     float64
	Hi     float64
}

// MedianCI returns the median of values and its distribution-free
// confidence interval at the given level (benchmath.AssumeNothing, as
// benchstat computes it). With too few values the bounds are infinite.
func MedianCI(values []float64, confidence float64) Interval {
	if len(values) == 0 {
		return Interval{Center: math.NaN(), Lo: math.Inf(-1), Hi: math.Inf(1)}
	}
	// benchmath sorts the slice it is given; sort a copy.
	own := append([]float64(nil), values...)
	s := benchmath.AssumeNothing.Summary(benchmath.NewSample(own, &benchmath.DefaultThresholds), confidence)
	return Interval{Center: s.Center, Lo: s.Lo, Hi: s.Hi}
}

// SpeedupCI returns the ratio of medians baseline/candidate and a
// confidence interval for it at level Confidence: each arm's median
// interval is taken at sqrt(Confidence), so both hold together with
// probability at least Confidence for independent arms, and the ratio then
// lies in [baseline.Lo/candidate.Hi, baseline.Hi/candidate.Lo]. Times must
// be positive. The bounds are infinite or zero when an arm has too few
// samples for a finite interval.
func SpeedupCI(baseline, candidate []float64) Interval {
	perArm := math.Sqrt(Confidence)
	b := MedianCI(baseline, perArm)
	c := MedianCI(candidate, perArm)
	r := Interval{Center: b.Center / c.Center, Lo: 0, Hi: math.Inf(1)}
	if finite(b.Lo) && finite(c.Hi) && c.Hi > 0 {
		r.Lo = b.Lo / c.Hi
	}
	if finite(b.Hi) && finite(c.Lo) && c.Lo > 0 {
		r.Hi = b.Hi / c.Lo
	}
	return r
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }
