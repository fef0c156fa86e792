package partition

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// offsetsOf returns the CSR offsets of the given degrees.
func offsetsOf(degrees []uint64) []uint64 {
	out := make([]uint64, len(degrees)+1)
	for i, d := range degrees {
		out[i+1] = out[i] + d
	}
	return out
}

func devices(p int, budget uint64) []Device {
	out := make([]Device, p)
	for i := range out {
		out[i] = Device{Name: "h200", BudgetBytes: budget}
	}
	return out
}

func requirePartitionError(t *testing.T, err error, kind ErrorKind) *Error {
	t.Helper()
	t.Helper()
	var e *Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, kind, e.Kind, "error: %v", err)
	assert.Contains(t, err.Error(), e.Field())
	assert.Equal(t, 1, strings.Count(err.Error(), "Fix:"), err.Error())
	return e
}

func TestNewBlockedLayout(t *testing.T) {
	degrees := make([]uint64, 1000)
	for i := range degrees {
		degrees[i] = uint64(i % 7)
	}
	off := offsetsOf(degrees)
	plan, err := New(Request{Offsets: off, Devices: devices(4, 1<<30), Strategy: Blocked, ScratchBytes: 128})
	require.NoError(t, err)
	assert.Equal(t, []uint64{0, 256, 512, 768, 1000}, plan.Bounds(), "ceil(1000/4) = 250, aligned up to 256")
	assert.EqualValues(t, 4, plan.SliceWords)
	last := plan.Parts[3]
	assert.EqualValues(t, 232, last.Vertices)
	assert.EqualValues(t, 4, last.Words)
	assert.EqualValues(t, off[1000]-off[768], last.EdgeEntries)
	want := Memory{Offsets: 4 * 233, Targets: 4 * last.EdgeEntries, Levels: 4 * 232, Frontier: 2 * 8 * 4,
		Next: 8 * 4 * 4, Exchange: 8 * 4 * 4, Outbox: 8 * 4 * 4, Counts: 8 * 4 * 5, Bounds: 4 * 5, Scratch: 128}
	assert.Equal(t, want, last.Memory)
	assert.Equal(t, want.Offsets+want.Targets+want.Levels+want.Frontier+want.Next+want.Exchange+want.Outbox+want.Counts+want.Bounds+want.Scratch, last.ResidentBytes)
	assert.Equal(t, ExchangeCosts{AllGatherBytes: 12 * 32, CountBytes: 12 * 32, BitmapBytes: 3 * 8 * 16}, plan.Exchange)
	assert.EqualValues(t, 10240, plan.VertexImbalanceBPS, "the largest part holds 256 of a mean 250")
}

// TestNewEdgeBalancedSkew puts every edge on the first vertices:
// blocked gives the first device all of them, edges spreads them.
func TestNewEdgeBalancedSkew(t *testing.T) {
	degrees := make([]uint64, 4096)
	for i := range 512 {
		degrees[i] = 100
	}
	off := offsetsOf(degrees)
	blocked, err := New(Request{Offsets: off, Devices: devices(4, 1<<30), Strategy: Blocked})
	require.NoError(t, err)
	assert.EqualValues(t, 51200, blocked.Parts[0].EdgeEntries)
	assert.EqualValues(t, 40000, blocked.EdgeImbalanceBPS)
	edges, err := New(Request{Offsets: off, Devices: devices(4, 1<<30), Strategy: EdgeBalanced})
	require.NoError(t, err)
	assert.Equal(t, []uint64{0, 128, 256, 384, 4096}, edges.Bounds())
	for _, p := range edges.Parts {
		assert.EqualValues(t, 12800, p.EdgeEntries)
	}
	assert.EqualValues(t, 10000, edges.EdgeImbalanceBPS)
	assert.EqualValues(t, 58, edges.SliceWords, "the last part holds 3712 vertices")
}

// TestNewProperties checks over random graphs and device counts
// that the parts cover every vertex once in aligned ranges, within the
// balance bounds of their strategy, that every byte count adds up and that
// Owner agrees with the ranges.
func TestNewProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 1))
	for i := range 400 {
		n := r.IntN(5000)
		degrees := make([]uint64, n)
		for v := range degrees {
			degrees[v] = uint64(r.IntN(8))
			if r.IntN(50) == 0 {
				degrees[v] = uint64(r.IntN(3000)) // hubs
			}
		}
		off := offsetsOf(degrees)
		parts := 1 + r.IntN(9)
		for _, s := range []Strategy{Blocked, EdgeBalanced} {
			plan, err := New(Request{Offsets: off, Devices: devices(parts, math.MaxUint64), Strategy: s, ScratchBytes: uint64(i)})
			require.NoError(t, err)
			checkPartitionInvariants(t, plan, off, parts)
		}
	}
}

func checkPartitionInvariants(t *testing.T, plan Plan, off []uint64, parts int) {
	t.Helper()
	n, m := uint64(len(off)-1), uint64(off[len(off)-1])
	require.Len(t, plan.Parts, parts)
	var next, vertices, edges, words, maxWords uint64
	for d, p := range plan.Parts {
		require.Equal(t, next, p.First, "part %d starts where %d ended", d, d-1)
		require.True(t, p.End == n || p.End%AlignVertices == 0, "boundary %d aligned", p.End)
		require.Equal(t, p.End-p.First, p.Vertices)
		require.EqualValues(t, off[p.End]-off[p.First], p.EdgeEntries)
		mem := p.Memory
		require.Equal(t, mem.Offsets+mem.Targets+mem.Levels+mem.Frontier+mem.Next+mem.Exchange+mem.Outbox+mem.Counts+mem.Bounds+mem.Scratch, p.ResidentBytes)
		next, vertices, edges, words, maxWords = p.End, vertices+p.Vertices, edges+p.EdgeEntries, words+p.Words, max(maxWords, p.Words)
		if p.Vertices > 0 {
			v := p.First + uint64(d)%p.Vertices
			require.Equal(t, d, plan.Owner(v))
		}
	}
	require.Equal(t, n, next)
	require.Equal(t, n, vertices)
	require.Equal(t, m, edges)
	require.Equal(t, max(maxWords, 1), plan.SliceWords)
	pp := uint64(parts)
	require.Equal(t, pp*(pp-1)*8*plan.SliceWords, plan.Exchange.AllGatherBytes)
	require.Equal(t, (pp-1)*8*words, plan.Exchange.BitmapBytes)
	share := (n + pp - 1) / pp
	for _, p := range plan.Parts {
		if plan.Strategy == Blocked {
			require.LessOrEqual(t, p.Vertices, share+AlignVertices-1)
		} else {
			require.LessOrEqual(t, p.EdgeEntries, (m+pp-1)/pp+maxAlignedBlockEdges(off), "edge-balanced part")
		}
	}
}

// maxAlignedBlockEdges is the most edge entries of any aligned block of 64
// vertices: the most a boundary's rounding can add to a part.
func maxAlignedBlockEdges(off []uint64) uint64 {
	n := len(off) - 1
	var most uint64
	for b := 0; b < n; b += AlignVertices {
		most = max(most, uint64(off[min(n, b+AlignVertices)]-off[b]))
	}
	return most
}

func TestNewErrors(t *testing.T) {
	off := offsetsOf([]uint64{3, 1, 2})
	tests := []struct {
		name string
		req  Request
		kind ErrorKind
		msg  string
	}{
		{"no devices", Request{Offsets: off, Strategy: Blocked}, NoDevices, "devices is empty"},
		{"too many", Request{Offsets: off, Devices: devices(65, 1), Strategy: Blocked}, TooManyDevices, "65 devices, above 64"},
		{"strategy", Request{Offsets: off, Devices: devices(2, 1<<20)}, BadStrategy, "strategy is 0"},
		{"no offsets", Request{Devices: devices(2, 1<<20), Strategy: Blocked}, BadOffsets, "offsets is empty"},
		{"first offset", Request{Offsets: []uint64{1, 2}, Devices: devices(2, 1<<20), Strategy: Blocked}, BadOffsets, "offsets[0] is 1"},
		{"decreasing", Request{Offsets: []uint64{0, 5, 4}, Devices: devices(2, 1<<20), Strategy: EdgeBalanced}, BadOffsets, "offsets[2] is 4"},
		{"zero budget", Request{Offsets: off, Devices: []Device{{"a", 1 << 20}, {"b", 0}}, Strategy: Blocked}, ZeroBudget, "device 1 (b): devices[1].budget_bytes is 0"},
		{"over budget", Request{Offsets: off, Devices: []Device{{"h200", 1 << 20}, {"h100", 100}}, Strategy: Blocked}, OverBudget,
			"device 1 (h100): its part, vertices [3, 3) (0 vertices, 0 edge entries), needs 156 bytes (targets 4 + offsets 4 + levels 4 + frontier 16 + next 16 + exchange 16 + outbox 16 + counts 48 + bounds 12 + scratch 20), above devices[1].budget_bytes 100 by 56"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.req.ScratchBytes = 20
			_, err := New(tc.req)
			requirePartitionError(t, err, tc.kind)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
}

func TestNewOverflowNamesTheDevice(t *testing.T) {
	_, err := New(Request{Offsets: offsetsOf([]uint64{1}), Devices: devices(3, math.MaxUint64), Strategy: Blocked, ScratchBytes: math.MaxUint64})
	e := requirePartitionError(t, err, Overflow)
	assert.Equal(t, 0, e.Device)
	assert.Contains(t, err.Error(), "device 0 (h200, devices[0]): the part of vertices [0, 1) cannot be sized: resident bytes of a part overflows 64 bits")
}

func TestStrategyNames(t *testing.T) {
	for _, s := range []Strategy{Blocked, EdgeBalanced} {
		got, err := ParseStrategy(s.String())
		require.NoError(t, err)
		assert.Equal(t, s, got)
		text, err := s.MarshalText()
		require.NoError(t, err)
		assert.Equal(t, s.String(), string(text))
		var back Strategy
		require.NoError(t, back.UnmarshalText(text))
		assert.Equal(t, s, back)
	}
	_, err := ParseStrategy("round-robin")
	assert.ErrorContains(t, err, "Fix: use blocked")
	var s Strategy
	assert.Error(t, s.UnmarshalText([]byte("x")))
	_, err = Strategy(9).MarshalText()
	assert.Error(t, err)
	assert.Equal(t, "Strategy(9)", Strategy(9).String())
}

// FuzzNew builds offsets from arbitrary bytes: the planner either
// refuses them with a partition error or returns a plan that keeps the
// invariants.
func FuzzNew(f *testing.F) {
	f.Add([]byte{1, 2, 3, 200, 0, 7}, uint8(2), true)
	f.Add([]byte{}, uint8(1), false)
	f.Add(make([]byte, 300), uint8(9), true)
	f.Fuzz(func(t *testing.T, degrees []byte, parts uint8, edges bool) {
		if len(degrees) > 1<<14 {
			return
		}
		deg := make([]uint64, len(degrees))
		for i, b := range degrees {
			deg[i] = uint64(b)
		}
		s := Blocked
		if edges {
			s = EdgeBalanced
		}
		p := int(parts % 70)
		plan, err := New(Request{Offsets: offsetsOf(deg), Devices: devices(p, 1<<40), Strategy: s})
		if err != nil {
			var pe *Error
			require.ErrorAs(t, err, &pe)
			require.Contains(t, err.Error(), "Fix:")
			return
		}
		checkPartitionInvariants(t, plan, offsetsOf(deg), p)
	})
}

// TestNewWideGraph plans graphs past 2^32-1 adjacency entries from their
// offsets alone (the plan never reads targets): the parts' entries and
// target bytes are exact, and a size that passes 64 bits is an Overflow,
// never a wrapped number.
func TestNewWideGraph(t *testing.T) {
	degrees := make([]uint64, 256)
	for i := range degrees {
		degrees[i] = 3 << 24 // 256 x 3 x 2^24 = 3 x 2^32 entries
	}
	off := offsetsOf(degrees)
	cases := []struct {
		name     string
		strategy Strategy
		parts    int
		entries  []uint64
	}{
		{"two blocked parts", Blocked, 2, []uint64{3 << 31, 3 << 31}},
		{"four by edges", EdgeBalanced, 4, []uint64{3 << 30, 3 << 30, 3 << 30, 3 << 30}},
		{"one part", Blocked, 1, []uint64{3 << 32}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			plan, err := New(Request{Offsets: off, Devices: devices(c.parts, 1<<50), Strategy: c.strategy})
			require.NoError(t, err)
			assert.Equal(t, uint64(3)<<32, plan.EdgeEntries)
			require.Len(t, plan.Parts, c.parts)
			for i, p := range plan.Parts {
				assert.Equal(t, c.entries[i], p.EdgeEntries, "part %d", i)
				assert.Equal(t, 4*c.entries[i], p.Memory.Targets, "part %d", i)
			}
		})
	}
	_, err := New(Request{Offsets: []uint64{0, 1 << 62}, Devices: devices(1, math.MaxUint64), Strategy: Blocked})
	e := requirePartitionError(t, err, Overflow)
	assert.ErrorContains(t, e, "target bytes (4 x edge entries) overflows 64 bits")
}
