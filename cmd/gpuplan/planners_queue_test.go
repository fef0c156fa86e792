package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/planners"
)

func TestQueueCommand(t *testing.T) {
	runPlannerCases(t, []plannerCase{
		{name: "backpressure text", args: []string{"queue", testdataPlanner("queue.json")}, code: exitOK,
			stdout: []string{"queue bytes        1048576\n", "resident bytes     1048704 of 2097152 budget\n",
				"initial occupancy  39 bps (0.39%)\n", "drain strategy     chunked_resident_drain\n", "drain launches     8 of up to 8192 items\n"}},
		{name: "expansion text", args: []string{"queue", testdataPlanner("queue_expansion.json")}, code: exitOK,
			stdout: []string{"queue capacity     16 entries of 8 B\n", "resident bytes     192 of 256 budget\n", "2500 bps (25.00%)"}},
		{name: "plain", args: []string{"queue", "-"}, code: exitOK,
			stdin:  `{"initial_items":256,"queue_capacity":1024,"entry_bytes":16,"control_bytes":128,"budget_bytes":32768,"host_sync":"final_only"}`,
			stdout: []string{"queue bytes        16384\n", "resident bytes     16512 of 32768 budget\n"}},
		{name: "help", args: []string{"queue", "--help"}, code: exitOK, stdout: []string{"usage: gpuplan queue [--json] <input.json|->", "expansion_items"}},
		{name: "host participates", args: []string{"queue", "-"}, code: exitFailure,
			stdin:  `{"initial_items":0,"queue_capacity":8,"entry_bytes":8,"control_bytes":0,"budget_bytes":64,"host_sync":"host_participates"}`,
			stderr: []string{"host_sync is host_participates"}},
		{name: "bad host sync", args: []string{"queue", "-"}, code: exitFailure,
			stdin:  `{"initial_items":0,"queue_capacity":8,"entry_bytes":8,"control_bytes":0,"budget_bytes":64,"host_sync":"often"}`,
			stderr: []string{`<stdin>: field "host_sync": host_sync "often" is not a host sync policy. Fix: use "final_only" or "host_participates"` + "\n"}},
		{name: "over budget", args: []string{"queue", "-"}, code: exitFailure,
			stdin:  `{"initial_items":0,"queue_capacity":8,"entry_bytes":8,"control_bytes":1,"budget_bytes":64,"host_sync":"final_only"}`,
			stderr: []string{"budget_bytes is 64", "Fix: raise budget_bytes to at least 65"}},
		{name: "zero drain", args: []string{"queue", "-"}, code: exitFailure,
			stdin:  `{"initial_items":0,"queue_capacity":8,"entry_bytes":8,"control_bytes":1,"budget_bytes":64,"host_sync":"final_only","max_items_per_drain_launch":0}`,
			stderr: []string{"max_items_per_drain_launch is 0"}},
		{name: "overflow", args: []string{"queue", "-"}, code: exitFailure,
			stdin:  `{"initial_items":0,"queue_capacity":18446744073709551615,"entry_bytes":2,"control_bytes":1,"budget_bytes":64,"host_sync":"final_only"}`,
			stderr: []string{"queue bytes (queue_capacity x entry_bytes) overflows 64 bits"}},
		{name: "no capacity", args: []string{"queue", "-"}, code: exitFailure,
			stdin:  `{"initial_items":0,"entry_bytes":8,"control_bytes":1,"budget_bytes":64,"host_sync":"final_only"}`,
			stderr: []string{`field "queue_capacity": required field is missing`, "expansion_items"}},
		{name: "both capacities", args: []string{"queue", "-"}, code: exitFailure,
			stdin:  `{"initial_items":0,"queue_capacity":8,"expansion_items":8,"entry_bytes":8,"control_bytes":1,"budget_bytes":64,"host_sync":"final_only"}`,
			stderr: []string{`field "expansion_items"`, "not both"}},
		{name: "expansion with drain", args: []string{"queue", "-"}, code: exitFailure,
			stdin:  `{"initial_items":0,"expansion_items":8,"entry_bytes":8,"control_bytes":1,"budget_bytes":64,"host_sync":"final_only","max_items_per_drain_launch":4}`,
			stderr: []string{`field "max_items_per_drain_launch"`}},
		{name: "missing host sync", args: []string{"queue", "-"}, code: exitFailure,
			stdin:  `{"initial_items":0,"queue_capacity":8,"entry_bytes":8,"control_bytes":1,"budget_bytes":64}`,
			stderr: []string{`field "host_sync": required field is missing`}},
	})
}

func TestQueueCommandJSON(t *testing.T) {
	var got planners.DeviceWorkQueueBackpressurePlan
	runPlannerJSON(t, &got, "queue", "queue.json")
	want, err := planners.PlanDeviceWorkQueueBackpressure(planners.DeviceWorkQueueProfile{
		InitialItems: 256, QueueCapacity: 65536, EntryBytes: 16, ControlBytes: 128, BudgetBytes: 2097152,
	}, 8192)
	require.NoError(t, err)
	assert.Equal(t, want.Queue, got.Queue)
	assert.Equal(t, want.Chunks, got.Chunks)
	assert.Equal(t, want.ItemsPerChunk, got.ItemsPerChunk)
	assert.True(t, got.FinalOnlyHostSync)

	var exp planners.DeviceWorkQueuePlan
	runPlannerJSON(t, &exp, "queue", "queue_expansion.json")
	assert.Equal(t, planners.DeviceWorkQueuePlan{QueueCapacity: 16, QueueBytes: 128, ControlBytes: 64,
		ResidentBytes: 192, InitialOccupancyBPS: 2500, FinalOnlyHostSync: true}, exp)
}

func FuzzQueueInput(f *testing.F) {
	fuzzPlannerCommand(f, "queue", readTestdata(f, "queue.json"), readTestdata(f, "queue_expansion.json"))
}
