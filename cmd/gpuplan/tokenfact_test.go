package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func tokenfactExample(t testing.TB) string {
	t.Helper()
	return readTestdataFile(t, "tokenfact", "chain.json")
}

// tokenfactEdit decodes the example, applies edit and re-encodes it.
func tokenfactEdit(t *testing.T, edit func(m map[string]any)) string {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(tokenfactExample(t)), &m))
	edit(m)
	b, err := json.Marshal(m)
	require.NoError(t, err)
	return string(b)
}

func sub(m map[string]any, key string) map[string]any { return m[key].(map[string]any) }

func TestTokenfactCommand(t *testing.T) {
	example := filepath.Join("testdata", "tokenfact", "chain.json")
	runPlannerCases(t, []plannerCase{
		{name: "text", args: []string{"tokenfact", example}, code: exitOK, stdout: []string{
			"token/fact graph  3 nodes (token 1, fact 1), 2 edges, max out-degree 1\n",
			"graph layout      nodes 24 B + edges 8 B + payload 48 B = 80 B resident\n",
			"  wave 1          semantic nodes [1], 4 items; frontier 32 B, scratch 64 B, output 32 B\n",
			"barriers          2 global barriers over 3 groups, max group width 1\n",
			"work queue        release sizing, 64 B resident (0 expansion items), final-only host sync\n",
			"payload           48 B\n",
			"graph reuse       warm_resident: upload 0 B, avoided 32 B\n",
		}},
		{name: "help", args: []string{"tokenfact", "--help"}, code: exitOK, stdout: []string{"usage: gpuplan tokenfact [--json] <input.json|->", "queue_sizing", "-json"}},
		{name: "expansion headroom", args: []string{"tokenfact", "-"}, code: exitOK,
			stdin:  tokenfactEdit(t, func(m map[string]any) { m["queue_sizing"] = "expansion_headroom"; delete(m, "graph_reuse") }),
			stdout: []string{"expansion_headroom sizing, 72 B resident (2 expansion items)", "graph reuse       cold_upload: upload 32 B, avoided 0 B\n"}},
		{name: "unknown field", args: []string{"tokenfact", "-"}, code: exitFailure,
			stdin:  tokenfactEdit(t, func(m map[string]any) { m["budget"] = 1 }),
			stderr: []string{`field "budget": unknown field`}},
		{name: "missing nested field", args: []string{"tokenfact", "-"}, code: exitFailure,
			stdin:  tokenfactEdit(t, func(m map[string]any) { delete(sub(m, "graph"), "edge_record_bytes") }),
			stderr: []string{`field "graph.edge_record_bytes": required field is missing`}},
		{name: "missing node field", args: []string{"tokenfact", "-"}, code: exitFailure,
			stdin: tokenfactEdit(t, func(m map[string]any) {
				delete(sub(m, "frontier")["nodes"].([]any)[1].(map[string]any), "domain")
			}),
			stderr: []string{`field "frontier.nodes[1].domain": required field is missing`}},
		{name: "bad domain", args: []string{"tokenfact", "-"}, code: exitFailure,
			stdin: tokenfactEdit(t, func(m map[string]any) {
				sub(m, "frontier")["nodes"].([]any)[0].(map[string]any)["domain"] = "lexer"
			}),
			stderr: []string{`unknown domain "lexer"`}},
		{name: "bad analysis kind", args: []string{"tokenfact", "-"}, code: exitFailure,
			stdin:  tokenfactEdit(t, func(m map[string]any) { m["analysis_kind"] = "taint" }),
			stderr: []string{`field "analysis_kind"`, "custom:<integer>"}},
		{name: "density", args: []string{"tokenfact", "-"}, code: exitFailure,
			stdin:  tokenfactEdit(t, func(m map[string]any) { sub(m, "sample")["frontier_density"] = 1.5 }),
			stderr: []string{`<stdin>: field "sample.frontier_density": 1.5 is not a finite fraction in [0, 1]. Fix: give the active fraction of the frontier, between 0 and 1` + "\n"}},
		{name: "dispatch cost", args: []string{"tokenfact", "-"}, code: exitFailure,
			stdin:  tokenfactEdit(t, func(m map[string]any) { sub(m, "sample")["dispatch_cost_ns"] = 0 }),
			stderr: []string{`field "sample.dispatch_cost_ns"`}},
		{name: "launch overhead", args: []string{"tokenfact", "-"}, code: exitFailure,
			stdin:  tokenfactEdit(t, func(m map[string]any) { m["launch_overhead_ns"] = -1 }),
			stderr: []string{`field "launch_overhead_ns"`}},
		{name: "fusion pressure", args: []string{"tokenfact", "-"}, code: exitFailure,
			stdin:  tokenfactEdit(t, func(m map[string]any) { m["fusion_pressure"] = 2 }),
			stderr: []string{`field "fusion_pressure"`}},
		{name: "duplicate graph node", args: []string{"tokenfact", "-"}, code: exitFailure,
			stdin: tokenfactEdit(t, func(m map[string]any) {
				sub(m, "graph")["nodes"].([]any)[2].(map[string]any)["id"] = 1
			}),
			stderr: []string{"gpuplan tokenfact: graph: DuplicateNode: nodes[2].id: token/fact node id 1 appears more than once. Fix: give every node a unique id\n"}},
		{name: "payload out of bounds", args: []string{"tokenfact", "-"}, code: exitFailure,
			stdin:  tokenfactEdit(t, func(m map[string]any) { sub(m, "graph")["payload_bytes"] = 40 }),
			stderr: []string{"PayloadOutOfBounds: node 3"}},
		{name: "zero record width", args: []string{"tokenfact", "-"}, code: exitFailure,
			stdin:  tokenfactEdit(t, func(m map[string]any) { sub(m, "graph")["node_record_bytes"] = 0 }),
			stderr: []string{"ZeroRecordWidth: node_record_bytes is 0"}},
		{name: "cycle", args: []string{"tokenfact", "-"}, code: exitFailure,
			stdin: tokenfactEdit(t, func(m map[string]any) {
				f := sub(m, "frontier")
				f["dependencies"] = append(f["dependencies"].([]any), map[string]any{"before": 2, "after": 0})
			}),
			stderr: []string{"frontier: Cycle: 3 frontier IR nodes"}},
		{name: "unknown dependency", args: []string{"tokenfact", "-"}, code: exitFailure,
			stdin: tokenfactEdit(t, func(m map[string]any) {
				sub(m, "frontier")["dependencies"] = []any{map[string]any{"before": 0, "after": 9}}
			}),
			stderr: []string{"gpuplan tokenfact: frontier: UnknownDependencyNode: dependencies[0].after: dependency 0 -> 9 names node id 9"}},
		{name: "payload over budget", args: []string{"tokenfact", "-"}, code: exitFailure,
			stdin:  tokenfactEdit(t, func(m map[string]any) { m["budget_bytes"] = 40 }),
			stderr: []string{"PayloadExceedsBudget: payload_bytes 48 exceeds budget_bytes 40"}},
		{name: "queue over budget", args: []string{"tokenfact", "-"}, code: exitFailure,
			stdin:  tokenfactEdit(t, func(m map[string]any) { m["budget_bytes"] = 100 }),
			stderr: []string{"work queue plan: the queue needs 64 resident bytes"}},
		{name: "frontier over budget", args: []string{"tokenfact", "-"}, code: exitFailure,
			stdin:  tokenfactEdit(t, func(m map[string]any) { m["budget_bytes"] = 200 }),
			stderr: []string{"frontier plan: single fused frontier wave bytes"}},
		{name: "bad reuse", args: []string{"tokenfact", "-"}, code: exitFailure,
			stdin:  tokenfactEdit(t, func(m map[string]any) { m["graph_reuse"] = "hot" }),
			stderr: []string{"graph_reuse", "cold_upload"}},
	})
}

func TestTokenfactCommandJSON(t *testing.T) {
	out, errs, code := runCLI(t, "", "tokenfact", "--json", filepath.Join("testdata", "tokenfact", "chain.json"))
	require.Equal(t, exitOK, code, errs)
	var got struct {
		Layout struct {
			ResidentBytes uint64 `json:"resident_bytes"`
		} `json:"layout"`
		IRWaves []struct {
			NodeIDs []uint32 `json:"node_ids"`
		} `json:"frontier_ir_waves"`
		Frontier struct {
			Topology       string  `json:"topology"`
			GlobalBarriers int     `json:"global_barriers"`
			Groups         [][]int `json:"groups"`
		} `json:"frontier_plan"`
		Queue struct {
			QueueBytes    uint64 `json:"queue_bytes"`
			ResidentBytes uint64 `json:"resident_bytes"`
		} `json:"work_queue"`
		Envelope struct {
			TotalRequiredBytes      uint64 `json:"total_required_bytes"`
			AvoidedGraphUploadBytes uint64 `json:"avoided_graph_upload_bytes"`
			GraphReuse              string `json:"graph_reuse"`
		} `json:"envelope"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	assert.Equal(t, uint64(80), got.Layout.ResidentBytes)
	assert.Len(t, got.IRWaves, 3)
	assert.Equal(t, 2, got.Frontier.GlobalBarriers)
	assert.Equal(t, [][]int{{0}, {1}, {2}}, got.Frontier.Groups)
	assert.Equal(t, "FusedWave", got.Frontier.Topology)
	assert.Equal(t, uint64(48), got.Queue.QueueBytes)
	assert.Equal(t, uint64(64), got.Queue.ResidentBytes)
	assert.Equal(t, uint64(32), got.Envelope.AvoidedGraphUploadBytes)
	assert.Equal(t, "warm_resident", got.Envelope.GraphReuse)
	assert.True(t, strings.Contains(out, `"frontier_ir_waves"`))
}

func FuzzTokenfactInput(f *testing.F) {
	fuzzPlannerCommand(f, "tokenfact", tokenfactExample(f))
}
