package bfs

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/frontier"
)

// TestMegakernelAsyncOnFake runs the emulated asynchronous megakernel on
// graphs of every shape, random seeds and windows, with both keep budgets:
// every root's levels are the CPU reference's, in one grid barrier.
func TestMegakernelAsyncOnFake(t *testing.T) {
	x, _ := newFakeExecutor(t, 1<<30, 11)
	type graph struct {
		name string
		make func(seed uint64) (*frontier.CSR, error)
		cfg  Config
	}
	graphs := []graph{
		{"grid", func(uint64) (*frontier.CSR, error) { return frontier.Grid(24) }, Config{Direction: DirectionTopDown}},
		{"road", func(seed uint64) (*frontier.CSR, error) { return frontier.Road(20, seed) }, Config{Direction: DirectionTopDown}},
		{"rgg", func(seed uint64) (*frontier.CSR, error) { return frontier.RandomGeometric(1500, 8, seed) }, Config{Direction: DirectionTopDown}},
		{"kronecker, optimizing session", func(seed uint64) (*frontier.CSR, error) { return frontier.Kronecker(9, 16, seed) },
			Config{MegakernelTopDown: true, MegakernelThreads: 512}},
	}
	for _, gr := range graphs {
		for seed := uint64(1); seed <= 2; seed++ {
			g, err := gr.make(seed)
			require.NoError(t, err)
			roots, err := frontier.Roots(g, 2, seed)
			require.NoError(t, err)
			for _, ahead := range []int{2, 5, 9} {
				for _, keep := range []int{DefaultMegakernelKeep, MaxMegakernelKeep} {
					cfg := gr.cfg
					cfg.MegakernelAsync, cfg.MegakernelAhead, cfg.MegakernelFixedAhead, cfg.MegakernelKeep = true, ahead, true, keep
					name := fmt.Sprintf("%s seed %d ahead %d keep %d", gr.name, seed, ahead, keep)
					s, err := NewSession(x, g, cfg)
					require.NoError(t, err, name)
					for _, root := range roots {
						r, err := s.Run(ArmMegakernel, root)
						require.NoError(t, err, name)
						got, err := s.Levels()
						require.NoError(t, err, name)
						require.Equal(t, frontierBFS(t, g, root), got, "%s root %d", name, root)
						assert.Equal(t, 1, r.Barriers, name)
						assert.Zero(t, r.Reruns, name)
					}
					require.NoError(t, s.Close())
				}
			}
		}
	}
}

// TestMegakernelAsyncFallbacks checks where the asynchronous megakernel
// gives way to grid barriers: a frontier queue too small for its counters
// runs with barriers from the start, and a ring that overflows is run again
// with one barrier per level (whose overflow, with so small a queue, is
// then reported).
func TestMegakernelAsyncFallbacks(t *testing.T) {
	x, _ := newFakeExecutor(t, 1<<30, 13)
	cfg := Config{Direction: DirectionTopDown, MegakernelAsync: true, MegakernelAhead: 9, MegakernelFixedAhead: true}
	small, err := frontier.Grid(6)
	require.NoError(t, err)
	c := cfg
	c.queueCap = asyncMinQueueItems - 1
	s, err := NewSession(x, small, c)
	require.NoError(t, err)
	r, err := s.Run(ArmMegakernel, 0)
	require.NoError(t, err)
	got, err := s.Levels()
	require.NoError(t, err)
	require.Equal(t, frontierBFS(t, small, 0), got)
	assert.Greater(t, r.Barriers, 1, "grid barriers, not the asynchronous traversal")
	require.NoError(t, s.Close())

	c = cfg
	c.queueCap = asyncMinQueueItems
	s, err = NewSession(x, star(t, 3000), c)
	require.NoError(t, err)
	r, err = s.Run(ArmMegakernel, 0)
	require.ErrorContains(t, err, "overflowed")
	assert.Equal(t, 1, r.Reruns)
	require.NoError(t, s.Close())
}

// TestMegakernelAsyncConfig checks what MegakernelAsync refuses, each
// error naming the field and the fix, and the other megakernel entry
// points' refusal of the asynchronous direction.
func TestMegakernelAsyncConfig(t *testing.T) {
	x, _ := newFakeExecutor(t, 1<<30, 17)
	must := mustGraph(t)
	grid, kron := must(frontier.Grid(16)), must(frontier.Kronecker(8, 16, 2))
	for _, tc := range []struct {
		name string
		g    *frontier.CSR
		cfg  Config
		want string
	}{
		{"blocks too large", grid, Config{Direction: DirectionTopDown, MegakernelAsync: true, MegakernelThreads: 1024}, "MegakernelThreads = 1024 with MegakernelAsync"},
		{"the wide default of a dense graph", kron, Config{Direction: DirectionTopDown, MegakernelAsync: true}, "Fix: set MegakernelThreads to at most 512"},
		{"chunk past a ring item", grid, Config{Direction: DirectionTopDown, MegakernelAsync: true, Chunk: AsyncItemEdges + 1}, "Chunk = 512 with MegakernelAsync"},
		{"direction-optimizing megakernel", kron, Config{MegakernelAsync: true, MegakernelThreads: 512}, "Fix: set MegakernelTopDown too"},
	} {
		_, err := NewSession(x, tc.g, tc.cfg)
		require.ErrorContains(t, err, tc.want, tc.name)
	}
	s, err := NewSession(x, grid, Config{Direction: DirectionTopDown, MegakernelAsync: true})
	require.NoError(t, err)
	defer s.Close()
	s.k.megaAsync = s.k.mega
	_, err = s.Run(ArmMegakernel, 0)
	require.ErrorContains(t, err, "a megakernel entry point other than bfs_megakernel_async was given the asynchronous direction")
	wide, err := NewSession(x, grid, Config{Direction: DirectionTopDown, MegakernelThreads: 544})
	require.NoError(t, err)
	defer wide.Close()
	require.ErrorContains(t, wide.SetMegakernelSetting(MegakernelSetting{Async: true, Ahead: 9, Fixed: true, Keep: 512}), "Fix: set MegakernelThreads to at most 512")
}

// TestMegakernelAsyncLogsNoSteps runs the run-ahead megakernel, which logs
// its steps, then the asynchronous traversal in the same session, which
// logs none: its run reports no run-ahead, not the earlier run's.
func TestMegakernelAsyncLogsNoSteps(t *testing.T) {
	g := mustGraph(t)(frontier.Road(40, 2))
	_, s := fakeSession(t, 1<<30, 19, g, Config{Direction: DirectionTopDown})
	require.NoError(t, s.SetMegakernelSetting(MegakernelSetting{TopDown: true, Ahead: 16, Keep: DefaultMegakernelKeep}))
	r, err := s.Run(ArmMegakernel, 0)
	require.NoError(t, err)
	require.Positive(t, r.MaxAhead, "the run-ahead megakernel logs its steps")
	require.NoError(t, s.SetMegakernelSetting(MegakernelSetting{TopDown: true, Async: true, Fixed: true, Ahead: 5, Keep: MaxMegakernelKeep}))
	r, err = s.Run(ArmMegakernel, 0)
	require.NoError(t, err)
	require.Equal(t, 1, r.Barriers, "the asynchronous traversal")
	require.Zero(t, r.MaxAhead)
	got, err := s.Levels()
	require.NoError(t, err)
	require.Equal(t, frontierBFS(t, g, 0), got)
}
