package bfs

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/planners"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// checkMultiSource runs multi-source BFS over the session's graph from
// counts of roots at each width and checks every root's levels against
// frontier.MultiSourceBFS (per pass) and frontier.BFS, that the passes
// follow the plan, that the timed regions are clean, and that some levels
// of a Kronecker graph pulled.
func checkMultiSource(t *testing.T, s *Session, counts, widths []int) {
	g := s.Graph()
	eachMultiSource(t, s, counts, widths, func(name string, roots []int32, width int, m *MultiSource) {
		k := len(roots)
		plan := m.Plan()
		if width != 0 {
			assert.EqualValues(t, width, plan.Width, name)
		}
		// The first host loop of an executor may allocate its pinned
		// staging memory; the measured run is the second.
		_, _, err := m.Run(roots, false)
		require.NoError(t, err, name)
		run, levels, err := m.Run(roots, true)
		require.NoError(t, err, name)
		assert.Equal(t, len(plan.Batches), run.Passes, name)
		assert.Zero(t, run.TimedUploads+run.TimedAllocations+run.TimedHostSyncs, name)
		require.Len(t, levels, k, name)
		for _, b := range plan.Batches {
			pass := roots[b.FirstRoot : b.FirstRoot+b.Roots]
			want, err := frontier.MultiSourceBFS(g, pass)
			require.NoError(t, err)
			for i := range pass {
				require.Equal(t, want[i], levels[int(b.FirstRoot)+i], "%s root %d", name, pass[i])
			}
		}
		for i, r := range roots {
			want, err := frontier.BFS(g, r)
			require.NoError(t, err)
			require.Equal(t, want, levels[i], "%s root %d", name, r)
		}
		if strings.HasPrefix(g.Name, "kron") {
			assert.Positive(t, run.PullLevels, "%s: dense levels pull", name)
		}
		assert.Less(t, run.PullLevels, run.Levels, "%s: sparse levels push", name)
	})
}

// eachMultiSource plans a multi-source run for each count of roots (the
// last repeating the first, which then shares its vertex's list entry) at
// each width, calls check with it, and closes it.
func eachMultiSource(t *testing.T, s *Session, counts, widths []int, check func(name string, roots []int32, width int, m *MultiSource)) {
	g := s.Graph()
	for _, k := range counts {
		roots, err := frontier.Roots(g, k, uint64(k))
		require.NoError(t, err)
		roots[len(roots)-1] = roots[0]
		for _, width := range widths {
			name := fmt.Sprintf("%s/%d roots/width %d", g.Name, k, width)
			m, err := s.NewMultiSource(k, width)
			require.NoError(t, err, name)
			check(name, roots, width, m)
			require.NoError(t, m.Close())
		}
	}
}

// multiSourceNeed returns the multi-source plan of a pass of roots roots,
// width to a word, over g, from a probe session of the default config on x
// (closed before it returns).
func multiSourceNeed(t *testing.T, x *executor.Executor, g *frontier.CSR, roots, width int) planners.MultiSourceBFSPlan {
	t.Helper()
	probe, err := NewSession(x, g, Config{})
	require.NoError(t, err)
	req, err := probe.multiSourceRequest(roots, width, msHubCount(g))
	require.NoError(t, err)
	need, err := planners.PlanMultiSourceBFS(req)
	require.NoError(t, err)
	require.NoError(t, probe.Close())
	return need
}

// TestMultiSourceOnFake runs multi-source passes over the emulated kernels
// on every generator: 1 to 70 roots, at width 32, 64 and the planner's.
func TestMultiSourceOnFake(t *testing.T) {
	x, _ := newFakeExecutor(t, 8<<30, 21)
	optimizing, topDown := directionGraphs(t)
	for _, g := range append(optimizing[:3], topDown...) {
		s, err := NewSession(x, g, Config{})
		require.NoError(t, err)
		resident := x.ResidentBytes()
		checkMultiSource(t, s, []int{1, 33, 70}, []int{0, 32, 64})
		assert.Equal(t, resident, x.ResidentBytes(), "a closed multi-source run frees its buffers")
		require.NoError(t, s.Close())
	}
}

// TestMultiSourceRefusals checks the plan's refusal of a pass over the
// budget (with its numbers, before anything is allocated) and the run's
// refusal of roots it was not planned for.
func TestMultiSourceRefusals(t *testing.T) {
	x, _ := newFakeExecutor(t, 8<<30, 22)
	g, err := frontier.Kronecker(10, 16, 1)
	require.NoError(t, err)
	need := multiSourceNeed(t, x, g, 64, 64)
	// A budget that holds the session but not a 64-root pass.
	s, err := NewSession(x, g, Config{MaxResidentBytes: need.ResidentBytes - 1})
	require.NoError(t, err)
	defer s.Close()
	before := x.ResidentBytes()
	_, err = s.NewMultiSource(64, 64)
	var me *planners.MultiSourceBFSError
	require.ErrorAs(t, err, &me)
	assert.Equal(t, planners.MultiSourceOverBudget, me.Kind)
	assert.Contains(t, err.Error(), "multi-source BFS over kron")
	assert.Contains(t, err.Error(), fmt.Sprint(need.ResidentBytes))
	assert.Equal(t, before, x.ResidentBytes(), "refused before any allocation")
	m, err := s.NewMultiSource(64, 0)
	require.NoError(t, err, "the planner falls back to 32 roots a pass")
	assert.EqualValues(t, 32, m.Plan().Width)
	_, _, err = m.Run([]int32{1, 2}, false)
	require.ErrorContains(t, err, "plan the run")
	roots := make([]int32, 64)
	roots[5] = int32(g.NumVertices())
	_, _, err = m.Run(roots, false)
	var re *frontier.RootError
	require.ErrorAs(t, err, &re)
	assert.Contains(t, err.Error(), "roots[5]")
	require.NoError(t, m.Close())
}

// TestMultiSourceHubsOnFake runs multi-source passes over graphs whose
// frontiers hold hubs (degree msHubEdges or more) on levels that push, so
// the hub lists the init and finish kernels build must cover every hub for
// the levels to come out right: a Kronecker graph, and a grid with three
// hubs wired to random cells.
func TestMultiSourceHubsOnFake(t *testing.T) {
	x, _ := newFakeExecutor(t, 8<<30, 23)
	kron, err := frontier.Kronecker(16, 16, 9)
	require.NoError(t, err)
	checkMultiSourceHubs(t, x, []*frontier.CSR{kron, gridWithHubs(t, 150, 3, 2*msHubEdges)}, []int{5, 64}, []int{0})
}

// checkMultiSourceHubs runs checkMultiSource on each graph, which must
// have hubs, in a session of its own.
func checkMultiSourceHubs(t *testing.T, x *executor.Executor, graphs []*frontier.CSR, counts, widths []int) {
	for _, g := range graphs {
		require.Positive(t, msHubCount(g), g.Name)
		s, err := NewSession(x, g, Config{})
		require.NoError(t, err)
		checkMultiSource(t, s, counts, widths)
		require.NoError(t, s.Close())
	}
}

// gridWithHubs is a side x side grid plus hubs extra vertices, each joined
// to deg random cells.
func gridWithHubs(t *testing.T, side, hubs, deg int) *frontier.CSR {
	grid, err := frontier.Grid(side)
	require.NoError(t, err)
	n := side * side
	var src, dst []int32
	for v := range n {
		for _, u := range grid.Targets[grid.Offsets[v]:grid.Offsets[v+1]] {
			if int32(v) < u {
				src, dst = append(src, int32(v)), append(dst, u)
			}
		}
	}
	r := rand.New(rand.NewPCG(uint64(side), uint64(hubs)))
	for h := range hubs {
		for _, c := range r.Perm(n)[:deg] {
			src, dst = append(src, int32(n+h)), append(dst, int32(c))
		}
	}
	g, err := frontier.BuildUndirected("grid-hubs", n+hubs, src, dst)
	require.NoError(t, err)
	return g
}

// TestMSPushBlocks checks the grid of a pushing level: enough warps for
// the list's vertices (32 a warp) and for its edges (msPushWarpEdges a
// warp), between one block and the level grid.
func TestMSPushBlocks(t *testing.T) {
	for name, c := range map[string]struct {
		count, mf uint32
		want      uint32
	}{
		"empty":              {0, 0, 1},
		"few light vertices": {64, 64, 1},
		"many vertices":      {32 * 8 * 5, 0, 5},
		"few heavy vertices": {64, 64 * 900, 57},
		"capped by grid":     {1 << 30, 1 << 30, 660},
		"edges past 32 bits": {1, ^uint32(0), 660},
	} {
		assert.Equal(t, c.want, msPushBlocks(c.count, c.mf, 8, 660), name)
	}
}

// TestMSGraphHubs checks the graph's hub list: every vertex of degree
// msHubEdges or more, in order, each with its first chunk, and the count
// word.
func TestMSGraphHubs(t *testing.T) {
	g := gridWithHubs(t, 40, 3, msHubEdges+1)
	raw, hubc := msGraphHubs(g)
	require.Len(t, raw, 8*3)
	per := (msHubEdges + msHubChunk) / msHubChunk // msHubEdges+1 edges
	assert.Equal(t, uint64(3)<<32|uint64(3*per), hubc, "three hubs")
	for j := range 3 {
		assert.EqualValues(t, 40*40+j, binary.LittleEndian.Uint32(raw[8*j:]), "hub %d", j)
		assert.EqualValues(t, j*per, binary.LittleEndian.Uint32(raw[8*j+4:]), "hub %d's first chunk", j)
	}
	grid, err := frontier.Grid(8)
	require.NoError(t, err)
	raw, hubc = msGraphHubs(grid)
	assert.Empty(t, raw)
	assert.Zero(t, hubc)
}

// msHubCount is the number of g's hubs, from its hub list's count word.
func msHubCount(g *frontier.CSR) uint64 {
	_, c := msGraphHubs(g)
	return c >> 32
}

// TestMSPlaneWord checks the plane layout the host decodes and the
// emulation writes: a vertex's planes lie in its groups, group after group
// over all vertices, and every (plane, vertex) pair of a pass has its own
// word inside the output the planner sizes.
func TestMSPlaneWord(t *testing.T) {
	for _, tc := range []struct{ b, v, n, width, want uint64 }{
		{0, 0, 10, 64, 0}, {3, 0, 10, 64, 3}, {4, 0, 10, 64, 40}, {1, 2, 10, 64, 9},
		{5, 9, 10, 64, 77}, {7, 1, 3, 32, 15}, {8, 1, 3, 32, 32},
	} {
		assert.Equal(t, tc.want, msPlaneWord(tc.b, tc.v, tc.n, planners.PlanesPerGroup(tc.width)), "%+v", tc)
	}
	for _, width := range []uint64{32, 64} {
		per := planners.PlanesPerGroup(width)
		require.Equal(t, planners.PlaneGroupBytes*8/width, per)
		for _, nb := range []uint64{1, 5, 17, 32} {
			const n = 37
			words := planners.PlaneGroups(nb, width) * per * n
			seen := map[uint64]bool{}
			for b := range nb {
				for v := range uint64(n) {
					w := msPlaneWord(b, v, n, per)
					require.Less(t, w, words, "width %d bits %d b %d v %d", width, nb, b, v)
					require.False(t, seen[w], "width %d bits %d: word %d twice", width, nb, w)
					seen[w] = true
				}
			}
		}
	}
}
