package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/planners"
)

func TestDiagnosticsCommand(t *testing.T) {
	runPlannerCases(t, []plannerCase{
		{name: "text", args: []string{"diagnostics", testdataPlanner("diagnostics.json")}, code: exitOK,
			stdout: []string{"shards                  3 (2 emitted diagnostics)\n", "counter readback bytes  48\n", "compact readback bytes  120\n",
				"host readback bytes     168 of 1024 budget\n", "raw candidate bytes     224000\n", "avoided readback bytes  223832\n",
				"compression ratio       7 bps (0.07%)\n", "overflow records        1 (overflow flag needed)\n", "device prefix scan      needed\n",
				"1      0               2        48\n", "2      48              3        72\n"}},
		{name: "help", args: []string{"diagnostics", "--help"}, code: exitOK, stdout: []string{"usage: gpuplan diagnostics [--json] <input.json|->", "severity_mask"}},
		{name: "zero cap", args: []string{"diagnostics", "-"}, stdin: `{"max_records_per_shard": 0, "budget_bytes": 1, "shards": []}`, code: exitFailure, stderr: []string{"max_records_per_shard is 0"}},
		{name: "emitted over candidates", args: []string{"diagnostics", "-"}, code: exitFailure,
			stdin:  `{"max_records_per_shard": 4, "budget_bytes": 1024, "shards": [{"shard": 7, "candidate_items": 0, "emitted_diagnostics": 1, "raw_item_bytes": 32, "diagnostic_record_bytes": 24, "counter_bytes": 16, "severity_mask": 1}]}`,
			stderr: []string{"shards[0].emitted_diagnostics: shard 7 emitted 1 diagnostics from 0 candidate items"}},
		{name: "missing mask", args: []string{"diagnostics", "-"}, code: exitFailure,
			stdin:  `{"max_records_per_shard": 4, "budget_bytes": 1024, "shards": [{"shard": 7, "candidate_items": 9, "emitted_diagnostics": 1, "raw_item_bytes": 32, "diagnostic_record_bytes": 24, "counter_bytes": 16, "severity_mask": 0}]}`,
			stderr: []string{"shards[0].severity_mask"}},
		{name: "over budget", args: []string{"diagnostics", "-"}, code: exitFailure,
			stdin:  `{"max_records_per_shard": 4, "budget_bytes": 39, "shards": [{"shard": 7, "candidate_items": 9, "emitted_diagnostics": 1, "raw_item_bytes": 32, "diagnostic_record_bytes": 24, "counter_bytes": 16, "severity_mask": 1}]}`,
			stderr: []string{"needs 40 bytes", "budget_bytes is 39"}},
		{name: "mask too wide", args: []string{"diagnostics", "-"}, code: exitFailure,
			stdin:  `{"max_records_per_shard": 4, "budget_bytes": 39, "shards": [{"shard": 7, "candidate_items": 9, "emitted_diagnostics": 1, "raw_item_bytes": 32, "diagnostic_record_bytes": 24, "counter_bytes": 16, "severity_mask": 4294967296}]}`,
			stderr: []string{"shards[0].severity_mask", "want an integer in 0..4294967295"}},
	})
}

func TestDiagnosticsCommandJSON(t *testing.T) {
	var got planners.DiagnosticAggregationPlan
	runPlannerJSON(t, &got, "diagnostics", "diagnostics.json")
	var in diagnosticsInput
	require.NoError(t, decodeJSONInput("diagnostics.json", []byte(readTestdata(t, "diagnostics.json")), &in))
	want, err := planners.PlanDiagnosticAggregation(in.Shards, in.MaxRecordsPerShard, in.BudgetBytes)
	require.NoError(t, err)
	assert.Equal(t, want, got)
}

func FuzzDiagnosticsInput(f *testing.F) {
	fuzzPlannerCommand(f, "diagnostics", readTestdata(f, "diagnostics.json"))
}
