package megakernel_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/megakernel"
)

// TestHashJSONPinned pins the plans' hashes and their JSON, recorded with
// the per-package MarshalJSON methods before they moved to
// internal/hashjson: the graph layout hash of minimalWorkload, its hex
// spelling at the end of the plan, and a whole PlanIdentity byte for byte.
func TestHashJSONPinned(t *testing.T) {
	w, err := megakernel.DecodeWorkload("w.json", []byte(minimalWorkload))
	require.NoError(t, err)
	assert.Equal(t, uint64(0x5aa598529ac7d321), w.LayoutHash(), "FNV-1a of the graph layout")
	p, err := megakernel.PlanWorkload("w.json", w, h100(t), "h100-sxm", nil)
	require.NoError(t, err)
	b, err := json.Marshal(p)
	require.NoError(t, err)
	assert.Regexp(t, `^\{"analysis":"dataflow","device":\{.*,"graph_layout_hash":"0x5aa598529ac7d321"\}$`, string(b))

	tests := []struct {
		name string
		id   megakernel.PlanIdentity
		want string
	}{
		{"above 2^53", megakernel.PlanIdentity{GraphLayoutHash: 18446744073709377289, Kind: megakernel.Dataflow},
			`{"analysis_kind":"dataflow","device":{"sm_major":0,"sm_minor":0,"warp_size":0,"supports_grid_sync":false,"supports_tensor_cores":false,"max_workgroup_size":0},"graph_layout_hash":"0xfffffffffffd5709"}`},
		{"small", megakernel.PlanIdentity{GraphLayoutHash: 0xabc, Kind: megakernel.Liveness, Device: megakernel.DeviceKey{SMMajor: 9, WarpSize: 32}},
			`{"analysis_kind":"liveness","device":{"sm_major":9,"sm_minor":0,"warp_size":32,"supports_grid_sync":false,"supports_tensor_cores":false,"max_workgroup_size":0},"graph_layout_hash":"0x0000000000000abc"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(tc.id)
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(b))
		})
	}
}

// TestHashJSONDecimal reads a hash written as a hex string or as a JSON
// integer, as older plans wrote it, and refuses one that is neither form.
// (The plans' analysis kinds and readback policies are written as names
// that do not read back, so only the hashes are read here.)
func TestHashJSONDecimal(t *testing.T) {
	tests := []struct {
		name, in string
		want     uint64
		err      string
	}{
		{"integer", `{"graph_layout_hash":2748,"device":{"sm_major":9}}`, 0xabc, ""},
		{"hex", `{"device":{"sm_major":9},"graph_layout_hash":"0xABC"}`, 0xabc, ""},
		{"negative", `{"graph_layout_hash":-1}`, 0, "hash -1 is not an integer"},
		{"not hex", `{"graph_layout_hash":"abc"}`, 0, `hash "abc" is not 0x and 1 to 16 hex digits`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var id megakernel.PlanIdentity
			err := json.Unmarshal([]byte(tc.in), &id)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				assert.Contains(t, err.Error(), "Fix:")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, id.GraphLayoutHash)
			assert.Equal(t, uint16(9), id.Device.SMMajor)
		})
	}
}
