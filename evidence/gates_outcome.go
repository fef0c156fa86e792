package evidence

import (
	"cmp"
	"fmt"
	"math"
	"strconv"

	"github.com/gpuplan/gpuplan/internal/stats"
)

// Outcome is what the evidence says about a claim: it holds, it fails, or
// it cannot tell yet because the 95% interval straddles the claim's bound.
type Outcome int

const (
	// OutcomeFails: the claim does not hold. A step before the comparison
	// refused the evidence, or the whole 95% interval lies on the wrong
	// side of the bound. It is the zero value, so a verdict that was never
	// judged fails.
	OutcomeFails Outcome = iota
	// OutcomeHolds: the whole 95% interval lies on the claimed side of the
	// bound (the bound itself included).
	OutcomeHolds
	// OutcomeUnknown: the 95% interval straddles the bound, so the
	// evidence neither holds nor refutes the claim; more samples would
	// settle it. The gate does not pass on an unknown claim.
	OutcomeUnknown
)

// String returns the word a verdict line starts with: PASS, FAIL or
// UNKNOWN.
func (o Outcome) String() string {
	switch o {
	case OutcomeHolds:
		return "PASS"
	case OutcomeUnknown:
		return "UNKNOWN"
	}
	return "FAIL"
}

// judgeInterval places a 95% interval against a claim's bound. With atLeast
// (a speedup) the claim holds when iv.Lo >= bound, fails when iv.Hi <
// bound, and is unknown when iv.Lo < bound <= iv.Hi. Otherwise (a time
// that must stay at most bound) it holds when iv.Hi <= bound, fails when
// iv.Lo > bound, and is unknown when iv.Lo <= bound < iv.Hi. Where the
// point estimate lies inside the interval does not matter. A NaN bound or
// end fails.
func judgeInterval(iv Interval, bound float64, atLeast bool) Outcome {
	holds, unknown := iv.Lo >= bound, iv.Lo < bound && bound <= iv.Hi
	if !atLeast {
		holds, unknown = iv.Hi <= bound, iv.Lo <= bound && bound < iv.Hi
	}
	switch {
	case holds:
		return OutcomeHolds
	case unknown:
		return OutcomeUnknown
	}
	return OutcomeFails
}

// settleDistances returns the interval's half-width on the bound's side of
// its point estimate and the point estimate's distance to the bound: the
// two lengths SamplesToSettle compares.
func settleDistances(iv Interval, bound float64) (halfWidth, margin float64) {
	if iv.Center >= bound {
		return iv.Center - iv.Lo, iv.Center - bound
	}
	return iv.Hi - iv.Center, bound - iv.Center
}

// unknownReason is the reason of an unknown verdict and the sample count
// per arm that would settle it (0 past MaxSettleSamples): observed says
// what was measured, straddle how its interval lies across the bound, and
// n is the larger arm's sample count.
func unknownReason(observed, straddle string, iv Interval, bound float64, n int) (string, int) {
	halfWidth, margin := settleDistances(iv, bound)
	head := fmt.Sprintf("inconclusive: %s straddles the bound: %s, so this evidence neither holds nor refutes the claim; required an interval wholly on one side of the bound", observed, straddle)
	settle, ok := SamplesToSettle(n, halfWidth, margin)
	if !ok {
		return fmt.Sprintf("%s. The point estimate lies within noise of the bound: with the interval's half-width shrinking as 1/sqrt(n) from n=%d, more than %d samples per arm would be needed. Fix: change the measured code or move the claim's bound away from the observed value; more samples would not settle it in practice",
			head, n, MaxSettleSamples), 0
	}
	return fmt.Sprintf("%s. From the observed spread: on the bound's side the interval's half-width is %.3g times the point estimate's distance to the bound, and it shrinks as 1/sqrt(n), so n=%d per arm would have to grow to about %d. Fix: run more: about %d samples per arm would settle it",
		head, halfWidth/margin, n, settle, settle), settle
}

// preciseX renders a speedup for comparison with bound: with two decimals,
// or more where two would round it onto or across the bound, so that an
// interval end never prints equal to a bound it misses.
func preciseX(v, bound float64) string {
	return strconv.FormatFloat(v, 'f', sideDigits(v, bound, 1, 2), 64) + "x"
}

// preciseNs renders a time for comparison with bound, in the bound's unit
// (stats.TimeUnit), with as many decimals as preciseX would take.
func preciseNs(v, bound float64) string {
	scale, unit, _ := stats.TimeUnit(bound)
	return strconv.FormatFloat(v/scale, 'f', sideDigits(v, bound, scale, 2), 64) + " " + unit
}

// sideDigits is the fewest decimals, from digits up to digits+6, at which
// v/scale rounds to a number on the same side of bound/scale as v (or on
// it, when v is).
func sideDigits(v, bound, scale float64, digits int) int {
	want := cmp.Compare(v, bound)
	for d := digits; d < digits+6; d++ {
		p := math.Pow10(d)
		if cmp.Compare(math.Round(v/scale*p)/p, bound/scale) == want {
			return d
		}
	}
	return digits + 6
}
