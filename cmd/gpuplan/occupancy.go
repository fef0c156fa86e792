package main

import (
	"errors"
	"fmt"

	"github.com/gpuplan/gpuplan/internal/quote"
	"github.com/gpuplan/gpuplan/occupancy"
)

const occupancyAbout = `
Compute a kernel's exact occupancy on a device with NVIDIA's occupancy rules
(warps, the block cap, registers in 256-register warp units over 4
sub-partitions, shared memory with reserved bytes, granularity, opt-in and
carveout): active blocks, warps and threads per SM, the occupancy, which
limit binds, and the co-resident grid for persistent or cooperative kernels.

--block B computes one block size; --sweep computes every block size from
32 to 1024 in steps of 32 and marks the best (highest occupancy, ties to the
larger size, as cuOccupancyMaxPotentialBlockSize chooses). A configuration
that cannot run reports 0 blocks and the limit that prevents it.

Examples:
  gpuplan occupancy --device h200 --regs 10 --dyn 20000 --block 96
  gpuplan occupancy --device h100-sxm --regs 64 --sweep
`

// kernelFlags are the kernel resource flags of the occupancy and diagnose
// subcommands.
type kernelFlags struct {
	regs, smem, dyn, maxThreads, carveout int
	optIn                                 bool
}

func (kf *kernelFlags) add(f *flags, dynUsage string) {
	f.IntVar(&kf.regs, "regs", 0, "registers per thread (as ptxas -v reports), 0 to 255")
	f.IntVar(&kf.smem, "smem", 0, "static shared memory per block in bytes")
	f.IntVar(&kf.dyn, "dyn", 0, dynUsage)
	f.BoolVar(&kf.optIn, "opt-in", false, "the kernel opted in to the device's maximum dynamic shared memory per block")
	f.IntVar(&kf.maxThreads, "max-threads", 0, "the kernel's own max threads per block (__launch_bounds__); 0 = the device maximum")
	f.IntVar(&kf.carveout, "carveout", -1, "preferred shared-memory carveout in percent (1..100); -1 = default")
}

// kernelFlagNames maps the exact model's input names to the flags that
// set them.
var kernelFlagNames = map[string]string{
	"registers_per_thread":  "regs",
	"static_shared_bytes":   "smem",
	"dynamic_shared_bytes":  "dyn",
	"max_threads_per_block": "max-threads",
	"carveout_percent":      "carveout",
	"block_size":            "block",
}

// kernelFlagError turns the exact model's rejection of a kernel value or
// block size, which came from a flag, into a usage error naming the flag
// (exit status 2); any other error is returned as it is.
func kernelFlagError(cmd string, err error) error {
	var ie *occupancy.InputError
	if errors.As(err, &ie) {
		if name, ok := kernelFlagNames[ie.Field]; ok {
			return usagef("gpuplan %s: --%s (%s) %s. Fix: %s", cmd, name, ie.Field, ie.Msg, ie.Fix)
		}
	}
	return err
}

// checkRegsFlag refuses --regs above the most registers a thread can use
// on any CUDA device (below 0 the exact model refuses it).
func checkRegsFlag(cmd string, regs int) error {
	if regs > cudaMaxRegistersPerThread {
		return usagef("gpuplan %s: --regs (registers_per_thread) %d is above %d, the most registers a thread can use on any CUDA device (ptxas never assigns more). Fix: give the count ptxas -v prints for the kernel, 0 to %d",
			cmd, regs, cudaMaxRegistersPerThread, cudaMaxRegistersPerThread)
	}
	return nil
}

// checkBlockFlag refuses a --block below 1 or above the device's max
// threads per block, which no launch on it can have.
func checkBlockFlag(d occupancy.Device, label string, block int) error {
	if block < 1 || block > d.MaxThreadsPerBlock {
		return usagef("gpuplan occupancy: --block (block_size) %d is outside 1..%d, the max threads per block of %s. Fix: give the threads per block from 1 to %d, for example 128",
			block, d.MaxThreadsPerBlock, quote.Echo(label), d.MaxThreadsPerBlock)
	}
	return nil
}

// kernel is the kernel the flags describe.
func (kf *kernelFlags) kernel() occupancy.Kernel {
	return occupancy.Kernel{RegistersPerThread: kf.regs, StaticSharedBytes: kf.smem, DynamicSharedBytes: kf.dyn,
		OptIn: kf.optIn, MaxThreadsPerBlock: kf.maxThreads, CarveoutPercent: kf.carveout}
}

type occupancyOne struct {
	Device         string           `json:"device"`
	DeviceName     string           `json:"device_name"`
	Kernel         occupancy.Kernel `json:"kernel"`
	Result         occupancy.Result `json:"result"`
	CoResidentGrid int              `json:"co_resident_grid"`
}

type occupancySweep struct {
	Device                string             `json:"device"`
	DeviceName            string             `json:"device_name"`
	Kernel                occupancy.Kernel   `json:"kernel"`
	Rows                  []occupancy.Result `json:"rows"`
	BestBlockSize         int                `json:"best_block_size"`
	MaxPotentialBlockSize int                `json:"max_potential_block_size"`
	MinGridSize           int                `json:"min_grid_size"`
}

func runOccupancy(e *env, args []string) error {
	f := e.newFlags("occupancy", "occupancy (--device NAME | --device-file FILE) --regs R [--smem S] [--dyn D] [--opt-in] (--block B | --sweep) [--json]", occupancyAbout)
	var df deviceFlags
	df.add(f)
	var kf kernelFlags
	kf.add(f, "dynamic shared memory per block in bytes")
	block := f.Int("block", 0, "threads per block, 1 to the device's max threads per block")
	sweep := f.Bool("sweep", false, "compute every block size 32..1024 in steps of 32")
	if err := f.parse(args); err != nil {
		return err
	}
	if err := f.noArgs(); err != nil {
		return err
	}
	set := setFlags(f)
	if !set["regs"] {
		return usagef("gpuplan occupancy: missing --regs R (registers per thread). Fix: add --regs with the count ptxas -v prints for the kernel")
	}
	if set["block"] == *sweep {
		return usagef("gpuplan occupancy: give exactly one of --block B or --sweep. Fix: use --block B for one block size, or --sweep for every size from 32 to 1024, but not both")
	}
	k := kf.kernel()
	if err := k.Validate(); err != nil {
		return kernelFlagError("occupancy", err)
	}
	if err := checkRegsFlag("occupancy", kf.regs); err != nil {
		return err
	}
	d, label, err := df.resolve(e, "occupancy")
	if err != nil {
		return err
	}
	if !*sweep {
		if err := checkBlockFlag(d, label, *block); err != nil {
			return err
		}
	}
	if *sweep {
		return occupancySweepRun(e, f.json, d, label, k)
	}
	r, err := occupancy.Compute(d, k, *block)
	if err != nil {
		return kernelFlagError("occupancy", err)
	}
	grid, err := occupancy.CoResidentGrid(d, k, *block)
	if err != nil {
		return kernelFlagError("occupancy", err)
	}
	if f.json {
		return writeJSON(e.stdout, occupancyOne{Device: label, DeviceName: d.Name, Kernel: k, Result: r, CoResidentGrid: grid})
	}
	w := e.stdout
	fmt.Fprintf(w, "device:      %s (%s), cc %s, %d SMs\n", quote.Text(d.Name), quote.Text(label), d.CC(), d.SMCount)
	fmt.Fprintf(w, "kernel:      %d registers/thread, %d B static + %d B dynamic shared memory%s\n", k.RegistersPerThread, k.StaticSharedBytes, k.DynamicSharedBytes, optInText(k.OptIn))
	fmt.Fprintf(w, "block:       %d threads (%d warps)\n", r.BlockSize, r.WarpsPerBlock)
	if r.ActiveBlocksPerSM == 0 {
		fmt.Fprintf(w, "result:      cannot run: 0 blocks per SM, limited by %s\n", r.Limit)
	} else {
		fmt.Fprintf(w, "active:      %d blocks/SM, %d warps/SM, %d threads/SM\n", r.ActiveBlocksPerSM, r.ActiveWarpsPerSM, r.ActiveThreadsPerSM)
		fmt.Fprintf(w, "occupancy:   %.1f%% (%d of %d warps), limited by %s\n", 100*r.Occupancy, r.ActiveWarpsPerSM, r.MaxWarpsPerSM, r.Limit)
	}
	fmt.Fprintf(w, "limits:      warps %s, blocks %s, registers %s, shared-memory %s (blocks per SM)\n",
		blocksText(r.BlocksByWarps), blocksText(r.BlocksByBlocks), blocksText(r.BlocksByRegisters), blocksText(r.BlocksBySharedMemory))
	if r.RegistersPerWarp > 0 {
		fmt.Fprintf(w, "registers:   %d per warp allocated\n", r.RegistersPerWarp)
	}
	if r.SharedBytesPerBlock > 0 {
		fmt.Fprintf(w, "shared mem:  %d B allocated per block (per-block limit %d B), %d B configured per SM\n", r.SharedBytesPerBlock, r.SharedMemLimitPerBlock, r.SharedMemCapacityPerSM)
	}
	fmt.Fprintf(w, "co-resident: %d blocks (%d per SM x %d SMs)\n", grid, r.ActiveBlocksPerSM, d.SMCount)
	return nil
}

func optInText(optIn bool) string {
	if optIn {
		return ", opted in"
	}
	return ""
}

func blocksText(n int) string {
	if n == occupancy.UnlimitedBlocks {
		return "-"
	}
	return fmt.Sprint(n)
}

func occupancySweepRun(e *env, jsonOut bool, d occupancy.Device, label string, k occupancy.Kernel) error {
	out := occupancySweep{Device: label, DeviceName: d.Name, Kernel: k}
	bestOcc := -1.0
	for b := 32; b <= 1024; b += 32 {
		r, err := occupancy.Compute(d, k, b)
		if err != nil {
			return kernelFlagError("occupancy", err)
		}
		out.Rows = append(out.Rows, r)
		if r.ActiveBlocksPerSM > 0 && r.Occupancy >= bestOcc {
			bestOcc, out.BestBlockSize = r.Occupancy, b
		}
	}
	var err error
	out.MaxPotentialBlockSize, out.MinGridSize, err = occupancy.MaxPotentialBlockSize(d, k)
	if err != nil {
		return kernelFlagError("occupancy", err)
	}
	if jsonOut {
		return writeJSON(e.stdout, out)
	}
	w := e.stdout
	fmt.Fprintf(w, "device: %s (%s), cc %s, %d SMs\n", quote.Text(d.Name), quote.Text(label), d.CC(), d.SMCount)
	fmt.Fprintf(w, "kernel: %d registers/thread, %d B static + %d B dynamic shared memory%s\n\n", k.RegistersPerThread, k.StaticSharedBytes, k.DynamicSharedBytes, optInText(k.OptIn))
	fmt.Fprintf(w, "%5s  %5s  %9s  %8s  %9s  %-13s  %7s\n", "BLOCK", "WARPS", "BLOCKS/SM", "WARPS/SM", "OCCUPANCY", "LIMIT", "GRID")
	for _, r := range out.Rows {
		mark := ""
		if r.BlockSize == out.BestBlockSize {
			mark = "  <- best"
		}
		fmt.Fprintf(w, "%5d  %5d  %9d  %8d  %8.1f%%  %-13s  %7d%s\n", r.BlockSize, r.WarpsPerBlock, r.ActiveBlocksPerSM, r.ActiveWarpsPerSM,
			100*r.Occupancy, r.Limit, r.ActiveBlocksPerSM*d.SMCount, mark)
	}
	if out.BestBlockSize == 0 {
		fmt.Fprintln(w, "\nno block size can run on this device")
		return nil
	}
	fmt.Fprintf(w, "\nbest: block %d, occupancy %.1f%%; driver's choice (max potential block size): block %d, min grid %d\n",
		out.BestBlockSize, 100*bestOcc, out.MaxPotentialBlockSize, out.MinGridSize)
	return nil
}
