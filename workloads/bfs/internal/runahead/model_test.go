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
	g, err := frontier.RandomGeometric(20000, 8, 3)
	require.NoError(t, err)
	root := int32(0)
	for g.Offsets[root+1] == g.Offsets[root] {
		root++
	}
	want, err := frontier.BFS(g, root)
	require.NoError(t, err)
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
