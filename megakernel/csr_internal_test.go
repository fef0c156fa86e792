package megakernel

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// naiveCSR is the obvious stable bucketing, the oracle for buildCSR.
func naiveCSR(n int, deps []Dependency, reverse bool) ([]int32, []int32) {
	lists := make([][]int32, n)
	for _, d := range deps {
		s, t := d.Before, d.After
		if reverse {
			s, t = t, s
		}
		lists[s] = append(lists[s], int32(t))
	}
	off := make([]int32, n+1)
	var adj []int32
	for s := 0; s < n; s++ {
		adj = append(adj, lists[s]...)
		off[s+1] = int32(len(adj))
	}
	if adj == nil {
		adj = []int32{}
	}
	return off, adj
}

func TestBuildCSRMatchesNaive(t *testing.T) {
	for _, tc := range []struct{ n, m int }{{1, 0}, {5, 12}, {4096, 40000}, {5000, 70000}, {70001, 300000}, {1 << 17, 40000}} {
		r := rand.New(rand.NewPCG(uint64(tc.n), uint64(tc.m)))
		deps := make([]Dependency, tc.m)
		for i := range deps {
			a, b := r.IntN(tc.n), r.IntN(tc.n)
			if i%3 == 0 {
				b = a / 2 // clustered sources and duplicates
			}
			deps[i] = Dependency{Before: a, After: b}
		}
		for _, rev := range []bool{false, true} {
			off, adj := buildCSR(tc.n, deps, rev)
			wantOff, wantAdj := naiveCSR(tc.n, deps, rev)
			require.Equal(t, wantOff, off, "n=%d m=%d reverse=%v", tc.n, tc.m, rev)
			require.Equal(t, wantAdj, adj, "n=%d m=%d reverse=%v", tc.n, tc.m, rev)
		}
	}
}
