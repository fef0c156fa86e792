package occupancy

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

// vyre's occupancy test vectors, all on the Blackwell profile.
func TestEstimateOccupancyVyreVectors(t *testing.T) {
	bw := Blackwell5090Default()
	smallBlock := Blackwell5090Default()
	smallBlock.SharedMemPerBlock = 128 * 1024
	smallBlock.SharedMemPerSM = 192 * 1024
	maxCaps := Device{WarpSize: math.MaxInt32, MaxThreadsPerBlock: math.MaxInt32, MaxThreadsPerSM: math.MaxInt32,
		RegistersPerBlock: math.MaxInt32, RegistersPerSM: math.MaxInt32, SharedMemPerBlock: math.MaxInt32, SharedMemPerSM: math.MaxInt32}
	tests := []struct {
		name string
		d    Device
		u    KernelResourceUsage
		wg   uint32
		want OccupancyEstimate
	}{
		{"wg 4096", bw, KernelResourceUsage{RegsPerThread: 16}, 4096, OccupancyEstimate{}},
		{"wg 0", bw, KernelResourceUsage{RegsPerThread: 16}, 0, OccupancyEstimate{}},
		{"256 regs x 257 threads", bw, KernelResourceUsage{RegsPerThread: 256}, 257, OccupancyEstimate{}},
		{"256 regs x 256 threads fits", bw, KernelResourceUsage{RegsPerThread: 256}, 256, OccupancyEstimate{BlocksPerSM: 1, WarpsPerSM: 8, OccupancyBPS: 1250}},
		{"u32 max regs x 2 overflows", maxCaps, KernelResourceUsage{RegsPerThread: math.MaxUint32}, 2, OccupancyEstimate{}},
		{"16 regs at 256", bw, KernelResourceUsage{RegsPerThread: 16}, 256, OccupancyEstimate{BlocksPerSM: 8, WarpsPerSM: 64, OccupancyBPS: 10000}},
		{"shared 256 KiB over 128 KiB", bw, KernelResourceUsage{RegsPerThread: 16, SharedBytesPerBlock: 256 * 1024}, 256, OccupancyEstimate{}},
		{"96 KiB on 192 KiB per SM", smallBlock, KernelResourceUsage{RegsPerThread: 16, SharedBytesPerBlock: 96 * 1024}, 256, OccupancyEstimate{BlocksPerSM: 2, WarpsPerSM: 16, OccupancyBPS: 2500}},
		{"64 regs at 256", bw, KernelResourceUsage{RegsPerThread: 64}, 256, OccupancyEstimate{BlocksPerSM: 4, WarpsPerSM: 32, OccupancyBPS: 5000}},
		{"warp size 0", Device{}, KernelResourceUsage{RegsPerThread: 16}, 256, OccupancyEstimate{}},
		{"no regs, no shared", bw, KernelResourceUsage{}, 32, OccupancyEstimate{BlocksPerSM: 64, WarpsPerSM: 64, OccupancyBPS: 10000}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := EstimateOccupancy(tc.d, tc.u, tc.wg)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.want.BlocksPerSM > 0, got.IsRunnable())
		})
	}
}

func TestEstimateOccupancyZeroCaps(t *testing.T) {
	for _, mutate := range []func(*Device){
		func(d *Device) { d.RegistersPerBlock = 0 },
		func(d *Device) { d.RegistersPerSM = -5 },
		func(d *Device) { d.MaxThreadsPerSM = 0 },
		func(d *Device) { d.WarpSize = 0 },
		func(d *Device) { d.MaxThreadsPerBlock = 0 },
	} {
		d := Blackwell5090Default()
		mutate(&d)
		assert.False(t, EstimateOccupancy(d, KernelResourceUsage{RegsPerThread: 16}, 256).IsRunnable())
	}
}

func TestPickWorkgroupSizeVyreVectors(t *testing.T) {
	bw := Blackwell5090Default()
	tests := []struct {
		name  string
		regs  uint32
		cands []uint32
		want  uint32
		ok    bool
	}{
		{"tie goes to the smaller", 16, []uint32{128, 256, 512}, 128, true},
		{"tie goes to the smaller, reversed order", 16, []uint32{512, 256, 128}, 128, true},
		{"65537 regs: none", 65537, []uint32{32, 64, 128, 256, 512, 1024}, 0, false},
		{"32 and 256 both 50 percent", 64, []uint32{32, 256}, 32, true},
		{"empty", 16, nil, 0, false},
		{"skips unrunnable", 64, []uint32{4096, 0, 512}, 512, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := PickWorkgroupSizeForOccupancy(bw, KernelResourceUsage{RegsPerThread: tc.regs}, tc.cands)
			assert.Equal(t, tc.ok, ok)
			assert.Equal(t, tc.want, got)
		})
	}
}

// vyre's integration checks: heavy choice <= light choice; deterministic.
func TestPickWorkgroupSizeHeavyVsLight(t *testing.T) {
	bw := Blackwell5090Default()
	cands := []uint32{64, 128, 256, 512, 1024}
	heavy, okH := PickWorkgroupSizeForOccupancy(bw, KernelResourceUsage{RegsPerThread: 128}, cands)
	light, okL := PickWorkgroupSizeForOccupancy(bw, KernelResourceUsage{RegsPerThread: 16}, cands)
	assert.True(t, okH && okL)
	assert.LessOrEqual(t, heavy, light)
	for range 10 {
		again, _ := PickWorkgroupSizeForOccupancy(bw, KernelResourceUsage{RegsPerThread: 128}, cands)
		assert.Equal(t, heavy, again)
	}
}

func TestCooperativeThreadResidencyBlockLimit(t *testing.T) {
	bw := Blackwell5090Default()
	assert.Equal(t, uint64(1360), CooperativeThreadResidencyBlockLimit(bw, 256))
	assert.Equal(t, uint64(0), CooperativeThreadResidencyBlockLimit(bw, 0))
	noCoop := bw
	noCoop.CooperativeLaunch = false
	assert.Equal(t, uint64(0), CooperativeThreadResidencyBlockLimit(noCoop, 256))
	old := bw
	old.Major = 5
	assert.Equal(t, uint64(0), CooperativeThreadResidencyBlockLimit(old, 256))
}

func TestCanLaunchConcurrentlyVyreVectors(t *testing.T) {
	bw := Blackwell5090Default()
	narrow := bw
	narrow.MaxThreadsPerSM = 512
	noConc := bw
	noConc.ConcurrentKernels = false
	exact160 := bw
	exact160.SharedMemPerSM = 160 * 1024
	light := KernelResourceUsage{RegsPerThread: 16}
	full := KernelResourceUsage{RegsPerThread: 16}
	heavy := KernelResourceUsage{RegsPerThread: 128}
	conc := ConcurrencyDecision{Concurrent: true}
	tests := []struct {
		name string
		d    Device
		a    KernelResourceUsage
		wgA  uint32
		b    KernelResourceUsage
		wgB  uint32
		want ConcurrencyDecision
	}{
		{"two light kernels", bw, light, 256, light, 256, conc},
		{"warp residency", narrow, full, 512, full, 512, serialize(SerializeWarpResidency)},
		{"register pressure", bw, heavy, 512, heavy, 256, serialize(SerializeRegisterPressure)},
		{"unrunnable kernel", bw, light, 4096, light, 256, serialize(SerializeKernelUnrunnable)},
		{"concurrency off", noConc, light, 256, light, 256, serialize(SerializeDeviceUnsupported)},
		{"concurrency off wins over unrunnable", noConc, light, 4096, light, 256, serialize(SerializeDeviceUnsupported)},
		{"shared headroom", bw, KernelResourceUsage{RegsPerThread: 16, SharedBytesPerBlock: 64 * 1024}, 256, KernelResourceUsage{RegsPerThread: 16, SharedBytesPerBlock: 64 * 1024}, 256, conc},
		{"160 KiB exact limit fits", exact160, KernelResourceUsage{SharedBytesPerBlock: 80 * 1024}, 256, KernelResourceUsage{SharedBytesPerBlock: 80 * 1024}, 256, conc},
		{"160 KiB exact limit exceeded", exact160, KernelResourceUsage{SharedBytesPerBlock: 80 * 1024}, 256, KernelResourceUsage{SharedBytesPerBlock: 80*1024 + 1}, 256, serialize(SerializeSharedMemory)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, CanLaunchConcurrently(tc.d, tc.a, tc.wgA, tc.b, tc.wgB))
		})
	}
	assert.Equal(t, "warp-residency", SerializeWarpResidency.String())
	assert.Equal(t, "unknown", SerializeReason(42).String())
}
