package occupancy

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func randomKernel(r *rand.Rand) Kernel {
	k := Kernel{RegistersPerThread: r.IntN(260)}
	if r.IntN(3) > 0 {
		k.DynamicSharedBytes = r.IntN(240 * 1024)
	}
	if r.IntN(4) == 0 {
		k.StaticSharedBytes = r.IntN(16 * 1024)
	}
	k.OptIn = r.IntN(2) == 0
	if r.IntN(4) == 0 {
		k.CarveoutPercent = r.IntN(102) - 1
	}
	if r.IntN(5) == 0 {
		k.MaxThreadsPerBlock = 32 * (1 + r.IntN(32))
	}
	return k
}

// More registers or more shared memory never raise occupancy; results never
// exceed the hardware caps.
func TestPropertiesMonotoneAndCapped(t *testing.T) {
	ps := Profiles()
	for seed := uint64(1); seed <= 4; seed++ {
		r := rand.New(rand.NewPCG(seed, 0x0cc))
		for range 3000 {
			p := ps[r.IntN(len(ps))]
			d := p.Device
			k := randomKernel(r)
			block := 1 + r.IntN(d.MaxThreadsPerBlock)
			base, err := Compute(d, k, block)
			require.NoError(t, err)

			// Caps.
			assert.GreaterOrEqual(t, base.ActiveBlocksPerSM, 0)
			assert.LessOrEqual(t, base.ActiveBlocksPerSM, d.MaxBlocksPerSM)
			assert.LessOrEqual(t, base.ActiveWarpsPerSM, d.MaxThreadsPerSM/d.WarpSize)
			assert.LessOrEqual(t, base.ActiveThreadsPerSM, d.MaxThreadsPerSM)
			assert.True(t, base.Occupancy >= 0 && base.Occupancy <= 1)
			if base.ActiveBlocksPerSM > 0 {
				if k.RegistersPerThread > 0 {
					assert.LessOrEqual(t, base.ActiveWarpsPerSM*base.RegistersPerWarp, d.RegistersPerSM)
				}
				assert.LessOrEqual(t, base.ActiveBlocksPerSM*base.SharedBytesPerBlock, d.SharedMemPerSM)
			}
			counts := []int{base.BlocksByWarps, base.BlocksByBlocks, base.BlocksByRegisters, base.BlocksBySharedMemory}
			assert.Equal(t, counts[base.Limit], base.ActiveBlocksPerSM)
			for _, c := range counts {
				assert.GreaterOrEqual(t, c, base.ActiveBlocksPerSM)
			}

			// More registers never raise occupancy.
			more := k
			more.RegistersPerThread += 1 + r.IntN(64)
			mr, err := Compute(d, more, block)
			require.NoError(t, err)
			assert.LessOrEqual(t, mr.ActiveBlocksPerSM, base.ActiveBlocksPerSM, "%s %+v -> %+v", p.Short, k, more)

			// More shared memory never raises occupancy.
			more = k
			more.DynamicSharedBytes += 1 + r.IntN(32*1024)
			ms, err := Compute(d, more, block)
			require.NoError(t, err)
			assert.LessOrEqual(t, ms.ActiveBlocksPerSM, base.ActiveBlocksPerSM, "%s %+v -> %+v", p.Short, k, more)

			// vyre's estimate and the exact model: the estimate never reports a
			// runnable kernel where the per-block limits already fail.
			u := KernelResourceUsage{RegsPerThread: uint32(k.RegistersPerThread), SharedBytesPerBlock: uint32(k.SharedBytes())}
			e := EstimateOccupancy(d, u, uint32(block))
			assert.LessOrEqual(t, e.OccupancyBPS, uint32(10000))
			// vyre counts whole warps of threads-limited blocks, so only
			// partial-warp blocks can exceed the SM's warps.
			if block%32 == 0 {
				assert.LessOrEqual(t, int(e.WarpsPerSM), d.MaxThreadsPerSM/d.WarpSize)
			}
		}
	}
}

// MaxPotentialBlockSize agrees with a brute-force sweep: no block size gives
// more threads per SM, and no larger block size gives as many.
func TestPropertyMaxPotentialBlockSizeBruteForce(t *testing.T) {
	ps := Profiles()
	for seed := uint64(1); seed <= 3; seed++ {
		r := rand.New(rand.NewPCG(seed, 0xb10c))
		for range 300 {
			d := ps[r.IntN(len(ps))].Device
			k := randomKernel(r)
			best, grid, err := MaxPotentialBlockSize(d, k)
			require.NoError(t, err)
			limit := d.MaxThreadsPerBlock
			if k.MaxThreadsPerBlock > 0 {
				limit = min(limit, k.MaxThreadsPerBlock)
			}
			bestThreads, bestSize, bestBlocks := 0, 0, 0
			for b := 32; b <= limit; b += 32 {
				res, err := Compute(d, k, b)
				require.NoError(t, err)
				if res.ActiveThreadsPerSM >= bestThreads && res.ActiveThreadsPerSM > 0 {
					bestThreads, bestSize, bestBlocks = res.ActiveThreadsPerSM, b, res.ActiveBlocksPerSM
				}
			}
			if bestThreads == 0 {
				assert.Equal(t, 0, best)
				assert.Equal(t, 0, grid)
				continue
			}
			got, err := Compute(d, k, best)
			require.NoError(t, err)
			assert.Equal(t, bestThreads, got.ActiveThreadsPerSM, "%+v", k)
			if bestThreads < d.MaxThreadsPerSM {
				// No early stop: the driver keeps the largest size with the most threads.
				assert.Equal(t, bestSize, best, "%+v", k)
				assert.Equal(t, bestBlocks*d.SMCount, grid)
			} else {
				// Early stop at the first (largest) size that fills the SM.
				assert.Equal(t, bestSize, best)
				assert.Equal(t, got.ActiveBlocksPerSM*d.SMCount, grid)
			}
		}
	}
}

// The picker returns a candidate with the highest estimate and the smallest
// such size.
func TestPropertyPickerIsArgmax(t *testing.T) {
	d := Blackwell5090Default()
	r := rand.New(rand.NewPCG(7, 7))
	for range 500 {
		u := KernelResourceUsage{RegsPerThread: uint32(r.IntN(300)), SharedBytesPerBlock: uint32(r.IntN(160 * 1024))}
		n := r.IntN(6)
		cands := make([]uint32, n)
		for i := range cands {
			cands[i] = uint32(r.IntN(1100))
		}
		wg, ok := PickWorkgroupSizeForOccupancy(d, u, cands)
		var bestBPS uint32
		found := false
		for _, c := range cands {
			e := EstimateOccupancy(d, u, c)
			if e.IsRunnable() && (!found || e.OccupancyBPS > bestBPS) {
				bestBPS, found = e.OccupancyBPS, true
			}
		}
		require.Equal(t, found, ok)
		if !ok {
			continue
		}
		assert.Equal(t, bestBPS, EstimateOccupancy(d, u, wg).OccupancyBPS)
		for _, c := range cands {
			if e := EstimateOccupancy(d, u, c); e.IsRunnable() && e.OccupancyBPS == bestBPS {
				assert.LessOrEqual(t, wg, c)
			}
		}
	}
}
