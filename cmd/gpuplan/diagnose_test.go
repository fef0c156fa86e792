package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/occupancy"
)

func TestDiagnoseCommand(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		out  string
	}{
		{"ok", []string{"--device", "h200", "--kernel", "frontier", "--grid", "132", "--block", "256"}, exitOK,
			"cuda-kernel-capability-v1|kernel=frontier|status=ok|grid=[132, 1, 1]|block=[256, 1, 1]|grid_blocks=132|threads_per_block=256|dynamic_shared_bytes=0\n"},
		{"cooperative exact fits", []string{"--device", "h200", "--kernel", "frontier", "--grid", "264", "--block", "128", "--cooperative", "--regs", "238"}, exitOK,
			"cuda-kernel-capability-v1|kernel=frontier|status=ok|grid=[264, 1, 1]|block=[128, 1, 1]|grid_blocks=264|threads_per_block=128|dynamic_shared_bytes=0|cooperative_resident_block_limit=264\n" +
				"# cooperative_resident_block_limit on h200: exact occupancy model: 2 blocks/SM (limited by registers) x 132 SMs\n"},
		{"cooperative exact exceeded", []string{"--device", "h200", "--kernel", "frontier", "--grid", "265", "--block", "128", "--cooperative", "--regs", "238"}, exitFailure,
			"cuda-kernel-capability-v1|kernel=frontier|status=ok|grid=[265, 1, 1]|block=[128, 1, 1]|grid_blocks=265|threads_per_block=128|dynamic_shared_bytes=0|cooperative_resident_block_limit=264|cooperative_residency=blocked(required=265,limit=264)\n" +
				"# cooperative_resident_block_limit on h200: exact occupancy model: 2 blocks/SM (limited by registers) x 132 SMs\n" +
				"# launch blocked: cooperative_residency(required=265,limit=264) (status=ok covers the capability checks only)\n"},
		{"cooperative vyre bound", []string{"--device", "rtx5090", "--kernel", "frontier", "--grid", "9,2,1", "--block", "128,2,1", "--cooperative"}, exitOK,
			"cuda-kernel-capability-v1|kernel=frontier|status=ok|grid=[9, 2, 1]|block=[128, 2, 1]|grid_blocks=18|threads_per_block=256|dynamic_shared_bytes=0|cooperative_resident_block_limit=1360\n" +
				"# cooperative_resident_block_limit on rtx5090: vyre's thread-only bound (max threads per SM / block x SMs; ignores registers and shared memory; pass --regs for the exact limit)\n"},
		{"blocked five ways", []string{"--device-file", "-", "--kernel", "frontier", "--grid", "1", "--block", "1024", "--dyn", "65536", "--cooperative", "--tensor-cores", "--min-sm", "9.0"}, exitFailure,
			"cuda-kernel-capability-v1|kernel=frontier|status=blocked|fix=sm_version(required=9.0,actual=8.6),threads_per_block(requested=1024,max=512),shared_memory(requested=65536,max=16384),cooperative_launch,tensor_cores|grid=[1, 1, 1]|block=[1024, 1, 1]|grid_blocks=1|threads_per_block=1024|dynamic_shared_bytes=65536|cooperative_resident_block_limit=0|cooperative_residency=blocked(required=1,limit=0)\n" +
				"# cooperative_resident_block_limit on <stdin>: vyre's thread-only bound (max threads per SM / block x SMs; ignores registers and shared memory; pass --regs for the exact limit)\n" +
				"# launch also blocked: block_dim_x(requested=1024,max=512) (launch limits the message's fix= field does not carry)\n"},
		{"opt-in raises the limit", []string{"--device", "h100", "--grid", "1", "--block", "128", "--dyn", "100000", "--opt-in"}, exitOK,
			"cuda-kernel-capability-v1|kernel=kernel|status=ok|grid=[1, 1, 1]|block=[128, 1, 1]|grid_blocks=1|threads_per_block=128|dynamic_shared_bytes=100000\n"},
		{"default limit", []string{"--device", "h100", "--grid", "1", "--block", "128", "--dyn", "100000"}, exitFailure,
			"cuda-kernel-capability-v1|kernel=kernel|status=blocked|fix=shared_memory(requested=100000,max=49152)|grid=[1, 1, 1]|block=[128, 1, 1]|grid_blocks=1|threads_per_block=128|dynamic_shared_bytes=100000\n"},
	}
	// An sm 8.6 part with 512 threads, 16 KiB shared memory, no cooperative launch (tensor cores come from cc 7.0+, so use cc 6.1).
	small := `{"name":"small","cc_major":6,"cc_minor":1,"sm_count":10,"warp_size":32,"max_threads_per_block":512,"max_threads_per_sm":2048,` +
		`"max_blocks_per_sm":32,"registers_per_sm":65536,"registers_per_block":65536,"registers_per_thread":255,"shared_mem_per_sm":65536,` +
		`"shared_mem_per_block":16384,"total_memory_bytes":1073741824,"max_block_dim":[512,512,64]}`
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			stdin := ""
			if strings.Contains(strings.Join(tc.args, " "), "--device-file -") {
				stdin = small
				tc.out = strings.Replace(tc.out, "actual=8.6", "actual=6.1", 1)
			}
			out, errs, code := runCLI(t, stdin, append([]string{"diagnose"}, tc.args...)...)
			assert.Equal(t, tc.code, code, errs)
			assert.Equal(t, tc.out, out)
			if tc.code == exitFailure {
				assert.Contains(t, errs, "blocked")
				assert.Contains(t, errs, "Fix:")
			}
		})
	}
}

func TestDiagnoseCommandJSON(t *testing.T) {
	out, errs, code := runCLI(t, "", "diagnose", "--device", "h200", "--kernel", "frontier", "--grid", "9,2", "--block", "128x2", "--cooperative", "--regs", "255", "--json")
	require.Equal(t, exitOK, code, errs)
	var got diagnoseOutput
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	assert.True(t, got.Launchable)
	assert.Equal(t, uint64(18), got.GridBlocks)
	assert.Equal(t, uint32(256), got.ThreadsPerBlock)
	require.NotNil(t, got.CooperativeResidentBlockLimit)
	assert.Equal(t, uint64(132), *got.CooperativeResidentBlockLimit)
	assert.Empty(t, got.Failures)
	assert.Contains(t, got.Message, "|cooperative_resident_block_limit=132")

	out, _, code = runCLI(t, "", "diagnose", "--device", "h200", "--grid", "1", "--block", "64,32", "--json")
	require.Equal(t, exitFailure, code)
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	assert.False(t, got.Launchable)
	require.Len(t, got.Failures, 1)
	assert.Equal(t, "threads_per_block(requested=2048,max=1024)", got.Failures[0])
}

func TestDiagnoseCommandErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no grid", []string{"--device", "h200", "--block", "128"}, exitUsage, "--grid is required beside --block"},
		{"no block", []string{"--device", "h200", "--grid", "1,65536,1"}, exitUsage, "--block is required beside --grid"},
		{"neither", []string{"--device", "h200"}, exitUsage, "--grid and --block are required"},
		{"bad grid", []string{"--device", "h200", "--grid", "a,b", "--block", "128"}, exitUsage, "not a number"},
		{"zero grid", []string{"--device", "h200", "--grid", "0", "--block", "128"}, exitUsage, "--grid \"0\": dimension 1 is 0"},
		{"zero block dimension", []string{"--device", "h200", "--grid", "1", "--block", "128,0"}, exitUsage, "--block \"128,0\": dimension 2 is 0"},
		{"four dims", []string{"--device", "h200", "--grid", "1,1,1,1", "--block", "128"}, exitUsage, "1 to 3 dimensions"},
		{"bad sm", []string{"--device", "h200", "--grid", "1", "--block", "128", "--min-sm", "nine"}, exitUsage, "--min-sm"},
		{"unknown device", []string{"--device", "nope", "--grid", "1", "--block", "128"}, exitUsage, "known devices"},
		{"block above the axis limits", []string{"--device", "h200", "--grid", "1", "--block", "4294967295,4294967295,2"}, exitUsage, "dimension 1 (x) is above CUDA's limit of 1024 along x"},
		{"negative dyn", []string{"--device", "h200", "--grid", "1", "--block", "128", "--dyn", "-1"}, exitUsage, "--dyn"},
		{"negative regs", []string{"--device", "h200", "--grid", "1", "--block", "128", "--cooperative", "--regs", "-4"}, exitUsage, "registers_per_thread"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, errs, code := runCLI(t, "", append([]string{"diagnose"}, tc.args...)...)
			assert.Equal(t, tc.code, code, errs)
			assert.Contains(t, errs, tc.want)
		})
	}
}

// The repro: status=ok beside cooperative_residency=blocked used to
// exit 1 with "failures": [] and a hint naming a fix= field that the
// message does not have.
func TestDiagnoseVerdictAgreesWithTheMessage(t *testing.T) {
	args := []string{"diagnose", "--device", "h200", "--kernel", "frontier", "--grid", "265", "--block", "128", "--cooperative", "--regs", "238"}
	out, errs, code := runCLI(t, "", append(args, "--json")...)
	require.Equal(t, exitFailure, code)
	var got diagnoseOutput
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	assert.False(t, got.Launchable)
	assert.Equal(t, "ok", got.CapabilityStatus)
	assert.Equal(t, []string{"cooperative_residency(required=265,limit=264)"}, got.Failures)
	assert.Contains(t, errs, "blocked by cooperative_residency(required=265,limit=264) (see the message's cooperative_residency= field)")
	assert.Contains(t, errs, "Fix: launch at most 264 blocks")
	assert.NotContains(t, errs, "fix=")

	_, errs, code = runCLI(t, "", "diagnose", "--device", "h100", "--grid", "1", "--block", "128", "--dyn", "100000", "--json")
	require.Equal(t, exitFailure, code)
	assert.Contains(t, errs, "blocked by shared_memory(requested=100000,max=49152) (see the message's fix= field)")
	assert.NotContains(t, errs, "cooperative_residency")

	out, _, code = runCLI(t, "", "diagnose", "--device", "h200", "--grid", "264", "--block", "128", "--cooperative", "--regs", "238", "--json")
	require.Equal(t, exitOK, code)
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	assert.True(t, got.Launchable)
	assert.Equal(t, []string{}, got.Failures)
}

// TestDiagnoseLaunchLimits checks the limits the driver enforces at
// launch: CUDA's per-axis grid and block limits and malformed dimensions
// are usage errors naming the flag and the position; the device's own
// limits (dimensions, launch bounds, registers, static plus dynamic shared
// memory) block the launch with exit status 1.
func TestDiagnoseLaunchLimits(t *testing.T) {
	tests := []struct {
		name   string
		device string // fields of the h200 profile to replace, as JSON
		args   []string
		code   int
		want   []string
	}{
		{"grid y above 65535", "", []string{"--grid", "1,65536,1", "--block", "128"}, exitUsage, []string{`--grid "1,65536,1": dimension 2 (y) is above CUDA's limit of 65535 along y`}},
		{"grid z above 65535", "", []string{"--grid", "1,1,65536", "--block", "128"}, exitUsage, []string{"dimension 3 (z) is above CUDA's limit of 65535 along z"}},
		{"grid x above 2^31-1", "", []string{"--grid", "2147483648", "--block", "128"}, exitUsage, []string{"dimension 1 (x) is above CUDA's limit of 2147483647 along x"}},
		{"grid x beyond 64 bits", "", []string{"--grid", "99999999999999999999999", "--block", "128"}, exitUsage, []string{"dimension 1 (x) is above CUDA's limit of 2147483647"}},
		{"block z above 64", "", []string{"--grid", "1", "--block", "1,1,65"}, exitUsage, []string{`--block "1,1,65": dimension 3 (z) is above CUDA's limit of 64 along z`}},
		{"block x above 1024", "", []string{"--grid", "1", "--block", "1025"}, exitUsage, []string{"dimension 1 (x) is above CUDA's limit of 1024 along x"}},
		{"block y above 1024", "", []string{"--grid", "1", "--block", "1x1025"}, exitUsage, []string{"dimension 2 (y) is above CUDA's limit of 1024 along y"}},
		{"empty middle dimension", "", []string{"--grid", "1,,5", "--block", "128"}, exitUsage, []string{`--grid "1,,5": dimension 2 (y) is empty`}},
		{"empty grid", "", []string{"--grid", "", "--block", "128"}, exitUsage, []string{`--grid "": dimension 1 (x) is empty`}},
		{"lone comma", "", []string{"--grid", "1", "--block", ","}, exitUsage, []string{`--block ",": dimension 1 (x) is empty`}},
		{"trailing comma", "", []string{"--grid", "4,", "--block", "128"}, exitUsage, []string{`--grid "4,": dimension 2 (y) is empty`}},
		{"not a number", "", []string{"--grid", "1,two", "--block", "128"}, exitUsage, []string{`--grid "1,two": dimension 2 (y) is not a number`}},
		{"negative", "", []string{"--grid", "-3", "--block", "128"}, exitUsage, []string{"dimension 1 (x) is not a number"}},
		{"registers above 255", "", []string{"--grid", "1", "--block", "128", "--regs", "300"}, exitUsage, []string{"--regs (registers_per_thread) 300 is above 255"}},
		{"largest grid and block", "", []string{"--grid", "2147483647,65535,65535", "--block", "1,1,64"}, exitOK, nil},
		{"registers per block", "", []string{"--grid", "1", "--block", "512", "--regs", "255"}, exitFailure,
			[]string{"registers_per_block(requested=131072,max=65536)", "# launch blocked: registers_per_block(requested=131072,max=65536) (status=ok covers the capability checks only)"}},
		{"registers that fit", "", []string{"--grid", "1", "--block", "256", "--regs", "255"}, exitOK, nil},
		{"launch bounds", "", []string{"--grid", "1", "--block", "512", "--max-threads", "256"}, exitFailure, []string{"launch_bounds(requested=512,max=256)"}},
		{"static plus dynamic shared memory", "", []string{"--grid", "1", "--block", "128", "--smem", "40000", "--dyn", "10000"}, exitFailure,
			[]string{"shared_memory_total(requested=50000,max=49152)"}},
		{"static plus dynamic opted in", "", []string{"--grid", "1", "--block", "128", "--smem", "40000", "--dyn", "10000", "--opt-in"}, exitOK, nil},
		{"device grid limit", `{"max_grid_dim":[65535,65535,65535]}`, []string{"--grid", "70000", "--block", "128"}, exitFailure,
			[]string{"grid_dim_x(requested=70000,max=65535)"}},
		{"device register limit", `{"registers_per_thread":63}`, []string{"--grid", "1", "--block", "128", "--regs", "100"}, exitFailure,
			[]string{"registers_per_thread(requested=100,max=63)"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"diagnose", "--device", "h200"}, tc.args...)
			stdin := ""
			if tc.device != "" {
				stdin = h200With(t, tc.device)
				args = append([]string{"diagnose", "--device-file", "-"}, tc.args...)
			}
			out, errs, code := runCLI(t, stdin, args...)
			require.Equal(t, tc.code, code, "stdout: %s\nstderr: %s", out, errs)
			for _, w := range tc.want {
				assert.Contains(t, out+errs, w)
			}
			if code != exitOK {
				assert.Contains(t, errs, "Fix:")
				assert.NotContains(t, out, "status=ok\n", "a refused launch never ends at status=ok")
			}
		})
	}
}

// h200With is the h200 profile as JSON with the fields of the JSON object
// fields replaced.
func h200With(t *testing.T, fields string) string {
	d, err := occupancy.Lookup("h200")
	require.NoError(t, err)
	b, err := json.Marshal(d)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	require.NoError(t, json.Unmarshal([]byte(fields), &m))
	b, err = json.Marshal(m)
	require.NoError(t, err)
	return string(b)
}
