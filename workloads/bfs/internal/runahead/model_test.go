package main

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/frontier"
)

// TestModelLevels checks that every policy converges to the BFS levels,
// and that level-synchronous steps (depth 1) lower no label and cross one
// barrier per level.
func TestModelLevels(t *testing.T) {
	g, root, want := rggRooted(t, 3)
	for _, depth := range []int{1, 2, 4, 8} {
		for _, fresh := range []bool{false, true} {
			for _, seq := range []bool{false, true} {
				m := &model{g: g, blocks: 16, depth: depth, budget: 64, items: 16, fresh: fresh, seq: seq, rng: rand.New(rand.NewPCG(1, 2))}
				r := m.traverse(root)
				for v, l := range m.label {
					if want[v] < 0 {
						require.Equal(t, unreached, l, "vertex %d", v)
					} else {
						require.Equal(t, want[v], l, "depth %d fresh %v seq %v vertex %d", depth, fresh, seq, v)
					}
				}
				if depth == 1 {
					assert.Zero(t, r.relabels)
					assert.Equal(t, r.levels, r.steps)
				} else {
					assert.Less(t, r.steps, r.levels)
				}
			}
		}
	}
}

// TestModelTime checks the time estimate: a level-synchronous step costs
// its first level and the barrier, a deeper step at most one level more
// per level it runs ahead, and each further round of edges adds round.
func TestModelTime(t *testing.T) {
	g, err := frontier.RandomGeometric(20000, 8, 5)
	require.NoError(t, err)
	c := cost{first: 1.5, level: 1.0, round: 0.25, barrier: 2, threads: 1 << 20}
	for _, depth := range []int{1, 2, 4} {
		m := &model{g: g, blocks: 16, depth: depth, budget: 64, items: 16, cost: c, rng: rand.New(rand.NewPCG(3, 4))}
		r := m.traverse(0)
		lo := float64(r.steps) * (c.first + c.barrier)
		hi := lo + float64(r.steps*(depth-1))*c.level
		assert.GreaterOrEqual(t, r.time, lo-1e-9, "depth %d", depth)
		assert.LessOrEqual(t, r.time, hi+1e-9, "depth %d", depth)
		if depth == 1 {
			assert.InDelta(t, lo, r.time, 1e-9)
		}
	}
	c.threads = 4
	assert.InDelta(t, 1.5+2*0.25, c.levelTime(true, 12), 1e-12)
	assert.InDelta(t, 1.0, c.levelTime(false, 4), 1e-12)
}

// TestModelTailLeavesTraversal checks that drawing the time's tail does not
// change the traversal the time is estimated for.
func TestModelTailLeavesTraversal(t *testing.T) {
	g, err := frontier.RandomGeometric(20000, 8, 6)
	require.NoError(t, err)
	run := func(tail float64) result {
		c := cost{first: 2, level: 1.7, round: 0.3, barrier: 1.2, tail: tail, threads: 64, rng: rand.New(rand.NewPCG(8, 9))}
		m := &model{g: g, blocks: 16, depth: 3, budget: 64, items: 16, cost: c, rng: rand.New(rand.NewPCG(3, 4))}
		return m.traverse(0)
	}
	plain, tailed := run(0), run(0.5)
	assert.Equal(t, plain.steps, tailed.steps)
	assert.Equal(t, plain.relabels, tailed.relabels)
	assert.NotEqual(t, plain.time, tailed.time)
}

// TestModelAsync checks the traversal without grid barriers: every window
// converges to the BFS levels, and the levels still run one after another,
// so the time is at least a level's cost per level past the first, and a
// later visibility of pushed entries never makes it faster.
func TestModelAsync(t *testing.T) {
	g, root, want := rggRooted(t, 4)
	c := cost{first: 1.5, level: 1.0, round: 0.25, threads: 64}
	for _, tc := range []struct {
		name          string
		blocks        int
		budget, items int
		window, take  int
	}{
		{"lockstep", 16, 64, 16, 0, 16},
		{"window 1", 16, 64, 16, 1, 16},
		{"window 3 large keep", 32, 512, 128, 3, 128},
		{"one block", 1, 64, 16, 2, 8},
	} {
		var times []float64
		for _, publish := range []float64{0.5, 2} {
			m := &model{g: g, blocks: tc.blocks, budget: tc.budget, items: tc.items, window: tc.window, take: tc.take,
				publish: publish, cost: c, rng: rand.New(rand.NewPCG(1, 2))}
			r := m.traverseAsync(root)
			require.False(t, r.stalled, tc.name)
			for v, l := range m.label {
				if want[v] < 0 {
					require.Equal(t, unreached, l, "%s vertex %d", tc.name, v)
				} else {
					require.Equal(t, want[v], l, "%s vertex %d", tc.name, v)
				}
			}
			assert.GreaterOrEqual(t, r.time, float64(r.levels-1)*c.level, tc.name)
			assert.GreaterOrEqual(t, r.steps, r.levels, tc.name)
			times = append(times, r.time)
		}
		assert.LessOrEqual(t, times[0], times[1], tc.name)
	}
}

// rggRooted returns a random geometric graph of 20,000 points from seed,
// its first vertex with edges and the BFS levels from it.
func rggRooted(t *testing.T, seed uint64) (*frontier.CSR, int32, []int32) {
	t.Helper()
	g, err := frontier.RandomGeometric(20000, 8, seed)
	require.NoError(t, err)
	root := int32(0)
	for g.Offsets[root+1] == g.Offsets[root] {
		root++
	}
	want, err := frontier.BFS(g, root)
	require.NoError(t, err)
	return g, root, want
}
