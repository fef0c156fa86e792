package planners

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/internal/checked"

	"github.com/gpuplan/gpuplan/internal/memcheck"
)

func dshard(id uint32, candidates, emitted, raw, record, counter uint64) DiagnosticShard {
	return DiagnosticShard{Shard: id, CandidateItems: candidates, EmittedDiagnostics: emitted, RawItemBytes: raw,
		DiagnosticRecordBytes: record, CounterBytes: counter, SeverityMask: 0b101}
}

func requireDiagnosticsError(t *testing.T, err error, kind DiagnosticsErrorKind) *DiagnosticsError {
	t.Helper()
	return requireKindError(t, err, kind, func(e *DiagnosticsError) DiagnosticsErrorKind { return e.Kind })
}

func TestPlanDiagnosticAggregationVector(t *testing.T) {
	plan, err := PlanDiagnosticAggregation([]DiagnosticShard{
		dshard(2, 2000, 4, 32, 24, 16), dshard(1, 1000, 2, 32, 24, 16), dshard(3, 4000, 0, 32, 24, 16),
	}, 64, 1024)
	require.NoError(t, err)
	assert.Equal(t, []DiagnosticCompactRange{{Shard: 1, CompactOffset: 0, Records: 2, Bytes: 48}, {Shard: 2, CompactOffset: 48, Records: 4, Bytes: 96}}, plan.CompactRanges)
	assert.Equal(t, uint64(48), plan.CounterReadbackBytes)
	assert.Equal(t, uint64(144), plan.CompactReadbackBytes)
	assert.Equal(t, uint64(192), plan.HostReadbackBytes)
	assert.Equal(t, uint64(224000), plan.RawCandidateReadbackBytes)
	assert.Equal(t, uint64(223808), plan.AvoidedReadbackBytes)
	assert.Less(t, plan.CompressionRatioBPS, uint32(10))
	assert.Equal(t, uint32(8), plan.CompressionRatioBPS)
	assert.True(t, plan.RequiresDevicePrefixScan)
	assert.False(t, plan.RequiresOverflowFlag)
	assert.True(t, plan.FinalOnlyHostReadback)
}

func TestPlanDiagnosticAggregationCap(t *testing.T) {
	plan, err := PlanDiagnosticAggregation([]DiagnosticShard{dshard(5, 100, 10, 32, 16, 8)}, 3, 1024)
	require.NoError(t, err)
	assert.Equal(t, []DiagnosticCompactRange{{Shard: 5, Records: 3, Bytes: 48}}, plan.CompactRanges)
	assert.Equal(t, uint64(7), plan.OverflowRecords)
	assert.True(t, plan.RequiresOverflowFlag)
	assert.Equal(t, uint64(56), plan.HostReadbackBytes)
	assert.False(t, plan.RequiresDevicePrefixScan)

	_, err = PlanDiagnosticAggregation([]DiagnosticShard{dshard(5, 100, 10, 32, 16, 8)}, 3, 55)
	de := requireDiagnosticsError(t, err, DiagnosticsOverBudget)
	assert.Equal(t, uint64(56), de.RequiredBytes)
	assert.Equal(t, uint64(55), de.BudgetBytes)
}

func TestPlanDiagnosticAggregationEdges(t *testing.T) {
	// No shards: nothing read back, no division.
	plan, err := PlanDiagnosticAggregation(nil, 1, 0)
	require.NoError(t, err)
	assert.Equal(t, DiagnosticAggregationPlan{CompactRanges: []DiagnosticCompactRange{}, FinalOnlyHostReadback: true}, plan)

	// Empty shards still read their counters; host above raw avoids nothing.
	plan, err = PlanDiagnosticAggregation([]DiagnosticShard{dshard(1, 1, 0, 1, 0, 64)}, 4, 64)
	require.NoError(t, err)
	assert.Equal(t, uint64(64), plan.HostReadbackBytes)
	assert.Equal(t, uint64(0), plan.AvoidedReadbackBytes)
	assert.Equal(t, uint32(640000), plan.CompressionRatioBPS)
	assert.Empty(t, plan.CompactRanges)
}

func TestDiagnosticCompressionRatioBPS(t *testing.T) {
	assert.Equal(t, uint32(math.MaxUint32), DiagnosticCompressionRatioBPS(math.MaxUint64, 1))
	assert.Equal(t, uint32(0), DiagnosticCompressionRatioBPS(5, 0))
	assert.Equal(t, uint32(5000), DiagnosticCompressionRatioBPS(1, 2))
}

func TestPlanDiagnosticAggregationErrors(t *testing.T) {
	ok := dshard(1, 8, 2, 32, 16, 8)
	noMask := dshard(2, 8, 2, 32, 16, 8)
	noMask.SeverityMask = 0
	emptyNoMask := dshard(2, 8, 0, 32, 0, 8)
	emptyNoMask.SeverityMask = 0
	tests := []struct {
		name   string
		shards []DiagnosticShard
		cap    uint64
		kind   DiagnosticsErrorKind
		index  int
	}{
		{"zero cap", []DiagnosticShard{dshard(1, 0, 0, 0, 0, 0)}, 0, DiagnosticsZeroRecordCap, 0},
		{"duplicate", []DiagnosticShard{ok, dshard(1, 8, 2, 32, 16, 8)}, 4, DiagnosticsDuplicateShard, 1},
		{"duplicate before raw", []DiagnosticShard{ok, dshard(1, 8, 2, 0, 16, 8)}, 4, DiagnosticsDuplicateShard, 1},
		{"zero raw", []DiagnosticShard{ok, dshard(2, 8, 2, 0, 16, 8)}, 4, DiagnosticsZeroRawItemBytes, 1},
		{"emitted over candidates", []DiagnosticShard{ok, dshard(2, 8, 9, 32, 16, 8)}, 4, DiagnosticsEmittedExceedsCandidates, 1},
		// vyre's ZeroCandidates (emitted > 0, no candidates) is caught by
		// the earlier EmittedExceedsCandidates check.
		{"zero candidates", []DiagnosticShard{ok, dshard(2, 0, 1, 32, 16, 8)}, 4, DiagnosticsEmittedExceedsCandidates, 1},
		{"zero record bytes", []DiagnosticShard{ok, dshard(2, 8, 1, 32, 0, 8)}, 4, DiagnosticsZeroDiagnosticRecordBytes, 1},
		{"missing mask", []DiagnosticShard{ok, noMask}, 4, DiagnosticsMissingSeverityMask, 1},
		{"validation before budget", []DiagnosticShard{dshard(1, 8, 2, 32, 1<<40, 8), noMask}, 4, DiagnosticsMissingSeverityMask, 1},
		// The spec validates every shard before it sums the totals: an
		// overflowing total never hides a later shard's error.
		{"duplicate before raw total overflow", []DiagnosticShard{dshard(1, math.MaxUint64, 0, 2, 0, 0), dshard(1, 8, 2, 32, 16, 8)}, 4, DiagnosticsDuplicateShard, 1},
		{"duplicate before counter total overflow", []DiagnosticShard{dshard(1, 1, 0, 1, 0, math.MaxUint64), dshard(2, 1, 0, 1, 0, 1), dshard(1, 8, 2, 32, 16, 8)}, 4, DiagnosticsDuplicateShard, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := PlanDiagnosticAggregation(tc.shards, tc.cap, 1<<20)
			de := requireDiagnosticsError(t, err, tc.kind)
			assert.Equal(t, tc.index, de.Index)
		})
	}
	// A shard that emits nothing needs neither record bytes nor a mask.
	_, err := PlanDiagnosticAggregation([]DiagnosticShard{ok, emptyNoMask}, 4, 1<<20)
	require.NoError(t, err)

	_, err = PlanDiagnosticAggregation([]DiagnosticShard{dshard(2, 8, 9, 32, 16, 8)}, 4, 1<<20)
	de := requireDiagnosticsError(t, err, DiagnosticsEmittedExceedsCandidates)
	assert.Equal(t, DiagnosticsError{Kind: DiagnosticsEmittedExceedsCandidates, Shard: 2, EmittedDiagnostics: 9, CandidateItems: 8}, *de)
	assert.Equal(t, "EmittedExceedsCandidates", DiagnosticsEmittedExceedsCandidates.String())
}

func TestPlanDiagnosticAggregationOverflow(t *testing.T) {
	const max = math.MaxUint64
	tests := []struct {
		name   string
		shards []DiagnosticShard
		cap    uint64
		field  string
	}{
		{"shard raw", []DiagnosticShard{dshard(1, max, 0, 2, 0, 0)}, 1, "shard raw candidate bytes"},
		{"raw sum", []DiagnosticShard{dshard(1, max, 0, 1, 0, 0), dshard(2, 1, 0, 1, 0, 0)}, 1, "raw candidate readback bytes"},
		{"counter", []DiagnosticShard{dshard(1, 1, 0, 1, 0, max), dshard(2, 1, 0, 1, 0, 1)}, 1, "counter readback bytes"},
		{"range", []DiagnosticShard{dshard(1, max, max, 1, 2, 0)}, max, "compact range bytes"},
		{"compact", []DiagnosticShard{dshard(1, max/4, max/4, 1, 2, 0), dshard(2, max/4, max/4, 1, 2, 0), dshard(3, max/4, max/4, 1, 2, 0)}, max, "compact readback bytes"},
		// "overflow records" cannot overflow: dropped records are at most
		// the candidates, whose raw bytes already fit.
		{"host", []DiagnosticShard{dshard(1, 1, 0, 1, 0, max), dshard(2, 1, 1, 1, 1, 0)}, 1, "host readback bytes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := PlanDiagnosticAggregation(tc.shards, tc.cap, max)
			requireOverflow(t, err, tc.field)
		})
	}
}

func checkDiagnosticsPlan(t *testing.T, shards []DiagnosticShard, capRecords uint64, plan DiagnosticAggregationPlan) {
	t.Helper()
	var raw, counter, compact, overflow uint64
	nonEmpty := 0
	for _, s := range shards {
		raw += s.CandidateItems * s.RawItemBytes
		counter += s.CounterBytes
		if s.EmittedDiagnostics > 0 {
			nonEmpty++
			r := min(s.EmittedDiagnostics, capRecords)
			compact += r * s.DiagnosticRecordBytes
			overflow += s.EmittedDiagnostics - r
		}
	}
	assert.Equal(t, raw, plan.RawCandidateReadbackBytes)
	assert.Equal(t, counter, plan.CounterReadbackBytes)
	assert.Equal(t, compact, plan.CompactReadbackBytes)
	assert.Equal(t, counter+compact, plan.HostReadbackBytes)
	assert.Equal(t, overflow, plan.OverflowRecords)
	assert.Equal(t, overflow > 0, plan.RequiresOverflowFlag)
	assert.Equal(t, nonEmpty > 1, plan.RequiresDevicePrefixScan)
	assert.Equal(t, checked.RatioBPS(counter+compact, raw, 0), plan.CompressionRatioBPS)
	if raw > counter+compact {
		assert.Equal(t, raw-counter-compact, plan.AvoidedReadbackBytes)
	} else {
		assert.Equal(t, uint64(0), plan.AvoidedReadbackBytes)
	}
	require.Len(t, plan.CompactRanges, nonEmpty)
	var offset uint64
	for i, r := range plan.CompactRanges {
		if i > 0 {
			assert.Less(t, plan.CompactRanges[i-1].Shard, r.Shard)
		}
		assert.Equal(t, offset, r.CompactOffset)
		assert.LessOrEqual(t, r.Records, capRecords)
		offset += r.Bytes
	}
}

func TestPlanDiagnosticAggregationGeneratedTotals(t *testing.T) {
	for n := 1; n <= 64; n++ {
		for capRecords := uint64(1); capRecords <= 16; capRecords++ {
			r := rand.New(rand.NewPCG(uint64(n), capRecords))
			shards := make([]DiagnosticShard, n)
			for i, id := range r.Perm(n) {
				candidates := r.Uint64N(64)
				emitted := uint64(0)
				if r.IntN(3) > 0 {
					emitted = r.Uint64N(candidates + 1)
				}
				shards[i] = dshard(uint32(id), candidates, emitted, 1+r.Uint64N(32), 1+r.Uint64N(24), r.Uint64N(16))
			}
			plan, err := PlanDiagnosticAggregation(shards, capRecords, math.MaxUint64)
			require.NoError(t, err)
			checkDiagnosticsPlan(t, shards, capRecords, plan)
			assert.True(t, slices.IsSortedFunc(plan.CompactRanges, func(a, b DiagnosticCompactRange) int { return int(a.Shard) - int(b.Shard) }))
		}
	}
}

func FuzzPlanDiagnosticAggregation(f *testing.F) {
	f.Add([]byte{2, 200, 4, 32, 24, 16, 1, 100, 2, 32, 24, 16, 3, 250, 0, 32, 24, 16}, uint64(64), uint64(1024))
	f.Add([]byte{1, 0, 1, 1, 1, 1}, uint64(0), uint64(0))
	f.Fuzz(func(t *testing.T, data []byte, capRecords, budget uint64) {
		// No input makes memory grow faster than the input itself.
		memcheck.Check(t, memcheck.Bound{Base: 1 << 20, PerByte: 256}, len(data)+16, func() {
			var shards []DiagnosticShard
			for ; len(data) >= 6; data = data[6:] {
				s := dshard(uint32(data[0]%16), uint64(data[1]), uint64(data[2]), uint64(data[3]), uint64(data[4]), uint64(data[5]))
				s.SeverityMask = uint32(data[0] >> 4)
				shards = append(shards, s)
			}
			plan, err := PlanDiagnosticAggregation(shards, capRecords, budget)
			if err != nil {
				if !strings.Contains(err.Error(), "Fix:") {
					t.Fatalf("error without a fix: %v", err)
				}
				return
			}
			require.LessOrEqual(t, plan.HostReadbackBytes, budget)
			checkDiagnosticsPlan(t, shards, capRecords, plan)
		})
	})
}

func BenchmarkPlanDiagnosticAggregation(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		r := rand.New(rand.NewPCG(uint64(n), 4))
		shards := make([]DiagnosticShard, n)
		for i, id := range r.Perm(n) {
			candidates := r.Uint64N(4096)
			shards[i] = dshard(uint32(id), candidates, r.Uint64N(candidates/8+1), 32, 24, 16)
		}
		b.Run(benchName(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := PlanDiagnosticAggregation(shards, 64, math.MaxUint64); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
