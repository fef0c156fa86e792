package main

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/evidence"
)

// gateTree builds a module root with one GPU workload package (Go code
// and a kernel) importing one other package, a gates file and (when n > 0) one results file of n samples per arm,
// measured on the tree's current fingerprint. It returns the root.
func gateTree(t *testing.T, claims string, n int, megakernelNS float64) string {
	t.Helper()
	root := t.TempDir()
	write := func(rel, text string) {
		p := filepath.Join(root, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	}
	write("go.mod", "module example.com/m\n\ngo 1.26\n")
	write("workloads/w/w.go", "package w\n\nimport \"example.com/m/lib\"\n\n// Ahead is a default of the measured code.\nconst Ahead = lib.Base + 4\n")
	write("workloads/w/kernels/w.cu", "__global__ void w() {}\n")
	write("lib/lib.go", "package lib\n\n// Base is a constant.\nconst Base = 0\n")
	write("evidence/gates.json", `{"claims": [`+claims+`]}`)
	require.NoError(t, os.MkdirAll(filepath.Join(root, "evidence", "results"), 0o755))
	if n == 0 {
		return root
	}
	fp, err := evidence.WorkloadFingerprint(root, "workloads/w")
	require.NoError(t, err)
	prov := evidence.Provenance{Version: "devel", Commit: "0123abc", SourceFingerprint: fp, DeviceName: "Test GPU X",
		ComputeMajor: 9, DriverVersion: "580.159.04", Date: time.Date(2026, 11, 22, 1, 0, 0, 0, time.UTC)}
	w := evidence.Workload{Name: "grid-512", Nodes: 262144, Edges: 1046528, Iterations: 1022}
	r := rand.New(rand.NewPCG(3, 4))
	var samples []evidence.Sample
	for i := range n {
		for _, arm := range []struct {
			name string
			ns   float64
		}{{"host-loop", 1.19e7}, {"megakernel", megakernelNS}} {
			wall := arm.ns * (1 + 0.02*r.Float64())
			samples = append(samples, evidence.Sample{Provenance: prov, Workload: w, Arm: arm.name, Index: uint64(i),
				WallNS: wall, DeviceNS: wall * 0.95, Checksum: "7d2e9c41b0a35f18"})
		}
	}
	f, err := os.Create(filepath.Join(root, "evidence", "results", "run.csv"))
	require.NoError(t, err)
	require.NoError(t, evidence.WriteSamples(f, samples))
	require.NoError(t, f.Close())
	return root
}

const gridClaimJSON = `{"name": "grid megakernel", "workload": "grid-512", "baseline": "host-loop", "candidate": "megakernel", "metric": "wall_ns", "min_speedup": 5}`

func TestGateNoEvidence(t *testing.T) {
	root := gateTree(t, "", 0, 0)
	out, errs, code := runCLI(t, "", "gate", "--root", root)
	require.Equal(t, exitOK, code, errs)
	assert.Contains(t, out, "no evidence recorded")
	assert.Contains(t, out, "gate: 0 claims")

	out, _, code = runCLI(t, "", "gate", "--root", root, "--json")
	require.Equal(t, exitOK, code)
	var got map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	assert.Equal(t, true, got["pass"])
	assert.Contains(t, got["message"], "no evidence recorded")
}

func TestGateRepositoryTreePasses(t *testing.T) {
	// What `make gate` runs in CI, on this repository.
	out, errs, code := runCLI(t, "", "gate", "--root", "../..")
	require.Equal(t, exitOK, code, "stdout: %s\nstderr: %s", out, errs)
}

func TestGateClaims(t *testing.T) {
	root := gateTree(t, gridClaimJSON, 12, 1.19e6)
	out, errs, code := runCLI(t, "", "gate", "--root", root)
	require.Equal(t, exitOK, code, errs)
	assert.Contains(t, out, "PASS grid megakernel: megakernel vs host-loop on grid-512 (wall_ns) at least 5x: observed 9.96x, 95% CI [9.86x, 10.10x], n=12+12, Test GPU X (9.0), commit 0123abc, run.csv")
	assert.Contains(t, out, "gate passed: 1 of 1 claims hold")

	out, _, code = runCLI(t, "", "gate", "--root", root, "--json")
	require.Equal(t, exitOK, code)
	var got struct {
		Claims []map[string]any `json:"claims"`
		Pass   bool             `json:"pass"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	require.True(t, got.Pass)
	require.Len(t, got.Claims, 1)
	assert.Greater(t, got.Claims[0]["speedup_ci_lo"], 5.0)

	// A false claim: 4x slower megakernel.
	root = gateTree(t, gridClaimJSON, 12, 4e6)
	out, errs, code = runCLI(t, "", "gate", "--root", root)
	require.Equal(t, exitFailure, code)
	assert.Contains(t, out, "FAIL grid megakernel")
	assert.Contains(t, out, "below the required 5x")
	assert.Contains(t, errs, "gate failed: 1 of 1 claims do not hold")
	assert.Contains(t, errs, "Fix: see the FAIL lines above")
	out, errs, code = runCLI(t, "", "gate", "--root", root, "--json")
	require.Equal(t, exitFailure, code)
	assert.Contains(t, out, `"pass": false`)
	assert.Contains(t, errs, `Fix: see the claims with "pass": false and their "reason"`)

	// A comment-only edit of the measured code keeps the evidence fresh;
	// changing a default it imports makes it stale.
	root = gateTree(t, gridClaimJSON, 12, 1.19e6)
	edit := func(rel, old, new string) {
		p := filepath.Join(root, rel)
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		require.Contains(t, string(b), old)
		require.NoError(t, os.WriteFile(p, []byte(strings.Replace(string(b), old, new, 1)), 0o644))
	}
	edit("workloads/w/w.go", "// Ahead is a default of the measured code.", "// Ahead is how far the measured code runs ahead.")
	edit("workloads/w/kernels/w.cu", "__global__", "// a comment\n__global__")
	_, errs, code = runCLI(t, "", "gate", "--root", root)
	require.Equal(t, exitOK, code, errs)
	out, errs, code = runCLI(t, "", "gate", "--root", root, "--list-stale")
	require.Equal(t, exitOK, code, errs)
	assert.Empty(t, out, "fresh evidence is not listed")
	edit("lib/lib.go", "const Base = 0", "const Base = 28")
	out, _, code = runCLI(t, "", "gate", "--root", root)
	require.Equal(t, exitFailure, code)
	assert.Contains(t, out, "FAIL grid megakernel")
	assert.Contains(t, out, "stale evidence: run.csv")
	assert.Contains(t, out, "note: run.csv is stale")
	// --list-stale names what to record again, and passes.
	out, errs, code = runCLI(t, "", "gate", "--root", root, "--list-stale")
	require.Equal(t, exitOK, code, errs)
	assert.Equal(t, "run\n", out)
	out, _, code = runCLI(t, "", "gate", "--root", root, "--list-stale", "--json")
	require.Equal(t, exitOK, code)
	var listed struct {
		Stale []string `json:"stale"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &listed))
	assert.Equal(t, []string{"run"}, listed.Stale)
	_, errs, code = runCLI(t, "", "gate", "--root", root, "--list-stale", "--vyre-header")
	require.Equal(t, exitUsage, code)
	assert.Contains(t, errs, "exclude each other")
	_, errs, code = runCLI(t, "", "gate", "--root", root, "--list-stale", "--results", filepath.Join(root, "typo"))
	require.Equal(t, exitFailure, code)
	assert.Contains(t, errs, "no such directory. Fix:")

	// A claim with no evidence fails.
	root = gateTree(t, gridClaimJSON, 0, 0)
	out, _, code = runCLI(t, "", "gate", "--root", root)
	require.Equal(t, exitFailure, code)
	assert.Contains(t, out, "FAIL grid megakernel: megakernel vs host-loop on grid-512 (wall_ns) at least 5x: no evidence recorded")

	// A mistyped --results is an error, not an empty evidence directory.
	_, errs, code = runCLI(t, "", "gate", "--root", root, "--results", filepath.Join(root, "typo"))
	require.Equal(t, exitFailure, code)
	assert.Contains(t, errs, "no such directory. Fix:")

	// Results but no claims: the files are still validated.
	root = gateTree(t, "", 12, 1.19e6)
	out, _, code = runCLI(t, "", "gate", "--root", root)
	require.Equal(t, exitOK, code)
	assert.Contains(t, out, "no claims stated")
	assert.Contains(t, out, "1 evidence files with 24 samples")
}

func TestGateBadInput(t *testing.T) {
	root := gateTree(t, "", 0, 0)
	require.NoError(t, os.WriteFile(filepath.Join(root, "evidence", "results", "bad.csv"),
		[]byte(evidence.SampleCSVHeader+"\ndevel,abc\n"), 0o644))
	_, errs, code := runCLI(t, "", "gate", "--root", root)
	require.Equal(t, exitFailure, code)
	assert.Contains(t, errs, "bad.csv:2:3 (source_fingerprint): row has 2 fields, want 20; columns 3 to 20 are missing. Fix:")

	root = gateTree(t, `{"name": "x"}`, 0, 0)
	_, errs, code = runCLI(t, "", "gate", "--root", root)
	require.Equal(t, exitFailure, code)
	assert.Contains(t, errs, `field "claims[0].workload": required field is missing`)

	_, errs, code = runCLI(t, "", "gate", "--root", t.TempDir())
	require.Equal(t, exitFailure, code)
	assert.Contains(t, errs, "Fix: create")

	_, errs, code = runCLI(t, "", "gate", "--vyre", "a.csv", "--vyre-header")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errs, "exclude each other")
	_, errs, code = runCLI(t, "", "gate", "--min-speedup", "5")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errs, "--min-speedup applies to --vyre")
	_, _, code = runCLI(t, "", "gate", "extra")
	assert.Equal(t, exitUsage, code)
}

const vyreCSV = evidence.MegakernelSpeedupCSVHeader + `
cuda,0,34359738368,12,0,10000,80000,64,1000000,10000,250000,0,0,0
cuda,0,34359738368,12,0,10000,80000,128,2500000,20000,250000,0,0,0
`

func TestGateVyre(t *testing.T) {
	out, errs, code := runCLI(t, vyreCSV, "gate", "--vyre", "-")
	require.Equal(t, exitOK, code, errs)
	assert.Equal(t, "validated_cuda_megakernel_speedup,min_x=100.000,max_x=125.000,samples=2,repetitions=192\n", out)

	out, _, code = runCLI(t, vyreCSV, "gate", "--vyre", "-", "--json")
	require.Equal(t, exitOK, code)
	assert.JSONEq(t, `{"min_x": 100, "max_x": 125, "samples": 2, "repetitions": 192}`, out)

	_, errs, code = runCLI(t, vyreCSV, "gate", "--vyre", "-", "--min-speedup", "110")
	require.Equal(t, exitFailure, code)
	assert.Contains(t, errs, "sample 0: observed speedup 100x is below the required 110x")

	for _, bad := range []string{"NaN", "0", "-3", "+Inf"} {
		// A bad flag value is a usage error, before any input is read.
		_, errs, code = runCLI(t, vyreCSV, "gate", "--vyre", "-", "--min-speedup", bad)
		require.Equal(t, exitUsage, code, bad)
		assert.Contains(t, errs, "is not a finite number above 0", bad)
	}

	_, errs, code = runCLI(t, evidence.MegakernelSpeedupCSVHeader+"\ncuda,0,34359738368,12,0,10000,80000,many,1000000,10000,250000,0,0,0\n", "gate", "--vyre", "-")
	require.Equal(t, exitFailure, code)
	assert.Contains(t, errs, `line 2, column 8 (repetitions): invalid value "many". Fix:`)
	assert.Contains(t, errs, "gpuplan gate: <stdin>: ", "standard input is named <stdin>")

	_, errs, code = runCLI(t, evidence.MegakernelSpeedupCSVHeader+"\ncuda,0,34359738368,12,0,10000,80000,64,1000000,10000,250000,0,0\n", "gate", "--vyre", "-")
	require.Equal(t, exitFailure, code)
	assert.Contains(t, errs, "<stdin>: line 2, column 14 (timed_host_syncs): row has 13 fields but the header has 14; column 14 is missing. Fix:")
	_, errs, code = runCLI(t, strings.Replace(vyreCSV, ",2500000,", ",NaN,", 1), "gate", "--vyre", "-")
	require.Equal(t, exitFailure, code)
	assert.Contains(t, errs, `<stdin>: line 3, column 9 (host_orchestrated_ns): sample 1: host_orchestrated_ns "NaN" is not a finite number above 0. Fix:`)

	_, errs, code = runCLI(t, "", "gate", "--vyre", filepath.Join(t.TempDir(), "missing.csv"))
	require.Equal(t, exitFailure, code)
	assert.Contains(t, errs, "Fix: check the path")

	out, _, code = runCLI(t, "", "gate", "--vyre-header")
	require.Equal(t, exitOK, code)
	assert.Equal(t, evidence.MegakernelSpeedupCSVHeader+"\n", out)
	out, _, code = runCLI(t, "", "gate", "--vyre-header", "--json")
	require.Equal(t, exitOK, code)
	assert.Contains(t, out, `"header"`)
}

const vyreSessionCSV = evidence.ResidentGraphSessionCSVHeader + `
cuda,0,34359738368,12,0,10000,80000,2748,1048576,128,4096,65536,2048,2000000,1e6,1e4,250000
cuda,0,34359738368,12,0,10000,80000,3567,2097152,256,8192,131072,4096,4000000,2.5e6,2e4,350000
`

func TestGateVyreSession(t *testing.T) {
	out, errs, code := runCLI(t, vyreSessionCSV, "gate", "--vyre-session", "-")
	require.Equal(t, exitOK, code, errs)
	assert.True(t, strings.HasPrefix(out, evidence.MegakernelSpeedupCSVHeader+"\n"))
	assert.Len(t, strings.Split(strings.TrimRight(out, "\n"), "\n"), 3)
	// The output is valid input for --vyre.
	out2, _, code := runCLI(t, out, "gate", "--vyre", "-")
	require.Equal(t, exitOK, code)
	assert.Equal(t, "validated_cuda_megakernel_speedup,min_x=100.000,max_x=125.000,samples=2,repetitions=384\n", out2)

	out, _, code = runCLI(t, vyreSessionCSV, "gate", "--vyre-session", "-", "--json")
	require.Equal(t, exitOK, code)
	assert.Contains(t, out, `"repetitions": 384`)

	_, errs, code = runCLI(t, strings.Replace(vyreSessionCSV, "1048576", "not_bytes", 1), "gate", "--vyre-session", "-")
	require.Equal(t, exitFailure, code)
	assert.Contains(t, errs, "graph_bytes")
	_, errs, code = runCLI(t, strings.Replace(vyreSessionCSV, "\ncuda,", "\nwgpu,", 1), "gate", "--vyre-session", "-")
	require.Equal(t, exitFailure, code)
	assert.Contains(t, errs, "release evidence must be produced by the CUDA backend")
	_, errs, code = runCLI(t, vyreCSV, "gate", "--vyre-session", "-")
	require.Equal(t, exitFailure, code)
	assert.Contains(t, errs, "resident graph evidence line 1, column 8 (graph_layout_hash): header")
	assert.Contains(t, errs, "not the resident graph session header")
	_, errs, code = runCLI(t, strings.Replace(vyreSessionCSV, ",250000\n", ",250000,0\n", 1), "gate", "--vyre-session", "-")
	require.Equal(t, exitFailure, code)
	assert.Contains(t, errs, `resident graph evidence line 2, column 18 (extra): row has 18 fields but must have 17 fields; column 18 "0" is extra. Fix:`)
}

// TestGateClaimsFromStandardInput checks that --gates - reads the claims
// from standard input, as --vyre - does.
func TestGateClaimsFromStandardInput(t *testing.T) {
	root := gateTree(t, "", 12, 1.19e6)
	tests := []struct {
		name  string
		stdin string
		code  int
		out   []string
		errs  []string
	}{
		{"a passing claim", `{"claims": [` + gridClaimJSON + `]}`, exitOK, []string{"gate: 1 claims in <stdin>", "PASS grid megakernel", "gate passed: 1 of 1 claims hold"}, nil},
		{"no claims", `{"claims": []}`, exitOK, []string{"no claims stated in <stdin>"}, nil},
		{"a false claim", `{"claims": [` + strings.Replace(gridClaimJSON, `"min_speedup": 5`, `"min_speedup": 50`, 1) + `]}`, exitFailure, []string{"FAIL grid megakernel"}, []string{"gate failed: 1 of 1", "Fix:"}},
		{"empty input", "", exitFailure, nil, []string{"<stdin>: input is empty", "Fix:"}},
		{"malformed claims", `{"claims": [{"name": "x"}]}`, exitFailure, nil, []string{`<stdin>: field "claims[0].workload": required field is missing`, "Fix:"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, errs, code := runCLI(t, tc.stdin, "gate", "--root", root, "--gates", "-")
			require.Equal(t, tc.code, code, "stdout: %s\nstderr: %s", out, errs)
			for _, w := range tc.out {
				assert.Contains(t, out, w)
			}
			for _, w := range tc.errs {
				assert.Contains(t, errs, w)
			}
		})
	}
}

// TestGateRootErrorsNameTheRoot checks that every error about --root
// names it, quoted, with a fix.
func TestGateRootErrorsNameTheRoot(t *testing.T) {
	file := filepath.Join(t.TempDir(), "a file")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o644))
	noWorkloads := gateTree(t, "", 0, 0)
	require.NoError(t, os.RemoveAll(filepath.Join(noWorkloads, "workloads")))
	resultsFile := gateTree(t, "", 0, 0)
	require.NoError(t, os.RemoveAll(filepath.Join(resultsFile, "evidence", "results")))
	require.NoError(t, os.WriteFile(filepath.Join(resultsFile, "evidence", "results"), []byte("x"), 0o644))
	missing := filepath.Join(t.TempDir(), "missing")
	tests := []struct {
		name string
		root string
		args []string
		want string
	}{
		{"missing root", missing, nil, "no such directory"},
		{"missing root, list-stale", missing, []string{"--list-stale"}, "no such directory"},
		{"a file", file, nil, "is not a directory"},
		{"no gates file", t.TempDir(), nil, "has no evidence/gates.json"},
		{"no workloads", noWorkloads, nil, "has no workloads directory"},
		{"no workloads, list-stale", noWorkloads, []string{"--list-stale"}, "has no workloads directory"},
		{"results is a file", resultsFile, nil, "listing results"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, errs, code := runCLI(t, "", append([]string{"gate", "--root", tc.root}, tc.args...)...)
			require.Equal(t, exitFailure, code, errs)
			assert.Contains(t, errs, "--root "+strconv.Quote(tc.root))
			assert.Contains(t, errs, tc.want)
			assert.Contains(t, errs, "Fix:")
		})
	}
	_, errs, code := runCLI(t, "", "gate", "--root", noWorkloads, "--gates", filepath.Join(missing, "gates.json"))
	require.Equal(t, exitFailure, code)
	assert.Contains(t, errs, "--gates "+strconv.Quote(filepath.Join(missing, "gates.json"))+": no such file. Fix:")
}

// TestGateOutcomes checks the three outcomes end to end: a claim whose
// interval straddles its bound prints UNKNOWN with the samples per arm that
// would settle it, and fails the gate like a FAIL does.
func TestGateOutcomes(t *testing.T) {
	falseClaim := `{"name": "grid 50x", "workload": "grid-512", "baseline": "host-loop", "candidate": "megakernel", "metric": "wall_ns", "min_speedup": 50}`
	tests := []struct {
		name   string
		claims string
		out    []string
		errs   string
	}{
		{"unknown", gridClaimJSON, []string{"UNKNOWN grid megakernel: megakernel vs host-loop on grid-512 (wall_ns) at least 5x: inconclusive: observed speedup 4.9",
			"straddles the bound", ". Fix: run more: about ", " samples per arm would settle it\n"},
			"gate failed: 1 of 1 claims do not hold (0 FAIL, 1 UNKNOWN: an unknown claim is not a held claim). Fix: see the UNKNOWN lines above"},
		{"unknown and failed", gridClaimJSON + ", " + falseClaim, []string{"UNKNOWN grid megakernel", "FAIL grid 50x"},
			"gate failed: 2 of 2 claims do not hold (1 FAIL, 1 UNKNOWN: an unknown claim is not a held claim). Fix: see the FAIL and UNKNOWN lines above"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// 1.19e7 / 2.4e6 is 4.96x: the 95% interval straddles 5x.
			root := gateTree(t, tc.claims, 12, 2.4e6)
			out, errs, code := runCLI(t, "", "gate", "--root", root)
			require.Equal(t, exitFailure, code, "stdout: %s\nstderr: %s", out, errs)
			for _, w := range tc.out {
				assert.Contains(t, out, w)
			}
			assert.Contains(t, errs, tc.errs)
		})
	}

	root := gateTree(t, gridClaimJSON, 12, 2.4e6)
	out, errs, code := runCLI(t, "", "gate", "--root", root, "--json")
	require.Equal(t, exitFailure, code)
	assert.Contains(t, errs, `"outcome" ("FAIL" or "UNKNOWN")`)
	var got struct {
		Claims []struct {
			Pass          bool   `json:"pass"`
			Outcome       string `json:"outcome"`
			Reason        string `json:"reason"`
			SettleSamples int    `json:"samples_per_arm_to_settle"`
		} `json:"claims"`
		Pass bool `json:"pass"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	assert.False(t, got.Pass)
	require.Len(t, got.Claims, 1)
	c := got.Claims[0]
	assert.False(t, c.Pass)
	assert.Equal(t, "UNKNOWN", c.Outcome)
	assert.Greater(t, c.SettleSamples, 12)
	assert.Contains(t, c.Reason, "about "+strconv.Itoa(c.SettleSamples)+" samples per arm would settle it")

	root = gateTree(t, gridClaimJSON, 12, 1.19e6)
	out, _, code = runCLI(t, "", "gate", "--root", root, "--json")
	require.Equal(t, exitOK, code)
	assert.Contains(t, out, `"outcome": "PASS"`)
	assert.NotContains(t, out, "samples_per_arm_to_settle")
}

// TestGateMinEffect checks that min_effect is read and validated like the
// other claim fields.
func TestGateMinEffect(t *testing.T) {
	effect := func(extra string) string {
		return strings.Replace(gridClaimJSON, `"min_speedup": 5`, extra, 1)
	}
	tests := []struct {
		name   string
		claims string
		code   int
		want   string
	}{
		{"holds", effect(`"min_speedup": 1, "min_effect": 0.5`), exitOK, "PASS grid megakernel: megakernel vs host-loop on grid-512 (wall_ns) at least 1x (min effect 0.5: at least 1.5x beyond noise)"},
		{"misspelt", effect(`"min_speedup": 1, "min_efect": 0.5`), exitFailure, `field "claims[0].min_efect": unknown field. Fix:`},
		{"changes nothing", effect(`"min_speedup": 5, "min_effect": 0.5`), exitFailure, `field "claims[0].min_effect": claim "grid megakernel": min_effect 0.5 requires at least 1.5x beyond noise, which its min_speedup 5 already requires, so it would change nothing. Fix:`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := gateTree(t, tc.claims, 12, 1.19e6)
			out, errs, code := runCLI(t, "", "gate", "--root", root)
			require.Equal(t, tc.code, code, "stdout: %s\nstderr: %s", out, errs)
			assert.Contains(t, out+errs, tc.want)
		})
	}
}
