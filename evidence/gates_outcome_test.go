package evidence

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOutcomeString(t *testing.T) {
	var zero Verdict
	assert.Equal(t, OutcomeFails, zero.Outcome, "a verdict never judged fails")
	assert.False(t, zero.Holds())
	for o, want := range map[Outcome]string{OutcomeHolds: "PASS", OutcomeFails: "FAIL", OutcomeUnknown: "UNKNOWN", Outcome(9): "FAIL"} {
		assert.Equal(t, want, o.String())
	}
}

// judgeInterval: holds with the whole interval on the claimed side (the
// bound included), fails with it wholly on the other, unknown across it,
// wherever the point estimate lies.
func TestJudgeInterval(t *testing.T) {
	iv := func(lo, c, hi float64) Interval { return Interval{Center: c, Lo: lo, Hi: hi} }
	tests := []struct {
		name    string
		iv      Interval
		bound   float64
		atLeast bool
		want    Outcome
	}{
		{"speedup above", iv(5.1, 5.3, 5.6), 5, true, OutcomeHolds},
		{"speedup lower bound on the bound", iv(5, 5.3, 5.6), 5, true, OutcomeHolds},
		{"speedup point meets, lower misses", iv(4.9, 5.1, 5.3), 5, true, OutcomeUnknown},
		{"speedup point misses, upper meets", iv(4.7, 4.9, 5.1), 5, true, OutcomeUnknown},
		{"speedup upper bound on the bound", iv(4.7, 4.9, 5), 5, true, OutcomeUnknown},
		{"speedup below", iv(4.5, 4.7, 4.99), 5, true, OutcomeFails},
		{"speedup infinite upper bound", iv(4.5, 4.7, math.Inf(1)), 5, true, OutcomeUnknown},
		{"speedup NaN", iv(math.NaN(), 5, math.NaN()), 5, true, OutcomeFails},
		{"time below", iv(1400, 1420, 1450), 1500, false, OutcomeHolds},
		{"time upper bound on the bound", iv(1400, 1420, 1500), 1500, false, OutcomeHolds},
		{"time point meets, upper misses", iv(1480, 1495, 1510), 1500, false, OutcomeUnknown},
		{"time point misses, lower meets", iv(1490, 1505, 1520), 1500, false, OutcomeUnknown},
		{"time lower bound on the bound", iv(1500, 1505, 1520), 1500, false, OutcomeUnknown},
		{"time above", iv(1501, 1505, 1520), 1500, false, OutcomeFails},
		{"time NaN", iv(math.NaN(), 1505, math.NaN()), 1500, false, OutcomeFails},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, judgeInterval(tc.iv, tc.bound, tc.atLeast))
		})
	}
}

func TestSamplesToSettle(t *testing.T) {
	tests := []struct {
		name              string
		n                 int
		halfWidth, margin float64
		want              int
		ok                bool
	}{
		{"twice as wide: four times the samples", 10, 0.2, 0.1, 40, true},
		{"rounded up", 10, 0.15, 0.1, 23, true},
		{"at least one more", 10, 0.1000001, 0.1, 11, true},
		{"from the larger arm", 30, 0.3, 0.1, 270, true},
		{"at the cap", 100, 1, 0.1, MaxSettleSamples, true},
		{"past the cap", 101, 1, 0.1, 0, false},
		{"point on the bound", 10, 0.1, 0, 0, false},
		{"infinite half-width", 10, math.Inf(1), 0.1, 0, false},
		{"NaN", 10, math.NaN(), 0.1, 0, false},
		{"negative", 10, -0.1, 0.1, 0, false},
		{"no samples", 0, 0.2, 0.1, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := SamplesToSettle(tc.n, tc.halfWidth, tc.margin)
			assert.Equal(t, tc.ok, ok)
			assert.Equal(t, tc.want, got)
		})
	}
}

// An interval end prints with the decimals that keep it on its side of
// the bound.
func TestPreciseEnds(t *testing.T) {
	assert.Equal(t, "4.93x", preciseX(4.93, 5))
	assert.Equal(t, "4.998x", preciseX(4.998, 5))
	assert.Equal(t, "5.004x", preciseX(5.004, 5))
	assert.Equal(t, "5.00x", preciseX(5, 5))
	assert.Equal(t, "1.502 µs", preciseNs(1501.6, 1500))
	assert.Equal(t, "1.4999 µs", preciseNs(1499.9, 1500))
	assert.Equal(t, "2.12 µs", preciseNs(2120, 1500))
}

// unknownClaims are a speedup and a per-iteration claim whose bounds lie
// in the geometric middle of the intervals of file, judged once first.
func unknownClaims(t *testing.T, file ResultFile) []Claim {
	t.Helper()
	perIter := Claim{Name: "per level", Workload: "grid-512", Candidate: "megakernel", Metric: MetricWallNS, MaxNSPerIteration: 1e9}
	vs := CheckClaims(Gates{Claims: []Claim{gridClaim(1), perIter}}, []ResultFile{file}, testFingerprints)
	require.True(t, vs[0].Holds(), vs[0].String())
	require.True(t, vs[1].Holds(), vs[1].String())
	speedup := gridClaim(math.Sqrt(vs[0].Speedup.Lo * vs[0].Speedup.Hi))
	perIter.MaxNSPerIteration = math.Sqrt(vs[1].PerIteration.Lo * vs[1].PerIteration.Hi)
	return []Claim{speedup, perIter}
}

func TestCheckClaimsUnknown(t *testing.T) {
	file := armFile("run.csv", 12, map[string]float64{"host-loop": 1e7, "megakernel": 1e6})
	for _, c := range unknownClaims(t, file) {
		t.Run(c.Name, func(t *testing.T) {
			v := CheckClaims(Gates{Claims: []Claim{c}}, []ResultFile{file}, testFingerprints)[0]
			require.Equal(t, OutcomeUnknown, v.Outcome, v.String())
			assert.False(t, v.Holds())
			assert.True(t, strings.HasPrefix(v.String(), "UNKNOWN "+c.Name+": "), v.String())
			assert.Contains(t, v.Reason, "inconclusive: observed ")
			assert.Contains(t, v.Reason, "straddles the bound")
			assert.Contains(t, v.Reason, "required an interval wholly on one side of the bound")
			assert.Contains(t, v.Reason, "shrinks as 1/sqrt(n), so n=12 per arm")
			assert.Greater(t, v.SettleSamples, 12)
			assert.LessOrEqual(t, v.SettleSamples, MaxSettleSamples)
			assert.True(t, strings.HasSuffix(v.Reason, ". Fix: run more: about "+strconv.Itoa(v.SettleSamples)+" samples per arm would settle it"), v.Reason)
		})
	}
}

// A bound on the point estimate itself cannot be settled: the verdict says
// so instead of suggesting a sample count.
func TestCheckClaimsUnknownPastTheCap(t *testing.T) {
	file := armFile("run.csv", 12, map[string]float64{"host-loop": 1e7, "megakernel": 1e6})
	v := CheckClaims(Gates{Claims: []Claim{gridClaim(1)}}, []ResultFile{file}, testFingerprints)[0]
	on := gridClaim(v.Speedup.Center)
	v = CheckClaims(Gates{Claims: []Claim{on}}, []ResultFile{file}, testFingerprints)[0]
	require.Equal(t, OutcomeUnknown, v.Outcome, v.String())
	assert.Zero(t, v.SettleSamples)
	assert.Contains(t, v.Reason, "more than 10000 samples per arm would be needed")
	assert.Contains(t, v.Reason, ". Fix: change the measured code or move the claim's bound")
	assert.NotContains(t, v.Reason, "run more")
}
