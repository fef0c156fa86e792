package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/planners"
)

// sessionJSON is a session input with the given output bytes, budget and
// readback, and small values everywhere else.
func sessionJSON(output, budget, readback string) string {
	return `{"graph_layout_hash": 1, "graph_bytes": 128, "run_count": 4, "per_run_frontier_bytes": 16,
		"reusable_scratch_bytes": 16, "per_run_output_bytes": ` + output + `, "budget_bytes": ` + budget + `, "readback": ` + readback + `}`
}

func TestSessionCommand(t *testing.T) {
	runPlannerCases(t, []plannerCase{
		{name: "text", args: []string{"session", testdataPlanner("session.json")}, code: exitOK,
			stdout: []string{"graph layout hash           0xabc\n", "runs                        128 (1 cold, 127 warm)\n",
				"peak resident bytes         1120256 of 2000000 budget\n", "  graph                     1048576, uploaded once\n",
				"  frontier                  4096 per run, 524288 refreshed in all\n", "  scratch                   65536, allocated once\n",
				"  output                    2048\n", "avoided graph upload bytes  133169152\n", "avoided device allocations  381\n",
				"avoided host fences         127\n", "host readback               2048 bytes, once after the final run\n"}},
		{name: "help", args: []string{"session", "--help"}, code: exitOK,
			stdout: []string{"usage: gpuplan session [--json] <input.json|->", "per_run_frontier_bytes", "final_only", "-json"}},
		{name: "stdin", args: []string{"session", "-"}, stdin: sessionJSON("16", "176", `"final_only"`), code: exitOK,
			stdout: []string{"peak resident bytes         176 of 176 budget\n", "avoided host fences         3\n"}},
		{name: "single run", args: []string{"session", "-"}, code: exitOK,
			stdin:  `{"graph_layout_hash": 1, "graph_bytes": 8, "run_count": 1, "per_run_frontier_bytes": 0, "reusable_scratch_bytes": 0, "per_run_output_bytes": 0, "budget_bytes": 8, "readback": "final_only"}`,
			stdout: []string{"runs                        1 (1 cold, 0 warm)\n", "avoided graph upload bytes  0\n"}},
		{name: "over budget", args: []string{"session", "-"}, stdin: sessionJSON("16", "175", `"final_only"`), code: exitFailure,
			stderr: []string{"gpuplan session: resident graph session: peak resident bytes 176 exceed budget_bytes 175. Fix: raise budget_bytes to at least 176"}},
		{name: "per-run readback", args: []string{"session", "-"}, stdin: sessionJSON("16", "176", `"per_run"`), code: exitFailure,
			stderr: []string{"readback is per_run", "Fix: set readback to final_only"}},
		{name: "zero hash", args: []string{"session", "-"}, code: exitFailure,
			stdin:  `{"graph_layout_hash": 0, "graph_bytes": 1, "run_count": 1, "per_run_frontier_bytes": 0, "reusable_scratch_bytes": 0, "per_run_output_bytes": 0, "budget_bytes": 1, "readback": "final_only"}`,
			stderr: []string{"graph_layout_hash is 0"}},
		{name: "zero runs", args: []string{"session", "-"}, code: exitFailure,
			stdin:  `{"graph_layout_hash": 1, "graph_bytes": 1, "run_count": 0, "per_run_frontier_bytes": 0, "reusable_scratch_bytes": 0, "per_run_output_bytes": 0, "budget_bytes": 1, "readback": "final_only"}`,
			stderr: []string{"run_count is 0"}},
		{name: "overflowing sum", args: []string{"session", "-"}, stdin: sessionJSON("18446744073709551615", "1", `"final_only"`), code: exitFailure,
			stderr: []string{"peak resident bytes (graph_bytes + per_run_frontier_bytes + reusable_scratch_bytes + per_run_output_bytes) overflows 64 bits"}},
		{name: "overflowing value", args: []string{"session", "-"}, stdin: sessionJSON("18446744073709551616", "1", `"final_only"`), code: exitFailure,
			stderr: []string{`field "per_run_output_bytes": cannot use JSON number 18446744073709551616 here: want an integer in 0..18446744073709551615`}},
		{name: "negative", args: []string{"session", "-"}, stdin: sessionJSON("-1", "1", `"final_only"`), code: exitFailure,
			stderr: []string{`field "per_run_output_bytes"`, "want an integer in 0..18446744073709551615"}},
		{name: "fraction", args: []string{"session", "-"}, stdin: sessionJSON("16", "1.5", `"final_only"`), code: exitFailure,
			stderr: []string{`field "budget_bytes"`, "want an integer in 0..18446744073709551615"}},
		{name: "NaN", args: []string{"session", "-"}, stdin: sessionJSON("NaN", "1", `"final_only"`), code: exitFailure,
			stderr: []string{"malformed JSON", "Fix: check the JSON syntax"}},
		{name: "infinite", args: []string{"session", "-"}, stdin: sessionJSON("1e400", "1", `"final_only"`), code: exitFailure,
			stderr: []string{`field "per_run_output_bytes": cannot use JSON number 1e400`}},
		{name: "unknown field", args: []string{"session", "-"}, stdin: `{"graph_layout_hash": 1, "graph_bytez": 1}`, code: exitFailure,
			stderr: []string{`field "graph_bytez": unknown field`}},
		{name: "missing field", args: []string{"session", "-"}, stdin: `{"graph_layout_hash": 1, "graph_bytes": 1}`, code: exitFailure,
			stderr: []string{`field "run_count": required field is missing`}},
		{name: "null field", args: []string{"session", "-"}, stdin: sessionJSON("16", "176", "null"), code: exitFailure,
			stderr: []string{`field "readback": required field is missing`}},
		{name: "bad readback", args: []string{"session", "-"}, stdin: sessionJSON("16", "176", `"often"`), code: exitFailure,
			stderr: []string{`<stdin>: field "readback": readback "often" is not a readback policy. Fix: use "final_only" or "per_run"` + "\n"}},
		{name: "readback not a string", args: []string{"session", "-"}, stdin: sessionJSON("16", "176", "0"), code: exitFailure,
			stderr: []string{`field "readback": cannot use JSON number here: want a string`}},
		{name: "empty", args: []string{"session", "-"}, code: exitFailure, stderr: []string{"input is empty"}},
		{name: "empty object", args: []string{"session", "-"}, stdin: `{}`, code: exitFailure,
			stderr: []string{`field "graph_layout_hash": required field is missing`}},
		{name: "no input", args: []string{"session"}, code: exitUsage, stderr: []string{"want one input file", "--help"}},
	})
}

func TestSessionCommandJSON(t *testing.T) {
	var got planners.ResidentGraphSessionPlan
	runPlannerJSON(t, &got, "session", "session.json")
	var in planners.ResidentGraphSessionProfile
	require.NoError(t, decodeJSONInput("session.json", []byte(readTestdata(t, "session.json")), &in))
	want, err := planners.PlanResidentGraphSession(in)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	// The example is vyre's vector.
	assert.Equal(t, uint64(133_169_152), got.AvoidedGraphUploadBytes)
	assert.Equal(t, uint64(381), got.AvoidedDeviceAllocations)
}

func FuzzSessionInput(f *testing.F) {
	fuzzPlannerCommand(f, "session", readTestdata(f, "session.json"), sessionJSON("16", "176", `"per_run"`))
}
