package occupancy

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gpuplan/gpuplan/internal/strictjson"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every built-in profile's document reads back as the same device.
func TestProfileDocumentRoundTrip(t *testing.T) {
	for _, p := range Profiles() {
		for _, compare := range []bool{false, true} {
			doc := NewProfileDocument(p.Short, p.Device, compare)
			assert.Equal(t, ProfileSchema, doc.Schema)
			b, err := json.Marshal(doc)
			require.NoError(t, err)
			d, err := LoadDeviceJSON(p.Short+".json", b)
			require.NoError(t, err, p.Short)
			if len(p.Device.SharedMemCarveoutsKiB) == 0 {
				d.SharedMemCarveoutsKiB = p.Device.SharedMemCarveoutsKiB
			}
			assert.Equal(t, p.Device, d, p.Short)
			if compare {
				c := Closest(p.Device)
				assert.Equal(t, c.Short, doc.Closest)
				assert.Equal(t, len(Diff(c.Device, p.Device)), len(doc.DiffFromClosest))
				assert.NotNil(t, doc.DiffFromClosest, "an empty list, not null")
			} else {
				assert.Empty(t, doc.Closest)
			}
		}
	}
}

func TestProfileDocumentErrors(t *testing.T) {
	h200 := mustLookup(t, "h200")
	doc := func(edit func(m map[string]any)) string {
		b, _ := json.Marshal(NewProfileDocument("h200", h200, true))
		var m map[string]any
		require.NoError(t, json.Unmarshal(b, &m))
		edit(m)
		b, _ = json.Marshal(m)
		return string(b)
	}
	tests := []struct {
		name, input, field, want string
	}{
		{"future version", doc(func(m map[string]any) { m["schema"] = "gpuplan.device-profile/v2" }), "schema", `version "gpuplan.device-profile/v2" is not one this build reads`},
		{"other schema", doc(func(m map[string]any) { m["schema"] = "something" }), "schema", "is not a gpuplan device profile schema"},
		{"no device", doc(func(m map[string]any) { delete(m, "device") }), "device", "required field is missing"},
		{"null device", doc(func(m map[string]any) { m["device"] = nil }), "device", "required field is missing"},
		{"device field", doc(func(m map[string]any) { m["device"].(map[string]any)["sm_count"] = 0 }), "device.sm_count", "a device has at least one SM"},
		{"device missing field", doc(func(m map[string]any) { delete(m["device"].(map[string]any), "warp_size") }), "device.warp_size", "required field is missing"},
		{"device unknown field", doc(func(m map[string]any) { m["device"].(map[string]any)["tflops"] = 1 }), "device.tflops", "unknown field"},
		{"device not an object", doc(func(m map[string]any) { m["device"] = 7 }), "device", "cannot use JSON number"},
		{"stale bandwidth", doc(func(m map[string]any) { m["bandwidth_bytes_per_sec"] = 1 }), "bandwidth_bytes_per_sec", "is 1, but the device's memory clock and bus width give 4814"},
		{"unknown field", doc(func(m map[string]any) { m["extra"] = true }), "extra", "unknown field"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadDeviceJSON("p.json", []byte(tc.input))
			require.Error(t, err)
			var se *strictjson.Error
			require.True(t, errors.As(err, &se), "%T", err)
			assert.Equal(t, tc.field, se.Field, err.Error())
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), "Fix:")
		})
	}
	// The informational fields are not checked: an edited device with the
	// old comparison still loads.
	edited := doc(func(m map[string]any) {
		m["device"].(map[string]any)["name"] = "My H200"
		m["source"] = "anything"
	})
	d, err := LoadDeviceJSON("p.json", []byte(edited))
	require.NoError(t, err)
	assert.Equal(t, "My H200", d.Name)
	// Trailing data after a document is refused, as after a device.
	_, err = LoadDeviceJSON("p.json", []byte(edited+" {}"))
	require.ErrorContains(t, err, "trailing data")
}

func ExampleNewProfileDocument() {
	d, _ := Lookup("h200")
	b, _ := json.MarshalIndent(NewProfileDocument("h200", d, false), "", "  ")
	fmt.Println(strings.Join(strings.Split(string(b), "\n")[:5], "\n"))
	back, err := LoadDeviceJSON("h200.json", b)
	fmt.Println(back.Name, back.SMCount, err)
	// Output:
	// {
	//   "schema": "gpuplan.device-profile/v1",
	//   "source": "h200",
	//   "device": {
	//     "name": "NVIDIA H200",
	// NVIDIA H200 132 <nil>
}
