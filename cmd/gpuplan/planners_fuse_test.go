package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/planners"
)

func TestFuseCommand(t *testing.T) {
	runPlannerCases(t, []plannerCase{
		{name: "text", args: []string{"fuse", testdataPlanner("fuse.json")}, code: exitOK,
			stdout: []string{"stages                      5\n", "launches                    3 (2 avoided)\n", "avoided intermediate bytes  80\n",
				"0       1, 2, 3  0x7          184             80\n", "1       4        0x7          88              0\n", "2       5        0x9          72              0\n"}},
		{name: "help", args: []string{"fuse", "--help"}, code: exitOK, stdout: []string{"usage: gpuplan fuse [--json] <input.json|->", "max_group_bytes"}},
		{name: "empty stages", args: []string{"fuse", "-"}, stdin: `{"max_group_bytes": 1, "stages": []}`, code: exitOK, stdout: []string{"launches                    0 (0 avoided)"}},
		{name: "zero budget", args: []string{"fuse", "-"}, stdin: `{"max_group_bytes": 0, "stages": []}`, code: exitFailure, stderr: []string{"max_group_bytes is 0"}},
		{name: "duplicate", args: []string{"fuse", "-"}, code: exitFailure,
			stdin: `{"max_group_bytes": 128, "stages": [
				{"id": 1, "layout_hash": 7, "input_bytes": 1, "output_bytes": 1, "scratch_bytes": 1, "requires_host_materialization": false},
				{"id": 1, "layout_hash": 7, "input_bytes": 1, "output_bytes": 1, "scratch_bytes": 1, "requires_host_materialization": false}]}`,
			stderr: []string{"stages[1].id: stage id 1 appears twice"}},
		{name: "over budget", args: []string{"fuse", "-"}, code: exitFailure,
			stdin:  `{"max_group_bytes": 128, "stages": [{"id": 9, "layout_hash": 7, "input_bytes": 64, "output_bytes": 32, "scratch_bytes": 64, "requires_host_materialization": false}]}`,
			stderr: []string{"stage 9 alone needs 160 bytes", "Fix: raise max_group_bytes to at least 160"}},
		{name: "missing flag", args: []string{"fuse", "-"}, code: exitFailure,
			stdin:  `{"max_group_bytes": 128, "stages": [{"id": 9, "layout_hash": 7, "input_bytes": 64, "output_bytes": 32, "scratch_bytes": 64}]}`,
			stderr: []string{`field "stages[0].requires_host_materialization": required field is missing`}},
		{name: "id too large", args: []string{"fuse", "-"}, code: exitFailure,
			stdin:  `{"max_group_bytes": 128, "stages": [{"id": 4294967296, "layout_hash": 7, "input_bytes": 64, "output_bytes": 32, "scratch_bytes": 64, "requires_host_materialization": false}]}`,
			stderr: []string{`stages[0].id`, "want an integer in 0..4294967295"}},
		{name: "missing stages", args: []string{"fuse", "-"}, stdin: `{"max_group_bytes": 1}`, code: exitFailure, stderr: []string{`field "stages": required field is missing`}},
	})
}

func TestFuseCommandJSON(t *testing.T) {
	var got planners.LaunchFusionPlan
	runPlannerJSON(t, &got, "fuse", "fuse.json")
	var in fuseInput
	require.NoError(t, decodeJSONInput("fuse.json", []byte(readTestdata(t, "fuse.json")), &in))
	want, err := planners.PlanLaunchFusion(in.Stages, in.MaxGroupBytes)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	assert.Equal(t, uint32(3), got.LaunchCount)
}

func FuzzFuseInput(f *testing.F) {
	fuzzPlannerCommand(f, "fuse", readTestdata(f, "fuse.json"))
}
