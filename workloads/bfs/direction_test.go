package bfs

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/planners"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// directionGraphs are graphs past the planner's degree gate, on which the
// rule goes bottom-up (Kronecker in its middle levels, a random geometric
// graph of degree 8 near its end, a dense random graph), and two under it.
func directionGraphs(t *testing.T) (optimizing, topDown []*frontier.CSR) {
	t.Helper()
	build := func(spec string, seed uint64) *frontier.CSR {
		s, err := frontier.ParseSpec(spec)
		require.NoError(t, err)
		g, err := s.Build(seed, frontier.DefaultLimits())
		require.NoError(t, err)
		g.Name = s.Name()
		return g
	}
	return []*frontier.CSR{build("kron:10", 7), build("kron:12", 3), build("rgg:3000:8", 2), build("rgg:2000:12", 5)},
		[]*frontier.CSR{build("grid:30", 1), build("road:25", 4)}
}

// eachDirectionRun runs every arm from every root on s with run (runLevels
// or measuredRun), checks the levels against the CPU direction-optimizing
// BFS's from that root, and calls check with that BFS and the run.
func eachDirectionRun(t *testing.T, s *Session, roots []int32, run func(*testing.T, *Session, Arm, int32, string) (Run, []int32),
	check func(ref *frontier.DirectionBFS, arm Arm, name string, r Run)) {
	t.Helper()
	for _, root := range roots {
		ref, err := frontier.BFSDirectionOptimizing(s.Graph(), root, planners.DefaultDirectionParams())
		require.NoError(t, err)
		for _, arm := range Arms() {
			name := fmt.Sprintf("%s/chunk%d/root%d/%s", s.Graph().Name, s.Config().Chunk, root, arm)
			r, got := run(t, s, arm, root, name)
			require.Equal(t, ref.Levels, got, name)
			check(ref, arm, name, r)
		}
	}
}

// TestDirectionOptimizingArmsOnFake runs every arm of a direction-optimizing
// session over the emulated kernels and checks the levels against the CPU
// reference and every arm's decisions against the CPU direction-optimizing
// BFS's (equal levels give equal counts, so equal decisions), with
// bottom-up levels on the graphs past the degree gate and none under it.
func TestDirectionOptimizingArmsOnFake(t *testing.T) {
	x, _ := newFakeExecutor(t, 8<<30, 11)
	optimizing, topDown := directionGraphs(t)
	configs := []Config{{CheckEvery: 3}, {Chunk: 5, LevelThreads: 64, MegakernelBlocksPerSM: 2}}
	eachSession(t, x, append(optimizing, topDown...), configs, 2, 5, func(s *Session, g *frontier.CSR, cfg Config, roots []int32) {
		assert.Equal(t, DirectionOptimizing(g), s.Optimizing(), g.Name)
		bottomUp := 0
		eachDirectionRun(t, s, roots, runLevels, func(ref *frontier.DirectionBFS, arm Arm, name string, r Run) {
			if !s.Optimizing() || arm == ArmHostLoopScan {
				assert.Empty(t, r.Decisions, name)
				return
			}
			require.Equal(t, ref.Decisions, r.Decisions, name)
			if arm == ArmMegakernel {
				assert.Equal(t, r.Levels, r.Barriers, "%s: level-synchronous", name)
				assert.Zero(t, r.Relabels, name)
			}
			for _, d := range r.Decisions {
				if d.Direction == planners.DirectionBottomUp {
					bottomUp++
				}
			}
		})
		if s.Optimizing() {
			assert.Positive(t, bottomUp, "%s: some levels ran bottom-up", g.Name)
		}
	})
}

// TestDirectionTopDownForced runs a graph past the degree gate with every
// level top-down: the levels are the same, no arm records decisions, and
// the megakernel runs ahead again.
func TestDirectionTopDownForced(t *testing.T) {
	x, _ := newFakeExecutor(t, 8<<30, 12)
	optimizing, _ := directionGraphs(t)
	g := optimizing[2]
	s, err := NewSession(x, g, Config{Direction: DirectionTopDown, MegakernelAhead: 8})
	require.NoError(t, err)
	defer s.Close()
	assert.False(t, s.Optimizing())
	want, err := frontier.BFS(g, 0)
	require.NoError(t, err)
	for _, arm := range Arms() {
		r, err := s.Run(arm, 0)
		require.NoError(t, err, arm)
		got, err := s.Levels()
		require.NoError(t, err)
		require.Equal(t, want, got, arm)
		assert.Empty(t, r.Decisions, arm)
		if arm == ArmMegakernel {
			assert.Positive(t, r.MaxAhead, "the log records the run-ahead depth")
			assert.LessOrEqual(t, r.MaxAhead, 8)
		}
	}
	_, err = NewSession(x, g, Config{Direction: "sideways"})
	require.ErrorContains(t, err, "Direction")
}

// TestDeviceRuleAgreesWithPlanner holds the kernels' direction rule (its Go
// mirror, which the emulation runs) against planners.PlanBFSDirection: on
// the inputs the CPU direction-optimizing BFS recorded on every generator,
// and on random inputs around the thresholds.
func TestDeviceRuleAgreesWithPlanner(t *testing.T) {
	optimizing, topDown := directionGraphs(t)
	params := planners.DefaultDirectionParams()
	check := func(p planners.BFSGraphProfile, st planners.BFSLevelState, name string) {
		want, err := planners.PlanBFSDirection(p, st, params)
		require.NoError(t, err, name)
		dir, reason := deviceRule(st.Previous, st.FrontierVertices, st.PreviousFrontierVertices, st.FrontierEdges, st.UnexploredEdges, p.Vertices, p.EdgeEntries)
		require.Equal(t, want.Direction, dir, name)
		require.Equal(t, want.Reason, reason, name)
	}
	recorded := 0
	for _, g := range append(optimizing, topDown...) {
		p := directionProfile(g)
		roots, err := frontier.Roots(g, 4, 9)
		require.NoError(t, err)
		for _, root := range roots {
			r, err := frontier.BFSDirectionOptimizing(g, root, params)
			require.NoError(t, err)
			var prev planners.BFSDirectionDecision
			for i, d := range r.Decisions {
				st := planners.BFSLevelState{Level: d.Level, FrontierVertices: d.FrontierVertices, FrontierEdges: d.FrontierEdges,
					UnexploredEdges: d.UnexploredEdges}
				if i > 0 {
					st.Previous, st.PreviousFrontierVertices = prev.Direction, prev.FrontierVertices
				}
				check(p, st, fmt.Sprintf("%s root %d level %d", g.Name, root, d.Level))
				prev = d
				recorded++
			}
		}
	}
	assert.Greater(t, recorded, 100)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 20000 {
		n := 1 + rng.Uint64N(1<<31)
		p := planners.BFSGraphProfile{Vertices: n, EdgeEntries: rng.Uint64N(1 << 32)}
		nf := 1 + rng.Uint64N(n)
		st := planners.BFSLevelState{Level: 1, Previous: planners.BFSDirection(rng.IntN(3)), FrontierVertices: nf,
			PreviousFrontierVertices: rng.Uint64N(n + 1)}
		if i%2 == 0 {
			// Near beta's threshold.
			st.FrontierVertices = max(1, min(n, n/planners.DefaultDirectionBeta+uint64(rng.IntN(3))-1))
		}
		st.FrontierEdges = rng.Uint64N(p.EdgeEntries + 1)
		st.UnexploredEdges = rng.Uint64N(p.EdgeEntries + 1)
		if i%3 == 0 {
			// Near alpha's threshold.
			st.UnexploredEdges = min(p.EdgeEntries, st.FrontierEdges*planners.DefaultDirectionAlpha+uint64(rng.IntN(3))-1)
		}
		check(p, st, fmt.Sprintf("random %d: %+v %+v", i, p, st))
	}
}

// TestDirectionMismatchReported gives a direction-optimizing level the
// direction its rule does not choose: the level runs as told and the
// device reports the first such level, which a session turns into an
// error.
func TestDirectionMismatchReported(t *testing.T) {
	optimizing, _ := directionGraphs(t)
	g := optimizing[0]
	d := newEmu(g, DefaultChunk, 64, 8, 1024, 1)
	d.init(0)
	require.Positive(t, d.doLevel(0, uint32(DirBottomUp)), "a bottom-up first level finds the root's neighbours")
	assert.EqualValues(t, 1, d.ctl[CtlResult+ResultDirMismatch])
	d.doLevel(1, uint32(DirTopDown))
	assert.EqualValues(t, 1, d.ctl[CtlResult+ResultDirMismatch], "the first level is kept")
}

// TestDeviceDecisionsChecked feeds the log check entries that disagree
// with the planner, with the counts or with the visited bitmap's turns,
// and a log that lost its first entries.
func TestDeviceDecisionsChecked(t *testing.T) {
	x, _ := newFakeExecutor(t, 1<<30, 13)
	optimizing, _ := directionGraphs(t)
	g := optimizing[1]
	s, err := NewSession(x, g, Config{})
	require.NoError(t, err)
	defer s.Close()
	roots, err := frontier.Roots(g, 1, 2)
	require.NoError(t, err)
	ref, err := frontier.BFSDirectionOptimizing(g, roots[0], planners.DefaultDirectionParams())
	require.NoError(t, err)
	var entries []logEntry
	parity := uint32(0)
	for _, d := range ref.Decisions {
		entries = append(entries, logEntry{dir: d.Direction, reason: d.Reason, parity: parity, depth: 1,
			nf: uint32(d.FrontierVertices), mf: d.FrontierEdges, mu: d.UnexploredEdges})
		if d.Direction == planners.DirectionBottomUp {
			parity ^= 1
		}
	}
	got, err := s.deviceDecisions(entries, 0)
	require.NoError(t, err)
	require.Equal(t, ref.Decisions, got)
	tail, err := s.deviceDecisions(entries[2:], 2)
	require.NoError(t, err, "a log that lost its first levels is checked from the first entry kept")
	require.Equal(t, ref.Decisions[2:], tail)
	for name, edit := range map[string]func(e []logEntry){
		"direction": func(e []logEntry) { e[1].dir = 3 - e[1].dir },
		"reason":    func(e []logEntry) { e[2].reason = planners.ReasonFrontierGrowing },
		"counts":    func(e []logEntry) { e[2].mu++ },
		"bitmap":    func(e []logEntry) { e[len(e)-1].parity ^= 1 },
	} {
		bad := append([]logEntry(nil), entries...)
		edit(bad)
		_, err := s.deviceDecisions(bad, 0)
		assert.Error(t, err, name)
	}
}

// TestReadLogRing writes more decisions than the log holds and reads the
// last ones back in level order.
func TestReadLogRing(t *testing.T) {
	g := mustGraph(t)(frontier.Grid(4))
	x, s := fakeSession(t, 1<<30, 14, g, Config{})
	cap := int(s.logEntries())
	steps := cap + 5
	raw := make([]byte, LogEntryBytes*cap)
	for st := range steps {
		w := raw[LogEntryBytes*(st%cap):]
		w[4], w[5] = byte(st), byte(st>>8)
	}
	require.NoError(t, x.Upload(s.buf.log, raw))
	entries, first, err := s.readLogFrom(steps, nil)
	require.NoError(t, err)
	assert.Equal(t, 5, first)
	require.Len(t, entries, cap)
	for i, e := range entries {
		assert.EqualValues(t, first+i, e.nf, "entry %d", i)
	}
	entries, first, err = s.readLogFrom(3, nil)
	require.NoError(t, err)
	assert.Zero(t, first)
	assert.Len(t, entries, 3)

	// Entries read already serve the steps they cover, without a download;
	// a wrapped log is downloaded whatever was read.
	before := x.Telemetry()
	pre, _, err := s.readLogFrom(3, raw[:LogEntryBytes*4])
	require.NoError(t, err)
	assert.Equal(t, entries, pre)
	assert.Equal(t, before.DeviceReadbackOperations, x.Telemetry().DeviceReadbackOperations, "no download")
	short, _, err := s.readLogFrom(3, raw[:LogEntryBytes*2])
	require.NoError(t, err)
	assert.Equal(t, entries, short, "too few entries read: downloaded")
	wrapped, first, err := s.readLogFrom(steps, raw)
	require.NoError(t, err)
	assert.Equal(t, 5, first)
	assert.EqualValues(t, 5, wrapped[0].nf)
}
