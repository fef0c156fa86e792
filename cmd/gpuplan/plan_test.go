package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func init() {
	// -rewrite regenerates golden files; other test files of this package
	// may define it too.
	if flag.Lookup("rewrite") == nil {
		flag.Bool("rewrite", false, "rewrite golden files under testdata/ from the current output")
	}
}

func rewriteGolden() bool {
	f := flag.Lookup("rewrite")
	return f != nil && f.Value.String() == "true"
}

// checkGolden compares got with testdata/plan/name, or rewrites it.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "plan", name)
	if rewriteGolden() {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "missing golden file: run go test ./cmd/gpuplan -run Plan -rewrite")
	require.Equal(t, string(want), got)
}

func TestPlanDefaultExampleGolden(t *testing.T) {
	out, errs, code := runCLI(t, "", "plan")
	require.Equal(t, exitOK, code, errs)
	checkGolden(t, "default.txt", out)
	assert.Contains(t, out, "grid-wide barriers")
	assert.Contains(t, out, "megakernel-topology-v1|topology=")

	dot, errs, code := runCLI(t, "", "plan", "--dot")
	require.Equal(t, exitOK, code, errs)
	checkGolden(t, "default.dot", dot)

	js, errs, code := runCLI(t, "", "plan", "--json")
	require.Equal(t, exitOK, code, errs)
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(js), &m))
	for _, k := range []string{"barrier_groups", "producer_waits", "explanation", "execution", "convergence", "global_barriers"} {
		assert.Contains(t, m, k)
	}

	// The embedded example and the file give the same plan (modulo source).
	fromFile, errs, code := runCLI(t, "", "plan", "plan_default.json")
	require.Equal(t, exitOK, code, errs)
	assert.Equal(t, out, fromFile)
	fromStdin, errs, code := runCLI(t, string(defaultPlanWorkload), "plan", "-")
	require.Equal(t, exitOK, code, errs)
	assert.Equal(t, out, fromStdin)
}

func TestPlanScenarioGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/plan/*.workload.json")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".workload.json")
		t.Run(name, func(t *testing.T) {
			out, errs, code := runCLI(t, "", "plan", f)
			checkGolden(t, name+".golden", fmt.Sprintf("exit %d\n--- stdout\n%s--- stderr\n%s", code, out, errs))
		})
	}
}

func TestPlanCLIErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
		return p
	}
	base := string(defaultPlanWorkload)
	bigWaves := make([]string, 5001)
	for i := range bigWaves {
		bigWaves[i] = fmt.Sprintf(`{"id": %d, "frontier_bytes": 1, "scratch_bytes": 1, "output_bytes": 1}`, i)
	}
	big := `{"analysis": "dataflow", "device": "h100-sxm", "launch_overhead_ns": 4000,
	  "graph": {"node_count": 1, "edge_count": 1, "bytes_per_node": 1, "bytes_per_edge": 1},
	  "schedule_sample": {"dispatch_cost_ns": 1000, "frontier_density": 0.5, "readback_bytes": 0},
	  "waves": [` + strings.Join(bigWaves, ",") + `]}`
	tests := []struct {
		name   string
		stdin  string
		args   []string
		code   int
		stderr []string
	}{
		{"help", "", []string{"plan", "--help"}, exitOK, nil},
		{"two files", "", []string{"plan", "a.json", "b.json"}, exitUsage, []string{"at most one workload file"}},
		{"json and dot", "", []string{"plan", "--json", "--dot"}, exitUsage, []string{"cannot be combined"}},
		{"bad flag", "", []string{"plan", "--nope"}, exitUsage, []string{"flag provided but not defined"}},
		{"missing file", "", []string{"plan", filepath.Join(dir, "nope.json")}, exitFailure, []string{"Fix:"}},
		{"malformed", "{", []string{"plan", "-"}, exitFailure, []string{"<stdin>", "Fix:"}},
		{"unknown field", strings.Replace(base, `"analysis"`, `"analysys"`, 1), []string{"plan", "-"}, exitFailure, []string{`field "analysys"`, "Fix:"}},
		{"cycle", strings.Replace(base, `{"before": 29, "after": 30}`, `{"before": 29, "after": 30}, {"before": 30, "after": 0}`, 1), []string{"plan", "-"},
			exitFailure, []string{`field "dependencies"`, "cycle (0 -> 4 -> 8 -> 13 -> 25 -> 30 -> 0)", "Fix:"}},
		{"unknown wave", strings.Replace(base, `{"before": 29, "after": 30}`, `{"before": 29, "after": 31}`, 1), []string{"plan", "-"},
			exitFailure, []string{`field "dependencies[48].after"`, "unknown wave id 31", "Fix:"}},
		{"self dependency", strings.Replace(base, `{"before": 29, "after": 30}`, `{"before": 30, "after": 30}`, 1), []string{"plan", "-"},
			exitFailure, []string{`field "dependencies[48]"`, "depend on itself", "Fix:"}},
		{"wave id out of range", strings.Replace(base, `{"id": 30,`, `{"id": 31,`, 1), []string{"plan", "-"},
			exitFailure, []string{`field "waves[30].id"`, "out of range", "Fix:"}},
		{"over budget", strings.Replace(base, `"launch_overhead_ns": 4000,`, `"launch_overhead_ns": 4000, "memory_budget_bytes": 800000000,`, 1), []string{"plan", "-"},
			exitFailure, []string{`field "waves[0]"`, "single fused frontier wave bytes (wave 0): 79691776 bytes required but only 32000000", "Fix:"}},
		{"overflow", strings.Replace(base, `"bytes_per_edge": 8`, `"bytes_per_edge": 18446744073709551615`, 1), []string{"plan", "-"},
			exitFailure, []string{`field "graph"`, "edge layout bytes (graph.edge_count x graph.bytes_per_edge) overflows", "Fix:"}},
		{"unknown device", strings.Replace(base, `"h100-sxm"`, `"h900"`, 1), []string{"plan", "-"},
			exitFailure, []string{`field "device"`, "unknown device", "Fix:"}},
		{"missing device file", strings.Replace(base, `"device": "h100-sxm"`, `"device_file": "nope.json"`, 1), []string{"plan", "-"},
			exitFailure, []string{`field "device_file"`, "Fix:"}},
		{"too large for dot", big, []string{"plan", "--dot", "-"}, exitFailure, []string{"5001 waves", "Fix:"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, errs, code := runCLI(t, tc.stdin, tc.args...)
			assert.Equal(t, tc.code, code, "stderr: %s", errs)
			for _, s := range tc.stderr {
				assert.Contains(t, errs, s)
			}
			if tc.code == exitFailure {
				assert.Empty(t, out)
			}
		})
	}
	t.Run("too large for dot is fine as text", func(t *testing.T) {
		_, errs, code := runCLI(t, big, "plan", "-")
		assert.Equal(t, exitOK, code, errs)
	})
	t.Run("device file relative to the workload", func(t *testing.T) {
		// The profile document 'devices --device NAME --json' writes is a
		// device file a workload reads, here renamed so the plan shows it.
		doc, errs, code := runCLI(t, "", "devices", "--device", "h100-sxm", "--json")
		require.Equal(t, exitOK, code, errs)
		var d map[string]any
		require.NoError(t, json.Unmarshal([]byte(doc), &d))
		assert.Equal(t, "gpuplan.device-profile/v1", d["schema"])
		inner, ok := d["device"].(map[string]any)
		require.True(t, ok, "the profile document has a device object: %s", doc)
		assert.EqualValues(t, 132, inner["sm_count"])
		inner["name"] = "Custom H100"
		edited, err := json.Marshal(d)
		require.NoError(t, err)
		write("dev.json", string(edited))
		// A bare device object is a device file too.
		write("bare.json", `{"name": "Bare H100", "cc_major": 9, "cc_minor": 0, "sm_count": 132, "warp_size": 32,
		  "max_threads_per_block": 1024, "max_threads_per_sm": 2048, "max_blocks_per_sm": 32,
		  "registers_per_sm": 65536, "registers_per_block": 65536, "registers_per_thread": 255,
		  "shared_mem_per_sm": 233472, "shared_mem_per_block": 49152, "total_memory_bytes": 85520809984,
		  "cooperative_launch": true}`)
		for file, name := range map[string]string{"dev.json": "Custom H100", "bare.json": "Bare H100"} {
			p := write("w-"+file, strings.Replace(base, `"device": "h100-sxm"`, `"device_file": "`+file+`"`, 1))
			out, errs, code := runCLI(t, "", "plan", p)
			require.Equal(t, exitOK, code, errs)
			assert.Contains(t, out, name+": sm 9.0")
		}
	})
}
