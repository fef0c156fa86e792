//go:build cuda

package bfs

import (
	"slices"
	"testing"
	"time"

	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/internal/gputest"
	"github.com/stretchr/testify/require"
)

// TestGPUHostOverhead runs many short traversals per arm on a small
// Kronecker graph, where the host's share of a traversal is largest, and
// logs the medians of the wall time, the device time and their difference
// per traversal. Every traversal's level count equals the CPU reference's,
// and the first one's levels too. With -test.cpuprofile it shows where the
// host time goes.
func TestGPUHostOverhead(t *testing.T) {
	x := gputest.Open(t)
	g, err := frontier.Kronecker(16, 16, 3)
	require.NoError(t, err)
	roots, err := frontier.Roots(g, 16, 5)
	require.NoError(t, err)
	want := make(map[int32][]int32, len(roots))
	for _, r := range roots {
		want[r], err = frontier.BFS(g, r)
		require.NoError(t, err)
	}
	s, err := NewSession(x, g, Config{})
	require.NoError(t, err)
	defer s.Close()
	for _, arm := range []Arm{ArmHostLoop, ArmDeviceLoop, ArmMegakernel} {
		var wall, device, over []float64
		for i := range 400 {
			r := roots[i%len(roots)]
			run, err := s.Run(arm, r)
			require.NoError(t, err, "%s from %d", arm, r)
			require.Equal(t, frontier.Stats(g, want[r]).Levels, run.Levels, "%s from %d", arm, r)
			if i == 0 {
				lv, err := s.Levels()
				require.NoError(t, err)
				require.Equal(t, want[r], lv, "%s from %d", arm, r)
			}
			wall = append(wall, float64(run.WallNs))
			device = append(device, float64(run.DeviceNs))
			over = append(over, float64(run.WallNs)-float64(run.DeviceNs))
		}
		t.Logf("%-12s wall %8.1f µs  device %8.1f µs  wall-device %7.1f µs (medians of %d)",
			arm, med(wall)/1e3, med(device)/1e3, med(over)/1e3, len(wall))
	}
	start := time.Now()
	for range 1000 {
		_, err := s.Run(ArmMegakernel, roots[0])
		require.NoError(t, err)
	}
	t.Logf("1000 megakernel runs (each with its reset and result check): %.1f µs each", float64(time.Since(start).Nanoseconds())/1e6)
}

// med returns the median of v (which it sorts).
func med(v []float64) float64 {
	slices.Sort(v)
	return v[len(v)/2]
}
