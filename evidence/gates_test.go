package evidence

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/internal/strictjson"

	"github.com/gpuplan/gpuplan/internal/memcheck"
)

func demoFiles(t *testing.T) []ResultFile {
	t.Helper()
	files, err := LoadResults("testdata/results")
	require.NoError(t, err)
	require.Len(t, files, 1)
	return files
}

func gridClaim(min float64) Claim {
	return Claim{Name: "megakernel beats host loop", Workload: "grid-512", Baseline: "host-loop",
		Candidate: "megakernel", Metric: MetricWallNS, MinSpeedup: min}
}

// armFile builds a one-run file with n samples per arm; times are
// base×(1+small noise) from a fixed seed.
func armFile(path string, n int, arms map[string]float64) ResultFile {
	r := rand.New(rand.NewPCG(uint64(n), 99))
	f := ResultFile{Path: path}
	names := []string{"host-loop", "device-loop", "megakernel"}
	for i := range n {
		for _, arm := range names {
			base, ok := arms[arm]
			if !ok {
				continue
			}
			s := testSample(arm, uint64(i), base*(1+0.02*r.Float64()))
			s.Workload.Name = "grid-512"
			f.Samples = append(f.Samples, s)
		}
	}
	return f
}

func TestCheckClaimsOnFixture(t *testing.T) {
	files := demoFiles(t)
	vs := CheckClaims(Gates{Claims: []Claim{gridClaim(5)}}, files, testFingerprints)
	require.Len(t, vs, 1)
	v := vs[0]
	require.True(t, v.Holds(), v.String())
	assert.Equal(t, "grid-demo.csv", v.File)
	assert.Equal(t, "Test GPU X", v.Device)
	assert.Equal(t, 20, v.BaselineN)
	assert.Equal(t, 20, v.CandidateN)
	assert.InDelta(t, 10.1, v.Speedup.Center, 0.3)
	assert.Less(t, v.Speedup.Lo, v.Speedup.Center)
	assert.Greater(t, v.Speedup.Hi, v.Speedup.Center)
	assert.True(t, strings.HasPrefix(v.String(), "PASS megakernel beats host loop: megakernel vs host-loop on grid-512 (wall_ns) at least 5x: observed 10."), v.String())

	// The same evidence does not support 12x.
	v = CheckClaims(Gates{Claims: []Claim{gridClaim(12)}}, files, testFingerprints)[0]
	require.Equal(t, OutcomeFails, v.Outcome, v.String())
	assert.Contains(t, v.String(), "FAIL megakernel beats host loop")
	assert.Contains(t, v.Reason, "below the required 12x")
	assert.Contains(t, v.Reason, "Fix:")

	// Device time works too.
	c := gridClaim(5)
	c.Metric = MetricDeviceNS
	require.True(t, CheckClaims(Gates{Claims: []Claim{c}}, files, testFingerprints)[0].Holds())
}

// TestCheckPerIterationClaims judges claims on one arm's time per
// iteration: armFile's megakernel takes 1e6 ns (+ up to 2%) for 126
// iterations, about 7.9-8.1 us each.
func TestCheckPerIterationClaims(t *testing.T) {
	perIter := func(max float64) Claim {
		return Claim{Name: "megakernel per level", Workload: "grid-512", Candidate: "megakernel", Metric: MetricWallNS, MaxNSPerIteration: max}
	}
	files := []ResultFile{armFile("run.csv", 30, map[string]float64{"host-loop": 1e7, "megakernel": 1e6})}
	v := CheckClaims(Gates{Claims: []Claim{perIter(8200)}}, files, testFingerprints)[0]
	require.True(t, v.Holds(), v.String())
	assert.EqualValues(t, 126, v.Iterations)
	assert.Equal(t, 30, v.CandidateN)
	assert.Zero(t, v.BaselineN)
	assert.InDelta(t, 1e6*1.01/126, v.PerIteration.Center, 60)
	assert.LessOrEqual(t, v.PerIteration.Lo, v.PerIteration.Center)
	assert.GreaterOrEqual(t, v.PerIteration.Hi, v.PerIteration.Center)
	assert.True(t, strings.HasPrefix(v.String(), "PASS megakernel per level: megakernel on grid-512 (wall_ns) at most 8.20 µs per iteration: observed 8"), v.String())
	assert.Contains(t, v.String(), "95% CI [7.9")
	assert.Contains(t, v.String(), "n=30, 126 iterations")

	// The same evidence does not hold 7.9 us: the upper bound is above it.
	v = CheckClaims(Gates{Claims: []Claim{perIter(7900)}}, files, testFingerprints)[0]
	require.Equal(t, OutcomeFails, v.Outcome, v.String())
	assert.Contains(t, v.Reason, "above the required 7.90 µs")
	assert.Contains(t, v.Reason, "Fix:")

	// Only the candidate arm is needed.
	alone := []ResultFile{armFile("run.csv", 12, map[string]float64{"megakernel": 1e6})}
	require.True(t, CheckClaims(Gates{Claims: []Claim{perIter(8200)}}, alone, testFingerprints)[0].Holds())

	// The usual steps still apply: no evidence, too few samples, stale.
	v = CheckClaims(Gates{Claims: []Claim{perIter(8200)}}, nil, testFingerprints)[0]
	assert.Contains(t, v.Reason, "no evidence recorded: no megakernel samples of workload grid-512")
	few := []ResultFile{armFile("run.csv", 5, map[string]float64{"megakernel": 1e6})}
	assert.Contains(t, CheckClaims(Gates{Claims: []Claim{perIter(8200)}}, few, testFingerprints)[0].Reason, "too few samples")
	v = CheckClaims(Gates{Claims: []Claim{perIter(8200)}}, files, Fingerprints{"workloads/x": "sha256:" + strings.Repeat("e", 64)})[0]
	assert.True(t, v.Stale)

	// A sample without iterations cannot be judged per iteration.
	bad := armFile("run.csv", 12, map[string]float64{"megakernel": 1e6})
	bad.Samples[3].Workload.Iterations = 0
	v = CheckClaims(Gates{Claims: []Claim{perIter(8200)}}, []ResultFile{bad}, testFingerprints)[0]
	require.False(t, v.Holds())
	assert.Contains(t, v.Reason, "iterations not recorded: megakernel sample 3 states 0 iterations")
}

func TestCheckClaimsFailures(t *testing.T) {
	good := func() ResultFile {
		return armFile("run.csv", 12, map[string]float64{"host-loop": 1e7, "megakernel": 1e6})
	}
	tests := []struct {
		name   string
		claim  func(*Claim)
		files  func() []ResultFile
		fp     string
		reason string
		stale  bool
	}{
		{"no results", nil, func() []ResultFile { return nil }, testFingerprint, "no evidence recorded: no host-loop or megakernel samples of workload grid-512 in evidence/results/", false},
		{"other workload", func(c *Claim) { c.Workload = "grid-2048" }, func() []ResultFile { return []ResultFile{good()} }, testFingerprint, "no evidence recorded", false},
		{"missing arm", nil, func() []ResultFile {
			return []ResultFile{armFile("run.csv", 12, map[string]float64{"host-loop": 1e7})}
		}, testFingerprint, "no evidence recorded for arm megakernel: run.csv has 12 host-loop samples", false},
		{"device filter", func(c *Claim) { c.Device = "NVIDIA H200" }, func() []ResultFile { return []ResultFile{good()} }, testFingerprint, "on device NVIDIA H200", false},
		{"file filter misses", func(c *Claim) { c.File = "other.csv" }, func() []ResultFile { return []ResultFile{good()} }, testFingerprint, "in other.csv", false},
		{"spread over files", nil, func() []ResultFile {
			b := good()
			b.Path = "later.csv"
			return []ResultFile{good(), b}
		}, testFingerprint, "spread over 2 files (run.csv, later.csv)", false},
		{"mixed devices", nil, func() []ResultFile {
			f := good()
			f.Samples[5].Provenance.DeviceName = "Other GPU"
			return []ResultFile{f}
		}, testFingerprint, "mixed devices or builds in one comparison: host-loop sample 0 ran on Test GPU X (9.0), commit 0123abc, but megakernel sample 2 on Other GPU (9.0)", false},
		{"mixed commits", nil, func() []ResultFile {
			f := good()
			f.Samples[3].Provenance.Commit = "fedcba9"
			return []ResultFile{f}
		}, testFingerprint, "commit fedcba9", false},
		{"stale", nil, func() []ResultFile { return []ResultFile{good()} },
			"sha256:" + strings.Repeat("f", 64), "stale evidence: run.csv was measured on code with source fingerprint " + testFingerprint, true},
		{"checksum mismatch", nil, func() []ResultFile {
			f := good()
			f.Samples[7].Checksum = "deadbeef"
			return []ResultFile{f}
		}, testFingerprint, "checksum mismatch: megakernel sample 3 has deadbeef but host-loop sample 0 has 9f3c2a71d0e4b5c6", false},
		{"pollution", nil, func() []ResultFile {
			f := good()
			f.Samples[4].TimedAllocations = 2
			return []ResultFile{f}
		}, testFingerprint, "polluted timed region: host-loop sample 2 has 0 timed uploads, 2 allocations and 0 host syncs; required 0 of each", false},
		{"nine samples", nil, func() []ResultFile {
			return []ResultFile{armFile("run.csv", 9, map[string]float64{"host-loop": 1e7, "megakernel": 1e6})}
		}, testFingerprint, "too few samples: arm host-loop has 9 samples; required at least 10", false},
		{"device time missing", func(c *Claim) { c.Metric = MetricDeviceNS }, func() []ResultFile {
			f := good()
			f.Samples[1].DeviceNS = 0
			return []ResultFile{f}
		}, testFingerprint, "device time not recorded: megakernel sample 0 has device_ns 0", false},
		{"not fast enough", func(c *Claim) { c.MinSpeedup = 11 }, func() []ResultFile { return []ResultFile{good()} }, testFingerprint, "even its upper bound 10.17x is below the required 11x", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := gridClaim(5)
			if tc.claim != nil {
				tc.claim(&c)
			}
			v := CheckClaims(Gates{Claims: []Claim{c}}, tc.files(), Fingerprints{"workloads/x": tc.fp})[0]
			require.Equal(t, OutcomeFails, v.Outcome, v.String())
			assert.Contains(t, v.Reason, tc.reason)
			assert.Contains(t, v.Reason, "required")
			assert.Contains(t, v.Reason, "Fix:")
			assert.Equal(t, tc.stale, v.Stale)
		})
	}
}

func TestCheckClaimsPicksFile(t *testing.T) {
	a := armFile("old.csv", 12, map[string]float64{"host-loop": 1e7, "megakernel": 1e6})
	b := armFile("new.csv", 12, map[string]float64{"host-loop": 1e7, "megakernel": 5e5})
	c := gridClaim(15)
	c.File = "new.csv"
	v := CheckClaims(Gates{Claims: []Claim{c}}, []ResultFile{a, b}, testFingerprints)[0]
	require.True(t, v.Holds(), v.String())
	assert.Equal(t, "new.csv", v.File)
	// Ten samples per arm are enough for a finite interval.
	ten := armFile("ten.csv", 10, map[string]float64{"host-loop": 1e7, "megakernel": 1e6})
	v = CheckClaims(Gates{Claims: []Claim{gridClaim(9)}}, []ResultFile{ten}, testFingerprints)[0]
	require.True(t, v.Holds(), v.String())
	assert.Greater(t, v.Speedup.Hi, 0.0)
	assert.False(t, math.IsInf(v.Speedup.Hi, 0))
}

func TestSpeedupCIProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		n, m := 2+r.IntN(40), 2+r.IntN(40)
		b, c := make([]float64, n), make([]float64, m)
		for i := range b {
			b[i] = 1 + r.Float64()*100
		}
		for i := range c {
			c[i] = 1 + r.Float64()*100
		}
		iv := SpeedupCI(b, c)
		require.False(t, math.IsNaN(iv.Lo) || math.IsNaN(iv.Hi), "%v", iv)
		require.LessOrEqual(t, iv.Lo, iv.Center)
		require.GreaterOrEqual(t, iv.Hi, iv.Center)
		require.GreaterOrEqual(t, iv.Lo, 0.0)
	}
	in := []float64{3, 1, 2}
	_ = MedianCI(in, Confidence)
	assert.Equal(t, []float64{3, 1, 2}, in, "MedianCI must not reorder its input")
	tiny := SpeedupCI([]float64{2}, []float64{1})
	assert.Equal(t, Interval{Center: 2, Lo: 0, Hi: math.Inf(1)}, tiny)
	empty := MedianCI(nil, Confidence)
	assert.True(t, math.IsNaN(empty.Center))
}

// The interval must cover the true ratio of medians at least 95% of the
// time. Samples are log-normal with known medians; the seed is fixed.
func TestSpeedupCICoverage(t *testing.T) {
	r := rand.New(rand.NewPCG(42, 7))
	const trials = 2000
	const trueRatio = 8.0
	covered := 0
	for range trials {
		b, c := make([]float64, 10), make([]float64, 10)
		for i := range b {
			b[i] = 8e6 * math.Exp(0.05*r.NormFloat64())
			c[i] = 1e6 * math.Exp(0.05*r.NormFloat64())
		}
		iv := SpeedupCI(b, c)
		if iv.Lo <= trueRatio && trueRatio <= iv.Hi {
			covered++
		}
	}
	assert.GreaterOrEqual(t, float64(covered)/trials, Confidence, "covered %d of %d", covered, trials)
}

func TestParseGates(t *testing.T) {
	data, err := os.ReadFile("gates.json")
	require.NoError(t, err)
	g, err := ParseGates("gates.json", data)
	require.NoError(t, err, "the committed gates file must parse")
	_ = g

	full := `{"claims": [{"name": "mk", "workload": "grid-2048", "baseline": "host-loop", "candidate": "megakernel", "metric": "wall_ns", "min_speedup": 5, "file": "h200/run.csv", "device": "NVIDIA H200"}]}`
	g, err = ParseGates("g", []byte(full))
	require.NoError(t, err)
	assert.Equal(t, Gates{Claims: []Claim{{Name: "mk", Workload: "grid-2048", Baseline: "host-loop", Candidate: "megakernel",
		Metric: "wall_ns", MinSpeedup: 5, File: "h200/run.csv", Device: "NVIDIA H200"}}}, g)
	out, err := MarshalGates(g)
	require.NoError(t, err)
	again, err := ParseGates("g", out)
	require.NoError(t, err)
	assert.Equal(t, g, again)
	// A per-iteration claim round-trips without baseline or min_speedup.
	pi := `{"claims": [{"name": "mk", "workload": "grid-2048", "candidate": "megakernel", "metric": "wall_ns", "max_ns_per_iteration": 2000}]}`
	g, err = ParseGates("g", []byte(pi))
	require.NoError(t, err)
	assert.Equal(t, Gates{Claims: []Claim{{Name: "mk", Workload: "grid-2048", Candidate: "megakernel", Metric: "wall_ns", MaxNSPerIteration: 2000}}}, g)
	assert.True(t, g.Claims[0].PerIteration())
	out, err = MarshalGates(g)
	require.NoError(t, err)
	assert.NotContains(t, string(out), "baseline")
	assert.NotContains(t, string(out), "min_speedup")
	again, err = ParseGates("g", out)
	require.NoError(t, err)
	assert.Equal(t, g, again)
	empty, err := MarshalGates(Gates{})
	require.NoError(t, err)
	assert.Equal(t, "{\n  \"claims\": []\n}\n", string(empty))

	claim := func(kv string) string {
		base := map[string]string{"name": `"a"`, "workload": `"w"`, "baseline": `"host-loop"`, "candidate": `"megakernel"`, "metric": `"wall_ns"`, "min_speedup": "5"}
		k, v, _ := strings.Cut(kv, "=")
		if v == "" {
			delete(base, k)
		} else {
			base[k] = v
		}
		var parts []string
		for _, key := range []string{"name", "workload", "baseline", "candidate", "metric", "min_speedup", "max_ns_per_iteration", "file"} {
			if val, ok := base[key]; ok {
				parts = append(parts, fmt.Sprintf("%q: %s", key, val))
			}
		}
		return `{"claims": [{` + strings.Join(parts, ", ") + `}]}`
	}
	checkRefusals(t, []refusal{
		{"no claims", `{}`, "claims", "required field is missing"},
		{"unknown field", `{"claims": [], "extra": 1}`, "extra", "unknown field"},
		{"missing name", claim("name="), "claims[0].name", "required"},
		{"missing min", claim("min_speedup="), "claims[0].min_speedup", "required"},
		{"empty name", claim(`name=" "`), "claims[0].name", "empty"},
		{"bad metric", claim(`metric="cycles"`), "claims[0].metric", `metric "cycles" is unknown`},
		{"zero speedup", claim("min_speedup=0"), "claims[0].min_speedup", "not a finite number above 0"},
		{"negative speedup", claim("min_speedup=-2"), "claims[0].min_speedup", "above 0"},
		{"same arms", claim(`candidate="host-loop"`), "claims[0].candidate", "same arm"},
		{"bad arm", claim(`baseline="Host Loop"`), "claims[0].baseline", "not [a-z0-9-]+"},
		{"bad workload", claim(`workload="a b"`), "claims[0].workload", "not a token"},
		{"escaping file", claim(`file="../x.csv"`), "claims[0].file", "relative .csv path"},
		{"duplicate name", `{"claims": [` + strings.TrimSuffix(strings.TrimPrefix(claim("x="), `{"claims": [`), `]}`) + `, ` +
			strings.TrimSuffix(strings.TrimPrefix(claim("x="), `{"claims": [`), `]}`) + `]}`, "claims[1].name", "repeats claims[0]"},
		{"type mismatch", `{"claims": [{"min_speedup": "5"}]}`, "claims[0].min_speedup", "cannot use"},
		{"per-iteration with baseline", claim("max_ns_per_iteration=2000"), "claims[0].baseline", "has no baseline"},
		{"both bounds", perIterClaim(`"min_speedup": 5, "max_ns_per_iteration": 2000`), "claims[0].min_speedup", "either min_speedup or max_ns_per_iteration"},
		{"zero per-iteration", perIterClaim(`"max_ns_per_iteration": 0`), "claims[0].max_ns_per_iteration", "not a finite number above 0"},
		{"negative per-iteration", perIterClaim(`"max_ns_per_iteration": -1`), "claims[0].max_ns_per_iteration", "above 0"},
	})
}

// perIterClaim is a per-iteration claim with extra fields appended.
func perIterClaim(extra string) string {
	return `{"claims": [{"name": "a", "workload": "w", "candidate": "megakernel", "metric": "wall_ns", ` + extra + `}]}`
}

func TestLoadResults(t *testing.T) {
	files, err := LoadResults("testdata/no-such-dir")
	require.NoError(t, err)
	assert.Empty(t, files)

	fsys := fstest.MapFS{
		"b/run.csv":   {Data: []byte(SampleCSVHeader + "\n")},
		"a.csv":       {Data: []byte(SampleCSVHeader + "\n")},
		"notes.txt":   {Data: []byte("ignored")},
		"bad/bad.csv": {Data: []byte("nodes,edges\n")},
	}
	_, err = LoadResultsFS(fsys, "results")
	var fe *FormatError
	require.True(t, errors.As(err, &fe), "%v", err)
	assert.Equal(t, "results/bad/bad.csv", fe.Source)
	delete(fsys, "bad/bad.csv")
	files, err = LoadResultsFS(fsys, "results")
	require.NoError(t, err)
	require.Len(t, files, 2)
	assert.Equal(t, "a.csv", files[0].Path)
	assert.Equal(t, "b/run.csv", files[1].Path)
	assert.Equal(t, []string{"grid-demo.csv"}, StaleFiles(demoFiles(t), Fingerprints{"workloads/x": "sha256:" + strings.Repeat("e", 64)}))
	assert.Empty(t, StaleFiles(demoFiles(t), testFingerprints))
}

func FuzzParseGates(f *testing.F) {
	f.Add([]byte(`{"claims": []}`))
	f.Add([]byte(`{"claims": [{"name": "mk", "workload": "grid-2048", "candidate": "megakernel", "metric": "wall_ns", "max_ns_per_iteration": 2000}]}`))
	f.Add([]byte(`{"claims": [{"name": "mk", "workload": "grid-2048", "baseline": "host-loop", "candidate": "megakernel", "metric": "wall_ns", "min_speedup": 5}]}`))
	f.Add([]byte(`{"claims": [{"name": "mk", "workload": "grid-2048", "baseline": "host-loop", "candidate": "megakernel", "metric": "wall_ns", "min_speedup": 0.9, "no_regression": true}]}`))
	f.Add([]byte(`{"claims": [{"name": "mk", "workload": "grid-2048", "baseline": "host-loop", "candidate": "megakernel", "metric": "wall_ns", "min_speedup": 1, "min_effect": 0.05}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		// No input makes memory grow faster than the input itself.
		memcheck.Check(t, memcheck.Bound{Base: 1 << 20, PerByte: 256}, len(data), func() {
			g, err := ParseGates("fuzz", data)
			if err != nil {
				require.Contains(t, err.Error(), "Fix:")
				return
			}
			for _, c := range g.Claims {
				if c.PerIteration() {
					require.True(t, c.MaxNSPerIteration > 0 && !math.IsInf(c.MaxNSPerIteration, 0))
					require.Empty(t, c.Baseline)
					require.Zero(t, c.MinSpeedup)
					continue
				}
				require.True(t, c.MinSpeedup > 0 && !math.IsInf(c.MinSpeedup, 0))
				// Below 1 only as a no-regression bound, which is at most 1.
				if c.NoRegression {
					require.LessOrEqual(t, c.MinSpeedup, 1.0)
				} else {
					require.GreaterOrEqual(t, c.MinSpeedup, 1.0)
				}
				require.NotEqual(t, c.Baseline, c.Candidate)
				// A minimum effect is a fraction that asks for more than
				// min_speedup, on a claim that is not a no-regression bound.
				if c.MinEffect != 0 {
					require.True(t, c.MinEffect > 0 && c.MinEffect < 1 && !c.NoRegression, "%+v", c)
					require.Greater(t, c.RequiredSpeedup(), c.MinSpeedup)
				}
			}
			// Every verdict on no evidence fails with a reason.
			for _, v := range CheckClaims(g, nil, testFingerprints) {
				require.Equal(t, OutcomeFails, v.Outcome)
				require.Contains(t, v.Reason, "Fix:")
			}
		})
	})
}

func BenchmarkCheckClaims(b *testing.B) {
	f := armFile("run.csv", 100_000, map[string]float64{"host-loop": 1e7, "megakernel": 1e6})
	g := Gates{Claims: []Claim{gridClaim(5)}}
	b.ReportAllocs()
	for b.Loop() {
		if !CheckClaims(g, []ResultFile{f}, testFingerprints)[0].Holds() {
			b.Fatal("claim failed")
		}
	}
}

func ExampleCheckClaims() {
	files, err := LoadResults("testdata/results")
	if err != nil {
		fmt.Println(err)
		return
	}
	g, err := ParseGates("gates.json", []byte(`{"claims": [
	  {"name": "grid megakernel", "workload": "grid-512", "baseline": "host-loop",
	   "candidate": "megakernel", "metric": "wall_ns", "min_speedup": 12}]}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, v := range CheckClaims(g, files, Fingerprints{"workloads/bfs": "sha256:" + strings.Repeat("0", 63) + "1"}) {
		fmt.Println(v.Holds(), v.Speedup.Lo < 12)
	}
	// Output:
	// false true
}

// refusal is a gates file ParseGates refuses: the field its error names and
// a part of its message.
type refusal struct {
	name, json, field, msg string
}

// checkRefusals holds each refusal's error: a *strictjson.Error naming the
// field, with the message and a ". Fix: " sentence.
func checkRefusals(t *testing.T, cases []refusal) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseGates("gates.json", []byte(tc.json))
			var se *strictjson.Error
			require.True(t, errors.As(err, &se), "%v", err)
			assert.Equal(t, tc.field, se.Field, err.Error())
			assert.Contains(t, err.Error(), tc.msg)
			assert.Contains(t, err.Error(), ". Fix: ")
		})
	}
}
