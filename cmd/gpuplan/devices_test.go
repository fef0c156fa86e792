package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuplan/gpuplan/occupancy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDevicesTable(t *testing.T) {
	out, errs, code := runCLI(t, "", "devices")
	require.Equal(t, exitOK, code, errs)
	lines := strings.Split(out, "\n")
	assert.True(t, strings.HasPrefix(lines[0], "SHORT"))
	assert.Contains(t, lines[0], "BW GB/s")
	for _, p := range occupancy.Profiles() {
		assert.Contains(t, out, p.Short)
		assert.Contains(t, out, p.Device.Name)
	}
	assert.Contains(t, out, "h200             NVIDIA H200               9.0   132        2048         32          228         227      60       139.8      6016     4814")
	assert.Contains(t, out, "rtx5090: vyre's synthetic")
}

func TestDevicesJSON(t *testing.T) {
	out, errs, code := runCLI(t, "", "devices", "--json")
	require.Equal(t, exitOK, code, errs)
	var rows []deviceRow
	require.NoError(t, json.Unmarshal([]byte(out), &rows))
	require.Len(t, rows, len(occupancy.Profiles()))
	for i, p := range occupancy.Profiles() {
		assert.Equal(t, p.Short, rows[i].Short)
		assert.Equal(t, p.Device, rows[i].Device)
		assert.Equal(t, p.Device.BandwidthBytesPerSec(), rows[i].BandwidthBytesPerSec)
	}
}

func TestDevicesShowOne(t *testing.T) {
	out, errs, code := runCLI(t, "", "devices", "--device", "h100-pcie")
	require.Equal(t, exitOK, code, errs)
	assert.Contains(t, out, "name                                    NVIDIA H100 PCIe")
	assert.Contains(t, out, "SMs                                     114")
	assert.Contains(t, out, "bandwidth estimate                      2039.0 GB/s")
	assert.NotContains(t, out, "closest")

	// A custom profile is compared with its closest built-in profile.
	d, _ := occupancy.Lookup("h100-sxm")
	d.Name = "My H100"
	d.TotalMemoryBytes = 80 << 30
	b, _ := json.Marshal(d)
	path := filepath.Join(t.TempDir(), "mine.json")
	require.NoError(t, os.WriteFile(path, b, 0o600))
	out, errs, code = runCLI(t, "", "devices", "--device-file", path)
	require.Equal(t, exitOK, code, errs)
	assert.Contains(t, out, "closest built-in profile: h100-sxm (2 fields differ)")
	assert.Contains(t, out, "total_memory_bytes")

	out, errs, code = runCLI(t, string(b), "devices", "--device-file", "-", "--json")
	require.Equal(t, exitOK, code, errs)
	var det occupancy.ProfileDocument
	require.NoError(t, json.Unmarshal([]byte(out), &det))
	assert.Equal(t, occupancy.ProfileSchema, det.Schema)
	assert.Equal(t, "h100-sxm", det.Closest)
	assert.Len(t, det.DiffFromClosest, 2)
	assert.Equal(t, d, det.Device)
}

// A custom profile's table lists the optional fields it leaves out with
// the defaults they got; a complete one lists none.
func TestDevicesShowDefaults(t *testing.T) {
	d, _ := occupancy.Lookup("h100-sxm")
	complete, _ := json.Marshal(d)
	var m map[string]any
	require.NoError(t, json.Unmarshal(complete, &m))
	delete(m, "memory_clock_khz")
	m["async_engines"] = nil
	partial, _ := json.Marshal(m)
	tests := []struct {
		name    string
		profile []byte
		want    []string
		not     []string
	}{
		{"complete", complete, []string{"bandwidth estimate                      3352.3 GB/s"}, []string{"defaults of"}},
		{"clock and engines left out", partial, []string{
			"defaults of the 2 fields the profile leaves out:",
			"memory_clock_khz  0  unknown: no bandwidth estimate",
			"async_engines     0  no copy engine counted",
			"bandwidth estimate                      unknown (memory bus width or clock is 0)",
		}, []string{"GB/s"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, errs, code := runCLI(t, string(tc.profile), "devices", "--device-file", "-")
			require.Equal(t, exitOK, code, errs)
			for _, w := range tc.want {
				assert.Contains(t, out, w)
			}
			for _, n := range tc.not {
				assert.NotContains(t, out, n)
			}
		})
	}
}

// What devices --json writes, --device-file reads: the same device, and
// identical to its built-in profile; so do the commands that plan against a
// profile file.
func TestDevicesProfileRoundTrip(t *testing.T) {
	for _, p := range occupancy.Profiles() {
		doc, errs, code := runCLI(t, "", "devices", "--device", p.Short, "--json")
		require.Equal(t, exitOK, code, errs)
		out, errs, code := runCLI(t, doc, "devices", "--device-file", "-", "--json")
		require.Equal(t, exitOK, code, errs)
		var back occupancy.ProfileDocument
		require.NoError(t, json.Unmarshal([]byte(out), &back))
		assert.Equal(t, "<stdin>", back.Source)
		assert.Equal(t, p.Device.Name, back.Device.Name, p.Short)
		assert.Equal(t, p.Device.SMCount, back.Device.SMCount, p.Short)
		c := occupancy.Closest(p.Device)
		assert.Equal(t, c.Short, back.Closest, p.Short)
		// And the round trip is a fixed point: writing what was read gives
		// the same document.
		again, errs, code := runCLI(t, out, "devices", "--device-file", "-", "--json")
		require.Equal(t, exitOK, code, errs)
		assert.Equal(t, out, again, p.Short)
	}
	doc, _, _ := runCLI(t, "", "devices", "--device", "h200", "--json")
	out, errs, code := runCLI(t, doc, "devices", "--device-file", "-")
	require.Equal(t, exitOK, code, errs)
	assert.Contains(t, out, "closest built-in profile: h200 (identical)")

	path := filepath.Join(t.TempDir(), "h200.json")
	require.NoError(t, os.WriteFile(path, []byte(doc), 0o600))
	byName, errs, code := runCLI(t, "", "occupancy", "--device", "h200", "--regs", "238", "--block", "128")
	require.Equal(t, exitOK, code, errs)
	byFile, errs, code := runCLI(t, "", "occupancy", "--device-file", path, "--regs", "238", "--block", "128")
	require.Equal(t, exitOK, code, errs)
	assert.Equal(t, strings.Replace(byName, "(h200)", "("+path+")", 1), byFile)
}

func TestDevicesErrors(t *testing.T) {
	tests := []struct {
		name  string
		stdin string
		args  []string
		code  int
		want  []string
	}{
		{"unknown", "", []string{"--device", "k80"}, exitUsage, []string{`unknown device "k80"`, "v100", "b200"}},
		{"probe without cuda", "", []string{"--probe"}, exitFailure, []string{"built without CUDA support", "Fix: build with `make build-cuda`"}},
		{"probe and device", "", []string{"--probe", "--device", "h200"}, exitUsage, []string{"cannot be combined"}},
		{"invalid profile", `{"name":"x","cc_major":9,"cc_minor":0,"sm_count":132,"warp_size":64}`, []string{"--device-file", "-"}, exitFailure, []string{"required field is missing"}},
		{"impossible profile", "", nil, exitFailure, []string{`field "shared_mem_per_block"`, "Fix:"}},
		{"trailing data", "", nil, exitFailure, []string{"trailing data"}},
		{"future schema", `{"schema":"gpuplan.device-profile/v9","device":{}}`, []string{"--device-file", "-"}, exitFailure, []string{`field "schema"`, "is not one this build reads", "Fix:"}},
		{"field inside the document", `{"schema":"gpuplan.device-profile/v1","device":{"name":"x"}}`, []string{"--device-file", "-"}, exitFailure, []string{`field "device.cc_major"`, "required field is missing"}},
		{"extra argument", "", []string{"h200"}, exitUsage, []string{"unexpected argument"}},
	}
	d, _ := occupancy.Lookup("h200")
	d.SharedMemPerBlock = d.SharedMemPerSM + 1
	impossible, _ := json.Marshal(d)
	d, _ = occupancy.Lookup("h200")
	valid, _ := json.Marshal(d)
	tests[4].stdin, tests[4].args = string(impossible), []string{"--device-file", "-"}
	tests[5].stdin, tests[5].args = string(valid)+"\n{}", []string{"--device-file", "-"}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "probe without cuda" && buildHasCUDA {
				t.Skip("the CUDA build probes; its errors are checked by TestLazyLinkNeedsNoLibcuda")
			}
			_, errs, code := runCLI(t, tc.stdin, append([]string{"devices"}, tc.args...)...)
			assert.Equal(t, tc.code, code, errs)
			for _, w := range tc.want {
				assert.Contains(t, errs, w)
			}
		})
	}
}

// The devices table prints the limits every profile shares in one footnote
// instead of columns; this keeps the footnote true as profiles are added.
func TestDevicesFootnoteHoldsForEveryProfile(t *testing.T) {
	out, _, code := runCLI(t, "", "devices")
	require.Equal(t, exitOK, code)
	require.Contains(t, out, "All profiles: warp 32, 1024 threads per block, 65,536 registers per SM and per block, 255 per thread.")
	for _, p := range occupancy.Profiles() {
		d := p.Device
		assert.Equal(t, []int{32, 1024, 65536, 65536, 255},
			[]int{d.WarpSize, d.MaxThreadsPerBlock, d.RegistersPerSM, d.RegistersPerBlock, d.RegistersPerThread}, p.Short)
	}
}
