package bfs

import (
	"bytes"
	"fmt"
	"regexp"
	"testing"

	"github.com/gpuplan/gpuplan/frontier"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newEmu emulates a grid of nwarps warps, warpsPerBlock to a block, whose
// block queues hold blockCap items, over host memory holding g and queues
// of the bound's capacity.
func newEmu(g *frontier.CSR, chunk int, nwarps, warpsPerBlock, blockCap uint32, seed uint64) *emuDevice {
	qcap, err := QueueBound(g, chunk)
	if err != nil {
		panic(err)
	}
	words := (g.NumVertices() + 31) / 32
	offsets, err := g.Offsets32()
	if err != nil {
		panic(err)
	}
	m := emuMemory{offsets: offsets, targets: g.Targets, level: make([]int32, g.NumVertices()),
		q: [2][]item{make([]item, qcap), make([]item, qcap)}, qlab: [2][]uint32{make([]uint32, qcap), make([]uint32, qcap)},
		vis: [2][]uint32{make([]uint32, words), make([]uint32, words)}, ctl: make([]uint32, CtlWords),
		log: make([]uint32, 4*LogEntries(g))}
	return newEmuDevice(m, uint32(chunk), uint32(qcap), nwarps, warpsPerBlock, blockCap, seed)
}

func emuGraphs(t *testing.T) []*frontier.CSR {
	t.Helper()
	must := mustGraph(t)
	return []*frontier.CSR{must(frontier.Kronecker(11, 16, 3)), must(frontier.Grid(23)), must(frontier.Road(20, 4)), star(t, 3000)}
}

// TestKernelEmulation runs the kernels' queue logic (megakernel and per-level
// arms, several grid shapes, chunk sizes, megakernel keep budgets and run-
// ahead depths) and checks the levels against the reference BFS, the result
// words and that no queue overflowed.
func TestKernelEmulation(t *testing.T) {
	// The kernel's keep budget, and a tiny one that makes blocks turn
	// candidates away and shed on most levels.
	budgets := [][4]uint32{{64, 256, 16, 64}, {4, 16, 1, 4}}
	overflows := 0
	defer func() {
		t.Logf("%d run-ahead traversals overflowed a queue and ran again level-synchronously", overflows)
	}()
	for _, g := range emuGraphs(t) {
		roots, err := frontier.Roots(g, 3, 1)
		require.NoError(t, err)
		for _, chunk := range []int{1, 7, DefaultChunk} {
			for _, shape := range [][3]uint32{{1, 1, 4}, {6, 2, 3}, {132 * 16, 16, 1024}, {792 * 8, 8, 1024}} {
				nwarps, wpb, bcap := shape[0], shape[1], shape[2]
				for _, root := range roots {
					want, err := frontier.BFS(g, root)
					require.NoError(t, err)
					st := frontier.Stats(g, want)
					for _, kb := range budgets {
						for _, ahead := range []uint32{1, 3, 8} {
							name := fmt.Sprintf("%s/chunk%d/warps%d/root%d/keep%v/ahead%d", g.Name, chunk, nwarps, root, kb, ahead)
							run := func(ahead uint32) (*emuDevice, uint32, uint32, uint32) {
								d := newEmu(g, chunk, nwarps, wpb, bcap, uint64(root)+uint64(ahead))
								d.setKeep(kb[0], kb[1], kb[2], kb[3])
								d.init(uint32(root))
								levels, changed, barriers := d.megakernel(uint32(g.NumVertices()), ahead)
								return d, levels, changed, barriers
							}
							d, levels, changed, barriers := run(ahead)
							if d.ctl[CtlResult+ResultOverflow] != 0 {
								// Run-ahead can push a vertex once per
								// lowered label and pass the queue's
								// level-synchronous bound: the session
								// then runs again with one barrier per
								// level, which cannot overflow.
								require.Greater(t, ahead, uint32(1), name)
								overflows++
								d, levels, changed, barriers = run(1)
								ahead = 1
							}
							require.Equal(t, want, d.level, name)
							assert.EqualValues(t, st.Levels, levels, name)
							assert.Zero(t, changed, name)
							assert.LessOrEqual(t, barriers, levels, name)
							if ahead == 1 {
								// Level-synchronous: one barrier per level,
								// and no label is ever lowered.
								assert.Equal(t, levels, barriers, name)
								assert.Zero(t, d.relabels, name)
							}
							assert.Zero(t, d.ctl[CtlResult+ResultOverflow], name)
							assert.LessOrEqual(t, d.maxCount, d.qcap, name)
						}
					}

					// Per-level launches, enqueued in batches of 4 without
					// reading anything back in between (the device loop).
					name := fmt.Sprintf("%s/chunk%d/warps%d/root%d/levels", g.Name, chunk, nwarps, root)
					d := newEmu(g, chunk, nwarps, wpb, bcap, uint64(root))
					d.init(uint32(root))
					depth := uint32(0)
					for {
						var next uint32
						for i := 0; i < 4; i++ {
							next = d.queueLevel(depth)
							depth++
						}
						if next == 0 {
							break
						}
					}
					require.Equal(t, want, d.level, name)
					assert.EqualValues(t, st.Levels, d.ctl[CtlResult+ResultLevels], name)
					assert.Zero(t, d.relabels, name)
				}
			}
		}
	}
}

// TestKernelEmulationKeep checks that the megakernel's keep queues carry a
// high-diameter graph's levels: with the kernel's budget a grid of 200 x 200
// from a corner needs the global queue on few steps, and running ahead 8
// levels crosses far fewer grid barriers than levels, with some labels
// lowered when blocks race ahead and the same levels in the end; with a
// tiny budget blocks shed and the global queue carries most steps.
func TestKernelEmulationKeep(t *testing.T) {
	g, err := frontier.Grid(200)
	require.NoError(t, err)
	want, err := frontier.BFS(g, 0)
	require.NoError(t, err)
	st := frontier.Stats(g, want)
	d := newEmu(g, DefaultChunk, 132*16, 16, 1024, 5)
	d.init(0)
	levels, _, barriers := d.megakernel(uint32(g.NumVertices()), 1)
	require.Equal(t, want, d.level)
	require.EqualValues(t, st.Levels, levels)
	require.Equal(t, levels, barriers)
	t.Logf("kernel budget, level-synchronous: %d levels, %d steps with global items, %d with a shed", levels, d.globalSteps, d.shedSteps)
	assert.Less(t, d.globalSteps, levels/4, "most levels run from the blocks' keep queues alone")

	d = newEmu(g, DefaultChunk, 132*16, 16, 1024, 5)
	d.init(0)
	levels, _, barriers = d.megakernel(uint32(g.NumVertices()), 8)
	require.Equal(t, want, d.level)
	require.EqualValues(t, st.Levels, levels)
	t.Logf("kernel budget, 8 ahead: %d levels in %d steps, %d labels lowered", levels, barriers, d.relabels)
	assert.Less(t, barriers, levels/3, "running ahead saves most grid barriers")

	d = newEmu(g, DefaultChunk, 132*16, 16, 1024, 5)
	d.setKeep(4, 16, 1, 4)
	d.init(0)
	levels, _, barriers = d.megakernel(uint32(g.NumVertices()), 1)
	require.Equal(t, want, d.level)
	require.EqualValues(t, st.Levels, levels)
	t.Logf("tiny budget: %d levels, %d steps with global items, %d with a shed", levels, d.globalSteps, d.shedSteps)
	assert.Greater(t, d.shedSteps, barriers/2, "a tiny budget sheds on most steps")
	assert.Greater(t, d.globalSteps, barriers/2)
}

// TestKernelEmulationRelabel builds a case where running ahead must lower
// labels: on a cycle whose one side starts a step late, the other side's
// block races past the meeting point and its labels there are too large
// until the late side lowers them.
func TestKernelEmulationRelabel(t *testing.T) {
	// A cycle of 64 vertices, and 6 leaves on vertex 63: its degree 8 is
	// past the tiny keep budget's 4 edges per vertex, so 63 goes through
	// the global queue and its side of the cycle starts a step late.
	const n, leaves = 64, 6
	var src, dst []int32
	for i := int32(0); i < n; i++ {
		src, dst = append(src, i), append(dst, (i+1)%n)
	}
	for i := int32(0); i < leaves; i++ {
		src, dst = append(src, n-1), append(dst, n+i)
	}
	g, err := frontier.BuildUndirected("cycle", n+leaves, src, dst)
	require.NoError(t, err)
	want, err := frontier.BFS(g, 0)
	require.NoError(t, err)
	st := frontier.Stats(g, want)
	relabels := uint32(0)
	for seed := uint64(0); seed < 20; seed++ {
		d := newEmu(g, DefaultChunk, 4, 1, 16, seed)
		d.setKeep(4, 16, 1, 4)
		d.init(0)
		levels, changed, barriers := d.megakernel(n, 8)
		require.Equal(t, want, d.level, "seed %d", seed)
		assert.EqualValues(t, st.Levels, levels, "seed %d", seed)
		assert.Zero(t, changed)
		assert.Less(t, barriers, levels)
		relabels += d.relabels
	}
	assert.Positive(t, relabels, "the late side lowered labels")
}

// TestKernelEmulationBudget checks the megakernel's step budget: stopping
// early leaves the changed flag set.
func TestKernelEmulationBudget(t *testing.T) {
	g, err := frontier.Grid(8)
	require.NoError(t, err)
	d := newEmu(g, DefaultChunk, 4, 2, 16, 1)
	d.init(0)
	levels, changed, barriers := d.megakernel(5, 1)
	// Five steps labelled levels 1..5.
	assert.EqualValues(t, 6, levels)
	assert.EqualValues(t, 5, barriers)
	assert.EqualValues(t, 1, changed)
}

func TestEmbeddedPTX(t *testing.T) {
	ptx := KernelPTX()
	require.NotEmpty(t, ptx)
	assert.True(t, bytes.Contains(ptx, []byte(".target sm_80")))
	for _, name := range KernelNames() {
		re := regexp.MustCompile(`\.visible \.entry ` + name + `\(([^)]*)\)`)
		m := re.FindSubmatch(ptx)
		require.NotNil(t, m, name)
		// Every parameter is 8 bytes wide (.u64): the driver binding copies
		// each kernel argument as 8 bytes.
		params := regexp.MustCompile(`\.param \.(\w+)`).FindAllSubmatch(m[1], -1)
		require.NotEmpty(t, params, name)
		for _, p := range params {
			assert.Equal(t, "u64", string(p[1]), name)
		}
	}
	ptx[0] = 'X'
	assert.NotEqual(t, ptx[0], KernelPTX()[0], "callers get a copy")
}

// TestKernelEmulationAdaptiveRunAhead runs the adaptive megakernel on
// graphs whose shortest paths are straight (a grid), wind (a road-like
// graph) or cross everywhere (a random geometric graph run top-down): the
// levels are the BFS levels, the labels lowered stay below one per vertex
// on every graph, and the depth grows where running ahead pays (far fewer
// barriers than levels on the grid).
func TestKernelEmulationAdaptiveRunAhead(t *testing.T) {
	for _, spec := range []string{"grid:120", "road:120", "rgg:12000:8", "rgg:12000:5"} {
		s, err := frontier.ParseSpec(spec)
		require.NoError(t, err)
		g, err := s.Build(1, frontier.DefaultLimits())
		require.NoError(t, err)
		roots, err := frontier.Roots(g, 2, 1)
		require.NoError(t, err)
		for _, root := range roots {
			want, err := frontier.BFS(g, root)
			require.NoError(t, err)
			name := fmt.Sprintf("%s root %d", spec, root)
			d := newEmu(g, DefaultChunk, 132*16, 16, 1024, uint64(root))
			d.init(uint32(root))
			levels, changed, barriers := d.mega(megaRun{maxSteps: uint32(g.NumVertices()), ahead: DefaultMaxRunAhead, adapt: true})
			require.Equal(t, want, d.level, name)
			assert.Zero(t, changed, name)
			assert.EqualValues(t, frontier.Stats(g, want).Levels, levels, name)
			perVertex := float64(d.relabels) / float64(g.NumVertices())
			t.Logf("%s: %d levels in %d barriers, %.3f labels lowered per vertex", name, levels, barriers, perVertex)
			assert.Less(t, perVertex, 1.0, name)
			if spec == "grid:120" {
				assert.Less(t, barriers, levels/4, name)
			}
			maxDepth := uint32(0)
			for i := range barriers {
				maxDepth = max(maxDepth, d.log[4*i]>>logDepthShift)
			}
			assert.LessOrEqual(t, maxDepth, uint32(DefaultMaxRunAhead), name)
			assert.Greater(t, maxDepth, uint32(1), "%s: the depth grew", name)
		}
	}
}

// TestAdaptDepth checks the run-ahead controller's rules one by one.
func TestAdaptDepth(t *testing.T) {
	var cf, cr uint64
	assert.EqualValues(t, 3, adaptDepth(2, 32, 80, 10, &cf, &cr), "one label per eight vertices grows")
	assert.EqualValues(t, 3, adaptDepth(3, 32, 80, 11, &cf, &cr), "a little more holds")
	assert.EqualValues(t, 32, adaptDepth(32, 32, 80, 0, &cf, &cr), "the cap holds")
	assert.EqualValues(t, 4, adaptDepth(8, 32, 10, 11, &cf, &cr), "more labels than vertices halves")
	assert.EqualValues(t, 1, adaptDepth(1, 32, 0, 5, &cf, &cr), "never below one")
	cf, cr = 100, 120
	assert.EqualValues(t, 2, adaptDepth(4, 32, 100, 0, &cf, &cr), "the traversal's lowered labels past a quarter of its vertices halve")
}

// TestExpandKeptFreshLabels checks how a kept vertex that another block
// lowered since it was kept is expanded: running ahead (fresh), its
// target is claimed with the vertex's current level + 1 and kept with that
// label; level-synchronous, with the label it was kept with.
func TestExpandKeptFreshLabels(t *testing.T) {
	// A path 0 - 1 - 2 - 3: vertex 2 was kept with label 5 and has level
	// 1 now; vertex 3 is unreached.
	g, err := frontier.BuildUndirected("path", 4, []int32{0, 1, 2}, []int32{1, 2, 3})
	require.NoError(t, err)
	for _, tc := range []struct {
		name      string
		fresh     bool
		wantLevel int32
		relabels  uint32
	}{
		{"running ahead", true, 2, 1},
		{"level-synchronous", false, 6, 0},
	} {
		d := newEmu(g, DefaultChunk, 1, 1, 16, 1)
		d.setKeep(keepItems, keepEdges, keepLow, keepItemEdges)
		copy(d.level, []int32{0, 0, 1, -1})
		cur, next := &d.keep[0][0], &d.keep[0][1]
		// Vertex 2's edges as keep_vertex writes them: to 1 and to 3.
		cur.items[0], cur.ilab[0], cur.pos[0], cur.vid[0] = item{uint32(g.Offsets[2]), uint32(g.Offsets[3])}, 5, 0, 2
		for i, w := range g.Targets[g.Offsets[2]:g.Offsets[3]] {
			cur.tgt[i], cur.eslot[i] = uint32(w), 0
		}
		s := &emuSink{kq: next, bq: d.blockQueue(0)}
		d.expandKept(cur, uint32(g.Offsets[3]-g.Offsets[2]), s, tc.fresh)
		assert.Equal(t, tc.wantLevel, d.level[3], tc.name)
		assert.Equal(t, tc.relabels, d.relabels, tc.name+": the stale claim, lowered by the fresh one")
		require.EqualValues(t, 1, next.done>>keepShift, tc.name+": vertex 3 kept once")
		assert.EqualValues(t, 3, next.vid[0], tc.name)
		assert.EqualValues(t, tc.wantLevel, next.ilab[0], tc.name)
	}
}
