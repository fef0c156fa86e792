package evidence

import (
	"fmt"
	"strconv"

	"github.com/gpuplan/gpuplan/internal/checked"
	"github.com/gpuplan/gpuplan/internal/quote"
)

// minEffectFix says how to state a minimum effect.
const minEffectFix = "state the smallest speedup that matters as a fraction in (0, 1), for example 0.05 for at least 1.05x beyond noise; state a larger effect as min_speedup"

// checkMinEffect validates a claim's min_effect, when stated is true: a
// finite fraction in (0, 1) on a speedup claim that is not a no-regression
// bound, and one that asks for more than min_speedup already does (a
// min_effect that changes nothing is a mistake, not a policy). bad builds
// the error for a field of the claim.
func checkMinEffect(c Claim, stated bool, bad func(name, msg, fix string) error) error {
	if !stated {
		return nil
	}
	e := c.MinEffect
	switch {
	case c.PerIteration():
		return bad("min_effect", fmt.Sprintf("claim %s is a per-iteration claim, which has no baseline for the candidate to differ from", quote.Echo(c.Name)),
			"drop min_effect, or tighten max_ns_per_iteration")
	case !checked.Finite(e) || e <= 0 || e >= 1:
		return bad("min_effect", fmt.Sprintf("min_effect %v is not a fraction in (0, 1)", e), minEffectFix)
	case c.NoRegression:
		return bad("min_effect", fmt.Sprintf("claim %s sets no_regression, which allows %s to be slower than %s, but min_effect requires it to be faster", quote.Echo(c.Name), c.Candidate, c.Baseline),
			"drop min_effect to bound the slowdown, or drop no_regression and state min_speedup 1 or more to claim a speedup")
	case 1+e <= c.MinSpeedup:
		return bad("min_effect", fmt.Sprintf("claim %s: min_effect %v requires at least %sx beyond noise, which its min_speedup %v already requires, so it would change nothing",
			quote.Echo(c.Name), e, formatBound(1+e), c.MinSpeedup),
			"drop min_effect, or state min_speedup 1 to claim only the effect")
	}
	return nil
}

// formatBound renders a required speedup to 12 significant digits, so that
// 1+min_effect prints as written (1.07, not 1.0700000000000001).
func formatBound(x float64) string { return strconv.FormatFloat(x, 'g', 12, 64) }
