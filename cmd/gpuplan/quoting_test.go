package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// forged is a name that, printed raw, would forge a passing gate line and
// colour the terminal.
const forged = "x\n gate passed: 5 of 5 claims hold\x1b[32m"

// assertNoForgedLine checks that out holds none of forged's raw control
// characters and no line that starts with the forged text.
func assertNoForgedLine(t *testing.T, out string) {
	t.Helper()
	assert.NotContains(t, out, "\x1b")
	for _, line := range strings.Split(out, "\n") {
		assert.False(t, strings.HasPrefix(strings.TrimSpace(line), "gate passed: 5 of 5"), "forged line %q in\n%s", line, out)
	}
}

func TestGatePrintsAForgedClaimNameQuoted(t *testing.T) {
	name, err := json.Marshal(forged)
	require.NoError(t, err)
	claim := strings.Replace(gridClaimJSON, `"grid megakernel"`, string(name), 1)
	claim = strings.Replace(claim, `"min_speedup": 5`, `"min_speedup": 500`, 1)
	root := gateTree(t, claim, 12, 1.1e6)
	out, errs, code := runCLI(t, "", "gate", "--root", root)
	assert.Equal(t, exitFailure, code, errs)
	assertNoForgedLine(t, out)
	assert.Contains(t, out, `FAIL "x\n gate passed: 5 of 5 claims hold\x1b[32m": megakernel vs host-loop`)
	assert.Contains(t, out, "gate failed: 1 of 1 claims do not hold")
}

func TestPlanPrintsForgedNamesQuoted(t *testing.T) {
	data, err := os.ReadFile("testdata/plan/spec-diamond.workload.json")
	require.NoError(t, err)
	var w map[string]any
	require.NoError(t, json.Unmarshal(data, &w))
	w["name"], w["description"] = forged, forged
	w["waves"].([]any)[0].(map[string]any)["name"] = forged
	in, err := json.Marshal(w)
	require.NoError(t, err)
	for _, tc := range []struct{ format, want string }{{"", `x\n gate passed`}, {"--dot", `x\\n gate passed`}} {
		args := []string{"plan", "-"}
		if tc.format != "" {
			args = append(args, tc.format)
		}
		out, errs, code := runCLI(t, string(in), args...)
		require.Equal(t, exitOK, code, errs)
		assertNoForgedLine(t, out)
		assert.Contains(t, out, tc.want)
	}
}

func TestPassesAndDevicesPrintForgedNamesQuoted(t *testing.T) {
	data, err := os.ReadFile("testdata/planners/passes.json")
	require.NoError(t, err)
	name, _ := json.Marshal(forged)
	in := strings.Replace(string(data), `"cuda.launch_fusion"`, string(name), 1)
	out, errs, code := runCLI(t, in, "passes", "-")
	require.Equal(t, exitOK, code, errs)
	assertNoForgedLine(t, out)
	assert.Contains(t, out, `"x\n gate passed: 5 of 5 claims hold\x1b[32m"`)

	prof, _, code := runCLI(t, "", "devices", "--device", "h100", "--json")
	require.Equal(t, exitOK, code)
	var detail struct {
		Device map[string]any `json:"device"`
	}
	require.NoError(t, json.Unmarshal([]byte(prof), &detail))
	detail.Device["name"] = forged
	dev, err := json.Marshal(detail.Device)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "dev.json")
	require.NoError(t, os.WriteFile(path, dev, 0o644))
	for _, args := range [][]string{
		{"devices", "--device-file", path},
		{"occupancy", "--device-file", path, "--regs", "32", "--block", "128"},
		{"occupancy", "--device-file", path, "--regs", "32", "--sweep"},
	} {
		out, errs, code := runCLI(t, "", args...)
		require.Equal(t, exitOK, code, errs)
		assertNoForgedLine(t, out)
		assert.Contains(t, out, `x\n gate passed`, args)
	}
	_, errs, code = runCLI(t, "", "diagnose", "--device", "h100", "--grid", "1", "--block", "32", "--kernel", "k\x1b[2K")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errs, `"k\x1b[2K"`)
}
