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

func TestOccupancyCommandOne(t *testing.T) {
	out, errs, code := runCLI(t, "", "occupancy", "--device", "h200", "--regs", "10", "--dyn", "20000", "--block", "96")
	require.Equal(t, exitOK, code, errs)
	assert.Equal(t, `device:      NVIDIA H200 (h200), cc 9.0, 132 SMs
kernel:      10 registers/thread, 0 B static + 20000 B dynamic shared memory
block:       96 threads (3 warps)
active:      11 blocks/SM, 33 warps/SM, 1056 threads/SM
occupancy:   51.6% (33 of 64 warps), limited by shared-memory
limits:      warps 21, blocks 32, registers 42, shared-memory 11 (blocks per SM)
registers:   512 per warp allocated
shared mem:  21120 B allocated per block (per-block limit 50176 B), 233472 B configured per SM
co-resident: 1452 blocks (11 per SM x 132 SMs)
`, out)
}

func TestOccupancyCommandWorkedChecksJSON(t *testing.T) {
	tests := []struct {
		args   []string
		blocks int
		limit  string
	}{
		{[]string{"--regs", "10", "--block", "96"}, 21, "warps"},
		{[]string{"--regs", "10", "--dyn", "20000", "--block", "96"}, 11, "shared-memory"},
		{[]string{"--regs", "238", "--block", "128"}, 2, "registers"},
		{[]string{"--regs", "255", "--block", "1024"}, 0, "registers"},
		{[]string{"--regs", "0", "--dyn", "60000", "--block", "128"}, 0, "shared-memory"},
		{[]string{"--regs", "0", "--dyn", "60000", "--opt-in", "--block", "128"}, 3, "shared-memory"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			out, errs, code := runCLI(t, "", append([]string{"occupancy", "--device", "H200", "--json"}, tc.args...)...)
			require.Equal(t, exitOK, code, errs)
			var got struct {
				Device string `json:"device"`
				Result struct {
					Blocks int    `json:"active_blocks_per_sm"`
					Limit  string `json:"limit"`
				} `json:"result"`
				Grid int `json:"co_resident_grid"`
			}
			require.NoError(t, json.Unmarshal([]byte(out), &got))
			assert.Equal(t, "h200", got.Device)
			assert.Equal(t, tc.blocks, got.Result.Blocks)
			assert.Equal(t, tc.limit, got.Result.Limit)
			assert.Equal(t, tc.blocks*132, got.Grid)
		})
	}
}

func TestOccupancyCommandCannotRun(t *testing.T) {
	out, errs, code := runCLI(t, "", "occupancy", "--device", "h100", "--regs", "255", "--block", "1024")
	require.Equal(t, exitOK, code, errs)
	assert.Contains(t, out, "cannot run: 0 blocks per SM, limited by registers")
}

func TestOccupancyCommandSweep(t *testing.T) {
	out, errs, code := runCLI(t, "", "occupancy", "--device", "h200", "--regs", "64", "--sweep")
	require.Equal(t, exitOK, code, errs)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 3+1+32+2)
	assert.Equal(t, "BLOCK  WARPS  BLOCKS/SM  WARPS/SM  OCCUPANCY  LIMIT             GRID", lines[3])
	assert.Equal(t, "   32      1         32        32      50.0%  blocks            4224", lines[4])
	assert.Equal(t, "  256      8          4        32      50.0%  registers          528", lines[11])
	assert.Equal(t, " 1024     32          1        32      50.0%  registers          132  <- best", lines[35])
	assert.Equal(t, 1, strings.Count(out, "<- best"))
	assert.Equal(t, "best: block 1024, occupancy 50.0%; driver's choice (max potential block size): block 1024, min grid 132", lines[37])

	out, errs, code = runCLI(t, "", "occupancy", "--device", "h200", "--regs", "64", "--sweep", "--json")
	require.Equal(t, exitOK, code, errs)
	var sw struct {
		Rows []occupancy.Result `json:"rows"`
		Best int                `json:"best_block_size"`
		MPBS int                `json:"max_potential_block_size"`
		Grid int                `json:"min_grid_size"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &sw))
	require.Len(t, sw.Rows, 32)
	assert.Equal(t, 1024, sw.Best)
	assert.Equal(t, 1024, sw.MPBS)
	assert.Equal(t, 132, sw.Grid)
	for i, r := range sw.Rows {
		assert.Equal(t, 32*(i+1), r.BlockSize)
	}

	// Nothing runs: no best.
	out, _, code = runCLI(t, "", "occupancy", "--device", "h200", "--regs", "32", "--dyn", "60000", "--sweep")
	require.Equal(t, exitOK, code)
	assert.Contains(t, out, "no block size can run")
	assert.NotContains(t, out, "<- best")
}

func TestOccupancyCommandDeviceFile(t *testing.T) {
	d, err := occupancy.Lookup("h200")
	require.NoError(t, err)
	b, err := json.Marshal(d)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "h200.json")
	require.NoError(t, os.WriteFile(path, b, 0o600))
	out, errs, code := runCLI(t, "", "occupancy", "--device-file", path, "--regs", "238", "--block", "128")
	require.Equal(t, exitOK, code, errs)
	assert.Contains(t, out, "active:      2 blocks/SM")
	out, errs, code = runCLI(t, string(b), "occupancy", "--device-file", "-", "--regs", "238", "--block", "128")
	require.Equal(t, exitOK, code, errs)
	assert.Contains(t, out, "2 blocks/SM")
}

func TestOccupancyCommandErrors(t *testing.T) {
	tests := []struct {
		name   string
		stdin  string
		args   []string
		code   int
		stderr []string
	}{
		{"unknown device", "", []string{"--device", "gtx480", "--regs", "32", "--block", "128"}, exitUsage,
			[]string{`unknown device "gtx480"`, "h100-sxm", "h200", "rtx5090", "Fix:"}},
		{"no device", "", []string{"--regs", "32", "--block", "128"}, exitUsage, []string{"missing --device", "h200"}},
		{"both devices", "", []string{"--device", "h200", "--device-file", "x.json", "--regs", "32", "--block", "128"}, exitUsage, []string{"not both"}},
		{"no regs", "", []string{"--device", "h200", "--block", "128"}, exitUsage, []string{"missing --regs"}},
		{"block and sweep", "", []string{"--device", "h200", "--regs", "1", "--block", "128", "--sweep"}, exitUsage, []string{"exactly one of --block"}},
		{"neither block nor sweep", "", []string{"--device", "h200", "--regs", "1"}, exitUsage, []string{"exactly one of --block"}},
		{"bad flag value", "", []string{"--device", "h200", "--regs", "x", "--block", "128"}, exitUsage, []string{"invalid value"}},
		{"block 0", "", []string{"--device", "h200", "--regs", "1", "--block", "0"}, exitUsage, []string{"block_size", "Fix:"}},
		{"negative regs", "", []string{"--device", "h200", "--regs", "-1", "--block", "32"}, exitUsage, []string{"registers_per_thread", "Fix:"}},
		{"negative dyn", "", []string{"--device", "h200", "--regs", "1", "--dyn", "-5", "--sweep"}, exitUsage, []string{"dynamic_shared_bytes", "Fix:"}},
		{"bad carveout", "", []string{"--device", "h200", "--regs", "1", "--carveout", "150", "--block", "32"}, exitUsage, []string{"carveout_percent"}},
		{"missing file", "", []string{"--device-file", "/nonexistent/x.json", "--regs", "1", "--block", "32"}, exitFailure, []string{"Fix:"}},
		{"regs above 255", "", []string{"--device", "h200", "--regs", "300", "--block", "128"}, exitUsage,
			[]string{"--regs (registers_per_thread) 300 is above 255", "Fix: give the count ptxas -v prints"}},
		{"regs 256 in a sweep", "", []string{"--device", "h200", "--regs", "256", "--sweep"}, exitUsage, []string{"--regs (registers_per_thread) 256 is above 255", "Fix:"}},
		{"block above the device maximum", "", []string{"--device", "h200", "--regs", "32", "--block", "2000"}, exitUsage,
			[]string{`--block (block_size) 2000 is outside 1..1024, the max threads per block of "h200"`, "Fix: give the threads per block from 1 to 1024"}},
		{"block one above", "", []string{"--device", "h100", "--regs", "32", "--block", "1025"}, exitUsage, []string{"1025 is outside 1..1024", "Fix:"}},
		{"negative block", "", []string{"--device", "h100", "--regs", "32", "--block", "-1"}, exitUsage, []string{"-1 is outside 1..1024", "Fix:"}},
		{"block above a profile's maximum", h200With(t, `{"max_threads_per_block":512,"max_block_dim":[512,512,64]}`),
			[]string{"--device-file", "-", "--regs", "32", "--block", "1024"}, exitUsage, []string{`1024 is outside 1..512, the max threads per block of "<stdin>"`, "Fix:"}},
		{"bad profile", `{"name": "x", "sm_count": 3, "bogus": 1}`, []string{"--device-file", "-", "--regs", "1", "--block", "32"}, exitFailure, []string{`field "bogus"`, "unknown field", "Fix:"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, errs, code := runCLI(t, tc.stdin, append([]string{"occupancy"}, tc.args...)...)
			assert.Equal(t, tc.code, code, "stdout %s stderr %s", out, errs)
			for _, s := range tc.stderr {
				assert.Contains(t, errs, s)
			}
		})
	}
}
