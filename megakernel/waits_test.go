package megakernel_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/megakernel"
)

// reach returns the transitive closure of a DAG given as edge lists.
func reach(n int, edges [][2]int) []map[int]bool {
	out := make([][]int, n)
	for _, e := range edges {
		out[e[0]] = append(out[e[0]], e[1])
	}
	r := make([]map[int]bool, n)
	var visit func(int) map[int]bool
	visit = func(v int) map[int]bool {
		if r[v] != nil {
			return r[v]
		}
		m := map[int]bool{}
		for _, t := range out[v] {
			m[t] = true
			for k := range visit(t) {
				m[k] = true
			}
		}
		r[v] = m
		return m
	}
	for v := 0; v < n; v++ {
		visit(v)
	}
	return r
}

// checkWaitInvariants: every wait is a real dependency, no wave waits twice
// on one producer, and the waits keep exactly the DAG's reachability (so a
// wave can never start before any of its transitive producers finished).
func checkWaitInvariants(t testing.TB, n int, ds []megakernel.Dependency, w megakernel.ProducerWaitPlan) {
	t.Helper()
	require.Equal(t, n, w.WaveCount())
	direct := map[[2]int]bool{}
	var all [][2]int
	for _, d := range ds {
		direct[[2]int{d.Before, d.After}] = true
		all = append(all, [2]int{d.Before, d.After})
	}
	var kept [][2]int
	total := 0
	for v := 0; v < n; v++ {
		seen := map[int32]bool{}
		for _, p := range w.Waits(v) {
			require.True(t, direct[[2]int{int(p), v}], "wave %d waits on %d without a dependency", v, p)
			require.False(t, seen[p], "wave %d waits twice on %d", v, p)
			seen[p] = true
			kept = append(kept, [2]int{int(p), v})
			total++
		}
	}
	require.Equal(t, total, w.Stats.Waits)
	require.Equal(t, len(ds), w.Stats.Dependencies)
	require.Equal(t, len(ds), w.Stats.Waits+w.Stats.DuplicatesDropped+w.Stats.RedundantDropped)
	if n <= 200 {
		require.Equal(t, reach(n, all), reach(n, kept), "waits change reachability")
	}
}

func TestPlanProducerWaits(t *testing.T) {
	tests := []struct {
		name      string
		n         int
		deps      []megakernel.Dependency
		waits     [][]int32
		dups, red int
	}{
		{"diamond", 4, deps(0, 1, 0, 2, 1, 3, 2, 3), [][]int32{{}, {0}, {0}, {1, 2}}, 0, 0},
		{"triangle drops the implied wait", 3, deps(0, 1, 1, 2, 0, 2), [][]int32{{}, {0}, {1}}, 0, 1},
		{"duplicates waited on once", 2, deps(0, 1, 0, 1), [][]int32{{}, {0}}, 1, 0},
		{"longer implied path is kept", 4, deps(0, 1, 1, 2, 2, 3, 0, 3), [][]int32{{}, {0}, {1}, {2, 0}}, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w, err := megakernel.PlanProducerWaits(tc.n, tc.deps)
			require.NoError(t, err)
			for v := 0; v < tc.n; v++ {
				got := w.Waits(v)
				if len(tc.waits[v]) == 0 {
					assert.Empty(t, got, "wave %d", v)
				} else {
					assert.Equal(t, tc.waits[v], got, "wave %d", v)
				}
			}
			assert.Equal(t, tc.dups, w.Stats.DuplicatesDropped)
			assert.Equal(t, tc.red, w.Stats.RedundantDropped)
			assert.True(t, w.Stats.ReductionComplete)
			checkWaitInvariants(t, tc.n, tc.deps, w)
		})
	}
	t.Run("errors match PlanBarriers", func(t *testing.T) {
		for _, ds := range [][]megakernel.Dependency{deps(0, 5), deps(1, 1), deps(0, 1, 1, 0)} {
			_, e1 := megakernel.PlanBarriers(3, ds)
			_, e2 := megakernel.PlanProducerWaits(3, ds)
			require.Error(t, e1)
			assert.Equal(t, e1, e2)
		}
	})
	t.Run("empty", func(t *testing.T) {
		w, err := megakernel.PlanProducerWaits(0, nil)
		require.NoError(t, err)
		assert.Zero(t, w.WaveCount())
	})
}

func ExamplePlanProducerWaits() {
	// 0 -> 1 -> 2 and 0 -> 2: wave 2 need not wait on 0, because 1 did.
	w, err := megakernel.PlanProducerWaits(3, []megakernel.Dependency{
		{Before: 0, After: 1}, {Before: 1, After: 2}, {Before: 0, After: 2},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for v := 0; v < w.WaveCount(); v++ {
		fmt.Println("wave", v, "waits on", w.Waits(v))
	}
	fmt.Println("waits:", w.Stats.Waits, "dropped as redundant:", w.Stats.RedundantDropped)
	// Output:
	// wave 0 waits on []
	// wave 1 waits on [0]
	// wave 2 waits on [1]
	// waits: 2 dropped as redundant: 1
}

func TestProducerWaitsWorkCap(t *testing.T) {
	// A complete DAG on 200 waves has about 1.3M triangle steps, more than
	// the cap of 32 x (waves + dependencies): the reduction stops early and
	// the waits it keeps are still correct.
	const k = 200
	var ds []megakernel.Dependency
	for a := 0; a < k; a++ {
		for b := a + 1; b < k; b++ {
			ds = append(ds, megakernel.Dependency{Before: a, After: b})
		}
	}
	w, err := megakernel.PlanProducerWaits(k, ds)
	require.NoError(t, err)
	assert.False(t, w.Stats.ReductionComplete)
	assert.Positive(t, w.Stats.RedundantDropped)
	checkWaitInvariants(t, k, ds, w)
	// A smaller complete DAG reduces fully to the chain 0 -> 1 -> ... -> 29.
	ds = ds[:0]
	for a := 0; a < 30; a++ {
		for b := a + 1; b < 30; b++ {
			ds = append(ds, megakernel.Dependency{Before: a, After: b})
		}
	}
	w, err = megakernel.PlanProducerWaits(30, ds)
	require.NoError(t, err)
	assert.True(t, w.Stats.ReductionComplete)
	assert.Equal(t, 29, w.Stats.Waits)
	for v := 1; v < 30; v++ {
		assert.Equal(t, []int32{int32(v - 1)}, w.Waits(v))
	}
}
