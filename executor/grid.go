package executor

import (
	"fmt"
	"math"
	"time"

	"github.com/gpuplan/gpuplan/internal/checked"
	"github.com/gpuplan/gpuplan/occupancy"
)

// checkShapeLocked validates a launch shape against the kernel and device.
func (x *Executor) checkShapeLocked(k *Kernel, cfg LaunchConfig) error {
	fix := "Fix: use positive grid and block dimensions within the device limits."
	for i := range 3 {
		if cfg.Grid[i] == 0 || cfg.Block[i] == 0 {
			return invalidArg("launch shape", fix, "kernel %s: grid %v and block %v must have no zero dimension", k.name, cfg.Grid, cfg.Block)
		}
		if int64(cfg.Grid[i]) > x.dev.MaxGridDim[i] || int(cfg.Block[i]) > x.dev.MaxBlockDim[i] {
			return invalidArg("launch shape", fix, "kernel %s: grid %v / block %v exceed the device's %v / %v", k.name, cfg.Grid, cfg.Block, x.dev.MaxGridDim, x.dev.MaxBlockDim)
		}
	}
	threads := uint64(cfg.Block[0]) * uint64(cfg.Block[1]) * uint64(cfg.Block[2])
	lim := min(x.dev.MaxThreadsPerBlock, k.attrs.MaxThreadsPerBlock)
	if threads > uint64(lim) {
		return invalidArg("threads per block", fmt.Sprintf("Fix: use at most %d threads per block for kernel %s.", lim, k.name), "%d threads", threads)
	}
	if err := x.optInLocked(k, int(cfg.DynamicSharedBytes)); err != nil {
		return err
	}
	if !cfg.Cooperative {
		return nil
	}
	if !x.dev.CooperativeLaunch {
		return invalidArg("cooperative launch", "Fix: use DispatchWithGridSyncSplit, which splits at grid barriers on devices without cooperative launch.", "device %s does not support cooperative launch", x.dev.Name)
	}
	grid, err := checked.Mul(uint64(cfg.Grid[0])*uint64(cfg.Grid[1]), uint64(cfg.Grid[2]), "grid blocks")
	if err != nil {
		return err
	}
	plan, err := x.coGridLocked(k, int(threads), int(cfg.DynamicSharedBytes))
	if err != nil {
		return err
	}
	if grid > uint64(plan.GridBlocks) {
		return &CoResidencyError{Kernel: k.name, GridBlocks: grid, BlocksPerSM: plan.BlocksPerSM, SMCount: x.dev.SMCount,
			Limit: uint64(plan.GridBlocks), BlockThreads: int(threads), DynamicSmem: int(cfg.DynamicSharedBytes)}
	}
	return nil
}

// GridPlan is a co-resident grid for a persistent or cooperative kernel.
type GridPlan struct {
	// BlocksPerSM is the blocks per SM used: the smaller of the model's and
	// the driver's answers.
	BlocksPerSM int `json:"blocks_per_sm"`
	// ModelBlocksPerSM is occupancy.Compute's answer.
	ModelBlocksPerSM int `json:"model_blocks_per_sm"`
	// DriverBlocksPerSM is cuOccupancyMaxActiveBlocksPerMultiprocessor's.
	DriverBlocksPerSM int `json:"driver_blocks_per_sm"`
	// Limit is the occupancy model's binding limit.
	Limit occupancy.Limit `json:"limit"`
	// GridBlocks = BlocksPerSM × SMCount.
	GridBlocks uint32 `json:"grid_blocks"`
	SMCount    int    `json:"sm_count"`
	// BlockThreads and DynamicSharedBytes are the inputs.
	BlockThreads       int `json:"block_threads"`
	DynamicSharedBytes int `json:"dynamic_shared_bytes"`
}

// Agrees reports whether the occupancy model and the driver agree.
func (g GridPlan) Agrees() bool { return g.ModelBlocksPerSM == g.DriverBlocksPerSM }

// Config returns the cooperative launch shape of the plan.
func (g GridPlan) Config() LaunchConfig {
	c := Linear(g.GridBlocks, uint32(g.BlockThreads))
	c.DynamicSharedBytes = uint32(g.DynamicSharedBytes)
	c.Cooperative = true
	return c
}

// CooperativeGrid sizes the largest co-resident grid of k at the given
// block size and dynamic shared memory: the occupancy model's blocks per SM,
// cross-checked against the driver (the smaller is used, and both are
// reported), times the SM count. A kernel that cannot fit one block per SM
// is refused with a *CoResidencyError.
func (x *Executor) CooperativeGrid(k *Kernel, blockThreads, dynamicSharedBytes int) (GridPlan, error) {
	if k == nil {
		return GridPlan{}, errNilKernel()
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return GridPlan{}, ErrClosed
	}
	if err := x.optInLocked(k, dynamicSharedBytes); err != nil {
		return GridPlan{}, err
	}
	return x.coGridLocked(k, blockThreads, dynamicSharedBytes)
}

func (x *Executor) coGridLocked(k *Kernel, blockThreads, dyn int) (GridPlan, error) {
	if blockThreads <= 0 || blockThreads > min(x.dev.MaxThreadsPerBlock, k.attrs.MaxThreadsPerBlock) {
		return GridPlan{}, invalidArg("threads per block", fmt.Sprintf("Fix: use 1 to %d threads per block for kernel %s.", min(x.dev.MaxThreadsPerBlock, k.attrs.MaxThreadsPerBlock), k.name), "%d", blockThreads)
	}
	r, err := occupancy.Compute(x.dev, k.OccupancyKernel(dyn), blockThreads)
	if err != nil {
		return GridPlan{}, err
	}
	drv, err := x.b.MaxActiveBlocksPerSM(k.ref, blockThreads, dyn)
	if err != nil {
		return GridPlan{}, err
	}
	g := GridPlan{ModelBlocksPerSM: r.ActiveBlocksPerSM, DriverBlocksPerSM: drv, Limit: r.Limit,
		BlocksPerSM: min(r.ActiveBlocksPerSM, drv), SMCount: x.dev.SMCount, BlockThreads: blockThreads, DynamicSharedBytes: dyn}
	blocks, err := checked.Mul(uint64(g.BlocksPerSM), uint64(x.dev.SMCount), "co-resident grid blocks")
	if err != nil || blocks > math.MaxUint32 {
		return GridPlan{}, &checked.OverflowError{Field: "co-resident grid blocks"}
	}
	g.GridBlocks = uint32(blocks)
	if g.GridBlocks == 0 {
		return g, &CoResidencyError{Kernel: k.name, GridBlocks: 1, BlocksPerSM: 0, SMCount: x.dev.SMCount, Limit: 0, BlockThreads: blockThreads, DynamicSmem: dyn}
	}
	return g, nil
}

// SplitResult reports how DispatchWithGridSyncSplit ran.
type SplitResult struct {
	// Launches is 1 for a cooperative run, else the number of phases, times
	// the launch's FixpointIterations.
	Launches int `json:"launches"`
	// Cooperative is true when one cooperative launch ran every phase.
	Cooperative bool `json:"cooperative"`
	// Timing sums the launches' timings.
	Timing Timing `json:"timing"`
}

// DispatchWithGridSyncSplit runs a phased kernel (vyre's
// dispatch_with_grid_sync_split). The kernel's last two parameters must be
// (unsigned long long phase_begin, unsigned long long phase_end): it runs
// phases [begin, end) with a grid-wide barrier between consecutive phases.
//
// With cfg.Cooperative and a device that supports cooperative launch, it is
// one cooperative launch over [0, phases) (the grid must be co-resident).
// Otherwise the work is split at the grid barriers: one ordinary launch per
// phase p over [p, p+1), enqueued back to back on one stream (so each kernel
// boundary acts as the barrier) and timed as a whole. forceSplit takes the
// split path on any device.
func (x *Executor) DispatchWithGridSyncSplit(k *Kernel, cfg LaunchConfig, phases uint64, forceSplit bool, args ...Arg) (SplitResult, error) {
	if phases == 0 || phases > MaxSplitPhases {
		return SplitResult{}, invalidArg("phases", fmt.Sprintf("Fix: pass 1 to %d phases; loop on the host for more.", MaxSplitPhases), "%d phases", phases)
	}
	coop := cfg.Cooperative && x.dev.CooperativeLaunch && !forceSplit
	if coop {
		all := append(append(make([]Arg, 0, len(args)+2), args...), U64(0), U64(phases))
		t, err := x.Launch(k, cfg, all...)
		return SplitResult{Launches: int(cfg.iterations()), Cooperative: true, Timing: t}, err
	}
	cfg.Cooperative = false
	tails := make([][]uint64, phases)
	for p := range phases {
		tails[p] = []uint64{p, p + 1}
	}
	t0 := time.Now()
	x.mu.Lock()
	pd, err := x.enqueueLocked(t0, k, cfg, args, tails)
	x.mu.Unlock()
	if err != nil {
		return SplitResult{}, err
	}
	t, err := pd.Wait()
	return SplitResult{Launches: int(phases) * int(cfg.iterations()), Timing: t}, err
}
