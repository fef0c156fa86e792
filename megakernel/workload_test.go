package megakernel_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/internal/strictjson"
	"github.com/gpuplan/gpuplan/megakernel"
	"github.com/gpuplan/gpuplan/occupancy"
)

const minimalWorkload = `{
  "analysis": "dataflow",
  "device": "h100-sxm",
  "launch_overhead_ns": 4000,
  "graph": {"node_count": 1000, "edge_count": 4000, "bytes_per_node": 16, "bytes_per_edge": 8},
  "schedule_sample": {"dispatch_cost_ns": 12000, "frontier_density": 0.35, "readback_bytes": 65536},
  "waves": [
    {"id": 1, "name": "b", "frontier_bytes": 2048, "scratch_bytes": 1024, "output_bytes": 512},
    {"id": 0, "name": "a", "frontier_bytes": 1024, "scratch_bytes": 512, "output_bytes": 256}
  ],
  "dependencies": [{"before": 0, "after": 1}]
}`

// edit decodes minimalWorkload into a generic map, applies f and re-encodes.
func edit(t testing.TB, f func(m map[string]any)) []byte {
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(minimalWorkload), &m))
	f(m)
	b, err := json.Marshal(m)
	require.NoError(t, err)
	return b
}

func h100(t testing.TB) occupancy.Device {
	d, err := occupancy.Lookup("h100-sxm")
	require.NoError(t, err)
	return d
}

func TestDecodeAndPlanWorkload(t *testing.T) {
	w, err := megakernel.DecodeWorkload("w.json", []byte(minimalWorkload))
	require.NoError(t, err)
	assert.Equal(t, megakernel.Dataflow, w.Kind())
	assert.Equal(t, []megakernel.FrontierWave{{1024, 512, 256}, {2048, 1024, 512}}, w.FrontierWaves(), "indexed by id")
	assert.Equal(t, "b", w.WaveName(1))
	p, err := megakernel.PlanWorkload("w.json", w, h100(t), "h100-sxm", nil)
	require.NoError(t, err)
	dev := h100(t)
	assert.Equal(t, uint64(dev.TotalMemoryBytes)*9/10, p.BudgetBytes, "default budget is 90% of the device memory")
	assert.Equal(t, [][]int{{0}, {1}}, p.Groups)
	assert.Equal(t, 1, p.GlobalBarriers)
	assert.Equal(t, [][]int{{}, {0}}, p.Waits)
	assert.Contains(t, p.FusionPressureSource, "homotopy")
	want, err := megakernel.ScheduleFusionPressure([]megakernel.ScheduleSample{{DispatchCostNS: 12000, FrontierDensity: 0.35, ReadbackBytes: 65536}},
		4000, megakernel.DerivedFusionSteps, megakernel.DerivedFusionDt)
	require.NoError(t, err)
	assert.Equal(t, want[0], p.FusionPressure)
	assert.Equal(t, uint32(megakernel.DefaultMaxDeviceIterations), p.Convergence.MaxDeviceIterations)
	assert.Equal(t, p.Execution.Decision.StableExplanation(), p.Explanation)
	var js bytes.Buffer
	require.NoError(t, json.NewEncoder(&js).Encode(p))
	assert.Contains(t, js.String(), `"explanation":"megakernel-topology-v1|`)
	assert.Contains(t, js.String(), `"topology":"`)
}

func TestDecodeWorkloadErrors(t *testing.T) {
	tests := []struct {
		name  string
		data  []byte
		field string
		msg   string
	}{
		{"unknown field", edit(t, func(m map[string]any) { m["wavez"] = 1 }), "wavez", "unknown field"},
		{"trailing data", []byte(minimalWorkload + " {}"), "", "trailing data"},
		{"wrong type", edit(t, func(m map[string]any) { m["launch_overhead_ns"] = "fast" }), "launch_overhead_ns", "cannot use"},
		{"negative bytes", edit(t, func(m map[string]any) { m["waves"].([]any)[0].(map[string]any)["frontier_bytes"] = -1 }), "waves[0].frontier_bytes", "cannot use"},
		{"missing analysis", edit(t, func(m map[string]any) { delete(m, "analysis") }), "analysis", "required"},
		{"bad analysis", edit(t, func(m map[string]any) { m["analysis"] = "taint" }), "analysis", "unknown analysis kind"},
		{"no device", edit(t, func(m map[string]any) { delete(m, "device") }), "device", "required"},
		{"two devices", edit(t, func(m map[string]any) { m["device_file"] = "x.json" }), "device_file", "both"},
		{"missing launch", edit(t, func(m map[string]any) { delete(m, "launch_overhead_ns") }), "launch_overhead_ns", "required"},
		{"negative launch", edit(t, func(m map[string]any) { m["launch_overhead_ns"] = -1 }), "launch_overhead_ns", "negative"},
		{"missing graph", edit(t, func(m map[string]any) { delete(m, "graph") }), "graph", "required"},
		{"missing node count", edit(t, func(m map[string]any) { delete(m["graph"].(map[string]any), "node_count") }), "graph.node_count", "required"},
		{"missing sample", edit(t, func(m map[string]any) { delete(m, "schedule_sample") }), "schedule_sample", "required"},
		{"zero cost", edit(t, func(m map[string]any) { m["schedule_sample"].(map[string]any)["dispatch_cost_ns"] = 0 }), "schedule_sample.dispatch_cost_ns", "not positive"},
		{"density 1.5", edit(t, func(m map[string]any) { m["schedule_sample"].(map[string]any)["frontier_density"] = 1.5 }), "schedule_sample.frontier_density", "outside [0, 1]"},
		{"fusion 2", edit(t, func(m map[string]any) { m["fusion_pressure"] = 2 }), "fusion_pressure", "outside [0, 1]"},
		{"zero iterations", edit(t, func(m map[string]any) { m["max_device_iterations"] = 0 }), "max_device_iterations", "max_device_iterations is 0"},
		{"no waves", edit(t, func(m map[string]any) { m["waves"] = []any{}; m["dependencies"] = []any{} }), "waves", "required"},
		{"wave without id", edit(t, func(m map[string]any) { delete(m["waves"].([]any)[0].(map[string]any), "id") }), "waves[0].id", "required"},
		{"wave id out of range", edit(t, func(m map[string]any) { m["waves"].([]any)[0].(map[string]any)["id"] = 2 }), "waves[0].id", "out of range"},
		{"negative wave id", edit(t, func(m map[string]any) { m["waves"].([]any)[0].(map[string]any)["id"] = -1 }), "waves[0].id", "out of range"},
		{"duplicate wave id", edit(t, func(m map[string]any) { m["waves"].([]any)[1].(map[string]any)["id"] = 1 }), "waves[1].id", "already used by waves[0]"},
		{"missing scratch", edit(t, func(m map[string]any) { delete(m["waves"].([]any)[1].(map[string]any), "scratch_bytes") }), "waves[1].scratch_bytes", "required"},
		{"unknown dependency id", edit(t, func(m map[string]any) { m["dependencies"] = []any{map[string]any{"before": 0, "after": 5}} }), "dependencies[0].after", "unknown wave id 5"},
		{"negative dependency id", edit(t, func(m map[string]any) { m["dependencies"] = []any{map[string]any{"before": -3, "after": 1}} }), "dependencies[0].before", "unknown wave id -3"},
		{"missing before", edit(t, func(m map[string]any) { m["dependencies"] = []any{map[string]any{"after": 1}} }), "dependencies[0].before", "required"},
		{"self dependency", edit(t, func(m map[string]any) { m["dependencies"] = []any{map[string]any{"before": 1, "after": 1}} }), "dependencies[0]", "depend on itself"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := megakernel.DecodeWorkload("w.json", tc.data)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "Fix:")
			assert.Contains(t, err.Error(), tc.msg)
			assert.True(t, strings.HasPrefix(err.Error(), "w.json: "), err.Error())
			var se *strictjson.Error
			var we *megakernel.WorkloadError
			switch {
			case errors.As(err, &we):
				assert.Equal(t, tc.field, we.Field)
			case errors.As(err, &se):
				assert.Equal(t, tc.field, se.Field)
			default:
				t.Fatalf("untyped error %T: %v", err, err)
			}
		})
	}
}

func TestPlanWorkloadErrors(t *testing.T) {
	tests := []struct {
		name  string
		data  []byte
		field string
		check func(t *testing.T, err error)
	}{
		{"cycle", edit(t, func(m map[string]any) {
			m["dependencies"] = []any{map[string]any{"before": 0, "after": 1}, map[string]any{"before": 1, "after": 0}}
		}), "dependencies", func(t *testing.T, err error) {
			var c *megakernel.CycleError
			require.ErrorAs(t, err, &c)
			assert.Equal(t, []int{0, 1}, c.Witness)
			assert.Equal(t, 2, c.UnscheduledWaves)
		}},
		{"graph over budget", edit(t, func(m map[string]any) { m["memory_budget_bytes"] = 1000 }), "memory_budget_bytes", func(t *testing.T, err error) {
			var g *megakernel.GroupOverBudgetError
			require.ErrorAs(t, err, &g)
			assert.Equal(t, "resident graph bytes", g.Field)
		}},
		{"wave over budget", edit(t, func(m map[string]any) { m["memory_budget_bytes"] = 48000 + 5000 }), "waves[0]", func(t *testing.T, err error) {
			var g *megakernel.GroupOverBudgetError
			require.ErrorAs(t, err, &g)
			assert.Equal(t, "single fused frontier wave bytes", g.Field)
			assert.Equal(t, 1, g.Wave)
		}},
		{"graph overflow", edit(t, func(m map[string]any) { m["graph"].(map[string]any)["bytes_per_node"] = uint64(math.MaxUint64) }), "graph", func(t *testing.T, err error) {
			assert.ErrorContains(t, err, "node layout bytes (graph.node_count x graph.bytes_per_node) overflows")
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w, err := megakernel.DecodeWorkload("w.json", tc.data)
			require.NoError(t, err)
			_, err = megakernel.PlanWorkload("w.json", w, h100(t), "h100-sxm", nil)
			require.Error(t, err)
			var we *megakernel.WorkloadError
			require.ErrorAs(t, err, &we)
			assert.Equal(t, tc.field, we.Field)
			assert.Contains(t, err.Error(), "Fix:")
			tc.check(t, err)
		})
	}
	t.Run("no device memory for the default budget", func(t *testing.T) {
		w, err := megakernel.DecodeWorkload("w.json", []byte(minimalWorkload))
		require.NoError(t, err)
		_, err = megakernel.PlanWorkload("w.json", w, occupancy.Device{Major: 9, WarpSize: 32}, "", nil)
		assert.ErrorContains(t, err, "memory_budget_bytes")
		assert.ErrorContains(t, err, "Fix:")
	})
	t.Run("undecoded workload", func(t *testing.T) {
		_, err := megakernel.PlanWorkload("w.json", &megakernel.Workload{}, h100(t), "", nil)
		assert.ErrorContains(t, err, "Fix:")
	})
}

func TestWriteDOT(t *testing.T) {
	w, err := megakernel.DecodeWorkload("w.json", edit(t, func(m map[string]any) {
		m["dependencies"] = []any{map[string]any{"before": 0, "after": 1}, map[string]any{"before": 0, "after": 1}}
	}))
	require.NoError(t, err)
	p, err := megakernel.PlanWorkload("w.json", w, h100(t), "h100-sxm", nil)
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, p.WriteDOT(&b))
	out := b.String()
	assert.True(t, strings.HasPrefix(out, "strict digraph "))
	assert.Contains(t, out, "subgraph cluster_0 {")
	assert.Contains(t, out, "subgraph cluster_1 {")
	assert.Equal(t, 1, strings.Count(out, "w0 -> w1;"), "duplicate dependencies are drawn once")
	assert.True(t, strings.HasSuffix(out, "}\n"))
}

func ExampleDecodeWorkload() {
	w, err := megakernel.DecodeWorkload("example.json", []byte(`{
	  "analysis": "liveness", "device": "h100-sxm", "launch_overhead_ns": 4000,
	  "graph": {"node_count": 1000, "edge_count": 4000, "bytes_per_node": 16, "bytes_per_edge": 8},
	  "schedule_sample": {"dispatch_cost_ns": 12000, "frontier_density": 0.35, "readback_bytes": 0},
	  "waves": [{"id": 0, "frontier_bytes": 1, "scratch_bytes": 1, "output_bytes": 1}],
	  "dependencies": [{"before": 0, "after": 3}]
	}`))
	fmt.Println(w, err)
	// Output: <nil> example.json: field "dependencies[0].after": unknown wave id 3 (the workload has 1 waves). Fix: use the id of a listed wave, 0..0
}

func ExamplePlanWorkload() {
	w, err := megakernel.DecodeWorkload("w.json", []byte(minimalWorkload))
	if err != nil {
		fmt.Println(err)
		return
	}
	dev, err := occupancy.Lookup("h100-sxm")
	if err != nil {
		fmt.Println(err)
		return
	}
	p, err := megakernel.PlanWorkload("w.json", w, dev, "h100-sxm", megakernel.NewPlanCache(megakernel.DefaultMaxPlans))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.Groups, p.GlobalBarriers, p.Execution.Topology)
	// Output: [[0] [1]] 1 FusedWave
}

// TestDecodeWorkloadRequiredMessages pins the whole message of a missing
// required field, planning and run fields alike: every one is strictjson's
// required-field error naming the path and ending in its own fix.
func TestDecodeWorkloadRequiredMessages(t *testing.T) {
	wave := func(m map[string]any, i int) map[string]any { return m["waves"].([]any)[i].(map[string]any) }
	tests := []struct {
		name string
		base string
		edit func(m map[string]any)
		want string
	}{
		{"analysis", minimalWorkload, func(m map[string]any) { delete(m, "analysis") },
			`field "analysis": required field is missing. Fix: add "analysis": "dataflow" (or ifds, reaching_definitions, liveness, points_to, parser_frontend, custom:<n>)`},
		{"device", minimalWorkload, func(m map[string]any) { delete(m, "device") },
			`field "device": required field is missing. Fix: add "device": "h100-sxm" (a built-in profile) or "device_file": "profile.json"`},
		{"graph field", minimalWorkload, func(m map[string]any) { delete(m["graph"].(map[string]any), "bytes_per_edge") },
			`field "graph.bytes_per_edge": required field is missing. Fix: add graph.bytes_per_edge (an unsigned integer)`},
		{"sample field", minimalWorkload, func(m map[string]any) { m["schedule_sample"].(map[string]any)["readback_bytes"] = nil },
			`field "schedule_sample.readback_bytes": required field is missing. Fix: add the bytes read back per dispatch (0 if none)`},
		{"wave id", minimalWorkload, func(m map[string]any) { delete(wave(m, 1), "id") },
			`field "waves[1].id": required field is missing. Fix: give every wave an id in [0, 2)`},
		{"dependency after", minimalWorkload, func(m map[string]any) { delete(m["dependencies"].([]any)[0].(map[string]any), "after") },
			`field "dependencies[0].after": required field is missing. Fix: give the id of the wave that waits`},
		{"buffer bytes", moduleWorkload, func(m map[string]any) { delete(m["buffers"].([]any)[1].(map[string]any), "bytes") },
			`field "buffers[1].bytes": required field is missing. Fix: give the buffer's size in bytes`},
		{"buffer name", moduleWorkload, func(m map[string]any) { m["buffers"].([]any)[0].(map[string]any)["name"] = "" },
			`field "buffers[0].name": required field is missing. Fix: give the buffer a name that waves' arguments refer to`},
		{"init fill", moduleWorkload, func(m map[string]any) {
			delete(m["buffers"].([]any)[1].(map[string]any)["init"].(map[string]any), "fill")
		},
			`field "buffers[1].init.fill": required field is missing. Fix: give "zeros", "random" or "file"`},
		{"output buffer", moduleWorkload, func(m map[string]any) { delete(m["outputs"].([]any)[0].(map[string]any), "buffer") },
			`field "outputs[0].buffer": required field is missing. Fix: name the buffer to read back`},
		{"kernel tiles", moduleWorkload, func(m map[string]any) { delete(wave(m, 2)["kernel"].(map[string]any), "tiles") },
			`field "waves[2].kernel.tiles": required field is missing. Fix: give the number of tiles (blocks) the wave runs`},
		{"kernel block", moduleWorkload, func(m map[string]any) { delete(wave(m, 0)["kernel"].(map[string]any), "block") },
			`field "waves[0].kernel.block": required field is missing. Fix: give the threads per tile, a multiple of 32 up to 1024`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var m map[string]any
			require.NoError(t, json.Unmarshal([]byte(tc.base), &m))
			tc.edit(m)
			b, err := json.Marshal(m)
			require.NoError(t, err)
			_, err = megakernel.DecodeWorkload("w.json", b)
			require.Error(t, err)
			assert.Equal(t, "w.json: "+tc.want, err.Error())
			var se *strictjson.Error
			require.ErrorAs(t, err, &se)
			assert.Equal(t, "required field is missing", se.Msg)
		})
	}
}
