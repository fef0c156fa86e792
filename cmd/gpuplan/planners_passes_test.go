package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/planners"
)

func TestPassesCommand(t *testing.T) {
	const sample = `"sample": {"frontier_items": 0, "reuse_count": 0, "avoidable_readback_bytes": 0, "planning_budget_ns": 9999, "scratch_budget_bytes": 1048576}`
	runPlannerCases(t, []plannerCase{
		{name: "text", args: []string{"passes", testdataPlanner("passes.json")}, code: exitOK,
			stdout: []string{"candidates         4 (2 selected, 2 skipped)\n", "planning cost      60000 ns of 100000 budget\n",
				"scratch            12288 bytes of 1048576 budget\n", "projected speedup  30000 bps (3.0000x)\n",
				"cuda.graph_capture_replay  selected\n", "cuda.launch_fusion         selected\n",
				"cuda.result_compaction     skipped: readback_below_threshold\n", "cuda.resident_graph_reuse  skipped: planning_budget_exceeded\n"}},
		{name: "help", args: []string{"passes", "--help"}, code: exitOK, stdout: []string{"usage: gpuplan passes [--json] <input.json|->", "mandatory_when_profitable"}},
		{name: "mandatory over budget", args: []string{"passes", "-"}, code: exitFailure,
			stdin: `{` + sample + `, "candidates": [{"pass_id": "cuda.resident_graph_reuse", "min_frontier_items": 0, "min_reuse_count": 0, "min_avoided_readback_bytes": 0,
				"planning_cost_ns": 10000, "scratch_bytes": 0, "expected_speedup_bps": 12000, "mandatory_when_profitable": true}]}`,
			stderr: []string{`sample.planning_budget_ns: mandatory pass "cuda.resident_graph_reuse" is profitable here but brings the total planning cost to 10000, above the budget of 9999`}},
		{name: "no speedup", args: []string{"passes", "-"}, code: exitFailure,
			stdin: `{` + sample + `, "candidates": [{"pass_id": "x", "min_frontier_items": 0, "min_reuse_count": 0, "min_avoided_readback_bytes": 0,
				"planning_cost_ns": 1, "scratch_bytes": 0, "expected_speedup_bps": 10000, "mandatory_when_profitable": false}]}`,
			stderr: []string{"candidates[0].expected_speedup_bps"}},
		{name: "empty id", args: []string{"passes", "-"}, code: exitFailure,
			stdin: `{` + sample + `, "candidates": [{"pass_id": "", "min_frontier_items": 0, "min_reuse_count": 0, "min_avoided_readback_bytes": 0,
				"planning_cost_ns": 1, "scratch_bytes": 0, "expected_speedup_bps": 10001, "mandatory_when_profitable": false}]}`,
			stderr: []string{"candidates[0].pass_id is empty"}},
		{name: "projection overflow", args: []string{"passes", "-"}, code: exitFailure,
			stdin: `{` + sample + `, "candidates": [{"pass_id": "a", "min_frontier_items": 0, "min_reuse_count": 0, "min_avoided_readback_bytes": 0,
				"planning_cost_ns": 1, "scratch_bytes": 0, "expected_speedup_bps": 4294967295, "mandatory_when_profitable": false},
				{"pass_id": "b", "min_frontier_items": 0, "min_reuse_count": 0, "min_avoided_readback_bytes": 0,
				"planning_cost_ns": 1, "scratch_bytes": 0, "expected_speedup_bps": 4294967295, "mandatory_when_profitable": false}]}`,
			stderr: []string{"projected speedup bps (the product of the selected candidates' expected_speedup_bps) overflows 32 bits"}},
		{name: "missing sample field", args: []string{"passes", "-"}, code: exitFailure,
			stdin:  `{"sample": {"frontier_items": 0}, "candidates": []}`,
			stderr: []string{`field "sample.reuse_count": required field is missing`}},
		{name: "no candidates", args: []string{"passes", "-"}, code: exitOK, stdin: `{` + sample + `, "candidates": []}`,
			stdout: []string{"projected speedup  10000 bps (1.0000x)"}},
	})
}

func TestPassesCommandJSON(t *testing.T) {
	var got planners.BenchmarkPassSelectionPlan
	runPlannerJSON(t, &got, "passes", "passes.json")
	var in passesInput
	require.NoError(t, decodeJSONInput("passes.json", []byte(readTestdata(t, "passes.json")), &in))
	want, err := planners.SelectBenchmarkPasses(in.Candidates, in.Sample)
	require.NoError(t, err)
	assert.Equal(t, want, got)
}

func FuzzPassesInput(f *testing.F) {
	fuzzPlannerCommand(f, "passes", readTestdata(f, "passes.json"))
}
