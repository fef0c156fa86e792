package megakernel

import (
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"sync"

	"github.com/gpuplan/gpuplan/internal/checked"
	"github.com/gpuplan/gpuplan/occupancy"
)

// Plan cache constants (vyre megakernel_plan_cache, exact values).
const (
	DefaultMaxPlans     = 256
	PressureBucketBPS   = 1000
	DensityBuckets      = 16
	ReadbackBucketShift = 12
)

type analysisTag uint8

const (
	tagDataflow analysisTag = iota
	tagIfds
	tagReachingDefinitions
	tagLiveness
	tagPointsTo
	tagParserFrontend
	tagCustom
)

var analysisNames = [...]string{"dataflow", "ifds", "reaching_definitions", "liveness", "points_to", "parser_frontend"}

// AnalysisKind names the analysis a plan serves (vyre's
// CudaMegakernelAnalysisKind: Dataflow | Ifds | ReachingDefinitions |
// Liveness | PointsTo | ParserFrontend | Custom(u64)). It is comparable and
// its zero value is Dataflow.
type AnalysisKind struct {
	tag    analysisTag
	custom uint64
}

// The built-in analysis kinds.
var (
	Dataflow            = AnalysisKind{tag: tagDataflow}
	Ifds                = AnalysisKind{tag: tagIfds}
	ReachingDefinitions = AnalysisKind{tag: tagReachingDefinitions}
	Liveness            = AnalysisKind{tag: tagLiveness}
	PointsTo            = AnalysisKind{tag: tagPointsTo}
	ParserFrontend      = AnalysisKind{tag: tagParserFrontend}
)

// CustomAnalysis returns the kind Custom(id).
func CustomAnalysis(id uint64) AnalysisKind { return AnalysisKind{tag: tagCustom, custom: id} }

// String returns the snake_case name ("points_to") or "custom:<id>".
func (k AnalysisKind) String() string {
	if k.tag == tagCustom {
		return "custom:" + strconv.FormatUint(k.custom, 10)
	}
	if int(k.tag) < len(analysisNames) {
		return analysisNames[k.tag]
	}
	return "unknown"
}

// MarshalText renders String.
func (k AnalysisKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// ParseAnalysisKind parses "dataflow", "ifds", "reaching_definitions",
// "liveness", "points_to", "parser_frontend" or "custom:<u64>".
func ParseAnalysisKind(s string) (AnalysisKind, error) {
	for i, n := range analysisNames {
		if s == n {
			return AnalysisKind{tag: analysisTag(i)}, nil
		}
	}
	if rest, ok := strings.CutPrefix(s, "custom:"); ok {
		id, err := strconv.ParseUint(rest, 10, 64)
		if err == nil {
			return CustomAnalysis(id), nil
		}
	}
	return AnalysisKind{}, fmt.Errorf("unknown analysis kind %q. Fix: use one of %s or custom:<integer>", s, strings.Join(analysisNames[:], ", "))
}

// DeviceKey is the device part of a plan cache key (vyre's
// CudaMegakernelDeviceKey).
type DeviceKey struct {
	SMMajor             uint16 `json:"sm_major"`
	SMMinor             uint16 `json:"sm_minor"`
	WarpSize            uint16 `json:"warp_size"`
	SupportsGridSync    bool   `json:"supports_grid_sync"`
	SupportsTensorCores bool   `json:"supports_tensor_cores"`
	MaxWorkgroupSize    uint32 `json:"max_workgroup_size"`
}

func satU16(v int) uint16 { return uint16(min(max(v, 0), math.MaxUint16)) }

// DeviceKeyFor builds the cache key of a device profile: grid sync needs
// compute capability >= 6.0 and cooperative launch, tensor cores need
// >= 7.0, and the 16-bit fields saturate at 65535.
func DeviceKeyFor(d occupancy.Device) DeviceKey {
	atLeast := func(major, minor int) bool { return d.Major > major || (d.Major == major && d.Minor >= minor) }
	return DeviceKey{
		SMMajor:             satU16(d.Major),
		SMMinor:             satU16(d.Minor),
		WarpSize:            satU16(d.WarpSize),
		SupportsGridSync:    atLeast(6, 0) && d.CooperativeLaunch,
		SupportsTensorCores: atLeast(7, 0),
		MaxWorkgroupSize:    uint32(min(max(int64(d.MaxThreadsPerBlock), 0), math.MaxUint32)),
	}
}

// PlanIdentity is the stable part of a cache key: the graph layout, the
// analysis and the device. Hysteresis is applied per identity.
type PlanIdentity struct {
	GraphLayoutHash uint64       `json:"graph_layout_hash"`
	Kind            AnalysisKind `json:"analysis_kind"`
	Device          DeviceKey    `json:"device"`
}

// PlanCacheKey is an identity plus five pressure buckets (vyre's
// CudaMegakernelPlanCacheKey).
type PlanCacheKey struct {
	Identity               PlanIdentity
	FrontierDensityBucket  uint32
	MemoryPressureBucket   uint32
	ReadbackPressureBucket uint32
	LaunchPressureBucket   uint32
	FusionPressureBucket   uint32
}

// NewPlanCacheKey buckets the pressures:
//
//   - density: round(clamp(d, 0, 1) x 15), non-finite -> 0;
//   - memory: (required/budget in bps, pinned at MaxUint32, not clamped to
//     10000) / 1000; budget 0 -> 0 if required is 0, else MaxUint32/1000;
//   - readback: 0 for 0 bytes, else the bit length of bytes >> 12;
//   - launch: trunc(launch/cost x 10000) / 1000; non-finite launch ->
//     MaxUint32/1000; cost <= 0 or non-finite -> 0;
//   - fusion: trunc(max(f, 0) x 10000) / 1000, not clamped above 1,
//     non-finite -> 0.
func NewPlanCacheKey(id PlanIdentity, sample ScheduleSample, memory MemoryBudget, launchOverheadNS, fusionPressure float64) PlanCacheKey {
	var density uint32
	if checked.Finite(sample.FrontierDensity) {
		density = uint32(math.Round(checked.Clamp01(sample.FrontierDensity) * (DensityBuckets - 1)))
	}
	var memZero uint32
	if memory.RequiredBytes != 0 {
		memZero = math.MaxUint32
	}
	var readback uint32
	if sample.ReadbackBytes != 0 {
		readback = uint32(bits.Len64(sample.ReadbackBytes >> ReadbackBucketShift))
	}
	var launch uint32
	switch {
	case !checked.Finite(launchOverheadNS):
		launch = math.MaxUint32
	case !checked.Finite(sample.DispatchCostNS) || sample.DispatchCostNS <= 0 || launchOverheadNS <= 0:
		launch = 0
	default:
		launch = f64ToU32(math.Trunc(launchOverheadNS / sample.DispatchCostNS * checked.BasisPoints))
	}
	var fusion uint32
	if checked.Finite(fusionPressure) {
		fusion = f64ToU32(math.Trunc(max(fusionPressure, 0) * checked.BasisPoints))
	}
	return PlanCacheKey{
		Identity:               id,
		FrontierDensityBucket:  density,
		MemoryPressureBucket:   checked.RatioBPS(memory.RequiredBytes, memory.BudgetBytes, memZero) / PressureBucketBPS,
		ReadbackPressureBucket: readback,
		LaunchPressureBucket:   launch / PressureBucketBPS,
		FusionPressureBucket:   fusion / PressureBucketBPS,
	}
}

// packedKey is PlanCacheKey packed into plain words, so the map hashes one
// padding-free block of memory instead of walking the struct's fields.
type packedKey [6]uint64

func b2u(v bool) uint64 {
	if v {
		return 1
	}
	return 0
}

func (k PlanCacheKey) pack() packedKey {
	d := k.Identity.Device
	return packedKey{
		k.Identity.GraphLayoutHash,
		uint64(k.Identity.Kind.tag) | uint64(d.SMMajor)<<8 | uint64(d.SMMinor)<<24 | uint64(d.WarpSize)<<40 |
			b2u(d.SupportsGridSync)<<56 | b2u(d.SupportsTensorCores)<<57,
		k.Identity.Kind.custom,
		uint64(d.MaxWorkgroupSize) | uint64(k.FrontierDensityBucket)<<32,
		uint64(k.MemoryPressureBucket) | uint64(k.ReadbackPressureBucket)<<32,
		uint64(k.LaunchPressureBucket) | uint64(k.FusionPressureBucket)<<32,
	}
}

// CachedPlan is a cached topology decision (vyre's CudaMegakernelCachedPlan).
type CachedPlan struct {
	Topology Topology         `json:"topology"`
	Decision TopologyDecision `json:"decision"`
}

// CacheStats are the cache counters. Hits, Misses and Evictions are pinned
// at MaxUint64 rather than wrapping.
type CacheStats struct {
	Hits      uint64 `json:"hits"`
	Misses    uint64 `json:"misses"`
	Evictions uint64 `json:"evictions"`
	Entries   int    `json:"entries"`
}

type cacheEntry struct {
	key        PlanCacheKey
	plan       CachedPlan
	serial     uint64
	prev, next *cacheEntry // prev is more recently used
}

type identityRecord struct {
	topology Topology
	entries  int // cached entries of this identity
}

// PlanCache is a bounded LRU cache of topology decisions (vyre's
// megakernel_plan_cache). It is safe for concurrent use. Every lookup
// advances a serial; the least-recently-used entry is evicted when the
// cache is full, and when the serial would overflow the entries are
// renumbered 1..n in LRU order instead of failing.
//
// For each identity the cache remembers the topology of the most recently
// inserted entry; a miss for that identity selects with hysteresis against
// it (SelectTopologyStable). The record lives as long as the identity has a
// cached entry, which keeps the cache bounded.
type PlanCache struct {
	mu         sync.Mutex
	maxEntries int
	serial     uint64
	entries    map[packedKey]*cacheEntry
	identities map[PlanIdentity]*identityRecord
	head, tail *cacheEntry // head: most recently used
	stats      CacheStats
}

// NewPlanCache returns an empty cache holding at most maxEntries plans
// (DefaultMaxPlans is vyre's default). With maxEntries <= 0 nothing is
// cached: every lookup builds.
func NewPlanCache(maxEntries int) *PlanCache {
	return &PlanCache{maxEntries: max(maxEntries, 0), entries: make(map[packedKey]*cacheEntry),
		identities: make(map[PlanIdentity]*identityRecord)}
}

func pinnedInc(v *uint64) {
	if *v != math.MaxUint64 {
		*v++
	}
}

// Stats returns the counters and the number of entries.
func (c *PlanCache) Stats() CacheStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.stats
	s.Entries = len(c.entries)
	return s
}

// Clear removes every entry (and the per-identity hysteresis records) and
// keeps the counters.
func (c *PlanCache) Clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.entries)
	clear(c.identities)
	c.head, c.tail = nil, nil
}

func (c *PlanCache) unlink(e *cacheEntry) {
	if e.prev != nil {
		e.prev.next = e.next
	} else {
		c.head = e.next
	}
	if e.next != nil {
		e.next.prev = e.prev
	} else {
		c.tail = e.prev
	}
	e.prev, e.next = nil, nil
}

func (c *PlanCache) pushFront(e *cacheEntry) {
	e.next = c.head
	if c.head != nil {
		c.head.prev = e
	}
	c.head = e
	if c.tail == nil {
		c.tail = e
	}
}

// advance returns the next serial, re-basing serials 1..n in LRU order when
// the counter would overflow.
func (c *PlanCache) advance() uint64 {
	if c.serial == math.MaxUint64 {
		var s uint64
		for e := c.tail; e != nil; e = e.prev {
			s++
			e.serial = s
		}
		c.serial = s
	}
	c.serial++
	return c.serial
}

// GetOrInsert returns the plan cached under key, or builds, caches and
// returns it (vyre's get_or_insert_with). A hit never calls build.
func (c *PlanCache) GetOrInsert(key PlanCacheKey, build func() CachedPlan) CachedPlan {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.getOrInsertLocked(key, build)
}

func (c *PlanCache) getOrInsertLocked(key PlanCacheKey, build func() CachedPlan) CachedPlan {
	serial := c.advance()
	pk := key.pack()
	if e, ok := c.entries[pk]; ok {
		pinnedInc(&c.stats.Hits)
		e.serial = serial
		if c.head != e {
			c.unlink(e)
			c.pushFront(e)
		}
		// The touched entry now has its identity's most recent serial, so
		// its topology is the one the next miss is stable against. (An
		// eviction never takes an identity's most recent entry while the
		// identity has others: the evicted entry is the least recent of
		// all.)
		if rec := c.identities[key.Identity]; rec != nil {
			rec.topology = e.plan.Topology
		}
		return e.plan
	}
	pinnedInc(&c.stats.Misses)
	if c.maxEntries == 0 {
		return build()
	}
	for len(c.entries) >= c.maxEntries && c.tail != nil {
		old := c.tail
		c.unlink(old)
		delete(c.entries, old.key.pack())
		if rec := c.identities[old.key.Identity]; rec != nil {
			if rec.entries--; rec.entries <= 0 {
				delete(c.identities, old.key.Identity)
			}
		}
		pinnedInc(&c.stats.Evictions)
	}
	plan := build()
	e := &cacheEntry{key: key, plan: plan, serial: serial}
	c.entries[pk] = e
	c.pushFront(e)
	rec := c.identities[key.Identity]
	if rec == nil {
		rec = &identityRecord{}
		c.identities[key.Identity] = rec
	}
	rec.topology = plan.Topology
	rec.entries++
	return plan
}

// GetOrSelectTopology returns the cached topology decision for the bucketed
// pressures, selecting it on a miss (vyre's get_or_select_topology). On a
// device without grid sync the fusion pressure is taken as 0, so FusedWave
// is never chosen there. A miss for an identity with a remembered topology
// selects with hysteresis against it.
func (c *PlanCache) GetOrSelectTopology(id PlanIdentity, sample ScheduleSample, graph GraphShape, memory MemoryBudget, launchOverheadNS, fusionPressure float64) CachedPlan {
	if !id.Device.SupportsGridSync {
		fusionPressure = 0
	}
	key := NewPlanCacheKey(id, sample, memory, launchOverheadNS, fusionPressure)
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.getOrInsertLocked(key, func() CachedPlan {
		var d TopologyDecision
		if rec := c.identities[id]; rec != nil {
			d = SelectTopologyStable(sample, graph, memory, launchOverheadNS, fusionPressure, rec.topology)
		} else {
			d = SelectTopology(sample, graph, memory, launchOverheadNS, fusionPressure)
		}
		return CachedPlan{Topology: d.Topology, Decision: d}
	})
}

// GetOrPlanExecution plans an execution through the cache (vyre's
// get_or_plan_execution): the Sparse memory plan against an unlimited
// budget (only overflow can fail), the cached topology for the sparse
// required bytes against the real budget, then the exact memory plan of that
// topology against the real budget, re-planned as Sparse (DowngradedToSparse)
// when it is over budget. Errors: *checked.OverflowError, *OverBudgetError.
func (c *PlanCache) GetOrPlanExecution(id PlanIdentity, sample ScheduleSample, req MemoryRequest, launchOverheadNS, fusionPressure float64) (ExecutionPlan, error) {
	unlimited := req
	unlimited.BudgetBytes = unlimitedBudget
	sparse, err := PlanMemoryBudget(SparseFrontier, unlimited)
	if err != nil {
		return ExecutionPlan{}, err
	}
	cached := c.GetOrSelectTopology(id, sample, req.Graph,
		MemoryBudget{RequiredBytes: sparse.RequiredBytes, BudgetBytes: req.BudgetBytes}, launchOverheadNS, fusionPressure)
	return planChosen(cached.Decision, req)
}
