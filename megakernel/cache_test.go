package megakernel_test

import (
	"fmt"
	"math"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/megakernel"
	"github.com/gpuplan/gpuplan/occupancy"
)

// testDevice is vyre's test device key: sm 12.0, warp 32, grid sync and
// tensor cores on, max workgroup 1024.
var testDevice = megakernel.DeviceKey{SMMajor: 12, SMMinor: 0, WarpSize: 32, SupportsGridSync: true, SupportsTensorCores: true, MaxWorkgroupSize: 1024}

func identity(hash uint64) megakernel.PlanIdentity {
	return megakernel.PlanIdentity{GraphLayoutHash: hash, Kind: megakernel.Dataflow, Device: testDevice}
}

func plan(tp megakernel.Topology) func() megakernel.CachedPlan {
	return func() megakernel.CachedPlan {
		return megakernel.CachedPlan{Topology: tp, Decision: megakernel.TopologyDecision{Topology: tp}}
	}
}

func key(hash uint64, density float64) megakernel.PlanCacheKey {
	return megakernel.NewPlanCacheKey(identity(hash), sample(density, 0), mem1000, 100, 0)
}

func TestDeviceKeyFor(t *testing.T) {
	assert.Equal(t, testDevice, megakernel.DeviceKeyFor(occupancy.Blackwell5090Default()))
	h100, err := occupancy.Lookup("h100-sxm")
	require.NoError(t, err)
	assert.Equal(t, megakernel.DeviceKey{SMMajor: 9, WarpSize: 32, SupportsGridSync: true, SupportsTensorCores: true, MaxWorkgroupSize: 1024},
		megakernel.DeviceKeyFor(h100))
	tests := []struct {
		name string
		dev  occupancy.Device
		want megakernel.DeviceKey
	}{
		{"pascal without cooperative launch", occupancy.Device{Major: 6, Minor: 1, WarpSize: 32, MaxThreadsPerBlock: 1024},
			megakernel.DeviceKey{SMMajor: 6, SMMinor: 1, WarpSize: 32, MaxWorkgroupSize: 1024}},
		{"pascal with cooperative launch", occupancy.Device{Major: 6, Minor: 0, WarpSize: 32, CooperativeLaunch: true, MaxThreadsPerBlock: 1024},
			megakernel.DeviceKey{SMMajor: 6, WarpSize: 32, SupportsGridSync: true, MaxWorkgroupSize: 1024}},
		{"maxwell cannot grid sync", occupancy.Device{Major: 5, Minor: 2, WarpSize: 32, CooperativeLaunch: true, MaxThreadsPerBlock: 1024},
			megakernel.DeviceKey{SMMajor: 5, SMMinor: 2, WarpSize: 32, MaxWorkgroupSize: 1024}},
		{"u16 fields saturate", occupancy.Device{Major: 70000, Minor: -3, WarpSize: 1 << 20, MaxThreadsPerBlock: -1},
			megakernel.DeviceKey{SMMajor: 65535, SMMinor: 0, WarpSize: 65535, SupportsTensorCores: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, megakernel.DeviceKeyFor(tc.dev))
		})
	}
}

func TestPlanCacheKeyBuckets(t *testing.T) {
	id := identity(1)
	k := func(s megakernel.ScheduleSample, m megakernel.MemoryBudget, launch, fusion float64) megakernel.PlanCacheKey {
		return megakernel.NewPlanCacheKey(id, s, m, launch, fusion)
	}
	t.Run("keys differ by kind, density bucket and sm minor", func(t *testing.T) {
		base := k(sample(0.01, 0), mem1000, 100, 0)
		other := id
		other.Kind = megakernel.Ifds
		assert.NotEqual(t, base, megakernel.NewPlanCacheKey(other, sample(0.01, 0), mem1000, 100, 0))
		assert.NotEqual(t, base, k(sample(0.95, 0), mem1000, 100, 0))
		other = id
		other.Device.SMMinor = 1
		assert.NotEqual(t, base, megakernel.NewPlanCacheKey(other, sample(0.01, 0), mem1000, 100, 0))
		other = id
		other.Kind = megakernel.CustomAnalysis(7)
		assert.NotEqual(t, megakernel.NewPlanCacheKey(other, sample(0.01, 0), mem1000, 100, 0),
			megakernel.NewPlanCacheKey(megakernel.PlanIdentity{GraphLayoutHash: 1, Kind: megakernel.CustomAnalysis(8), Device: testDevice}, sample(0.01, 0), mem1000, 100, 0))
	})
	t.Run("density", func(t *testing.T) {
		for _, c := range []struct {
			d    float64
			want uint32
		}{{0.90, 14}, {0.91, 14}, {0.01, 0}, {0.95, 14}, {1, 15}, {3, 15}, {-1, 0}, {math.NaN(), 0}, {math.Inf(1), 0}} {
			assert.Equal(t, c.want, k(sample(c.d, 0), mem1000, 100, 0).FrontierDensityBucket, "density %v", c.d)
		}
	})
	t.Run("memory uses exact 128-bit math and is not clamped", func(t *testing.T) {
		for _, c := range []struct {
			m    megakernel.MemoryBudget
			want uint32
		}{
			{megakernel.MemoryBudget{RequiredBytes: 1 << 62, BudgetBytes: 1 << 63}, 5},
			{megakernel.MemoryBudget{RequiredBytes: 1 << 63, BudgetBytes: 1 << 63}, 10},
			{megakernel.MemoryBudget{RequiredBytes: 300, BudgetBytes: 100}, 30},
			{megakernel.MemoryBudget{}, 0},
			{megakernel.MemoryBudget{RequiredBytes: 1}, math.MaxUint32 / 1000},
			{megakernel.MemoryBudget{RequiredBytes: math.MaxUint64, BudgetBytes: 1}, math.MaxUint32 / 1000},
		} {
			assert.Equal(t, c.want, k(sample(0.5, 0), c.m, 100, 0).MemoryPressureBucket, "%+v", c.m)
		}
	})
	t.Run("readback", func(t *testing.T) {
		for _, c := range []struct {
			b    uint64
			want uint32
		}{{0, 0}, {1, 0}, {4095, 0}, {4096, 1}, {8191, 1}, {8192, 2}, {1 << 20, 9}, {math.MaxUint64, 52}} {
			assert.Equal(t, c.want, k(sample(0.5, c.b), mem1000, 100, 0).ReadbackPressureBucket, "bytes %d", c.b)
		}
	})
	t.Run("launch", func(t *testing.T) {
		for _, c := range []struct {
			cost, launch float64
			want         uint32
		}{{1000, 250, 2}, {1000, 99, 0}, {1000, 0, 0}, {1000, -5, 0}, {0, 250, 0}, {math.NaN(), 250, 0},
			{1000, math.Inf(1), math.MaxUint32 / 1000}, {1000, math.NaN(), math.MaxUint32 / 1000}, {1e-9, 1e9, math.MaxUint32 / 1000}} {
			s := megakernel.ScheduleSample{DispatchCostNS: c.cost, FrontierDensity: 0.5}
			assert.Equal(t, c.want, k(s, mem1000, c.launch, 0).LaunchPressureBucket, "cost %v launch %v", c.cost, c.launch)
		}
	})
	t.Run("fusion", func(t *testing.T) {
		for _, c := range []struct {
			f    float64
			want uint32
		}{{0.95, 9}, {0.70, 7}, {0.6999, 6}, {1.5, 15}, {-1, 0}, {math.NaN(), 0}, {math.Inf(1), 0}} {
			assert.Equal(t, c.want, k(sample(0.5, 0), mem1000, 100, c.f).FusionPressureBucket, "fusion %v", c.f)
		}
	})
}

func TestPlanCacheGetOrInsert(t *testing.T) {
	t.Run("hit keeps the first decision", func(t *testing.T) {
		c := megakernel.NewPlanCache(megakernel.DefaultMaxPlans)
		first := c.GetOrInsert(key(1, 0.5), plan(megakernel.FusedWave))
		second := c.GetOrInsert(key(1, 0.5), plan(megakernel.SparseFrontier))
		assert.Equal(t, megakernel.FusedWave, first.Topology)
		assert.Equal(t, megakernel.FusedWave, second.Topology)
		assert.Equal(t, megakernel.CacheStats{Hits: 1, Misses: 1, Entries: 1}, c.Stats())
	})
	t.Run("LRU with capacity 2", func(t *testing.T) {
		c := megakernel.NewPlanCache(2)
		builds := map[uint64]int{}
		get := func(h uint64) {
			c.GetOrInsert(key(h, 0.5), func() megakernel.CachedPlan { builds[h]++; return plan(megakernel.HybridFrontier)() })
		}
		get(1) // A
		get(2) // B
		get(1) // hit A
		get(3) // C evicts B
		assert.Equal(t, megakernel.CacheStats{Hits: 1, Misses: 3, Evictions: 1, Entries: 2}, c.Stats())
		get(2) // B rebuilt, evicts A (least recent)
		assert.Equal(t, 2, builds[2])
		get(3)
		assert.Equal(t, megakernel.CacheStats{Hits: 2, Misses: 4, Evictions: 2, Entries: 2}, c.Stats())
		get(1)
		assert.Equal(t, 2, builds[1], "A was evicted")
	})
	t.Run("zero capacity never caches", func(t *testing.T) {
		c := megakernel.NewPlanCache(0)
		n := 0
		for i := 0; i < 3; i++ {
			c.GetOrInsert(key(1, 0.5), func() megakernel.CachedPlan { n++; return plan(megakernel.DenseFrontier)() })
		}
		assert.Equal(t, 3, n)
		assert.Equal(t, megakernel.CacheStats{Misses: 3}, c.Stats())
	})
	t.Run("clear keeps the counters", func(t *testing.T) {
		c := megakernel.NewPlanCache(4)
		c.GetOrInsert(key(1, 0.5), plan(megakernel.FusedWave))
		c.GetOrInsert(key(1, 0.5), plan(megakernel.FusedWave))
		c.Clear()
		assert.Equal(t, megakernel.CacheStats{Hits: 1, Misses: 1}, c.Stats())
		c.GetOrInsert(key(1, 0.5), plan(megakernel.FusedWave))
		assert.Equal(t, megakernel.CacheStats{Hits: 1, Misses: 2, Entries: 1}, c.Stats())
	})
	t.Run("concurrent use", func(t *testing.T) {
		c := megakernel.NewPlanCache(8)
		var wg sync.WaitGroup
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 200; i++ {
					c.GetOrInsert(key(uint64(i%16), 0.5), plan(megakernel.SparseFrontier))
				}
			}()
		}
		wg.Wait()
		s := c.Stats()
		assert.Equal(t, uint64(800), s.Hits+s.Misses)
		assert.LessOrEqual(t, s.Entries, 8)
	})
}

func TestPlanCacheSelectTopology(t *testing.T) {
	id := identity(9)
	t.Run("reused within a pressure bucket", func(t *testing.T) {
		c := megakernel.NewPlanCache(megakernel.DefaultMaxPlans)
		a := c.GetOrSelectTopology(id, sample(0.90, 0), degree4, mem1000, 100, 0)
		b := c.GetOrSelectTopology(id, sample(0.91, 0), degree4, mem1000, 100, 0)
		assert.Equal(t, megakernel.BlockDenseFrontier, a.Topology)
		assert.Equal(t, a, b)
		assert.Equal(t, uint64(1), c.Stats().Hits)
	})
	t.Run("hysteresis across adjacent buckets", func(t *testing.T) {
		c := megakernel.NewPlanCache(megakernel.DefaultMaxPlans)
		a := c.GetOrSelectTopology(id, sample(0.75, 0), degree4, mem1000, 100, 0)
		b := c.GetOrSelectTopology(id, sample(0.69, 0), degree4, mem1000, 100, 0)
		assert.Equal(t, megakernel.DenseFrontier, a.Topology)
		assert.Equal(t, megakernel.DenseFrontier, b.Topology, "fresh would be Hybrid")
		assert.Equal(t, megakernel.CacheStats{Hits: 0, Misses: 2, Entries: 2}, c.Stats())
		other := megakernel.NewPlanCache(megakernel.DefaultMaxPlans)
		assert.Equal(t, megakernel.HybridFrontier, other.GetOrSelectTopology(id, sample(0.69, 0), degree4, mem1000, 100, 0).Topology)
	})
	t.Run("a hit makes its topology the previous one", func(t *testing.T) {
		// The previous topology is that of the identity's most recent
		// serial: after Dense, Hybrid and a hit on Dense, a near-Dense
		// density stays Dense (it would stay Hybrid against Hybrid).
		c := megakernel.NewPlanCache(megakernel.DefaultMaxPlans)
		assert.Equal(t, megakernel.DenseFrontier, c.GetOrSelectTopology(id, sample(0.75, 0), degree4, mem1000, 100, 0).Topology)
		assert.Equal(t, megakernel.HybridFrontier, c.GetOrSelectTopology(id, sample(0.35, 0), degree4, mem1000, 100, 0).Topology)
		assert.Equal(t, megakernel.DenseFrontier, c.GetOrSelectTopology(id, sample(0.75, 0), degree4, mem1000, 100, 0).Topology)
		assert.Equal(t, megakernel.DenseFrontier, c.GetOrSelectTopology(id, sample(0.68, 0), degree4, mem1000, 100, 0).Topology)
		assert.Equal(t, megakernel.CacheStats{Hits: 1, Misses: 3, Entries: 3}, c.Stats())
	})
	t.Run("memory bucket change reselects", func(t *testing.T) {
		c := megakernel.NewPlanCache(megakernel.DefaultMaxPlans)
		a := c.GetOrSelectTopology(id, sample(0.5, 1<<20), degree4, mem1000, 250, 0.9)
		b := c.GetOrSelectTopology(id, sample(0.5, 1<<20), degree4, megakernel.MemoryBudget{RequiredBytes: 9500, BudgetBytes: 10000}, 250, 0.9)
		assert.Equal(t, megakernel.FusedWave, a.Topology)
		assert.Equal(t, megakernel.SparseFrontier, b.Topology)
		assert.Equal(t, "memory_pressure_sparse_safety", b.Decision.Reason())
	})
	t.Run("readback, launch and fusion changes reselect", func(t *testing.T) {
		c := megakernel.NewPlanCache(megakernel.DefaultMaxPlans)
		c.GetOrSelectTopology(id, sample(0.5, 1<<20), degree4, mem1000, 250, 0.9)
		c.GetOrSelectTopology(id, sample(0.5, 1<<10), degree4, mem1000, 250, 0.9)
		c.GetOrSelectTopology(id, sample(0.5, 1<<20), degree4, mem1000, 50, 0.9)
		c.GetOrSelectTopology(id, sample(0.5, 1<<20), degree4, mem1000, 250, 0.1)
		assert.Equal(t, megakernel.CacheStats{Misses: 4, Entries: 4}, c.Stats())
	})
	t.Run("never fused without grid sync", func(t *testing.T) {
		c := megakernel.NewPlanCache(megakernel.DefaultMaxPlans)
		noSync := id
		noSync.Device.SupportsGridSync = false
		p := c.GetOrSelectTopology(noSync, sample(0.5, 1<<20), degree4, mem1000, 250, 0.9)
		assert.NotEqual(t, megakernel.FusedWave, p.Topology)
		assert.Equal(t, megakernel.HybridFrontier, p.Topology)
	})
}

func TestPlanCacheGetOrPlanExecution(t *testing.T) {
	id := identity(3)
	c := megakernel.NewPlanCache(megakernel.DefaultMaxPlans)
	s := sample(0.5, 1<<20)
	a, err := c.GetOrPlanExecution(id, s, fusedReq(128<<10), 250, 0.9)
	require.NoError(t, err)
	b, err := c.GetOrPlanExecution(id, s, fusedReq(128<<10), 250, 0.9)
	require.NoError(t, err)
	assert.Equal(t, megakernel.FusedWave, a.Topology)
	assert.Equal(t, uint64(8192), a.Memory.ScratchBytes)
	assert.Equal(t, a, b)
	assert.Equal(t, uint64(1), c.Stats().Hits)

	req := fusedReq(80000)
	req.ScratchBytes = 10000
	d, err := c.GetOrPlanExecution(id, s, req, 250, 0.9)
	require.NoError(t, err)
	assert.Equal(t, megakernel.SparseFrontier, d.Topology)
	assert.Equal(t, uint64(10000), d.Memory.ScratchBytes)
	assert.True(t, d.DowngradedToSparse)

	_, err = c.GetOrPlanExecution(id, s, megakernel.MemoryRequest{Graph: megakernel.GraphShape{NodeCount: math.MaxUint64}, BytesPerNode: 2}, 250, 0.9)
	assert.ErrorContains(t, err, "node layout bytes")
	_, err = c.GetOrPlanExecution(id, s, fusedReq(1000), 250, 0.9)
	var ob *megakernel.OverBudgetError
	require.ErrorAs(t, err, &ob)
	assert.Equal(t, megakernel.SparseFrontier, ob.Topology)
}

func TestAnalysisKind(t *testing.T) {
	for _, k := range []megakernel.AnalysisKind{megakernel.Dataflow, megakernel.Ifds, megakernel.ReachingDefinitions,
		megakernel.Liveness, megakernel.PointsTo, megakernel.ParserFrontend, megakernel.CustomAnalysis(42)} {
		back, err := megakernel.ParseAnalysisKind(k.String())
		require.NoError(t, err)
		assert.Equal(t, k, back)
	}
	assert.Equal(t, "custom:42", megakernel.CustomAnalysis(42).String())
	_, err := megakernel.ParseAnalysisKind("taint")
	assert.ErrorContains(t, err, "Fix:")
	_, err = megakernel.ParseAnalysisKind("custom:x")
	assert.Error(t, err)
}

func ExamplePlanCache() {
	cache := megakernel.NewPlanCache(megakernel.DefaultMaxPlans)
	id := megakernel.PlanIdentity{GraphLayoutHash: 0xfeed, Kind: megakernel.Dataflow,
		Device: megakernel.DeviceKeyFor(occupancy.Blackwell5090Default())}
	graph := megakernel.GraphShape{NodeCount: 1000, EdgeCount: 4000}
	memory := megakernel.MemoryBudget{RequiredBytes: 1000, BudgetBytes: 10000}
	for _, density := range []float64{0.90, 0.91, 0.10} {
		p := cache.GetOrSelectTopology(id, megakernel.ScheduleSample{DispatchCostNS: 1000, FrontierDensity: density}, graph, memory, 100, 0)
		fmt.Println(density, p.Topology)
	}
	fmt.Printf("%+v\n", cache.Stats())
	// Output:
	// 0.9 BlockDenseFrontier
	// 0.91 BlockDenseFrontier
	// 0.1 SparseFrontier
	// {Hits:1 Misses:2 Evictions:0 Entries:2}
}
