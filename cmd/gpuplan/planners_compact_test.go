package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/planners"
)

func TestCompactCommand(t *testing.T) {
	runPlannerCases(t, []plannerCase{
		{name: "text", args: []string{"compact", testdataPlanner("compact.json")}, code: exitOK,
			stdout: []string{"full capacity bytes      768\n", "compact bytes            36 in 2 records\n", "direct bytes             200 in 1 slots\n",
				"selected readback bytes  236\n", "avoided readback bytes   532 (6927 bps, 69.27%)\n", "direct slots             4\n",
				"1     0               12\n", "3     12              24\n"}},
		{name: "help", args: []string{"compact", "--help"}, code: exitOK, stdout: []string{"usage: gpuplan compact [--json] <input.json|->", "max_compact_record_bytes"}},
		{name: "duplicate", args: []string{"compact", "-"}, code: exitFailure,
			stdin:  `{"max_compact_record_bytes": 32, "slots": [{"slot": 1, "meaningful_bytes": 1, "capacity_bytes": 8}, {"slot": 1, "meaningful_bytes": 1, "capacity_bytes": 8}]}`,
			stderr: []string{"slots[1].slot: slot id 1 appears twice"}},
		{name: "meaningful over capacity", args: []string{"compact", "-"}, code: exitFailure,
			stdin:  `{"max_compact_record_bytes": 32, "slots": [{"slot": 1, "meaningful_bytes": 9, "capacity_bytes": 8}]}`,
			stderr: []string{"slots[0].meaningful_bytes: slot 1 has 9 meaningful bytes but capacity_bytes is 8"}},
		{name: "overflow", args: []string{"compact", "-"}, code: exitFailure,
			stdin:  `{"max_compact_record_bytes": 32, "slots": [{"slot": 1, "meaningful_bytes": 0, "capacity_bytes": 18446744073709551615}, {"slot": 2, "meaningful_bytes": 0, "capacity_bytes": 1}]}`,
			stderr: []string{"full capacity bytes (capacity_bytes of slots[0..1]) overflows 64 bits"}},
		{name: "missing capacity", args: []string{"compact", "-"}, code: exitFailure,
			stdin:  `{"max_compact_record_bytes": 32, "slots": [{"slot": 1, "meaningful_bytes": 0}]}`,
			stderr: []string{`field "slots[0].capacity_bytes": required field is missing`}},
	})
}

func TestCompactCommandJSON(t *testing.T) {
	var got planners.ResultCompactionPlan
	runPlannerJSON(t, &got, "compact", "compact.json")
	var in compactInput
	require.NoError(t, decodeJSONInput("compact.json", []byte(readTestdata(t, "compact.json")), &in))
	want, err := planners.PlanResultCompaction(in.Slots, in.MaxCompactRecordBytes)
	require.NoError(t, err)
	assert.Equal(t, want, got)
}

func FuzzCompactInput(f *testing.F) {
	fuzzPlannerCommand(f, "compact", readTestdata(f, "compact.json"))
}
