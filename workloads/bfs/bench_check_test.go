package bfs

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/planners"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParseCheckMode accepts the three modes by name and refuses anything
// else with the value and a fix.
func TestParseCheckMode(t *testing.T) {
	for _, m := range []CheckMode{CheckAuto, CheckReference, CheckGraph500} {
		got, err := ParseCheckMode(string(m))
		require.NoError(t, err, m)
		assert.Equal(t, m, got)
	}
	for _, s := range []string{"", "Graph500", "cpu", "reference ", "graph-500", "\x00"} {
		_, err := ParseCheckMode(s)
		require.Error(t, err, "%q", s)
		assert.Contains(t, err.Error(), "unknown BFS check mode", "%q", s)
		assert.Contains(t, err.Error(), "Fix: use auto", "%q", s)
	}
}

// TestCheckModeResolve holds CheckAuto's threshold at ReferenceMaxEntries
// adjacency entries (at most: the CPU reference), leaves the explicit
// modes alone and refuses an unknown one.
func TestCheckModeResolve(t *testing.T) {
	cases := []struct {
		mode    CheckMode
		entries uint64
		want    CheckMode
	}{
		{"", 0, CheckReference},
		{"", ReferenceMaxEntries, CheckReference},
		{"", ReferenceMaxEntries + 1, CheckGraph500},
		{CheckAuto, 1 << 20, CheckReference},
		{CheckAuto, ReferenceMaxEntries, CheckReference},
		{CheckAuto, ReferenceMaxEntries + 1, CheckGraph500},
		{CheckAuto, frontier.MaxGraphEdgeEntries, CheckGraph500},
		{CheckReference, frontier.MaxGraphEdgeEntries, CheckReference},
		{CheckGraph500, 16, CheckGraph500},
	}
	for _, c := range cases {
		got, err := c.mode.Resolve(c.entries)
		require.NoError(t, err, "%q at %d", c.mode, c.entries)
		assert.Equal(t, c.want, got, "%q at %d", c.mode, c.entries)
	}
	_, err := CheckMode("cpu").Resolve(16)
	require.ErrorContains(t, err, `unknown BFS check mode "cpu"`)
	assert.Contains(t, err.Error(), "Fix:")
}

// sparseRandom returns a random graph of n vertices and m random edges:
// many components, so most roots leave vertices unreached.
func sparseRandom(t *testing.T, n, m int, seed uint64) *frontier.CSR {
	r := rand.New(rand.NewPCG(seed, 1))
	src, dst := make([]int32, m), make([]int32, m)
	for i := range src {
		src[i], dst[i] = r.Int32N(int32(n)), r.Int32N(int32(n))
	}
	g, err := frontier.BuildUndirected("sparse-random", n, src, dst)
	require.NoError(t, err)
	return g
}

// TestBenchGraph500MatchesReference runs the benchmark in both check
// modes on random graphs, direction-optimizing ones and top-down ones,
// with different first arms: the Graph500 check, which runs no CPU BFS,
// gives the reference's checksum, statistics and directions, and the
// result records the check of every root.
func TestBenchGraph500MatchesReference(t *testing.T) {
	optimizing, topDown := directionGraphs(t)
	cases := []struct {
		name string
		g    *frontier.CSR
		arms []Arm
		arm  Arm  // the arm check graph500 takes the reference from
		dirs bool // whether the session is direction-optimizing
	}{
		{"kron-10 default arms", optimizing[0], nil, ArmHostLoop, true},
		{"kron-12 device loop first", optimizing[1], []Arm{ArmDeviceLoop, ArmHostLoop}, ArmDeviceLoop, true},
		{"rgg megakernel alone", optimizing[2], []Arm{ArmMegakernel}, ArmMegakernel, true},
		{"rgg scan wave first", optimizing[3], []Arm{ArmHostLoopScan, ArmMegakernel}, ArmMegakernel, true},
		{"rgg scan wave alone", optimizing[3], []Arm{ArmHostLoopScan}, ArmHostLoop, true},
		{"grid top-down", topDown[0], []Arm{ArmHostLoopScan, ArmDeviceLoop}, ArmHostLoopScan, false},
		{"road top-down", topDown[1], nil, ArmHostLoop, false},
		{"sparse random", sparseRandom(t, 3000, 2500, 9), []Arm{ArmDeviceLoop, ArmMegakernel}, ArmDeviceLoop, false},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			roots, err := frontier.Roots(c.g, 4, uint64(i)+1)
			require.NoError(t, err)
			run := func(mode CheckMode) *BenchResult {
				x, _ := newFakeExecutor(t, 8<<30, uint64(40+i))
				res, err := Bench(x, c.g, roots, BenchConfig{Samples: 1, Arms: c.arms, Check: mode})
				require.NoError(t, err, mode)
				return res
			}
			ref, g5 := run(CheckReference), run(CheckGraph500)
			assert.Equal(t, ref.ReferenceChecksum, g5.ReferenceChecksum)
			assert.Equal(t, ref.Summary.Roots, g5.Summary.Roots, "the statistics of every root")
			assert.Equal(t, ref.Summary.TotalLevels, g5.Summary.TotalLevels)
			if c.dirs {
				assert.Len(t, ref.Directions, len(roots), "the CPU reference's decisions")
				assert.Positive(t, ref.Summary.BottomUpLevels)
			}
			assert.Equal(t, ref.Directions, g5.Directions, "the decisions of every root")
			assert.Equal(t, ref.Summary.BottomUpLevels, g5.Summary.BottomUpLevels)
			for _, s := range g5.Samples {
				if s.Arm != "copy-ceiling" {
					assert.Equal(t, ref.ReferenceChecksum, s.Checksum, s.Arm)
				}
			}
			require.Len(t, ref.Checks, len(roots))
			require.Len(t, g5.Checks, len(roots))
			for k, r := range roots {
				assert.Equal(t, RootCheck{Root: r, Check: CheckReference}, ref.Checks[k])
				assert.Equal(t, RootCheck{Root: r, Check: CheckGraph500, Arm: c.arm}, g5.Checks[k])
			}
		})
	}
}

// TestBenchCheckAutoSmallGraph runs the benchmark with the check left
// unset and set to auto on a small graph: the CPU reference runs, and an
// unknown mode is refused before anything runs.
func TestBenchCheckAutoSmallGraph(t *testing.T) {
	x, g, roots := benchInput(t, 35, 8, 3, 2, 1)
	var logs []string
	for _, mode := range []CheckMode{"", CheckAuto} {
		cfg := BenchConfig{Samples: 1, Arms: []Arm{ArmHostLoop}, Check: mode}
		cfg.Log = func(format string, a ...any) { logs = append(logs, fmt.Sprintf(format, a...)) }
		res, err := Bench(x, g, roots, cfg)
		require.NoError(t, err, mode)
		require.Len(t, res.Checks, len(roots))
		for _, c := range res.Checks {
			assert.Equal(t, CheckReference, c.Check, "%q on %d entries", mode, g.NumEdgeEntries())
		}
	}
	var said []string
	for _, l := range logs {
		if strings.HasPrefix(l, "check ") {
			said = append(said, l[:strings.Index(l, ":")+1])
		}
	}
	assert.Equal(t, []string{"check reference (auto:", "check reference (auto:"}, said, "the log says which check ran, and why")
	_, err := Bench(x, g, roots, BenchConfig{Samples: 1, Check: "cpu"})
	require.ErrorContains(t, err, "BenchConfig.Check: unknown BFS check mode \"cpu\"")
	assert.Contains(t, err.Error(), "Fix:")
}

// graph500Bench returns a bench over a fake session of g that validates
// the first traversal from roots (its reference not yet adopted).
func graph500Bench(t *testing.T, g *frontier.CSR, roots []int32) *bench {
	_, s := fakeSession(t, 1<<30, 36, g, Config{})
	n := len(roots)
	return &bench{cfg: BenchConfig{Arms: DefaultArms()}, mode: CheckGraph500, s: s, g: g, roots: roots, res: &BenchResult{},
		stats: make([]RootStat, n), refs: make([][]int32, n), decisions: make([][]planners.BFSDirectionDecision, n)}
}

// TestAdoptRefusesWrongLevels feeds the Graph500 check's validation of the
// first traversal levels that are wrong in each way it must catch, and a
// level count that is not the levels': each is refused with the root and
// a fix and adopts nothing; the right levels are adopted with their
// statistics and decisions, and later traversals are held to them.
func TestAdoptRefusesWrongLevels(t *testing.T) {
	g, err := frontier.Kronecker(9, 16, 2)
	require.NoError(t, err)
	roots, err := frontier.Roots(g, 1, 3)
	require.NoError(t, err)
	root := roots[0]
	ref, err := frontier.BFSDirectionOptimizing(g, root, planners.DefaultDirectionParams())
	require.NoError(t, err)
	st := frontier.Stats(g, ref.Levels)
	far, unreached := -1, -1
	for v, l := range ref.Levels {
		if int(l) == st.Levels-1 && far < 0 {
			far = v
		}
		if l == frontier.Unreached && unreached < 0 {
			unreached = v
		}
	}
	require.GreaterOrEqual(t, far, 0)
	require.GreaterOrEqual(t, unreached, 0, "a Kronecker graph has isolated vertices")
	first := g.Targets[g.Offsets[root]]
	corrupt := map[string]struct {
		edit func(lv []int32) []int32
		want string
	}{
		"a far vertex one level deeper": {func(lv []int32) []int32 { lv[far]++; return lv }, "levels invalid"},
		"a neighbour of the root at 2":  {func(lv []int32) []int32 { lv[first] = 2; return lv }, "levels invalid"},
		"the root at level 1":           {func(lv []int32) []int32 { lv[root] = 1; return lv }, "the root has level 1"},
		"a reached vertex unreached":    {func(lv []int32) []int32 { lv[far] = frontier.Unreached; return lv }, "levels invalid"},
		"an unreached vertex reached":   {func(lv []int32) []int32 { lv[unreached] = 1; return lv }, "levels invalid"},
		"a second level 0":              {func(lv []int32) []int32 { lv[first] = 0; return lv }, "levels invalid"},
		"one vertex short":              {func(lv []int32) []int32 { return lv[:len(lv)-1] }, "levels for"},
	}
	for name, c := range corrupt {
		b := graph500Bench(t, g, roots)
		lv := c.edit(append([]int32(nil), ref.Levels...))
		err := b.adopt(0, Run{Arm: ArmHostLoop, Root: root, Levels: st.Levels, Decisions: ref.Decisions}, lv)
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), c.want, name)
		assert.Contains(t, err.Error(), "check graph500 validates", name)
		assert.Contains(t, err.Error(), "Fix:", name)
		assert.Nil(t, b.refs[0], "%s: nothing is adopted", name)
	}
	b := graph500Bench(t, g, roots)
	err = b.adopt(0, Run{Arm: ArmHostLoop, Root: root, Levels: st.Levels + 1}, ref.Levels)
	require.ErrorContains(t, err, "its validated levels have")
	assert.Contains(t, err.Error(), "Fix:")

	good := Run{Arm: ArmHostLoop, Root: root, Levels: st.Levels, Decisions: ref.Decisions}
	require.NoError(t, b.adopt(0, good, ref.Levels))
	assert.Equal(t, RootStat{Root: root, Levels: st.Levels, Reached: st.Reached, Edges: st.Edges, Checksum: frontier.Checksum(ref.Levels)}, b.stats[0])
	assert.Equal(t, ref.Decisions, b.decisions[0])
	require.NoError(t, b.check(0, Run{Arm: ArmDeviceLoop, Levels: st.Levels, Decisions: ref.Decisions}, ref.Levels))
	later := map[string]struct {
		r    Run
		lv   []int32
		want string
	}{
		"other levels":    {Run{Arm: ArmDeviceLoop, Levels: st.Levels, Decisions: ref.Decisions}, func() []int32 { lv := append([]int32(nil), ref.Levels...); lv[far]++; return lv }(), "the GPU levels differ from the validated first traversal"},
		"other count":     {Run{Arm: ArmMegakernel, Levels: st.Levels - 1, Decisions: ref.Decisions}, ref.Levels, "the device counted"},
		"other decisions": {Run{Arm: ArmDeviceLoop, Levels: st.Levels, Decisions: ref.Decisions[1:]}, ref.Levels, "direction decisions differ"},
	}
	for name, c := range later {
		err := b.check(0, c.r, c.lv)
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), c.want, name)
		assert.Contains(t, err.Error(), "check graph500", name)
		assert.Contains(t, err.Error(), "Fix:", name)
	}
}
