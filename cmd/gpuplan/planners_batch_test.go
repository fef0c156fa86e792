package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/planners"
)

func TestBatchCommand(t *testing.T) {
	runPlannerCases(t, []plannerCase{
		{name: "text", args: []string{"batch", testdataPlanner("batch.json")}, code: exitOK,
			stdout: []string{"queries              5\n", "launches             4\n", "avoided launches     1\n", "avoided host fences  1\n",
				"graph uploads        2 cold (300 bytes), 3 warm reuses (300 bytes avoided)\n", "peak resident bytes  330 of 350 budget\n",
				"0       0xabc  0x10  1, 2     100           330             10\n",
				"1       0xabc  0x10  3        0             220             10\n",
				"2       0xabc  0x20  4        0             175             20\n",
				"3       0xdef  0x10  5        200           252             8\n"}},
		{name: "help", args: []string{"batch", "--help"}, code: exitOK, stdout: []string{"usage: gpuplan batch [--json] <input.json|->", "traversal_key"}},
		{name: "over budget", args: []string{"batch", "-"}, code: exitFailure,
			stdin:  `{"budget_bytes": 150, "queries": [{"query": 1, "graph_layout_hash": 2748, "traversal_key": 16, "graph_upload_bytes": 100, "frontier_bytes": 100, "scratch_bytes": 10, "output_bytes": 10}]}`,
			stderr: []string{"queries[0]: query 1 on graph 0xabc, traversal key 0x10 alone needs 220 resident bytes but budget_bytes is 150"}},
		{name: "mismatch", args: []string{"batch", "-"}, code: exitFailure,
			stdin: `{"budget_bytes": 1000, "queries": [
				{"query": 1, "graph_layout_hash": 2748, "traversal_key": 16, "graph_upload_bytes": 100, "frontier_bytes": 1, "scratch_bytes": 1, "output_bytes": 1},
				{"query": 2, "graph_layout_hash": 2748, "traversal_key": 32, "graph_upload_bytes": 200, "frontier_bytes": 1, "scratch_bytes": 1, "output_bytes": 1}]}`,
			stderr: []string{"queries[1].graph_upload_bytes: query 2 gives graph 0xabc as 200 bytes but an earlier query gave 100"}},
		{name: "zero key", args: []string{"batch", "-"}, code: exitFailure,
			stdin:  `{"budget_bytes": 1000, "queries": [{"query": 1, "graph_layout_hash": 2748, "traversal_key": 0, "graph_upload_bytes": 100, "frontier_bytes": 1, "scratch_bytes": 1, "output_bytes": 1}]}`,
			stderr: []string{"queries[0].traversal_key"}},
		{name: "zero budget", args: []string{"batch", "-"}, stdin: `{"budget_bytes": 0, "queries": []}`, code: exitFailure, stderr: []string{"budget_bytes is 0"}},
		{name: "empty", args: []string{"batch", "-"}, stdin: `{"budget_bytes": 1, "queries": []}`, code: exitOK, stdout: []string{"launches             0"}},
	})
}

func TestBatchCommandJSON(t *testing.T) {
	var got planners.MultiQueryExecutionPlan
	runPlannerJSON(t, &got, "batch", "batch.json")
	var in batchInput
	require.NoError(t, decodeJSONInput("batch.json", []byte(readTestdata(t, "batch.json")), &in))
	want, err := planners.PlanMultiQueryExecution(in.Queries, in.BudgetBytes)
	require.NoError(t, err)
	assert.Equal(t, want, got)
}

func FuzzBatchInput(f *testing.F) {
	fuzzPlannerCommand(f, "batch", readTestdata(f, "batch.json"))
}
