package occupancy

import (
	"fmt"
	"math"

	"github.com/gpuplan/gpuplan/internal/checked"
)

// Kernel describes the per-launch resources of one kernel for the exact
// occupancy model.
type Kernel struct {
	// RegistersPerThread is the register count ptxas reports (0 means the
	// kernel is not limited by registers, as in cuda_occupancy.h).
	RegistersPerThread int `json:"registers_per_thread"`
	// StaticSharedBytes is the kernel's static shared memory in bytes.
	StaticSharedBytes int `json:"static_shared_bytes"`
	// DynamicSharedBytes is the dynamic shared memory per block in bytes.
	DynamicSharedBytes int `json:"dynamic_shared_bytes"`
	// OptIn is true when the kernel raised
	// CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, so the per-block
	// limit is the device's opt-in maximum instead of the 48 KiB default.
	OptIn bool `json:"opt_in"`
	// MaxThreadsPerBlock is the kernel's own limit (__launch_bounds__);
	// 0 means the device maximum.
	MaxThreadsPerBlock int `json:"max_threads_per_block"`
	// CarveoutPercent is the preferred shared-memory carveout in percent of
	// the SM's shared memory (CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
	// 1..100); -1 or 0 means the default (the whole per-SM shared memory).
	// CUDA's 0 ("prefer maximum L1") therefore cannot be written, but 1
	// gives the same capacity on every profile: both round up to the
	// smallest carveout that holds one block.
	CarveoutPercent int `json:"carveout_percent"`
}

// SharedBytes returns the kernel's static plus dynamic shared memory per
// block (no reserved bytes, no rounding).
func (k Kernel) SharedBytes() int { return k.StaticSharedBytes + k.DynamicSharedBytes }

// Limit names the resource that bounds the number of resident blocks.
type Limit int

// The occupancy limits, in the order used to break ties when two limits
// allow the same number of blocks.
const (
	// LimitWarps: the SM's warp slots (maxThreadsPerSM / 32), or a block
	// larger than the device or kernel allows.
	LimitWarps Limit = iota
	// LimitBlocks: the architecture's resident block cap.
	LimitBlocks
	// LimitRegisters: the register file (or registers above the per-thread
	// or per-block maximum).
	LimitRegisters
	// LimitSharedMemory: the shared memory carveout (or a block needing more
	// than the per-block maximum).
	LimitSharedMemory
)

var limitNames = [...]string{"warps", "blocks", "registers", "shared-memory"}

// String returns "warps", "blocks", "registers" or "shared-memory".
func (l Limit) String() string {
	if l < 0 || int(l) >= len(limitNames) {
		return fmt.Sprintf("Limit(%d)", int(l))
	}
	return limitNames[l]
}

// MarshalText encodes the limit as its String form (used by JSON output).
func (l Limit) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

// UnmarshalText decodes the String form of a Limit.
func (l *Limit) UnmarshalText(b []byte) error {
	v, err := ParseLimit(string(b))
	if err != nil {
		return err
	}
	*l = v
	return nil
}

// ParseLimit parses the String form of a Limit.
func ParseLimit(s string) (Limit, error) {
	for i, n := range limitNames {
		if n == s {
			return Limit(i), nil
		}
	}
	return 0, fmt.Errorf("occupancy: unknown limit %q. Fix: use warps, blocks, registers or shared-memory", s)
}

// UnlimitedBlocks marks a per-limit block count that does not limit
// (registers with RegistersPerThread 0, shared memory with no shared
// memory). It is larger than any architecture's block cap.
const UnlimitedBlocks = math.MaxInt32

// Result is the exact occupancy of one kernel at one block size.
type Result struct {
	BlockSize     int `json:"block_size"`
	WarpsPerBlock int `json:"warps_per_block"`
	// ActiveBlocksPerSM is min(BlocksByWarps, BlocksByBlocks,
	// BlocksByRegisters, BlocksBySharedMemory); 0 when the configuration
	// cannot run.
	ActiveBlocksPerSM  int `json:"active_blocks_per_sm"`
	ActiveWarpsPerSM   int `json:"active_warps_per_sm"`
	ActiveThreadsPerSM int `json:"active_threads_per_sm"`
	MaxWarpsPerSM      int `json:"max_warps_per_sm"`
	// Occupancy is ActiveWarpsPerSM / MaxWarpsPerSM, in [0, 1].
	Occupancy float64 `json:"occupancy"`

	// The per-limit block counts; UnlimitedBlocks where a resource does not
	// limit.
	BlocksByWarps        int `json:"blocks_by_warps"`
	BlocksByBlocks       int `json:"blocks_by_blocks"`
	BlocksByRegisters    int `json:"blocks_by_registers"`
	BlocksBySharedMemory int `json:"blocks_by_shared_memory"`
	// Limit is the binding limit: the one with the fewest blocks, ties
	// broken in the order warps, blocks, registers, shared-memory.
	Limit Limit `json:"limit"`

	// RegistersPerWarp is the allocated registers per warp
	// (roundup(R*32, RegisterAllocUnit)); 0 when R is 0.
	RegistersPerWarp int `json:"registers_per_warp"`
	// SharedBytesPerBlock is the allocated shared memory per block
	// (roundup(static + dynamic + reserved, granularity)); on sm_80+ at least
	// the 1 KiB reserved, 0 only before sm_80 for a kernel without shared
	// memory.
	SharedBytesPerBlock int `json:"shared_bytes_per_block"`
	// SharedMemLimitPerBlock is the per-block limit the allocation was
	// checked against (default or opt-in, plus the reserved bytes on sm_80+).
	SharedMemLimitPerBlock int `json:"shared_mem_limit_per_block"`
	// SharedMemCapacityPerSM is the shared memory configured per SM (the
	// carveout chosen for this kernel), in bytes.
	SharedMemCapacityPerSM int `json:"shared_mem_capacity_per_sm"`
}

// InputError is invalid input to the exact model: a negative or
// out-of-range kernel value or block size. Field names the offending input.
type InputError struct {
	Field string
	Msg   string
	Fix   string
}

// Error describes the failure and ends with a "Fix:" sentence.
func (e *InputError) Error() string {
	return fmt.Sprintf("occupancy: %s %s. Fix: %s", e.Field, e.Msg, e.Fix)
}

// maxKernelBytes bounds shared-memory inputs: far above any device, small
// enough that sums and roundings never overflow.
const maxKernelBytes = 1 << 40

// Validate checks k's values on their own, before any device: an
// *InputError naming the field when one is negative or out of range.
func (k Kernel) Validate() error { return k.validate() }

func (k Kernel) validate() error {
	switch {
	case k.RegistersPerThread < 0 || k.RegistersPerThread > 1<<20:
		return &InputError{"registers_per_thread", fmt.Sprintf("is %d, outside 0..%d", k.RegistersPerThread, 1<<20), "give the register count ptxas -v reports (kernels use at most 255)"}
	case k.StaticSharedBytes < 0 || k.StaticSharedBytes > maxKernelBytes:
		return &InputError{"static_shared_bytes", fmt.Sprintf("is %d, outside 0..2^40", k.StaticSharedBytes), "give the static shared memory in bytes"}
	case k.DynamicSharedBytes < 0 || k.DynamicSharedBytes > maxKernelBytes:
		return &InputError{"dynamic_shared_bytes", fmt.Sprintf("is %d, outside 0..2^40", k.DynamicSharedBytes), "give the dynamic shared memory per block in bytes"}
	case k.MaxThreadsPerBlock < 0:
		return &InputError{"max_threads_per_block", fmt.Sprintf("is %d, below 0", k.MaxThreadsPerBlock), "use 0 for the device maximum or the kernel's __launch_bounds__"}
	case k.CarveoutPercent < -1 || k.CarveoutPercent > 100:
		return &InputError{"carveout_percent", fmt.Sprintf("is %d, outside -1..100", k.CarveoutPercent), "use -1 or 0 for the default, or a percentage 1..100"}
	}
	return nil
}

// roundUp rounds v >= 0 up to a multiple of unit, with a mask when unit is a
// power of two (every real device's units are).
func roundUp(v, unit int) int {
	if unit <= 1 {
		return v
	}
	if unit&(unit-1) == 0 {
		return (v + unit - 1) &^ (unit - 1)
	}
	return div(v+unit-1, unit) * unit
}

// div divides non-negative a by positive b, in 32 bits when both fit (much
// cheaper than a 64-bit division on common CPUs).
func div(a, b int) int {
	if uint64(a)|uint64(b) <= math.MaxUint32 {
		return int(uint32(a) / uint32(b))
	}
	return a / b
}

// Compute returns the exact occupancy of kernel k at blockSize threads per
// block on device d, following NVIDIA's cuda_occupancy.h. With W = ceil(blockSize/32) warps, active blocks per SM is the
// minimum of:
//
//  1. warps: floor(maxWarpsPerSM / W);
//  2. blocks: the architecture's cap;
//  3. registers: regsPerWarp = roundup(R*32, 256); zero when R exceeds the
//     per-thread maximum or the block's registers exceed the per-block
//     maximum; else floor(sub-partitions * floor((regsPerSM/sub-partitions)
//     / regsPerWarp) / W);
//  4. shared memory: allocated = roundup(S + reserved, granularity), zero
//     when it exceeds the per-block limit (default or opt-in, plus the
//     reserved bytes on sm_80+); else floor(carveout capacity / allocated).
//     As in cuda_occupancy.h the reserved bytes are allocated even when
//     S = 0: the rule of thumb "a kernel with S = 0 is not limited by
//     shared memory" holds for the default carveout (228 or 100 reserved-only
//     blocks per SM, above every block cap), but a small carveout
//     preference can bind (8 KiB holds 8 blocks of 1 KiB). Before sm_80
//     (no reserved bytes) S = 0 is never limited.
//
// Errors versus zero blocks. Compute returns an error (an *InputError or the
// device's *InvalidDeviceError, each naming the field) only for input that
// is malformed: an invalid device, blockSize below 1, negative kernel
// values, a carveout outside -1..100. A well-formed configuration that
// cannot run returns a Result with ActiveBlocksPerSM 0 and the binding
// Limit, exactly where the CUDA calculator returns 0 blocks: a block larger
// than the device's or the kernel's maximum (warps), registers above the
// per-thread or per-block maximum (registers), shared memory above the
// per-block limit (shared-memory). Callers that need a runnable launch must
// check ActiveBlocksPerSM > 0.
//
// Use Compute (not EstimateOccupancy) to size grids that must be
// co-resident, to choose block sizes for a real device, and wherever the
// answer must match cuOccupancyMaxActiveBlocksPerMultiprocessor.
func Compute(d Device, k Kernel, blockSize int) (Result, error) {
	if err := d.Validate(); err != nil {
		return Result{}, err
	}
	return compute(&d, k, blockSize)
}

// compute is Compute for a device already validated.
func compute(d *Device, k Kernel, blockSize int) (Result, error) {
	if err := k.validate(); err != nil {
		return Result{}, err
	}
	if blockSize < 1 || blockSize > 1<<30 {
		return Result{}, &InputError{"block_size", fmt.Sprintf("is %d, outside 1..2^30", blockSize), fmt.Sprintf("use a block size between 1 and %d", d.MaxThreadsPerBlock)}
	}
	maxWarps := d.MaxThreadsPerSM >> 5
	w := (blockSize + 31) >> 5
	r := Result{BlockSize: blockSize, WarpsPerBlock: w, MaxWarpsPerSM: maxWarps}

	// 1. Warps (and the block-size maxima, which the CUDA calculator folds
	// into the warp limit).
	maxBlock := d.MaxThreadsPerBlock
	if k.MaxThreadsPerBlock > 0 && k.MaxThreadsPerBlock < maxBlock {
		maxBlock = k.MaxThreadsPerBlock
	}
	if blockSize > maxBlock {
		r.BlocksByWarps = 0
	} else {
		r.BlocksByWarps = div(maxWarps, w)
	}

	// 2. Blocks.
	r.BlocksByBlocks = d.MaxBlocksPerSM

	// 3. Registers.
	r.BlocksByRegisters, r.RegistersPerWarp = registerBlocks(d, k.RegistersPerThread, w)

	// 4. Shared memory.
	r.sharedMemoryBlocks(d, &k)

	// Binding limit: fewest blocks, ties in declaration order.
	r.bind()
	return r, nil
}

// registerBlocks returns the blocks of w warps that the register file
// holds at R registers per thread (UnlimitedBlocks when R is 0, 0 when R or
// the block's registers exceed the device's maxima) and the registers
// allocated per warp (0 when R is 0).
func registerBlocks(d *Device, R, w int) (blocks, perWarp int) {
	if R <= 0 {
		return UnlimitedBlocks, 0
	}
	// Validate guarantees a warp size of 32.
	perWarp = roundUp(R*d.WarpSize, d.RegisterAllocUnit)
	sub := d.SubPartitions
	switch {
	case R > d.RegistersPerThread,
		d.RegistersPerBlock < perWarp*roundUp(w, sub),
		d.RegistersPerBlock < perWarp*w:
		return 0, perWarp
	}
	warpsPerSub := div(div(d.RegistersPerSM, sub), perWarp)
	return div(sub*warpsPerSub, w), perWarp
}

// sharedMemoryBlocks sets r's shared-memory fields for kernel k: the
// per-block limit, the allocation per block, the carveout capacity and the
// blocks that capacity holds (0 when a block is over the limit).
func (r *Result) sharedMemoryBlocks(d *Device, k *Kernel) {
	r.BlocksBySharedMemory = UnlimitedBlocks
	limit := d.SharedMemPerBlock
	if k.OptIn {
		limit = d.SharedMemPerBlockOptIn
	}
	if d.Major >= 8 {
		limit += d.ReservedSharedMemPerBlk
	}
	r.SharedMemLimitPerBlock = limit
	// As in cuda_occupancy.h the reserved bytes count even for a kernel
	// without shared memory, so only pre-sm_80 kernels with S = 0 are
	// unlimited here.
	alloc := roundUp(k.SharedBytes()+d.ReservedSharedMemPerBlk, d.SharedMemAllocUnit)
	r.SharedBytesPerBlock = alloc
	switch {
	case alloc > limit:
		r.BlocksBySharedMemory = 0
		r.SharedMemCapacityPerSM = carveoutCapacity(d, k.CarveoutPercent, 0)
	case alloc > 0:
		r.SharedMemCapacityPerSM = carveoutCapacity(d, k.CarveoutPercent, alloc)
		r.BlocksBySharedMemory = div(r.SharedMemCapacityPerSM, alloc)
	default:
		r.SharedMemCapacityPerSM = carveoutCapacity(d, k.CarveoutPercent, 0)
	}
}

// bind sets r's binding limit (fewest blocks, ties in declaration order)
// and the active blocks, warps and threads per SM and the occupancy it
// allows.
func (r *Result) bind() {
	counts := [4]int{r.BlocksByWarps, r.BlocksByBlocks, r.BlocksByRegisters, r.BlocksBySharedMemory}
	best := 0
	for i := 1; i < len(counts); i++ {
		if counts[i] < counts[best] {
			best = i
		}
	}
	r.Limit = Limit(best)
	r.ActiveBlocksPerSM = counts[best]
	r.ActiveWarpsPerSM = r.ActiveBlocksPerSM * r.WarpsPerBlock
	r.ActiveThreadsPerSM = r.ActiveBlocksPerSM * r.BlockSize
	if r.MaxWarpsPerSM > 0 {
		r.Occupancy = float64(r.ActiveWarpsPerSM) / float64(r.MaxWarpsPerSM)
	}
}

// carveoutCapacity returns the shared memory configured per SM for a kernel
// whose blocks allocate alloc bytes each: the preference (percent of the
// per-SM shared memory, rounded down as cuda_occupancy.h does; the whole
// per-SM memory by default)
// rounded up to a supported carveout, or, when one block does not fit in
// that, the smallest supported carveout that fits one block. A device with
// no carveout list always uses its whole per-SM shared memory.
func carveoutCapacity(d *Device, percent, alloc int) int {
	if len(d.SharedMemCarveoutsKiB) == 0 || percent <= 0 {
		return d.SharedMemPerSM
	}
	pref := div(d.SharedMemPerSM*percent, 100)
	capacity := d.SharedMemPerSM
	for _, c := range d.SharedMemCarveoutsKiB {
		if c*1024 >= pref {
			capacity = c * 1024
			break
		}
	}
	if capacity < alloc {
		capacity = d.SharedMemPerSM
		for _, c := range d.SharedMemCarveoutsKiB {
			if c*1024 >= alloc {
				capacity = c * 1024
				break
			}
		}
	}
	return capacity
}

// MaxPotentialBlockSize returns the block size with the highest occupancy
// in threads per SM and the minimum grid size that fills the device at that
// size (blocks per SM x SMs), as cuOccupancyMaxPotentialBlockSize does with a
// constant dynamic shared memory size: it tries block sizes from
// min(device max, kernel max) down to 32 in steps of 32 (the first try is
// the limit itself when it is not a multiple of 32), keeps the largest size
// with the most threads per SM, and stops early once an SM is full.
//
// Carveout preferences are applied as cuda_occupancy.h and
// cuOccupancyMaxActiveBlocksPerMultiprocessor apply them. The driver's own
// cuOccupancyMaxPotentialBlockSize (H200, driver 580.159.04) ignores a
// preference of 1 to 100 percent and answers as with the default carveout;
// pass CarveoutPercent -1 to reproduce its answer.
//
// When no block size can run (for example registers above the per-thread
// maximum), it returns 0, 0 and no error, as the driver does. Errors are the
// same malformed-input errors as Compute.
func MaxPotentialBlockSize(d Device, k Kernel) (blockSize, minGridSize int, err error) {
	if err := d.Validate(); err != nil {
		return 0, 0, err
	}
	if err := k.validate(); err != nil {
		return 0, 0, err
	}
	limit := d.MaxThreadsPerBlock
	if k.MaxThreadsPerBlock > 0 && k.MaxThreadsPerBlock < limit {
		limit = k.MaxThreadsPerBlock
	}
	gran := d.WarpSize
	bestThreads, bestBlocks := 0, 0
	for aligned := roundUp(limit, gran); aligned > 0; aligned -= gran {
		try := min(aligned, limit)
		r, err := compute(&d, k, try)
		if err != nil {
			return 0, 0, err
		}
		if threads := r.ActiveThreadsPerSM; threads > bestThreads {
			bestThreads, bestBlocks, blockSize = threads, r.ActiveBlocksPerSM, try
		}
		if bestThreads == d.MaxThreadsPerSM {
			break
		}
	}
	grid, err := checked.Mul(uint64(bestBlocks), uint64(d.SMCount), "min grid size")
	if err != nil || grid > math.MaxInt32 {
		return 0, 0, &InputError{"min grid size", "overflows", "check the device's sm_count"}
	}
	return blockSize, int(grid), nil
}

// CoResidentGrid returns the largest grid whose blocks are all resident at
// once: Compute's ActiveBlocksPerSM x SMCount. Size persistent and
// cooperative kernels with it (and launch them cooperatively, so the driver
// refuses an oversized grid instead of deadlocking). It returns 0 when the
// configuration cannot run; errors are Compute's.
func CoResidentGrid(d Device, k Kernel, blockSize int) (int, error) {
	r, err := Compute(d, k, blockSize)
	if err != nil {
		return 0, err
	}
	g, err := checked.Mul(uint64(r.ActiveBlocksPerSM), uint64(d.SMCount), "co-resident grid")
	if err != nil || g > math.MaxInt32 {
		return 0, &InputError{"co-resident grid", "overflows", "check the device's sm_count"}
	}
	return int(g), nil
}
