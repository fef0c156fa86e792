package main

import (
	"fmt"

	"github.com/gpuplan/gpuplan/egraph"
	"github.com/gpuplan/gpuplan/internal/strictjson"
	"github.com/gpuplan/gpuplan/occupancy"
)

// CUDA's launch limits. The per-axis grid and block limits are the same on
// every device of compute capability 3.0 and later (the CUDA C++
// Programming Guide's technical specifications per compute capability),
// and no device allows more threads per block or registers per thread, so
// a flag above one of them is refused whatever the device: the driver
// rejects such a launch (CUDA_ERROR_INVALID_VALUE) and ptxas never
// assigns more registers.
const (
	// cudaMaxGridDimX is the most blocks along a grid's x axis, 2^31-1.
	cudaMaxGridDimX = 1<<31 - 1
	// cudaMaxGridDimYZ is the most blocks along a grid's y or z axis.
	cudaMaxGridDimYZ = 65535
	// cudaMaxBlockDimXY is the most threads along a block's x or y axis.
	cudaMaxBlockDimXY = 1024
	// cudaMaxBlockDimZ is the most threads along a block's z axis.
	cudaMaxBlockDimZ = 64
	// cudaMaxThreadsPerBlock is the most threads in one block.
	cudaMaxThreadsPerBlock = 1024
	// cudaMaxRegistersPerThread is the most registers one thread can use.
	cudaMaxRegistersPerThread = 255
)

// cudaMaxGridDim and cudaMaxBlockDim are the per-axis limits in x, y, z
// order.
var (
	cudaMaxGridDim  = [3]uint64{cudaMaxGridDimX, cudaMaxGridDimYZ, cudaMaxGridDimYZ}
	cudaMaxBlockDim = [3]uint64{cudaMaxBlockDimXY, cudaMaxBlockDimXY, cudaMaxBlockDimZ}
)

// axisNames names the dimensions in x, y, z order.
const axisNames = "xyz"

// launchLimitFailures are the checks the driver makes at launch that
// vyre's message does not carry, against the device's own limits: every
// grid and block dimension, the kernel's launch bounds (--max-threads),
// registers per thread and per block (given --regs) and static plus
// dynamic shared memory. Each failure reads like the message's, for
// example "block_dim_x(requested=1024,max=512)".
func launchLimitFailures(d occupancy.Device, kf kernelFlags, grid, block [3]uint32, regsGiven bool) []string {
	failures := append(dimFailures("grid_dim", grid, d.MaxGridDim), dimFailures("block_dim", block, d.MaxBlockDim)...)
	threads := uint64(block[0]) * uint64(block[1]) * uint64(block[2])
	if kf.maxThreads > 0 && threads > uint64(kf.maxThreads) {
		failures = append(failures, fmt.Sprintf("launch_bounds(requested=%d,max=%d)", threads, kf.maxThreads))
	}
	if regsGiven && kf.regs > 0 {
		failures = append(failures, registerFailures(d, kf.regs, threads)...)
	}
	return append(failures, sharedMemoryFailures(d, kf)...)
}

// dimFailures compares each dimension of v with the device's maximum for
// that axis; a maximum of 0 (unknown) is not checked.
func dimFailures[T int | int64](name string, v [3]uint32, max [3]T) []string {
	var out []string
	for i, m := range max {
		if m > 0 && uint64(v[i]) > uint64(m) {
			out = append(out, fmt.Sprintf("%s_%c(requested=%d,max=%d)", name, axisNames[i], v[i], m))
		}
	}
	return out
}

// registerFailures checks regs registers per thread against the device's
// per-thread limit and a block of threads against its per-block register
// file, as the hardware does: each warp's registers rounded up to the
// allocation unit, and the warps rounded up to the sub-partitions (the
// rule of cuda_occupancy.h and the exact occupancy model).
func registerFailures(d occupancy.Device, regs int, threads uint64) []string {
	if regs > d.RegistersPerThread {
		return []string{fmt.Sprintf("registers_per_thread(requested=%d,max=%d)", regs, d.RegistersPerThread)}
	}
	warpSize := uint64(max(d.WarpSize, 1))
	warps := (threads + warpSize - 1) / warpSize
	perWarp := roundUpTo(uint64(regs)*warpSize, uint64(d.RegisterAllocUnit))
	need := perWarp * roundUpTo(warps, uint64(d.SubPartitions))
	if need > uint64(d.RegistersPerBlock) {
		return []string{fmt.Sprintf("registers_per_block(requested=%d,max=%d)", need, d.RegistersPerBlock)}
	}
	return nil
}

// sharedMemoryFailures checks static plus dynamic shared memory against
// the per-block limit (the opt-in maximum with --opt-in). The message's
// shared_memory check covers the dynamic bytes alone, so the total is
// reported only when the dynamic bytes fit.
func sharedMemoryFailures(d occupancy.Device, kf kernelFlags) []string {
	limit := d.SharedMemPerBlock
	if kf.optIn {
		limit = d.SharedMemPerBlockOptIn
	}
	if kf.smem > 0 && kf.dyn <= limit && kf.smem+kf.dyn > limit {
		return []string{fmt.Sprintf("shared_memory_total(requested=%d,max=%d)", kf.smem+kf.dyn, limit)}
	}
	return nil
}

// roundUpTo rounds v up to a multiple of unit (v itself when unit is 0 or
// 1).
func roundUpTo(v, unit uint64) uint64 {
	if unit <= 1 {
		return v
	}
	return (v + unit - 1) / unit * unit
}

// checkEgraphLaunch refuses a launch config of 'gpuplan egraph' that no
// CUDA device can launch: more threads per block than any device has, or
// more blocks per launch than a grid's x dimension holds. Zero values are
// left to the planner, which names them.
func checkEgraphLaunch(source string, cfg egraph.LaunchConfig) error {
	switch {
	case cfg.ThreadsPerBlock > cudaMaxThreadsPerBlock:
		return &strictjson.Error{Source: source, Field: "launch.threads_per_block",
			Msg: fmt.Sprintf("is %d, above %d, the most threads per block CUDA launches on any device", cfg.ThreadsPerBlock, cudaMaxThreadsPerBlock),
			Fix: fmt.Sprintf("use a block size from 1 to %d, for example %d (the default)", cudaMaxThreadsPerBlock, egraph.DefaultThreadsPerBlock)}
	case cfg.MaxBlocksPerLaunch > cudaMaxGridDimX:
		return &strictjson.Error{Source: source, Field: "launch.max_blocks_per_launch",
			Msg: fmt.Sprintf("is %d, above %d, CUDA's limit on a grid's x dimension", cfg.MaxBlocksPerLaunch, cudaMaxGridDimX),
			Fix: fmt.Sprintf("use a grid limit from 1 to %d, for example %d (the default)", cudaMaxGridDimX, egraph.DefaultMaxBlocksPerLaunch)}
	}
	return nil
}
