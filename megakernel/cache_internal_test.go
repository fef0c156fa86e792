package megakernel

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func internalKey(h uint64) PlanCacheKey {
	return PlanCacheKey{Identity: PlanIdentity{GraphLayoutHash: h}}
}

func build(t Topology) func() CachedPlan {
	return func() CachedPlan { return CachedPlan{Topology: t} }
}

func lruSerials(c *PlanCache) (hashes []uint64, serials []uint64) {
	for e := c.tail; e != nil; e = e.prev {
		hashes = append(hashes, e.key.Identity.GraphLayoutHash)
		serials = append(serials, e.serial)
	}
	return hashes, serials
}

func TestPlanCacheSerialRebase(t *testing.T) {
	c := NewPlanCache(3)
	c.GetOrInsert(internalKey(1), build(SparseFrontier))
	c.GetOrInsert(internalKey(2), build(SparseFrontier))
	c.GetOrInsert(internalKey(3), build(SparseFrontier))
	c.GetOrInsert(internalKey(1), build(SparseFrontier)) // LRU order now 2, 3, 1
	c.serial = math.MaxUint64 - 1
	c.GetOrInsert(internalKey(3), build(SparseFrontier)) // serial MaxUint64; order 2, 1, 3
	h, s := lruSerials(c)
	assert.Equal(t, []uint64{2, 1, 3}, h)
	assert.Equal(t, uint64(math.MaxUint64), s[2])
	// The next lookup would overflow: serials are re-based 1..n in LRU order.
	c.GetOrInsert(internalKey(2), build(SparseFrontier)) // order 1, 3, 2
	h, s = lruSerials(c)
	assert.Equal(t, []uint64{1, 3, 2}, h)
	assert.Equal(t, []uint64{2, 3, 4}, s)
	// Eviction still follows LRU order after the re-base.
	c.GetOrInsert(internalKey(4), build(SparseFrontier))
	h, _ = lruSerials(c)
	assert.Equal(t, []uint64{3, 2, 4}, h)
	require.Equal(t, CacheStats{Hits: 3, Misses: 4, Evictions: 1, Entries: 3}, c.Stats())
}

func TestPlanCacheCountersPin(t *testing.T) {
	c := NewPlanCache(1)
	c.stats = CacheStats{Hits: math.MaxUint64, Misses: math.MaxUint64, Evictions: math.MaxUint64}
	c.GetOrInsert(internalKey(1), build(SparseFrontier))
	c.GetOrInsert(internalKey(1), build(SparseFrontier))
	c.GetOrInsert(internalKey(2), build(SparseFrontier))
	assert.Equal(t, CacheStats{Hits: math.MaxUint64, Misses: math.MaxUint64, Evictions: math.MaxUint64, Entries: 1}, c.Stats())
}

func TestPlanCacheIdentityRecordsStayBounded(t *testing.T) {
	c := NewPlanCache(2)
	for h := uint64(0); h < 100; h++ {
		c.GetOrInsert(internalKey(h), build(DenseFrontier))
	}
	assert.Len(t, c.identities, 2)
	assert.Len(t, c.entries, 2)
}

func TestPackedKeyDistinguishesEveryField(t *testing.T) {
	base := PlanCacheKey{Identity: PlanIdentity{GraphLayoutHash: 1, Kind: Liveness, Device: DeviceKey{SMMajor: 9, SMMinor: 0, WarpSize: 32,
		SupportsGridSync: true, SupportsTensorCores: true, MaxWorkgroupSize: 1024}},
		FrontierDensityBucket: 3, MemoryPressureBucket: 4, ReadbackPressureBucket: 5, LaunchPressureBucket: 6, FusionPressureBucket: 7}
	edits := []func(k *PlanCacheKey){
		func(k *PlanCacheKey) { k.Identity.GraphLayoutHash++ },
		func(k *PlanCacheKey) { k.Identity.Kind = PointsTo },
		func(k *PlanCacheKey) { k.Identity.Kind = CustomAnalysis(0) },
		func(k *PlanCacheKey) { k.Identity.Device.SMMajor = 65535 },
		func(k *PlanCacheKey) { k.Identity.Device.SMMinor = 65535 },
		func(k *PlanCacheKey) { k.Identity.Device.WarpSize = 65535 },
		func(k *PlanCacheKey) { k.Identity.Device.SupportsGridSync = false },
		func(k *PlanCacheKey) { k.Identity.Device.SupportsTensorCores = false },
		func(k *PlanCacheKey) { k.Identity.Device.MaxWorkgroupSize = math.MaxUint32 },
		func(k *PlanCacheKey) { k.FrontierDensityBucket = math.MaxUint32 },
		func(k *PlanCacheKey) { k.MemoryPressureBucket = math.MaxUint32 },
		func(k *PlanCacheKey) { k.ReadbackPressureBucket = math.MaxUint32 },
		func(k *PlanCacheKey) { k.LaunchPressureBucket = math.MaxUint32 },
		func(k *PlanCacheKey) { k.FusionPressureBucket = math.MaxUint32 },
	}
	seen := map[packedKey]int{base.pack(): -1}
	for i, e := range edits {
		k := base
		e(&k)
		p := k.pack()
		prev, dup := seen[p]
		require.False(t, dup, "edit %d packs like %d", i, prev)
		seen[p] = i
	}
}
