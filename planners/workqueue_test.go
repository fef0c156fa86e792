package planners

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/internal/checked"

	"github.com/gpuplan/gpuplan/internal/memcheck"
)

func requireWorkQueueError(t *testing.T, err error, kind WorkQueueErrorKind) *WorkQueueError {
	t.Helper()
	return requireKindError(t, err, kind, func(e *WorkQueueError) WorkQueueErrorKind { return e.Kind })
}

func requireOverflow(t *testing.T, err error, field string) {
	t.Helper()
	var oe *checked.OverflowError
	require.ErrorAs(t, err, &oe)
	assert.Equal(t, field, oe.Field)
	assert.Contains(t, err.Error(), "Fix:")
}

func TestPlanDeviceWorkQueueVector(t *testing.T) {
	plan, err := PlanDeviceWorkQueue(DeviceWorkQueueProfile{
		InitialItems: 256, QueueCapacity: 1024, EntryBytes: 16, ControlBytes: 128,
		BudgetBytes: 32768, HostSync: WorkQueueFinalOnly,
	})
	require.NoError(t, err)
	assert.Equal(t, DeviceWorkQueuePlan{
		QueueCapacity: 1024, QueueBytes: 16384, ControlBytes: 128, ResidentBytes: 16512,
		InitialOccupancyBPS: 2500, FinalOnlyHostSync: true,
	}, plan)
}

func TestPlanDeviceWorkQueueErrors(t *testing.T) {
	ok := DeviceWorkQueueProfile{InitialItems: 1, QueueCapacity: 4, EntryBytes: 8, ControlBytes: 8, BudgetBytes: 1 << 20}
	tests := []struct {
		name   string
		mutate func(*DeviceWorkQueueProfile)
		kind   WorkQueueErrorKind
	}{
		{"zero capacity", func(p *DeviceWorkQueueProfile) { p.QueueCapacity = 0; p.InitialItems = 0 }, WorkQueueZeroCapacity},
		// Zero capacity is reported before zero entry bytes and the rest.
		{"zero capacity first", func(p *DeviceWorkQueueProfile) {
			p.QueueCapacity, p.EntryBytes, p.HostSync = 0, 0, WorkQueueHostParticipates
		}, WorkQueueZeroCapacity},
		{"zero entry", func(p *DeviceWorkQueueProfile) { p.EntryBytes = 0 }, WorkQueueZeroEntryBytes},
		{"zero entry before initial", func(p *DeviceWorkQueueProfile) { p.EntryBytes, p.InitialItems = 0, 99 }, WorkQueueZeroEntryBytes},
		{"initial over capacity", func(p *DeviceWorkQueueProfile) { p.InitialItems = 5 }, WorkQueueInitialItemsExceedCapacity},
		{"initial before host sync", func(p *DeviceWorkQueueProfile) {
			p.InitialItems, p.HostSync = 5, WorkQueueHostParticipates
		}, WorkQueueInitialItemsExceedCapacity},
		{"host participates", func(p *DeviceWorkQueueProfile) { p.HostSync = WorkQueueHostParticipates }, WorkQueueHostParticipationRejected},
		{"undefined host sync", func(p *DeviceWorkQueueProfile) { p.HostSync = 7 }, WorkQueueHostParticipationRejected},
		{"host sync before budget", func(p *DeviceWorkQueueProfile) {
			p.HostSync, p.BudgetBytes = WorkQueueHostParticipates, 0
		}, WorkQueueHostParticipationRejected},
		{"over budget", func(p *DeviceWorkQueueProfile) { p.BudgetBytes = 39 }, WorkQueueOverBudget},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := ok
			tc.mutate(&p)
			_, err := PlanDeviceWorkQueue(p)
			requireWorkQueueError(t, err, tc.kind)
		})
	}
	p := ok
	p.InitialItems = 5
	_, err := PlanDeviceWorkQueue(p)
	we := requireWorkQueueError(t, err, WorkQueueInitialItemsExceedCapacity)
	assert.Equal(t, uint64(5), we.InitialItems)
	assert.Equal(t, uint64(4), we.QueueCapacity)

	p = ok
	p.BudgetBytes = 39
	_, err = PlanDeviceWorkQueue(p)
	we = requireWorkQueueError(t, err, WorkQueueOverBudget)
	assert.Equal(t, uint64(40), we.RequiredBytes)
	assert.Equal(t, uint64(39), we.BudgetBytes)
}

func TestPlanDeviceWorkQueueOverflow(t *testing.T) {
	_, err := PlanDeviceWorkQueue(DeviceWorkQueueProfile{QueueCapacity: math.MaxUint64, EntryBytes: 2, BudgetBytes: math.MaxUint64})
	requireOverflow(t, err, "queue bytes")
	_, err = PlanDeviceWorkQueue(DeviceWorkQueueProfile{QueueCapacity: math.MaxUint64, EntryBytes: 1, ControlBytes: 1, BudgetBytes: math.MaxUint64})
	requireOverflow(t, err, "resident bytes")
}

func TestPlanDeviceWorkQueueHugeOccupancy(t *testing.T) {
	// initial × 10000 does not fit 64 bits; the ratio is computed exactly.
	plan, err := PlanDeviceWorkQueue(DeviceWorkQueueProfile{
		InitialItems: math.MaxUint64 - 1, QueueCapacity: math.MaxUint64, EntryBytes: 1, BudgetBytes: math.MaxUint64,
	})
	require.NoError(t, err)
	assert.Equal(t, uint64(math.MaxUint64), plan.QueueBytes)
	assert.Equal(t, uint32(9999), plan.InitialOccupancyBPS)
	plan, err = PlanDeviceWorkQueue(DeviceWorkQueueProfile{
		InitialItems: math.MaxUint64, QueueCapacity: math.MaxUint64, EntryBytes: 1, BudgetBytes: math.MaxUint64,
	})
	require.NoError(t, err)
	assert.Equal(t, uint32(10000), plan.InitialOccupancyBPS)
}

func TestPlanDeviceWorkQueueBackpressureVectors(t *testing.T) {
	plan, err := PlanDeviceWorkQueueBackpressure(DeviceWorkQueueProfile{
		QueueCapacity: 65536, EntryBytes: 16, ControlBytes: 128, BudgetBytes: 2 << 20,
	}, 8192)
	require.NoError(t, err)
	assert.Equal(t, ChunkedResidentDrain, plan.Strategy)
	assert.Equal(t, uint64(8192), plan.ItemsPerChunk)
	assert.Equal(t, uint64(8), plan.Chunks)
	assert.Equal(t, uint64(1048704), plan.Queue.ResidentBytes)
	assert.True(t, plan.FinalOnlyHostSync)

	plan, err = PlanDeviceWorkQueueBackpressure(DeviceWorkQueueProfile{
		QueueCapacity: math.MaxUint64, EntryBytes: 1, BudgetBytes: math.MaxUint64,
	}, 65536)
	require.NoError(t, err)
	assert.Equal(t, uint64(math.MaxUint64), plan.Queue.QueueBytes)
	assert.Equal(t, uint64(281474976710656), plan.Chunks)
	assert.Equal(t, uint64(65536), plan.ItemsPerChunk)

	// A drain larger than the queue: one launch of the whole capacity.
	plan, err = PlanDeviceWorkQueueBackpressure(DeviceWorkQueueProfile{
		QueueCapacity: 100, EntryBytes: 4, BudgetBytes: 400,
	}, 1000)
	require.NoError(t, err)
	assert.Equal(t, SingleResidentDrain, plan.Strategy)
	assert.Equal(t, uint64(100), plan.ItemsPerChunk)
	assert.Equal(t, uint64(1), plan.Chunks)
}

func TestPlanDeviceWorkQueueBackpressureErrors(t *testing.T) {
	// The drain size is checked before the (also invalid) profile.
	_, err := PlanDeviceWorkQueueBackpressure(DeviceWorkQueueProfile{}, 0)
	requireWorkQueueError(t, err, WorkQueueZeroDrainChunk)
	_, err = PlanDeviceWorkQueueBackpressure(DeviceWorkQueueProfile{}, 1)
	requireWorkQueueError(t, err, WorkQueueZeroCapacity)
}

func TestPlanDeviceWorkQueueWithExpansion(t *testing.T) {
	plan, err := PlanDeviceWorkQueueWithExpansion(DeviceWorkQueueExpansionProfile{
		InitialItems: 4, ExpansionItems: 12, EntryBytes: 8, ControlBytes: 64, BudgetBytes: 256,
	})
	require.NoError(t, err)
	assert.Equal(t, DeviceWorkQueuePlan{
		QueueCapacity: 16, QueueBytes: 128, ControlBytes: 64, ResidentBytes: 192,
		InitialOccupancyBPS: 2500, FinalOnlyHostSync: true,
	}, plan)

	tests := []struct {
		name     string
		profile  DeviceWorkQueueExpansionProfile
		capacity uint64
		kind     WorkQueueErrorKind
		overflow string
	}{
		// The budget caps the expansion: (256-64)/8 = 24 < 4+100.
		{"budget caps", DeviceWorkQueueExpansionProfile{InitialItems: 4, ExpansionItems: 100, EntryBytes: 8, ControlBytes: 64, BudgetBytes: 256}, 24, 0, ""},
		// The capacity never drops below the initial items, even over budget.
		{"initial floor over budget", DeviceWorkQueueExpansionProfile{InitialItems: 40, ExpansionItems: 1, EntryBytes: 8, ControlBytes: 64, BudgetBytes: 256}, 0, WorkQueueOverBudget, ""},
		// Control above the budget leaves no room: the floor at 0 applies.
		{"control above budget", DeviceWorkQueueExpansionProfile{InitialItems: 1, ExpansionItems: 1, EntryBytes: 8, ControlBytes: 512, BudgetBytes: 256}, 0, WorkQueueOverBudget, ""},
		{"zero entry", DeviceWorkQueueExpansionProfile{InitialItems: 1, EntryBytes: 0, BudgetBytes: 256}, 0, WorkQueueZeroEntryBytes, ""},
		{"zero entry and zero desired", DeviceWorkQueueExpansionProfile{EntryBytes: 0, BudgetBytes: 256}, 0, WorkQueueZeroCapacity, ""},
		{"zero desired", DeviceWorkQueueExpansionProfile{EntryBytes: 8, BudgetBytes: 256}, 0, WorkQueueZeroCapacity, ""},
		{"host participates", DeviceWorkQueueExpansionProfile{InitialItems: 1, EntryBytes: 8, BudgetBytes: 256, HostSync: WorkQueueHostParticipates}, 0, WorkQueueHostParticipationRejected, ""},
		{"desired overflow", DeviceWorkQueueExpansionProfile{InitialItems: math.MaxUint64, ExpansionItems: 1, EntryBytes: 8}, 0, 0, "expansion queue items"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			plan, err := PlanDeviceWorkQueueWithExpansion(tc.profile)
			switch {
			case tc.overflow != "":
				requireOverflow(t, err, tc.overflow)
			case tc.kind != 0:
				requireWorkQueueError(t, err, tc.kind)
			default:
				require.NoError(t, err)
				assert.Equal(t, tc.capacity, plan.QueueCapacity)
			}
		})
	}
}

func TestWorkQueueHostSyncText(t *testing.T) {
	for _, s := range []WorkQueueHostSync{WorkQueueFinalOnly, WorkQueueHostParticipates} {
		text, err := s.MarshalText()
		require.NoError(t, err)
		var back WorkQueueHostSync
		require.NoError(t, back.UnmarshalText(text))
		assert.Equal(t, s, back)
	}
	var s WorkQueueHostSync
	err := s.UnmarshalText([]byte("sometimes"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Fix:")
	_, err = WorkQueueHostSync(9).MarshalText()
	require.Error(t, err)
	assert.Equal(t, "WorkQueueHostSync(9)", WorkQueueHostSync(9).String())
	_, err = DrainStrategy(0).MarshalText()
	require.Error(t, err)
	for _, d := range []DrainStrategy{SingleResidentDrain, ChunkedResidentDrain} {
		text, err := d.MarshalText()
		require.NoError(t, err)
		var back DrainStrategy
		require.NoError(t, back.UnmarshalText(text))
		assert.Equal(t, d, back)
	}
	var d DrainStrategy
	require.ErrorContains(t, d.UnmarshalText([]byte("eager")), "Fix:")
}

// randomWorkQueueProfile mixes small values with ones near the 64-bit limit.
func randomWorkQueueProfile(r *rand.Rand) DeviceWorkQueueProfile {
	pick := func() uint64 {
		switch r.IntN(8) {
		case 0:
			return 0
		case 1:
			return math.MaxUint64 - r.Uint64N(4)
		case 2:
			return r.Uint64()
		default:
			return r.Uint64N(1 << 16)
		}
	}
	p := DeviceWorkQueueProfile{
		QueueCapacity: pick(), EntryBytes: pick(), ControlBytes: pick(), BudgetBytes: pick(),
	}
	if p.QueueCapacity > 0 && r.IntN(4) != 0 {
		p.InitialItems = r.Uint64N(p.QueueCapacity) + uint64(r.IntN(2))
	} else {
		p.InitialItems = pick()
	}
	if r.IntN(16) == 0 {
		p.HostSync = WorkQueueHostParticipates
	}
	if r.IntN(3) == 0 && p.EntryBytes > 0 && p.QueueCapacity > 0 {
		// Make the budget fit often enough to exercise successful plans.
		if need, ok := checked.MulDiv(p.QueueCapacity, p.EntryBytes, 1); ok {
			if need2, err := checked.Add(need, p.ControlBytes, "x"); err == nil {
				p.BudgetBytes = need2 + r.Uint64N(64)
				if p.BudgetBytes < need2 {
					p.BudgetBytes = need2
				}
			}
		}
	}
	return p
}

func checkWorkQueuePlan(t *testing.T, p DeviceWorkQueueProfile, plan DeviceWorkQueuePlan) {
	t.Helper()
	assert.LessOrEqual(t, plan.ResidentBytes, p.BudgetBytes)
	assert.LessOrEqual(t, plan.InitialOccupancyBPS, uint32(10000))
	assert.True(t, plan.FinalOnlyHostSync)
	assert.Equal(t, p.QueueCapacity, plan.QueueCapacity)
	q, ok := checked.MulDiv(p.QueueCapacity, p.EntryBytes, 1)
	require.True(t, ok)
	assert.Equal(t, q, plan.QueueBytes)
	assert.Equal(t, plan.QueueBytes+plan.ControlBytes, plan.ResidentBytes)
}

func TestWorkQueueGeneratedProperties(t *testing.T) {
	planned, rejected := 0, 0
	for seed := uint64(0); seed < 4096; seed++ {
		r := rand.New(rand.NewPCG(seed, 0x77))
		p := randomWorkQueueProfile(r)
		drain := r.Uint64N(1<<12) + 1
		plan, err := PlanDeviceWorkQueueBackpressure(p, drain)
		if err != nil {
			rejected++
			assert.Contains(t, err.Error(), "Fix:")
			_, plainErr := PlanDeviceWorkQueue(p)
			assert.Equal(t, err, plainErr, "seed %d", seed)
			continue
		}
		planned++
		checkWorkQueuePlan(t, p, plan.Queue)
		assert.GreaterOrEqual(t, plan.Chunks, uint64(1))
		assert.True(t, plan.FinalOnlyHostSync)
		assert.Equal(t, plan.Chunks == 1, plan.Strategy == SingleResidentDrain)
		assert.LessOrEqual(t, plan.ItemsPerChunk, p.QueueCapacity)
		// The chunks cover the capacity exactly once over.
		covered, ok := checked.MulDiv(plan.Chunks, drain, 1)
		if ok {
			assert.GreaterOrEqual(t, covered, p.QueueCapacity)
			assert.Less(t, covered-drain, p.QueueCapacity)
		}
	}
	assert.Greater(t, planned, 500)
	assert.Greater(t, rejected, 500)
}

func TestWorkQueueExpansionGeneratedProperties(t *testing.T) {
	planned := 0
	for seed := uint64(0); seed < 4096; seed++ {
		r := rand.New(rand.NewPCG(seed, 0x78))
		p := DeviceWorkQueueExpansionProfile{
			InitialItems: r.Uint64N(64), ExpansionItems: r.Uint64N(256), EntryBytes: r.Uint64N(17),
			ControlBytes: r.Uint64N(128), BudgetBytes: r.Uint64N(4096),
		}
		plan, err := PlanDeviceWorkQueueWithExpansion(p)
		if err != nil {
			assert.Contains(t, err.Error(), "Fix:")
			continue
		}
		planned++
		assert.GreaterOrEqual(t, plan.QueueCapacity, p.InitialItems)
		assert.LessOrEqual(t, plan.QueueCapacity, p.InitialItems+p.ExpansionItems)
		assert.LessOrEqual(t, plan.ResidentBytes, p.BudgetBytes)
		// Maximal: one more entry would not fit or is not wanted.
		if plan.QueueCapacity < p.InitialItems+p.ExpansionItems {
			assert.Greater(t, plan.ResidentBytes+p.EntryBytes, p.BudgetBytes, "seed %d", seed)
		}
	}
	assert.Greater(t, planned, 1000)
}

func FuzzPlanDeviceWorkQueue(f *testing.F) {
	f.Add(uint64(256), uint64(1024), uint64(16), uint64(128), uint64(32768), uint8(0), uint64(8192), uint64(12))
	f.Add(uint64(0), uint64(math.MaxUint64), uint64(1), uint64(0), uint64(math.MaxUint64), uint8(0), uint64(65536), uint64(0))
	f.Add(uint64(4), uint64(0), uint64(8), uint64(64), uint64(256), uint8(1), uint64(0), uint64(12))
	f.Fuzz(func(t *testing.T, initial, capacity, entry, control, budget uint64, sync uint8, drain, expansion uint64) {
		// No input makes memory grow faster than the input itself.
		memcheck.Check(t, memcheck.Bound{Base: 1 << 20, PerByte: 256}, 64, func() {
			p := DeviceWorkQueueProfile{InitialItems: initial, QueueCapacity: capacity, EntryBytes: entry,
				ControlBytes: control, BudgetBytes: budget, HostSync: WorkQueueHostSync(sync % 3)}
			if plan, err := PlanDeviceWorkQueueBackpressure(p, drain); err == nil {
				checkWorkQueuePlan(t, p, plan.Queue)
				require.GreaterOrEqual(t, plan.Chunks, uint64(1))
			} else if !strings.Contains(err.Error(), "Fix:") {
				t.Fatalf("error without a fix: %v", err)
			}
			ep := DeviceWorkQueueExpansionProfile{InitialItems: initial, ExpansionItems: expansion, EntryBytes: entry,
				ControlBytes: control, BudgetBytes: budget, HostSync: p.HostSync}
			if plan, err := PlanDeviceWorkQueueWithExpansion(ep); err == nil {
				require.LessOrEqual(t, plan.ResidentBytes, budget)
				require.GreaterOrEqual(t, plan.QueueCapacity, initial)
			} else if !strings.Contains(err.Error(), "Fix:") {
				t.Fatalf("error without a fix: %v", err)
			}
		})
	})
}

// The planner is O(1) in the queue capacity: the benchmark plans queues of
// 10^5 and 10^6 items to show the cost does not grow with them.
func BenchmarkPlanDeviceWorkQueueBackpressure(b *testing.B) {
	for _, n := range []uint64{100_000, 1_000_000} {
		b.Run(benchName(int(n)), func(b *testing.B) {
			b.ReportAllocs()
			p := DeviceWorkQueueProfile{InitialItems: n / 4, QueueCapacity: n, EntryBytes: 16, ControlBytes: 128, BudgetBytes: 1 << 40}
			for b.Loop() {
				if _, err := PlanDeviceWorkQueueBackpressure(p, 8192); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkPlanDeviceWorkQueueWithExpansion(b *testing.B) {
	for _, n := range []uint64{100_000, 1_000_000} {
		b.Run(benchName(int(n)), func(b *testing.B) {
			b.ReportAllocs()
			p := DeviceWorkQueueExpansionProfile{InitialItems: n / 4, ExpansionItems: n, EntryBytes: 16, ControlBytes: 128, BudgetBytes: 1 << 40}
			for b.Loop() {
				if _, err := PlanDeviceWorkQueueWithExpansion(p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
