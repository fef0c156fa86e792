package evidence

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// speedupClaim is a speedup claim named "mk on grid-512" with extra
// fields appended.
func speedupClaim(extra string) string {
	return `{"claims": [{"name": "mk on grid-512", "workload": "grid-512", "baseline": "host-loop", "candidate": "megakernel", "metric": "wall_ns", ` + extra + `}]}`
}

// A min_speedup below 1 would let a slower candidate pass; it is refused
// unless the claim says it is a no-regression bound, and no_regression
// is refused where it bounds nothing.
func TestParseGatesSpeedupBound(t *testing.T) {
	checkRefusals(t, []refusal{
		{"below 1", speedupClaim(`"min_speedup": 0.5`), "claims[0].min_speedup", `claim "mk on grid-512" has min_speedup 0.5, below 1, so it would hold with megakernel slower than host-loop`},
		{"just below 1", speedupClaim(`"min_speedup": 0.999`), "claims[0].min_speedup", "below 1"},
		{"below 1, no_regression false", speedupClaim(`"min_speedup": 0.9, "no_regression": false`), "claims[0].min_speedup", `add "no_regression": true`},
		{"no_regression above 1", speedupClaim(`"min_speedup": 1.5, "no_regression": true`), "claims[0].min_speedup", `claim "mk on grid-512" sets no_regression, but its min_speedup 1.5 is above 1`},
		{"no_regression per iteration", perIterClaim(`"max_ns_per_iteration": 2000, "no_regression": true`), "claims[0].no_regression", `claim "a" is a per-iteration claim`},
		{"no_regression zero", speedupClaim(`"min_speedup": 0, "no_regression": true`), "claims[0].min_speedup", "not a finite number above 0"},
		{"no_regression not a bool", speedupClaim(`"min_speedup": 0.9, "no_regression": "yes"`), "claims[0].no_regression", "cannot use"},
	})

	for _, tc := range []struct {
		name, extra string
		want        Claim
	}{
		{"speedup of 1", `"min_speedup": 1`, Claim{MinSpeedup: 1}},
		{"speedup", `"min_speedup": 5`, Claim{MinSpeedup: 5}},
		{"no regression", `"min_speedup": 0.8, "no_regression": true`, Claim{MinSpeedup: 0.8, NoRegression: true}},
		{"no regression of 1", `"min_speedup": 1, "no_regression": true`, Claim{MinSpeedup: 1, NoRegression: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := ParseGates("gates.json", []byte(speedupClaim(tc.extra)))
			require.NoError(t, err)
			want := gridClaim(tc.want.MinSpeedup)
			want.Name, want.NoRegression = "mk on grid-512", tc.want.NoRegression
			assert.Equal(t, Gates{Claims: []Claim{want}}, g)
			out, err := MarshalGates(g)
			require.NoError(t, err)
			assert.Equal(t, tc.want.NoRegression, strings.Contains(string(out), `"no_regression": true`), "%s", out)
			again, err := ParseGates("gates.json", out)
			require.NoError(t, err)
			assert.Equal(t, g, again)
		})
	}
}

// Every claim of the committed gates file states a speedup of at least 1
// or is a no-regression bound.
func TestCommittedGatesSpeedupBounds(t *testing.T) {
	data, err := os.ReadFile("gates.json")
	require.NoError(t, err)
	g, err := ParseGates("gates.json", data)
	require.NoError(t, err)
	require.NotEmpty(t, g.Claims)
	for _, c := range g.Claims {
		if !c.PerIteration() && !c.NoRegression {
			assert.GreaterOrEqual(t, c.MinSpeedup, 1.0, c.Name)
		}
	}
}

// A no-regression bound of 0.8 holds while the candidate is at most 1.25x
// slower than the baseline and fails beyond; a bound of 1 requires the
// candidate to be no slower.
func TestCheckNoRegressionClaims(t *testing.T) {
	tests := []struct {
		name      string
		min       float64
		candidate float64 // candidate time, the baseline's being 1e6
		pass      bool
	}{
		{"10% slower within 0.8", 0.8, 1.1e6, true},
		{"faster within 0.8", 0.8, 0.5e6, true},
		{"50% slower beyond 0.8", 0.8, 1.5e6, false},
		{"10% slower beyond 0.95", 0.95, 1.1e6, false},
		{"10% slower beyond 1", 1, 1.1e6, false},
		{"twice as fast within 1", 1, 0.5e6, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := gridClaim(tc.min)
			c.NoRegression = true
			files := []ResultFile{armFile("run.csv", 12, map[string]float64{"host-loop": 1e6, "megakernel": tc.candidate})}
			v := CheckClaims(Gates{Claims: []Claim{c}}, files, testFingerprints)[0]
			assert.Equal(t, tc.pass, v.Holds(), v.String())
			assert.Contains(t, v.String(), "no regression: at most")
			if !tc.pass {
				assert.Contains(t, v.Reason, "Fix:")
			}
		})
	}
	c := gridClaim(0.8)
	c.NoRegression = true
	assert.Equal(t, "megakernel vs host-loop on grid-512 (wall_ns) at least 0.8x (no regression: at most 1.25x slower)", c.String())
	assert.Equal(t, "megakernel vs host-loop on grid-512 (wall_ns) at least 5x", gridClaim(5).String())
}
