package bfs

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/internal/gputest"
	"github.com/gpuplan/gpuplan/internal/kernelabi"
	"github.com/gpuplan/gpuplan/occupancy"
	"github.com/gpuplan/gpuplan/planners"
)

// TestPlanOffsetWidth checks that a graph past 32-bit offsets gets the
// 64-bit kernels, that one within them gets the 32-bit kernels unless
// asked otherwise, and the sizes each width implies. The graphs past 2^32-1
// entries here have such offsets and no targets: the width reads the last
// offset only.
func TestPlanOffsetWidth(t *testing.T) {
	cases := []struct {
		name string
		g    *frontier.CSR
		wide bool
		want OffsetWidth
	}{
		{"grid", mustGraph(t)(frontier.Grid(8)), false, Offsets32},
		{"grid, wide asked for", mustGraph(t)(frontier.Grid(8)), true, Offsets64},
		{"2^32-1 entries", &frontier.CSR{Offsets: []uint64{0, frontier.MaxOffsets32Entries}}, false, Offsets32},
		{"one past 2^32-1", &frontier.CSR{Offsets: []uint64{0, 1 << 32}}, false, Offsets64},
		{"scale 29", &frontier.CSR{Offsets: []uint64{0, 1 << 33, frontier.MaxGraphEdgeEntries}}, false, Offsets64},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := PlanOffsetWidth(c.g, c.wide)
			assert.Equal(t, c.want, w)
			if w.Wide() {
				assert.Equal(t, "64-bit", w.String())
				assert.EqualValues(t, 20, w.QueueItemBytes())
				assert.EqualValues(t, 32, w.LogEntryBytes())
			} else {
				assert.Equal(t, "32-bit", w.String())
				assert.EqualValues(t, 12, w.QueueItemBytes())
				assert.EqualValues(t, 16, w.LogEntryBytes())
			}
		})
	}
}

// TestWideParamsAreTheSameArguments checks that the 64-bit kernels'
// parameters are the 32-bit ones' arguments, field for field, so that the
// host's argument positions hold for both, and that narrow undoes w64.
func TestWideParamsAreTheSameArguments(t *testing.T) {
	x, _ := newFakeExecutor(t, 1<<30, 1)
	b, _ := x.Alloc(64)
	init := InitParams[executor.Buffer]{Offsets: b, Level: b, Q0: b, Vis: b, Ctl: b, N: 3, Root: 1, Chunk: 5, QCap: 7}
	level := QueueLevelParams[executor.Buffer]{Offsets: b, Targets: b, Level: b, Q0: b, Q1: b, Ctl: b, Chunk: 2, QCap: 3,
		LowDegree: 1, DepthBase: 4, PhaseBegin: 5, PhaseEnd: 6}
	do := DoLevelParams[executor.Buffer]{TraversalParams: TraversalParams[executor.Buffer]{Offsets: b, Targets: b, Level: b,
		Q0: b, Q1: b, Vis0: b, Vis1: b, Ctl: b, Log: b, N: 1, Chunk: 2, QCap: 3, LowDegree: 4}, LogCap: 5, Direction: 6,
		DepthBase: 7, PhaseBegin: 8, PhaseEnd: 9}
	cases := []struct {
		name       string
		narrow     any
		wide       any
		back       any
		indexField string
	}{
		{"init", init, init.w64(), init.w64().narrow(), "Root"},
		{"queue level", level, level.w64(), level.w64().narrow(), "DepthBase"},
		{"do level", do, do.w64(), do.w64().narrow(), "Direction"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, kernelabi.MustArgs(c.narrow), kernelabi.MustArgs(c.wide))
			assert.Equal(t, c.narrow, c.back)
			assert.Equal(t, kernelabi.MustIndex(c.narrow, c.indexField), kernelabi.MustIndex(c.wide, c.indexField))
			split, err := kernelabi.SplitArgs(c.wide)
			if c.name == "init" {
				return
			}
			require.NoError(t, err)
			want, err := kernelabi.SplitArgs(c.narrow)
			require.NoError(t, err)
			assert.Len(t, split, len(want))
		})
	}
}

// TestWideSessionMatchesTheReference runs the 64-bit kernels' sessions
// on the fake backend (checkWideSessions).
func TestWideSessionMatchesTheReference(t *testing.T) {
	must := mustGraph(t)
	graphs := []*frontier.CSR{must(frontier.Kronecker(11, 16, 5)), must(frontier.Grid(21)), must(frontier.Road(24, 3)),
		must(frontier.RandomGeometric(3000, 8, 4)), star(t, 2000)}
	checkWideSessions(t, graphs, []Config{{CheckEvery: 3}, {Chunk: 5}}, func(g *frontier.CSR, cfg Config) *Session {
		_, s := fakeSession(t, 1<<30, 3, g, cfg)
		return s
	})
}

// checkWideSessions runs the host loop and the device loop on the 64-bit
// kernels (Config.WideOffsets) over each graph, direction-optimizing and
// top-down, with each config, and checks every root's levels, level count
// and decisions against the CPU reference and the 32-bit session's, the
// plans' 64-bit sizes and the upload of 8-byte offsets.
func checkWideSessions(t *testing.T, graphs []*frontier.CSR, configs []Config, open func(*frontier.CSR, Config) *Session) {
	for _, g := range graphs {
		roots, err := frontier.Roots(g, 3, 2)
		require.NoError(t, err)
		stats, refs, decisions, err := Directions(g, roots)
		require.NoError(t, err)
		for ci, cfg := range configs {
			for _, dir := range []Direction{DirectionAuto, DirectionTopDown} {
				cfg.Direction, cfg.WideOffsets = dir, false
				narrow := open(g, cfg)
				cfg.WideOffsets = true
				wide := open(g, cfg)
				checkWidePlans(t, g, wide, narrow)
				for _, arm := range []Arm{ArmHostLoop, ArmDeviceLoop} {
					for i, root := range roots {
						name := fmt.Sprintf("%s/config%d/%s/%s/root%d", g.Name, ci, dir, arm, root)
						r := checkLevels(t, wide, arm, root, refs[i], name)
						assert.Equal(t, stats[i].Levels, r.Levels, name)
						if wide.ArmOptimizing(arm) {
							assert.Equal(t, decisions[i], r.Decisions, name)
						}
						n := checkLevels(t, narrow, arm, root, refs[i], name+"/32-bit")
						assert.Equal(t, n.Decisions, r.Decisions, name)
					}
				}
			}
		}
	}
}

// checkLevels runs arm from root and checks the levels against want.
func checkLevels(t *testing.T, s *Session, arm Arm, root int32, want []int32, name string) Run {
	t.Helper()
	r, lv := runLevels(t, s, arm, root, name)
	require.Equal(t, want, lv, name)
	return r
}

// checkWidePlans checks a 64-bit session's plans against a 32-bit one's
// over the same graph: 8-byte offsets, 20-byte queue items, 32-byte log
// entries, and exactly that much more resident memory.
func checkWidePlans(t *testing.T, g *frontier.CSR, wide, narrow *Session) {
	t.Helper()
	require.Equal(t, Offsets64, wide.OffsetWidth())
	require.Equal(t, Offsets32, narrow.OffsetWidth())
	assert.Equal(t, Offsets64, wide.Plans().OffsetBytes)
	q := wide.plans.Queue.Queue.QueueBytes - narrow.plans.Queue.Queue.QueueBytes
	assert.Equal(t, (QueueItemBytesW64-QueueItemBytes)*wide.qcap(), q, "%s: 8 more bytes a queue item", g.Name)
	n := uint64(g.NumVertices())
	extra := 4*(n+1) + 2*q + (LogEntryBytesW64-LogEntryBytes)*LogEntries(g)
	assert.Equal(t, narrow.Plans().Memory.RequiredBytes+extra, wide.Plans().Memory.RequiredBytes, g.Name)
	assert.Equal(t, narrow.opened.HostToDeviceBytes+4*(n+1), wide.opened.HostToDeviceBytes, "%s: the offsets uploaded as 8-byte words", g.Name)
}

// TestWideSessionRefusesNarrowArms checks that a 64-bit session refuses
// the arms and passes that run only with 32-bit offsets, naming the arm
// and ending in a fix, and that the benchmark leaves them out.
func TestWideSessionRefusesNarrowArms(t *testing.T) {
	g := mustGraph(t)(frontier.Kronecker(9, 16, 2))
	_, s := fakeSession(t, 1<<30, 1, g, Config{WideOffsets: true})
	for _, arm := range []Arm{ArmMegakernel, ArmHostLoopScan} {
		_, err := s.Run(arm, 0)
		require.Error(t, err, arm)
		assert.Contains(t, err.Error(), string(arm))
		assert.Contains(t, err.Error(), "Fix: use the host-loop or device-loop arm")
		assert.Equal(t, err, s.ArmFits(arm))
	}
	for _, arm := range []Arm{ArmHostLoop, ArmDeviceLoop} {
		assert.NoError(t, s.ArmFits(arm))
	}
	_, err := s.NewMultiSource(32, 32)
	assert.ErrorContains(t, err, "multi-source pass runs only with 32-bit offsets")
	_, err = s.TuneMegakernel(0, 1, 1)
	assert.ErrorContains(t, err, "Fix:")

	x, _ := newFakeExecutor(t, 1<<30, 2)
	roots, err := frontier.Roots(g, 2, 1)
	require.NoError(t, err)
	res, err := Bench(x, g, roots, BenchConfig{Session: Config{WideOffsets: true}, Samples: 2, Check: CheckGraph500})
	require.NoError(t, err)
	arms := map[string]bool{}
	for _, smp := range res.Samples {
		arms[string(smp.Arm)] = true
	}
	assert.True(t, arms[string(ArmHostLoop)] && arms[string(ArmDeviceLoop)], "%v", arms)
	assert.False(t, arms[string(ArmMegakernel)], "%v", arms)
	_, err = Bench(x, g, roots, BenchConfig{Session: Config{WideOffsets: true}, Arms: []Arm{ArmMegakernel}, Samples: 1})
	assert.ErrorContains(t, err, "Fix: measure the host-loop or device-loop arm")
}

// TestDecodeLogWide checks the 64-bit log layout: the vertices above the
// first word, the edges 64 bits each, counts past 2^32 kept whole.
func TestDecodeLogWide(t *testing.T) {
	raw := make([]byte, 2*LogEntryBytesW64)
	word := uint32(planners.DirectionBottomUp) | uint32(planners.ReasonFrontierEdgesAboveThreshold)<<logReasonShift | 1<<logParityBit
	put := func(i int, x, mf, mu uint64) {
		b := raw[LogEntryBytesW64*i:]
		for j, v := range []uint64{x, mf, mu, 0} {
			for k := range 8 {
				b[8*j+k] = byte(v >> (8 * k))
			}
		}
	}
	put(0, uint64(word)|uint64(123456)<<32, 5<<32+7, 9<<32+11)
	put(1, 0, 1, 2)
	got := decodeLog(raw, Offsets64)
	require.Len(t, got, 2)
	assert.Equal(t, logEntry{dir: planners.DirectionBottomUp, reason: planners.ReasonFrontierEdgesAboveThreshold, parity: 1,
		nf: 123456, mf: 5<<32 + 7, mu: 9<<32 + 11}, got[0])
	assert.Equal(t, logEntry{mf: 1, mu: 2}, got[1])
}

// TestLayoutHashIsTheDeviceLayout checks that the resident graph's layout
// hash is the frontier digest of the offsets at the session's width and
// the targets, as uploaded, that it is kept once computed, and that the
// two widths give different hashes.
func TestLayoutHashIsTheDeviceLayout(t *testing.T) {
	g := mustGraph(t)(frontier.Grid(100))
	hashes := map[OffsetWidth]uint64{}
	for _, c := range []struct {
		wide  bool
		width OffsetWidth
	}{
		{false, Offsets32},
		{true, Offsets64},
	} {
		_, s := fakeSession(t, 1<<30, 1, g, Config{WideOffsets: c.wide})
		require.Equal(t, c.width, s.width)
		want, err := g.Digest(int(c.width))
		require.NoError(t, err)
		assert.Equal(t, max(want, 1), s.layoutHash(), "%s offsets", c.width)
		assert.Equal(t, max(want, 1), s.layout, "%s offsets: kept", c.width)
		assert.Equal(t, max(want, 1), s.SessionProfile(1).GraphLayoutHash, "%s offsets", c.width)
		hashes[c.width] = s.layoutHash()
	}
	assert.NotEqual(t, hashes[Offsets32], hashes[Offsets64])
}

// TestLevelGridFitsEveryLevelKernel checks that the per-level kernels'
// grid is planned for the one of them that fits the fewest blocks on an
// SM: a 64-bit direction-optimizing level of 64 registers a thread fits
// 4 blocks of 256 threads where the queue level fits 5, so the grid is 4
// blocks an SM, and no launch of it runs a second wave.
func TestLevelGridFitsEveryLevelKernel(t *testing.T) {
	heavy := func(dev occupancy.Device, seed uint64) *executor.Fake {
		return kernelabi.NewEmulation(seed, func(s *kernelabi.LaunchSeeds) map[string]kernelabi.Fake {
			m := fakes(s)
			k := m[KernelDoLevelW64]
			k.Regs = 64
			m[KernelDoLevelW64] = k
			return m
		}).NewFake(dev)
	}
	g := mustGraph(t)(frontier.Kronecker(10, 16, 3))
	for _, c := range []struct {
		name  string
		open  func(occupancy.Device, uint64) *executor.Fake
		wide  bool
		perSM int
	}{
		{"32-bit kernels", NewFake, false, 5},
		{"64-bit kernels", NewFake, true, 5},
		{"64-bit level of 64 registers", heavy, true, 4},
	} {
		t.Run(c.name, func(t *testing.T) {
			x, _ := gputest.OpenFake(t, "h100", 1<<30, 1, c.open)
			s, err := NewSession(x, g, Config{WideOffsets: c.wide})
			require.NoError(t, err)
			t.Cleanup(func() { require.NoError(t, s.Close()) })
			lg := s.Plans().LevelGrid
			assert.Equal(t, c.perSM, lg.BlocksPerSM)
			assert.Equal(t, uint32(c.perSM*lg.SMCount), lg.GridBlocks)
			for _, k := range []*executor.Kernel{s.k.level, s.k.doLevel, s.k.msLevel, s.k.msFinish} {
				kg, err := x.CooperativeGrid(k, lg.BlockThreads, 0)
				require.NoError(t, err)
				assert.GreaterOrEqual(t, kg.BlocksPerSM, lg.BlocksPerSM, "a level kernel fits fewer blocks than its grid")
			}
			_, err = s.Run(ArmDeviceLoop, 0)
			require.NoError(t, err)
		})
	}
}

// TestWideLevelThreadsRefused checks that a session of 64-bit offsets
// refuses per-level blocks past the 64-bit level's launch bounds, naming
// the field, before anything is allocated.
func TestWideLevelThreadsRefused(t *testing.T) {
	x, fake := newFakeExecutor(t, 1<<30, 1)
	g := mustGraph(t)(frontier.Grid(16))
	_, err := NewSession(x, g, Config{WideOffsets: true, LevelThreads: 2 * LevelW64MaxThreads})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "LevelThreads = 512")
	assert.Contains(t, err.Error(), "Fix: set LevelThreads to 256 or less")
	assert.Zero(t, fake.Stats().DeviceAllocations)
	s, err := NewSession(x, g, Config{LevelThreads: 2 * LevelW64MaxThreads})
	require.NoError(t, err, "32-bit kernels take the larger block")
	require.NoError(t, s.Close())
}

// TestArgPositionsAgreeAcrossWidths holds the positions the loops rewrite
// (depth, direction and phase range) at the same index in the 32-bit and
// the 64-bit parameter lists, since one index serves both.
func TestArgPositionsAgreeAcrossWidths(t *testing.T) {
	for _, tc := range []struct {
		name        string
		narrow, w64 any
		fields      []string
	}{
		{"queue level", QueueLevelParams[executor.Buffer]{}, QueueLevelW64Params[executor.Buffer]{}, []string{"DepthBase", "PhaseBegin", "PhaseEnd"}},
		{"do level", DoLevelParams[executor.Buffer]{}, DoLevelW64Params[executor.Buffer]{}, []string{"DepthBase", "Direction", "PhaseBegin", "PhaseEnd"}},
	} {
		for _, f := range tc.fields {
			a, err := kernelabi.Index(tc.narrow, f)
			require.NoError(t, err, "%s %s", tc.name, f)
			b, err := kernelabi.Index(tc.w64, f)
			require.NoError(t, err, "%s %s", tc.name, f)
			assert.Equal(t, a, b, "%s %s", tc.name, f)
		}
	}
}
