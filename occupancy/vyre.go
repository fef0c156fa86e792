package occupancy

import (
	"math"

	"github.com/gpuplan/gpuplan/internal/checked"
)

// KernelResourceUsage is vyre's per-kernel resource record for its
// simplified occupancy estimate.
type KernelResourceUsage struct {
	RegsPerThread       uint32 `json:"regs_per_thread"`
	SharedBytesPerBlock uint32 `json:"shared_bytes_per_block"`
}

// OccupancyEstimate is vyre's simplified occupancy estimate. The zero value
// (vyre's ZERO) means the kernel cannot run.
type OccupancyEstimate struct {
	BlocksPerSM  uint32 `json:"blocks_per_sm"`
	WarpsPerSM   uint32 `json:"warps_per_sm"`
	OccupancyBPS uint32 `json:"occupancy_bps"`
}

// IsRunnable reports BlocksPerSM > 0.
func (e OccupancyEstimate) IsRunnable() bool { return e.BlocksPerSM > 0 }

// capU32 converts a device cap to vyre's u32: non-positive caps (and caps
// that do not fit u32) become 0, which the estimate treats as missing.
func capU32(v int) uint32 {
	if v <= 0 || uint64(v) > math.MaxUint32 {
		return 0
	}
	return uint32(v)
}

// vyreCaps are the u32 device caps vyre's estimate reads.
type vyreCaps struct {
	warp, maxThreadsBlock, maxThreadsSM, regsBlock, regsSM, sharedBlock, sharedSM uint32
}

func toVyreCaps(d *Device) vyreCaps {
	return vyreCaps{
		warp:            capU32(d.WarpSize),
		maxThreadsBlock: capU32(d.MaxThreadsPerBlock),
		maxThreadsSM:    capU32(d.MaxThreadsPerSM),
		regsBlock:       capU32(d.RegistersPerBlock),
		regsSM:          capU32(d.RegistersPerSM),
		sharedBlock:     capU32(d.SharedMemPerBlock),
		sharedSM:        capU32(d.SharedMemPerSM),
	}
}

// EstimateOccupancy is vyre's estimate_occupancy: a simplified model that
// ignores the register allocation unit, the sub-partitions, the block cap,
// reserved shared memory, granularity and carveouts:
//
//	blocks = min(maxThreadsPerSM / wg, regsPerSM / (regs*wg), sharedPerSM / shared)
//
// (a zero regs or shared term does not limit), warps = blocks *
// ceil(wg/warp), occupancy = min(10000, floor(warps*10000 / maxWarpsPerSM))
// basis points. The result is the zero estimate when the warp size is 0, wg
// is 0 or above the device's maximum block size, a register or thread cap
// is 0, regs*wg overflows u32 or exceeds the per-block registers, or shared
// exceeds Device.SharedMemPerBlock. Device caps that are not positive are
// treated as 0.
//
// A vyre quirk kept for parity: the thread term divides threads, not warps,
// so for a block size that is not a multiple of 32 WarpsPerSM can exceed
// the SM's warp slots (wg 33 on 2048 threads: 62 blocks, 124 warps); the
// basis points are capped at 10000.
//
// Use it for parity with vyre's planners and their test vectors (for
// example ranking candidate workgroup sizes the way vyre does). It
// over-estimates whenever the register allocation granularity or the block
// cap binds (for example 32-thread blocks); use Compute for anything that
// must match the hardware, such as sizing a cooperative grid.
func EstimateOccupancy(d Device, u KernelResourceUsage, wg uint32) OccupancyEstimate {
	return estimate(toVyreCaps(&d), u, wg)
}

func estimate(c vyreCaps, u KernelResourceUsage, wg uint32) OccupancyEstimate {
	if c.warp == 0 || wg == 0 || wg > c.maxThreadsBlock || c.regsBlock == 0 || c.regsSM == 0 || c.maxThreadsSM == 0 {
		return OccupancyEstimate{}
	}
	regsBlock := uint64(u.RegsPerThread) * uint64(wg)
	if regsBlock > math.MaxUint32 || regsBlock > uint64(c.regsBlock) {
		return OccupancyEstimate{}
	}
	if u.SharedBytesPerBlock > c.sharedBlock {
		return OccupancyEstimate{}
	}
	blocks := c.maxThreadsSM / wg
	if regsBlock > 0 {
		blocks = min(blocks, uint32(uint64(c.regsSM)/regsBlock))
	}
	if u.SharedBytesPerBlock > 0 {
		blocks = min(blocks, c.sharedSM/u.SharedBytesPerBlock)
	}
	if blocks == 0 {
		return OccupancyEstimate{}
	}
	warpsPerBlock := (uint64(wg) + uint64(c.warp) - 1) / uint64(c.warp)
	warps := uint64(blocks) * warpsPerBlock // blocks <= maxThreadsSM/wg, so warps < 2^33
	bps := checked.RatioBPS(warps, uint64(c.maxThreadsSM/c.warp), 0)
	if warps > math.MaxUint32 {
		warps = math.MaxUint32 // unreachable: blocks*ceil(wg/warp) <= 2*maxThreadsSM/warp
	}
	return OccupancyEstimate{BlocksPerSM: blocks, WarpsPerSM: uint32(warps), OccupancyBPS: min(bps, 10000)}
}

// PickWorkgroupSizeForOccupancy is vyre's pick_workgroup_size_for_occupancy:
// it estimates every candidate with EstimateOccupancy, skips those that
// cannot run, and returns the one with the highest occupancy, ties going to
// the smaller size. ok is false when no candidate can run.
//
// Like EstimateOccupancy it ignores the block cap and register granularity,
// so it can prefer tiny blocks the hardware would cap; for a real device use
// MaxPotentialBlockSize or rank candidates with Compute.
func PickWorkgroupSizeForOccupancy(d Device, u KernelResourceUsage, candidates []uint32) (wg uint32, ok bool) {
	c := toVyreCaps(&d)
	var best uint32
	for _, cand := range candidates {
		e := estimate(c, u, cand)
		if !e.IsRunnable() {
			continue
		}
		if !ok || e.OccupancyBPS > best || (e.OccupancyBPS == best && cand < wg) {
			wg, best, ok = cand, e.OccupancyBPS, true
		}
	}
	return wg, ok
}

// CooperativeThreadResidencyBlockLimit is vyre's
// cooperative_thread_residency_block_limit: floor(maxThreadsPerSM / wg) x
// SM count, or 0 when wg is 0, the device lacks cooperative launch, or its
// compute capability is below 6.0. It ignores registers and shared memory
// (and the block cap): use CoResidentGrid to size a cooperative grid for a
// real kernel.
func CooperativeThreadResidencyBlockLimit(d Device, wg uint32) uint64 {
	if wg == 0 || !d.CooperativeLaunch || d.Major < 6 {
		return 0
	}
	return uint64(capU32(d.MaxThreadsPerSM)/wg) * uint64(capU32(d.SMCount))
}

// SerializeReason says why two kernels must not be launched concurrently.
type SerializeReason int

// The serialize reasons of vyre's can_launch_concurrently.
const (
	// SerializeNone is the reason of a Concurrent decision.
	SerializeNone SerializeReason = iota
	// SerializeDeviceUnsupported: the device lacks concurrent kernels or
	// has an invalid warp size.
	SerializeDeviceUnsupported
	// SerializeKernelUnrunnable: one of the kernels cannot run on its own.
	SerializeKernelUnrunnable
	// SerializeWarpResidency: one block of each does not fit the SM's warps.
	SerializeWarpResidency
	// SerializeRegisterPressure: one block of each does not fit the
	// register file.
	SerializeRegisterPressure
	// SerializeSharedMemory: one block of each does not fit the per-SM
	// shared memory.
	SerializeSharedMemory
)

var serializeNames = [...]string{"none", "device-unsupported", "kernel-unrunnable", "warp-residency", "register-pressure", "shared-memory"}

// String returns the reason in kebab case ("warp-residency", ...).
func (r SerializeReason) String() string {
	if r < 0 || int(r) >= len(serializeNames) {
		return "unknown"
	}
	return serializeNames[r]
}

// MarshalText encodes the reason as its String form.
func (r SerializeReason) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// ConcurrencyDecision is vyre's Concurrent / Serialize{reason}.
type ConcurrencyDecision struct {
	Concurrent bool            `json:"concurrent"`
	Reason     SerializeReason `json:"reason"`
}

func serialize(r SerializeReason) ConcurrencyDecision { return ConcurrencyDecision{Reason: r} }

// CanLaunchConcurrently is vyre's can_launch_concurrently: whether one block
// of kernel a (wgA threads) and one block of kernel b (wgB threads) fit on
// an SM together. The checks run in vyre's order:
//
//  1. no concurrent kernels: DeviceUnsupported;
//  2. either kernel not runnable alone (EstimateOccupancy): KernelUnrunnable;
//  3. warp size 0: DeviceUnsupported;
//  4. ceil(wgA/warp) + ceil(wgB/warp) > maxThreadsPerSM/warp: WarpResidency;
//  5. regsA*wgA + regsB*wgB > regsPerSM, or overflow: RegisterPressure;
//  6. sharedA + sharedB > sharedPerSM, or overflow: SharedMemory.
func CanLaunchConcurrently(d Device, a KernelResourceUsage, wgA uint32, b KernelResourceUsage, wgB uint32) ConcurrencyDecision {
	if !d.ConcurrentKernels {
		return serialize(SerializeDeviceUnsupported)
	}
	c := toVyreCaps(&d)
	if !estimate(c, a, wgA).IsRunnable() || !estimate(c, b, wgB).IsRunnable() {
		return serialize(SerializeKernelUnrunnable)
	}
	if c.warp == 0 {
		return serialize(SerializeDeviceUnsupported)
	}
	w := uint64(c.warp)
	if (uint64(wgA)+w-1)/w+(uint64(wgB)+w-1)/w > uint64(c.maxThreadsSM/c.warp) {
		return serialize(SerializeWarpResidency)
	}
	ra := uint64(a.RegsPerThread) * uint64(wgA)
	rb := uint64(b.RegsPerThread) * uint64(wgB)
	if ra > math.MaxUint32 || rb > math.MaxUint32 || ra+rb > math.MaxUint32 || ra+rb > uint64(c.regsSM) {
		return serialize(SerializeRegisterPressure)
	}
	sh := uint64(a.SharedBytesPerBlock) + uint64(b.SharedBytesPerBlock)
	if sh > math.MaxUint32 || sh > uint64(c.sharedSM) {
		return serialize(SerializeSharedMemory)
	}
	return ConcurrencyDecision{Concurrent: true}
}
