//go:build cuda

package executor

import (
	"fmt"
	"testing"

	"github.com/gpuplan/gpuplan/frontier"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGPUBFSArms runs every BFS arm from several roots on one graph of each
// generator (and a star, whose hub splits into many queue items) and checks
// that the levels equal the CPU reference and that the device counted the
// reference's levels. Small chunks exercise the item splitting; a check
// interval of 3 makes the device loop overshoot the last level.
func TestGPUBFSArms(t *testing.T) {
	if err := unavailableFromInit(initStatus()); err != nil {
		t.Skip(err.Error())
	}
	x, err := Open(0, Options{})
	require.NoError(t, err)
	defer x.Close()
	kron, err := frontier.Kronecker(12, 16, 7)
	require.NoError(t, err)
	grid, err := frontier.Grid(40)
	require.NoError(t, err)
	road, err := frontier.Road(50, 3)
	require.NoError(t, err)
	n := int32(5000)
	src, dst := make([]int32, n-1), make([]int32, n-1)
	for i := range dst {
		dst[i] = int32(i + 1)
	}
	star, err := frontier.BuildUndirected("star", int(n), src, dst)
	require.NoError(t, err)
	// Larger graphs whose levels pass a megakernel block's keep budget, so
	// items spill to the global queue and come back.
	bigGrid, err := frontier.Grid(300)
	require.NoError(t, err)
	bigKron, err := frontier.Kronecker(16, 16, 9)
	require.NoError(t, err)
	// The megakernel runs level-synchronous (ahead 1), with the default
	// run-ahead and far ahead.
	configs := []BFSConfig{{CheckEvery: 3}, {Chunk: 5, CheckEvery: 3, MegakernelAhead: 1},
		{CheckEvery: 3, MegakernelBlocksPerSM: 2, MegakernelAhead: 64}, {MegakernelAhead: 1}}
	for _, g := range []*frontier.CSR{kron, grid, road, star, bigGrid, bigKron} {
		for _, cfg := range configs {
			chunk := cfg.Chunk
			s, err := NewBFSSession(x, g, cfg)
			require.NoError(t, err, g.Name)
			roots, err := frontier.Roots(g, 3, 1)
			require.NoError(t, err)
			for _, root := range roots {
				want, err := frontier.BFS(g, root)
				require.NoError(t, err)
				st := frontier.Stats(g, want)
				for _, arm := range BFSArms() {
					name := fmt.Sprintf("%s/chunk%d/persm%d/ahead%d/root%d/%s", g.Name, chunk, cfg.MegakernelBlocksPerSM, cfg.MegakernelAhead, root, arm)
					// The first run of an executor may allocate pinned
					// staging memory; the measured run is the second.
					_, err := s.Run(arm, root)
					require.NoError(t, err, name)
					r, err := s.Run(arm, root)
					require.NoError(t, err, name)
					got, err := s.Levels()
					require.NoError(t, err, name)
					require.Equal(t, want, got, name)
					assert.Equal(t, st.Levels, r.Levels, name)
					assert.Zero(t, r.TimedUploads+r.TimedAllocations+r.TimedHostSyncs, name)
					assert.Zero(t, r.Reruns, name)
					if arm == ArmMegakernel {
						assert.LessOrEqual(t, r.Barriers, r.Levels, name)
						if cfg.MegakernelAhead == 1 {
							assert.Equal(t, r.Levels, r.Barriers, name)
							assert.Zero(t, r.Relabels, name)
						}
					}
				}
			}
			_, err = s.Run(ArmMegakernel, int32(g.NumVertices()))
			var re *frontier.RootError
			require.ErrorAs(t, err, &re)
			require.NoError(t, s.Close())
		}
	}
	// A queue that overflows under run-ahead is run again level-
	// synchronously; with a capacity too small for that too, the overflow
	// is reported. (The capacity is cut below what the buffers hold, so
	// nothing is written out of bounds.)
	s, err := NewBFSSession(x, bigGrid, BFSConfig{MegakernelAhead: 8})
	require.NoError(t, err)
	s.qcap = 8
	r, err := s.Run(ArmMegakernel, 0)
	require.ErrorContains(t, err, "overflowed")
	assert.Equal(t, 1, r.Reruns)
	assert.Zero(t, r.TimedHostSyncs, "the rerun's reset and launch are expected syncs")
	require.NoError(t, s.Close())
	// A run-ahead depth out of range is refused.
	_, err = NewBFSSession(x, grid, BFSConfig{MegakernelAhead: -1})
	require.ErrorContains(t, err, "MegakernelAhead")
	// A malformed graph is refused before anything is allocated.
	_, err = NewBFSSession(x, &frontier.CSR{Name: "bad", Offsets: []uint32{0, 1}, Targets: []int32{5}}, BFSConfig{})
	var se *frontier.StructureError
	require.ErrorAs(t, err, &se)
	assert.Zero(t, x.ResidentBytes())
}
