package occupancy

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func mustLookup(t testing.TB, name string) Device {
	t.Helper()
	d, err := Lookup(name)
	require.NoError(t, err)
	return d
}

// Three worked checks measured on an H200 (the driver API's answers).
func TestComputeH200WorkedChecks(t *testing.T) {
	h200 := mustLookup(t, "h200")
	tests := []struct {
		name   string
		k      Kernel
		block  int
		blocks int
		limit  Limit
	}{
		{"10 regs at 96 threads", Kernel{RegistersPerThread: 10}, 96, 21, LimitWarps},
		{"plus 20000 B dynamic smem", Kernel{RegistersPerThread: 10, DynamicSharedBytes: 20000}, 96, 11, LimitSharedMemory},
		{"238 regs at 128 threads", Kernel{RegistersPerThread: 238}, 128, 2, LimitRegisters},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Compute(h200, tc.k, tc.block)
			require.NoError(t, err)
			assert.Equal(t, tc.blocks, r.ActiveBlocksPerSM)
			assert.Equal(t, tc.limit, r.Limit)
			assert.Equal(t, tc.blocks*r.WarpsPerBlock, r.ActiveWarpsPerSM)
			assert.InDelta(t, float64(r.ActiveWarpsPerSM)/64, r.Occupancy, 1e-12)
		})
	}
}

func TestComputeRules(t *testing.T) {
	h100 := mustLookup(t, "h100-sxm")
	a100 := mustLookup(t, "a100")
	t4 := mustLookup(t, "t4")
	v100 := mustLookup(t, "v100")
	tests := []struct {
		name      string
		d         Device
		k         Kernel
		block     int
		blocks    int
		limit     Limit
		smemAlloc int
		capacity  int
	}{
		// Warps: 1024-thread blocks, 2 per SM.
		{"full warps", h100, Kernel{RegistersPerThread: 32}, 1024, 2, LimitWarps, 1024, 233472},
		// Block cap: 32-thread blocks hit the 32-block cap before 64 warps.
		{"block cap", h100, Kernel{RegistersPerThread: 16}, 32, 32, LimitBlocks, 1024, 233472},
		{"block cap t4", t4, Kernel{RegistersPerThread: 16}, 32, 16, LimitBlocks, 0, 65536},
		// Registers: 64 regs -> 2048 per warp -> 8 warps per sub-partition -> 32 warps -> 4 blocks of 256.
		{"registers 64", h100, Kernel{RegistersPerThread: 64}, 256, 4, LimitRegisters, 1024, 233472},
		// Registers: 255 regs -> 8192 per warp -> 2 warps per sub-partition -> 8 warps -> 1 block of 256.
		{"registers 255", h100, Kernel{RegistersPerThread: 255}, 256, 1, LimitRegisters, 1024, 233472},
		// 255 regs at 288 threads: 9 warps need more than the 65536 per block.
		{"registers over per-block", h100, Kernel{RegistersPerThread: 255}, 288, 0, LimitRegisters, 1024, 233472},
		// Registers above the per-thread maximum cannot run.
		{"registers over per-thread", h100, Kernel{RegistersPerThread: 256}, 32, 0, LimitRegisters, 1024, 233472},
		// Shared memory: 48 KiB default limit plus 1 KiB reserved on sm_80+.
		{"smem at default limit", h100, Kernel{DynamicSharedBytes: 48 * 1024}, 128, 4, LimitSharedMemory, 50176, 233472},
		{"smem above default limit", h100, Kernel{DynamicSharedBytes: 48*1024 + 1}, 128, 0, LimitSharedMemory, 50304, 233472},
		{"smem opt-in", h100, Kernel{DynamicSharedBytes: 100 * 1024, OptIn: true}, 128, 2, LimitSharedMemory, 103424, 233472},
		{"smem opt-in max", h100, Kernel{DynamicSharedBytes: 227 * 1024, OptIn: true}, 128, 1, LimitSharedMemory, 233472, 233472},
		{"smem above opt-in", h100, Kernel{DynamicSharedBytes: 227*1024 + 1, OptIn: true}, 128, 0, LimitSharedMemory, 233600, 233472},
		// Static plus dynamic.
		{"static plus dynamic", a100, Kernel{StaticSharedBytes: 8000, DynamicSharedBytes: 8000}, 128, 9, LimitSharedMemory, 17024, 167936},
		// Carveout preference: 50% of 228 KiB = 114 KiB -> 132 KiB carveout.
		{"carveout 50%", h100, Kernel{DynamicSharedBytes: 20000, CarveoutPercent: 50}, 96, 6, LimitSharedMemory, 21120, 132 * 1024},
		// Carveout too small for one block: smallest supported size that fits (32 KiB).
		{"carveout too small", h100, Kernel{DynamicSharedBytes: 20000, CarveoutPercent: 1}, 96, 1, LimitSharedMemory, 21120, 32 * 1024},
		// V100: no reserved bytes, 256 B granularity, no reserved added to the limit.
		{"v100 granularity", v100, Kernel{DynamicSharedBytes: 1000}, 64, 32, LimitWarps, 1024, 98304},
		{"v100 smem", v100, Kernel{DynamicSharedBytes: 48 * 1024}, 64, 2, LimitSharedMemory, 49152, 98304},
		{"v100 above default", v100, Kernel{DynamicSharedBytes: 48*1024 + 1}, 64, 0, LimitSharedMemory, 49408, 98304},
		// Block above the device maximum: 0 blocks, warps.
		{"block above device max", h100, Kernel{}, 1056, 0, LimitWarps, 1024, 233472},
		// Block above the kernel's own maximum.
		{"block above kernel max", h100, Kernel{MaxThreadsPerBlock: 256}, 512, 0, LimitWarps, 1024, 233472},
		// Odd block sizes round up to whole warps.
		{"odd block", h100, Kernel{}, 33, 32, LimitWarps, 1024, 233472},
		{"odd block 100", h100, Kernel{}, 100, 16, LimitWarps, 1024, 233472},
		// The reserved 1 KiB is allocated even without shared memory: a small
		// carveout preference (1% -> 8 KiB) then holds 8 blocks.
		{"reserved only, small carveout", h100, Kernel{RegistersPerThread: 16, CarveoutPercent: 1}, 32, 8, LimitSharedMemory, 1024, 8 * 1024},
		// Before sm_80 nothing is reserved: no shared memory, no limit.
		{"no smem before sm_80", t4, Kernel{RegistersPerThread: 16, CarveoutPercent: 1}, 32, 16, LimitBlocks, 0, 32 * 1024},
		// vyre's synthetic profile: no carveouts, the whole 256 KiB.
		{"vyre profile", Blackwell5090Default(), Kernel{RegistersPerThread: 16, DynamicSharedBytes: 96 * 1024}, 256, 2, LimitSharedMemory, 99328, 262144},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Compute(tc.d, tc.k, tc.block)
			require.NoError(t, err)
			assert.Equal(t, tc.blocks, r.ActiveBlocksPerSM, "%+v", r)
			assert.Equal(t, tc.limit, r.Limit, "%+v", r)
			assert.Equal(t, tc.smemAlloc, r.SharedBytesPerBlock)
			assert.Equal(t, tc.capacity, r.SharedMemCapacityPerSM)
		})
	}
}

func TestComputeInvalidInput(t *testing.T) {
	h100 := mustLookup(t, "h100")
	bad := h100
	bad.SMCount = 0
	tests := []struct {
		name  string
		d     Device
		k     Kernel
		block int
		field string
	}{
		{"block 0", h100, Kernel{}, 0, "block_size"},
		{"block negative", h100, Kernel{}, -32, "block_size"},
		{"negative regs", h100, Kernel{RegistersPerThread: -1}, 32, "registers_per_thread"},
		{"negative static", h100, Kernel{StaticSharedBytes: -1}, 32, "static_shared_bytes"},
		{"negative dynamic", h100, Kernel{DynamicSharedBytes: -1}, 32, "dynamic_shared_bytes"},
		{"negative kernel max", h100, Kernel{MaxThreadsPerBlock: -1}, 32, "max_threads_per_block"},
		{"carveout", h100, Kernel{CarveoutPercent: 101}, 32, "carveout_percent"},
		{"carveout -2", h100, Kernel{CarveoutPercent: -2}, 32, "carveout_percent"},
		{"invalid device", bad, Kernel{}, 32, "sm_count"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Compute(tc.d, tc.k, tc.block)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.field)
			assert.Contains(t, err.Error(), "Fix:")
			var ie *InputError
			var de *InvalidDeviceError
			assert.True(t, errors.As(err, &ie) || errors.As(err, &de))
		})
	}
}

func TestLimitString(t *testing.T) {
	for l, s := range map[Limit]string{LimitWarps: "warps", LimitBlocks: "blocks", LimitRegisters: "registers", LimitSharedMemory: "shared-memory", Limit(9): "Limit(9)"} {
		assert.Equal(t, s, l.String())
		if l <= LimitSharedMemory {
			p, err := ParseLimit(s)
			require.NoError(t, err)
			assert.Equal(t, l, p)
		}
	}
	_, err := ParseLimit("nope")
	assert.ErrorContains(t, err, "Fix:")
}

func TestMaxPotentialBlockSize(t *testing.T) {
	h200 := mustLookup(t, "h200")
	tests := []struct {
		name  string
		d     Device
		k     Kernel
		block int
		grid  int
	}{
		// Full SM at 1024 threads: stops at the first try.
		{"light kernel", h200, Kernel{RegistersPerThread: 32}, 1024, 264},
		// 64 regs: 1024 threads need 65536 regs per block -> 1 block (1024 threads); 512 -> 2 blocks (1024 threads)...
		// 64 regs caps the SM at 32 warps, so 1024 threads is the largest with the most threads.
		{"64 regs", h200, Kernel{RegistersPerThread: 64}, 1024, 132},
		// 255 regs: 8 warps per SM at most; 256 threads is the largest size giving 256 threads.
		{"255 regs", h200, Kernel{RegistersPerThread: 255}, 256, 132},
		// Kernel limit 200: first try is 200 itself (not a multiple of 32).
		{"kernel max 200", h200, Kernel{RegistersPerThread: 16, MaxThreadsPerBlock: 200}, 128, 16 * 132},
		{"cannot run", h200, Kernel{RegistersPerThread: 300}, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, g, err := MaxPotentialBlockSize(tc.d, tc.k)
			require.NoError(t, err)
			assert.Equal(t, tc.block, b)
			assert.Equal(t, tc.grid, g)
		})
	}
	_, _, err := MaxPotentialBlockSize(h200, Kernel{RegistersPerThread: -3})
	assert.ErrorContains(t, err, "registers_per_thread")
}

func TestCoResidentGrid(t *testing.T) {
	h200 := mustLookup(t, "h200")
	g, err := CoResidentGrid(h200, Kernel{RegistersPerThread: 238}, 128)
	require.NoError(t, err)
	assert.Equal(t, 2*132, g)
	g, err = CoResidentGrid(h200, Kernel{RegistersPerThread: 10}, 96)
	require.NoError(t, err)
	assert.Equal(t, 21*132, g)
	g, err = CoResidentGrid(h200, Kernel{RegistersPerThread: 256}, 96)
	require.NoError(t, err)
	assert.Equal(t, 0, g)
	_, err = CoResidentGrid(h200, Kernel{}, 0)
	assert.ErrorContains(t, err, "block_size")
}
