package evidence

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// min_effect is decoded strictly and validated: a fraction in (0, 1), on a
// speedup claim that is not a no-regression bound, asking for more than
// min_speedup does.
func TestParseGatesMinEffect(t *testing.T) {
	checkRefusals(t, []refusal{
		{"zero", speedupClaim(`"min_speedup": 1, "min_effect": 0`), "claims[0].min_effect", "min_effect 0 is not a fraction in (0, 1)"},
		{"negative", speedupClaim(`"min_speedup": 1, "min_effect": -0.05`), "claims[0].min_effect", "not a fraction in (0, 1)"},
		{"one", speedupClaim(`"min_speedup": 1, "min_effect": 1`), "claims[0].min_effect", "min_effect 1 is not a fraction in (0, 1)"},
		{"a percentage", speedupClaim(`"min_speedup": 1, "min_effect": 5`), "claims[0].min_effect", "not a fraction"},
		{"a string", speedupClaim(`"min_speedup": 1, "min_effect": "5%"`), "claims[0].min_effect", "cannot use"},
		{"misspelt", speedupClaim(`"min_speedup": 1, "min_efect": 0.05`), "claims[0].min_efect", "unknown field"},
		{"per iteration", perIterClaim(`"max_ns_per_iteration": 2000, "min_effect": 0.05`), "claims[0].min_effect", `claim "a" is a per-iteration claim, which has no baseline`},
		{"no regression", speedupClaim(`"min_speedup": 0.95, "no_regression": true, "min_effect": 0.05`), "claims[0].min_effect", "sets no_regression, which allows megakernel to be slower than host-loop"},
		{"changes nothing", speedupClaim(`"min_speedup": 5, "min_effect": 0.05`), "claims[0].min_effect", `claim "mk on grid-512": min_effect 0.05 requires at least 1.05x beyond noise, which its min_speedup 5 already requires`},
		{"equal to min_speedup", speedupClaim(`"min_speedup": 1.5, "min_effect": 0.5`), "claims[0].min_effect", "would change nothing"},
	})

	g, err := ParseGates("gates.json", []byte(speedupClaim(`"min_speedup": 1, "min_effect": 0.05`)))
	require.NoError(t, err)
	want := gridClaim(1)
	want.Name, want.MinEffect = "mk on grid-512", 0.05
	require.Equal(t, Gates{Claims: []Claim{want}}, g)
	assert.InDelta(t, 1.05, g.Claims[0].RequiredSpeedup(), 1e-15)
	assert.Equal(t, "megakernel vs host-loop on grid-512 (wall_ns) at least 1x (min effect 0.05: at least 1.05x beyond noise)", g.Claims[0].String())
	out, err := MarshalGates(g)
	require.NoError(t, err)
	assert.Contains(t, string(out), `"min_effect": 0.05`)
	again, err := ParseGates("gates.json", out)
	require.NoError(t, err)
	assert.Equal(t, g, again)
	// Without min_effect the field is not written and changes nothing.
	out, err = MarshalGates(Gates{Claims: []Claim{gridClaim(5)}})
	require.NoError(t, err)
	assert.NotContains(t, string(out), "min_effect")
	assert.Equal(t, 5.0, gridClaim(5).RequiredSpeedup())
	seven := gridClaim(1)
	seven.MinEffect = 0.07
	assert.Contains(t, seven.String(), "(min effect 0.07: at least 1.07x beyond noise)")
}

// A claim with a minimum effect is judged against 1+min_effect: a
// candidate 2% faster than the baseline does not carry a 5% effect, one
// 20% faster does.
func TestCheckMinEffectClaims(t *testing.T) {
	tests := []struct {
		name      string
		candidate float64 // the baseline's being 1e6
		want      Outcome
	}{
		{"20% faster", 1e6 / 1.2, OutcomeHolds},
		{"5% faster: within noise of the effect", 1e6 / 1.05, OutcomeUnknown},
		{"2% faster", 1e6 / 1.02, OutcomeFails},
		{"as fast", 1e6, OutcomeFails},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := gridClaim(1)
			c.MinEffect = 0.05
			// 30 samples of each arm with up to 2% noise.
			files := []ResultFile{armFile("run.csv", 30, map[string]float64{"host-loop": 1e6, "megakernel": tc.candidate})}
			v := CheckClaims(Gates{Claims: []Claim{c}}, files, testFingerprints)[0]
			require.Equal(t, tc.want, v.Outcome, v.String())
			assert.InDelta(t, 1.05, v.RequiredSpeedupLower, 1e-15)
			if tc.want == OutcomeFails {
				assert.Contains(t, v.Reason, "below the required 1.05x")
			}
			// The same evidence against min_speedup 1 alone holds unless
			// the candidate is no faster.
			plain := CheckClaims(Gates{Claims: []Claim{gridClaim(1)}}, files, testFingerprints)[0]
			assert.Equal(t, tc.candidate < 1e6/1.01, plain.Holds(), plain.String())
		})
	}
}
