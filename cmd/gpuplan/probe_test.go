package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuplan/gpuplan/occupancy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFormatGPUUUID(t *testing.T) {
	tests := []struct {
		name string
		in   [16]byte
		want string
	}{
		{"zero", [16]byte{}, "GPU-00000000-0000-0000-0000-000000000000"},
		{"counting", [16]byte{0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10},
			"GPU-01234567-89ab-cdef-fedc-ba9876543210"},
		{"all ones", [16]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
			"GPU-ffffffff-ffff-ffff-ffff-ffffffffffff"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, formatGPUUUID(tc.in))
		})
	}
}

func TestFormatDriverVersion(t *testing.T) {
	tests := []struct {
		in   int
		want string
	}{
		{11080, "11.8"},
		{12020, "12.2"},
		{12090, "12.9"},
		{13000, "13.0"},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, formatDriverVersion(tc.in), "%d", tc.in)
	}
}

// fakeProbe is a machine with an H100 SXM as reported by its profile and
// an H200 whose driver reports a smaller L2, as GPUs 0 and 1.
func fakeProbe(t *testing.T) probeResult {
	t.Helper()
	h100, err := occupancy.Lookup("h100-sxm")
	require.NoError(t, err)
	h200, err := occupancy.Lookup("h200")
	require.NoError(t, err)
	h200.Ordinal = 1
	h200.L2Bytes = 40 << 20
	return probeResult{DriverVersion: 12020, KernelModule: "535.104.05", GPUs: []probedGPU{
		{Ordinal: 0, UUID: [16]byte{0xde, 0xad, 0xbe, 0xef}, PCIBusID: "00000000:18:00.0", Device: h100, PTXTarget: 90, FreeMemoryBytes: 80 << 30},
		{Ordinal: 1, UUID: [16]byte{15: 0x01}, PCIBusID: "00000000:2A:00.0", Device: h200, PTXTarget: 90, FreeMemoryBytes: 100 << 30},
	}}
}

func TestBuildProbeReport(t *testing.T) {
	rep := buildProbeReport(fakeProbe(t))
	assert.Equal(t, probeSchema, rep.Schema)
	assert.Equal(t, "12.2", rep.DriverVersion)
	assert.Equal(t, 12020, rep.DriverVersionNumber)
	require.Len(t, rep.GPUs, 2)
	tests := []struct {
		ordinal int
		uuid    string
		bus     string
		closest string
		diff    []occupancy.FieldDiff
	}{
		{0, "GPU-deadbeef-0000-0000-0000-000000000000", "00000000:18:00.0", "h100-sxm", []occupancy.FieldDiff{}},
		{1, "GPU-00000000-0000-0000-0000-000000000001", "00000000:2A:00.0", "h200",
			[]occupancy.FieldDiff{{Field: "l2_bytes", A: "62914560", B: "41943040"}}},
	}
	for i, tc := range tests {
		g := rep.GPUs[i]
		assert.Equal(t, tc.ordinal, g.Ordinal)
		assert.Equal(t, tc.uuid, g.UUID)
		assert.Equal(t, tc.bus, g.PCIBusID)
		assert.Equal(t, "9.0", g.ComputeCapability)
		assert.Equal(t, tc.closest, g.Profile.Closest)
		assert.Equal(t, tc.diff, g.Profile.DiffFromClosest)
		assert.Equal(t, occupancy.ProfileSchema, g.Profile.Schema)
		assert.Zero(t, g.Profile.Device.Ordinal, "a profile describes the GPU, not where it sits")
		assert.Contains(t, g.Profile.Source, tc.uuid)
	}
}

func TestProbeText(t *testing.T) {
	var out bytes.Buffer
	e := &env{stdout: &out, stderr: &out}
	require.NoError(t, runProbe(e, probeOptions{}, fakeProbe(t)))
	text := out.String()
	for _, want := range []string{
		"driver: NVIDIA 535.104.05, CUDA 12.2 (cuDriverGetVersion 12020), 2 GPU(s)",
		"GPU 0: NVIDIA H100 80GB HBM3",
		"  uuid                      GPU-deadbeef-0000-0000-0000-000000000000",
		"  PCI bus id                00000000:18:00.0",
		"  compute capability        9.0 (PTX target sm_90)",
		"  closest built-in profile  h100-sxm (identical)",
		"GPU 1: NVIDIA H200",
		"  closest built-in profile  h200 (1 fields differ)",
		"    FIELD     H200      LIVE",
		"    l2_bytes  62914560  41943040",
	} {
		assert.Contains(t, text, want)
	}
	assert.NotContains(t, text, "wrote")
}

func TestProbeJSON(t *testing.T) {
	var out bytes.Buffer
	e := &env{stdout: &out, stderr: &out}
	require.NoError(t, runProbe(e, probeOptions{json: true}, fakeProbe(t)))
	var want bytes.Buffer
	require.NoError(t, writeJSON(&want, buildProbeReport(fakeProbe(t))))
	assert.Equal(t, want.String(), out.String())
	var doc map[string]any
	require.NoError(t, json.Unmarshal(out.Bytes(), &doc))
	assert.Equal(t, "gpuplan.device-probe/v1", doc["schema"])
	assert.Equal(t, "12.2", doc["driver_version"])
	assert.Len(t, doc["gpus"], 2)
	assert.NotContains(t, doc, "profile_file")
}

// -o writes the profile of GPU --ordinal, and every reader of a device
// profile takes it back.
func TestProbeWritesProfile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "live.json")
	var out bytes.Buffer
	e := &env{stdout: &out, stderr: &out}
	require.NoError(t, runProbe(e, probeOptions{json: true, out: path, ordinal: 1}, fakeProbe(t)))
	var rep probeReport
	require.NoError(t, json.Unmarshal(out.Bytes(), &rep))
	assert.Equal(t, path, rep.ProfileFile)
	require.NotNil(t, rep.ProfileOrdinal)
	assert.Equal(t, 1, *rep.ProfileOrdinal)

	data, err := os.ReadFile(path)
	require.NoError(t, err)
	d, err := occupancy.LoadDeviceJSON(path, data)
	require.NoError(t, err)
	want := fakeProbe(t).GPUs[1].Device
	want.Ordinal = 0
	assert.Equal(t, want, d)

	text, errs, code := runCLI(t, "", "devices", "--device-file", path)
	require.Equal(t, exitOK, code, errs)
	assert.Contains(t, text, "closest built-in profile: h200 (1 fields differ)")
	_, errs, code = runCLI(t, "", "occupancy", "--device-file", path, "--regs", "64", "--block", "256")
	assert.Equal(t, exitOK, code, errs)

	out.Reset()
	require.NoError(t, runProbe(e, probeOptions{out: path}, fakeProbe(t)))
	assert.Contains(t, out.String(), "wrote GPU 0's profile to "+path+" (read it with --device-file "+path+")")
}

func TestProbeErrors(t *testing.T) {
	invalid := fakeProbe(t)
	invalid.GPUs[0].Device.SharedMemPerBlock = invalid.GPUs[0].Device.SharedMemPerSM + 1
	dir := t.TempDir()
	tests := []struct {
		name string
		r    probeResult
		o    probeOptions
		want []string
	}{
		{"no GPU", probeResult{DriverVersion: 12020}, probeOptions{}, []string{"lists no GPU", "Fix: check nvidia-smi"}},
		{"ordinal out of range", fakeProbe(t), probeOptions{out: filepath.Join(dir, "a.json"), ordinal: 2},
			[]string{"--ordinal 2: this machine has 2 GPU(s), ordinals 0 to 1", "Fix:"}},
		{"impossible profile", invalid, probeOptions{out: filepath.Join(dir, "b.json")},
			[]string{"does not pass the profile checks", "shared_mem_per_block", "Fix: save the report with --json"}},
		{"missing folder", fakeProbe(t), probeOptions{out: filepath.Join(dir, "no", "c.json")},
			[]string{"-o: ", "Fix: check that the folder exists and is writable"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			err := runProbe(&env{stdout: &out, stderr: &out}, tc.o, tc.r)
			require.Error(t, err)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
			assert.Empty(t, out.String(), "nothing is printed on failure")
			if tc.o.out != "" {
				assert.NoFileExists(t, tc.o.out)
			}
		})
	}
}

// The probe's flags are checked before any driver call, in every build.
func TestProbeFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"-o without --probe", []string{"-o", "x.json"}, "need --probe"},
		{"--ordinal without --probe", []string{"--ordinal", "1"}, "need --probe"},
		{"--ordinal without -o", []string{"--probe", "--ordinal", "1"}, "Fix: add -o FILE"},
		{"negative ordinal", []string{"--probe", "-o", "x.json", "--ordinal", "-1"}, "--ordinal -1 is negative"},
		{"empty file name", []string{"--probe", "-o", ""}, "-o needs a file name"},
		{"probe and device", []string{"--probe", "--device", "h200", "-o", "x.json"}, "cannot be combined"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, errs, code := runCLI(t, "", append([]string{"devices"}, tc.args...)...)
			assert.Equal(t, exitUsage, code, errs)
			assert.Empty(t, out)
			assert.Contains(t, errs, tc.want)
			assert.Equal(t, 1, strings.Count(errs, "Fix:"), errs)
		})
	}
}

// TestProbeDriverLine: the driver line names the NVIDIA kernel module when
// the machine gives its version, and only the CUDA version otherwise.
func TestProbeDriverLine(t *testing.T) {
	for _, tc := range []struct{ module, want string }{
		{"580.159.04", "driver: NVIDIA 580.159.04, CUDA 12.2 (cuDriverGetVersion 12020), 2 GPU(s)\n"},
		{"", "driver: CUDA 12.2 (cuDriverGetVersion 12020), 2 GPU(s)\n"},
	} {
		r := fakeProbe(t)
		r.KernelModule = tc.module
		var out bytes.Buffer
		require.NoError(t, writeProbeText(&out, buildProbeReport(r)))
		first, _, _ := strings.Cut(out.String(), "GPU 0")
		assert.Equal(t, tc.want+"\n", first, tc.module)
	}
}
