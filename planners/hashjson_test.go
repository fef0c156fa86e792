package planners_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/planners"
)

// TestHashJSONPinned pins the JSON of the plans with hashes byte for byte,
// as recorded with the per-package MarshalJSON methods before they moved
// to internal/hashjson: the hashes as hex strings after the other fields,
// in declaration order. Each one reads back to the same value.
func TestHashJSONPinned(t *testing.T) {
	tests := []struct {
		name string
		v    any
		back func() any
		want string
	}{
		{"launch fusion group", planners.LaunchFusionGroup{StageIDs: []uint32{1, 2}, LayoutHash: 18446744073709377289, RequiredBytes: 3, AvoidedIntermediateBytes: 4},
			func() any { return &planners.LaunchFusionGroup{} },
			`{"stage_ids":[1,2],"required_bytes":3,"avoided_intermediate_bytes":4,"layout_hash":"0xfffffffffffd5709"}`},
		{"launch fusion plan", planners.LaunchFusionPlan{Groups: []planners.LaunchFusionGroup{{StageIDs: []uint32{0}, LayoutHash: 7}}, LaunchCount: 1},
			func() any { return &planners.LaunchFusionPlan{} },
			`{"groups":[{"stage_ids":[0],"required_bytes":0,"avoided_intermediate_bytes":0,"layout_hash":"0x0000000000000007"}],"launch_count":1,"avoided_launches":0,"avoided_intermediate_bytes":0}`},
		{"resident graph session", planners.ResidentGraphSessionPlan{GraphLayoutHash: 0xabc, OneTimeGraphUploadBytes: 5},
			func() any { return &planners.ResidentGraphSessionPlan{} },
			`{"one_time_graph_upload_bytes":5,"total_frontier_refresh_bytes":0,"peak_resident_bytes":0,"avoided_graph_upload_bytes":0,"graph_reuse":{"cold_uploads":0,"warm_reuses":0,"upload_bytes":0,"avoided_upload_bytes":0},"avoided_device_allocations":0,"avoided_host_fences":0,"host_readback_bytes":0,"graph_topology_resident":false,"scratch_reused":false,"final_only_host_readback":false,"graph_layout_hash":"0x0000000000000abc"}`},
		{"multi-query group", planners.MultiQueryGroup{GraphLayoutHash: 1<<53 + 1, TraversalKey: 0xfffffffffffffff, Queries: []uint32{0, 3}},
			func() any { return &planners.MultiQueryGroup{} },
			`{"queries":[0,3],"graph_upload_bytes":0,"frontier_bytes":0,"peak_scratch_bytes":0,"output_bytes":0,"resident_bytes":0,"avoided_launches":0,"avoided_host_fences":0,"avoided_graph_upload_bytes":0,"graph_reuse":{"cold_uploads":0,"warm_reuses":0,"upload_bytes":0,"avoided_upload_bytes":0},"graph_layout_hash":"0x0020000000000001","traversal_key":"0x0fffffffffffffff"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(tc.v)
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(b))
			back := tc.back()
			require.NoError(t, json.Unmarshal(b, back))
			again, err := json.Marshal(back)
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(again))
		})
	}
}

// TestHashJSONRead reads hashes as hex strings or JSON integers, keys
// matched as encoding/json matches them, and a whole value replacing the
// old one.
func TestHashJSONRead(t *testing.T) {
	tests := []struct {
		name, in string
		want     planners.MultiQueryGroup
		err      string
	}{
		{"hex and integer", `{"graph_layout_hash":"0x10","traversal_key":17,"queries":[4]}`, planners.MultiQueryGroup{GraphLayoutHash: 16, TraversalKey: 17, Queries: []uint32{4}}, ""},
		{"keys ignoring case", `{"GRAPH_LAYOUT_HASH":"0x10","Traversal_Key":17}`, planners.MultiQueryGroup{GraphLayoutHash: 16, TraversalKey: 17}, ""},
		{"the last of a repeated key", `{"graph_layout_hash":2,"graph_layout_hash":"0x3"}`, planners.MultiQueryGroup{GraphLayoutHash: 3}, ""},
		{"null hash", `{"graph_layout_hash":null}`, planners.MultiQueryGroup{}, ""},
		{"bad hash", `{"graph_layout_hash":"zz"}`, planners.MultiQueryGroup{}, `hash "zz" is not 0x and 1 to 16 hex digits`},
		{"bad field", `{"graph_layout_hash":1,"graph_reuse":5}`, planners.MultiQueryGroup{}, "cannot unmarshal number"},
		{"not an object", `[1]`, planners.MultiQueryGroup{}, "cannot unmarshal array"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := planners.MultiQueryGroup{TraversalKey: 99, FrontierBytes: 5}
			err := json.Unmarshal([]byte(tc.in), &g)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, g)
		})
	}
}
