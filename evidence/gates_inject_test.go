package evidence

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// injectedFile is the recorded file results/name, copied into a temporary
// results directory with every wall_ns and device_ns of arm multiplied by
// factor (written back through WriteSamples) and loaded from there.
func injectedFile(t *testing.T, name, arm string, factor float64) []ResultFile {
	t.Helper()
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join("results", name))
	require.NoError(t, err)
	path := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(path, data, 0o644))
	files, err := LoadResults(dir)
	require.NoError(t, err)
	require.Len(t, files, 1)
	samples := files[0].Samples
	scaled := 0
	for i := range samples {
		if samples[i].Arm == arm {
			samples[i].WallNS *= factor
			samples[i].DeviceNS *= factor
			scaled++
		}
	}
	require.Positive(t, scaled, "%s has no %s samples", name, arm)
	f, err := os.Create(path)
	require.NoError(t, err)
	require.NoError(t, WriteSamples(f, samples))
	require.NoError(t, f.Close())
	files, err = LoadResults(dir)
	require.NoError(t, err)
	return files
}

// committedClaim is the claim of evidence/gates.json with this name.
func committedClaim(t *testing.T, name string) Claim {
	t.Helper()
	data, err := os.ReadFile("gates.json")
	require.NoError(t, err)
	g, err := ParseGates("gates.json", data)
	require.NoError(t, err)
	for _, c := range g.Claims {
		if c.Name == name {
			return c
		}
	}
	require.FailNow(t, "no such claim in gates.json", name)
	return Claim{}
}

// straddleFactor is the slowdown of the candidate that puts the bound in
// the geometric middle of v's interval: the speedup's interval scales by
// 1/factor, the time per iteration's by factor.
func straddleFactor(c Claim, v Verdict) float64 {
	if c.PerIteration() {
		return c.MaxNSPerIteration / math.Sqrt(v.PerIteration.Lo*v.PerIteration.Hi)
	}
	return math.Sqrt(v.Speedup.Lo*v.Speedup.Hi) / c.RequiredSpeedup()
}

// The gate catches a slowdown injected into recorded evidence: the
// committed claims on grid-2048.csv hold on the file as recorded, fail when
// the candidate is made slower than the claim allows, and are unknown when
// the slowdown puts the bound inside the interval. The evidence is judged
// on its own fingerprint, so only the injected times change.
func TestGateCatchesInjectedSlowdown(t *testing.T) {
	const (
		speedup = "megakernel beats the host loop on grid-2048"
		perIter = "megakernel costs at most 1.5 us per level on grid-2048"
	)
	tests := []struct {
		name     string
		claim    string
		factor   float64 // 0: straddleFactor
		want     Outcome
		contains string
	}{
		{"speedup as recorded", speedup, 1, OutcomeHolds, ""},
		{"speedup 1.5x slower still holds 5x", speedup, 1.5, OutcomeHolds, ""},
		{"speedup 4x slower", speedup, 4, OutcomeFails, "even its upper bound"},
		{"speedup straddling 5x", speedup, 0, OutcomeUnknown, "its lower bound"},
		{"per iteration as recorded", perIter, 1, OutcomeHolds, ""},
		{"per iteration 1.5x slower", perIter, 1.5, OutcomeFails, "even its lower bound"},
		{"per iteration straddling 1.5 us", perIter, 0, OutcomeUnknown, "its upper bound"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := committedClaim(t, tc.claim)
			require.Equal(t, "grid-2048.csv", c.File)
			judge := func(factor float64) Verdict {
				files := injectedFile(t, c.File, c.Candidate, factor)
				own := Fingerprints{"workloads/bfs": files[0].Samples[0].Provenance.SourceFingerprint}
				return CheckClaims(Gates{Claims: []Claim{c}}, files, own)[0]
			}
			factor := tc.factor
			if factor == 0 {
				recorded := judge(1)
				require.Equal(t, OutcomeHolds, recorded.Outcome, recorded.String())
				factor = straddleFactor(c, recorded)
				require.Greater(t, factor, 1.0, "the recorded interval must be clear of the bound")
			}
			v := judge(factor)
			require.Equal(t, tc.want, v.Outcome, "factor %v: %s", factor, v)
			assert.False(t, v.Stale)
			assert.Equal(t, tc.want == OutcomeHolds, v.Holds())
			assert.Contains(t, v.String(), tc.want.String()+" "+tc.claim+": ")
			if tc.want == OutcomeHolds {
				return
			}
			assert.Contains(t, v.Reason, tc.contains)
			assert.Contains(t, v.Reason, "required")
			assert.Contains(t, v.Reason, ". Fix: ")
			if tc.want == OutcomeUnknown {
				// A tight recorded interval puts the settling count past
				// what is practical: then the verdict says so instead.
				if v.SettleSamples == 0 {
					assert.Contains(t, v.Reason, "more samples would not settle it in practice")
					return
				}
				assert.Greater(t, v.SettleSamples, max(v.BaselineN, v.CandidateN))
				assert.Regexp(t, `\. Fix: run more: about \d+ samples per arm would settle it$`, v.Reason)
			}
		})
	}
}
