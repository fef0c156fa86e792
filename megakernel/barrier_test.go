package megakernel_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/internal/checked"
	"github.com/gpuplan/gpuplan/megakernel"
)

func deps(pairs ...int) []megakernel.Dependency {
	out := make([]megakernel.Dependency, 0, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, megakernel.Dependency{Before: pairs[i], After: pairs[i+1]})
	}
	return out
}

// checkBarrierInvariants checks what any correct layered plan must satisfy:
// every wave exactly once, every dependency crosses from an earlier group to
// a later one, every wave outside group 0 has a producer in the previous
// group (layers are as early as possible), and barriers = groups - 1.
func checkBarrierInvariants(t testing.TB, n int, ds []megakernel.Dependency, p megakernel.BarrierPlan) {
	t.Helper()
	require.Len(t, p.Order, n)
	groupOf := make([]int, n)
	for i := range groupOf {
		groupOf[i] = -1
	}
	for g := 0; g < p.GroupCount(); g++ {
		require.NotEmpty(t, p.Group(g), "group %d empty", g)
		for _, w := range p.Group(g) {
			require.Equal(t, -1, groupOf[w], "wave %d scheduled twice", w)
			groupOf[w] = g
		}
	}
	if p.GroupCount() == 0 {
		require.Zero(t, p.GlobalBarriers)
	} else {
		require.Equal(t, p.GroupCount()-1, p.GlobalBarriers)
	}
	hasPrev := make([]bool, n)
	for _, d := range ds {
		require.Less(t, groupOf[d.Before], groupOf[d.After], "dependency %v not ordered", d)
		if groupOf[d.Before] == groupOf[d.After]-1 {
			hasPrev[d.After] = true
		}
	}
	for w := 0; w < n; w++ {
		if groupOf[w] > 0 {
			require.True(t, hasPrev[w], "wave %d could run one group earlier", w)
		}
	}
}

func TestPlanBarriersVectors(t *testing.T) {
	fan := make([]megakernel.Dependency, 0, 1024)
	for i := 1; i <= 1024; i++ {
		fan = append(fan, megakernel.Dependency{Before: 0, After: i})
	}
	tests := []struct {
		name     string
		n        int
		deps     []megakernel.Dependency
		groups   [][]int
		barriers int
	}{
		{"empty", 0, nil, [][]int{}, 0},
		{"no dependencies", 4, nil, [][]int{{0, 1, 2, 3}}, 0},
		{"chain", 4, deps(0, 1, 1, 2, 2, 3), [][]int{{0}, {1}, {2}, {3}}, 3},
		{"diamond", 4, deps(0, 1, 0, 2, 1, 3, 2, 3), [][]int{{0}, {1, 2}, {3}}, 2},
		{"discovery order, not sorted", 4, deps(0, 3, 1, 2), [][]int{{0, 1}, {3, 2}}, 1},
		{"duplicates are harmless", 3, deps(0, 1, 0, 1, 1, 2), [][]int{{0}, {1}, {2}}, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := megakernel.PlanBarriers(tc.n, tc.deps)
			require.NoError(t, err)
			assert.Equal(t, tc.groups, p.Groups())
			assert.Equal(t, tc.barriers, p.GlobalBarriers)
			checkBarrierInvariants(t, tc.n, tc.deps, p)
		})
	}
	t.Run("fan-out 1025", func(t *testing.T) {
		p, err := megakernel.PlanBarriers(1025, fan)
		require.NoError(t, err)
		assert.Equal(t, 1, p.GlobalBarriers)
		require.Equal(t, 2, p.GroupCount())
		assert.Len(t, p.Group(1), 1024)
		assert.Equal(t, 1024, p.MaxGroupWidth())
	})
	t.Run("wide then narrow plans are independent", func(t *testing.T) {
		_, err := megakernel.PlanBarriers(1025, fan)
		require.NoError(t, err)
		p, err := megakernel.PlanBarriers(3, deps(0, 1, 1, 2))
		require.NoError(t, err)
		assert.Equal(t, [][]int{{0}, {1}, {2}}, p.Groups())
	})
}

func TestPlanBarriersErrors(t *testing.T) {
	t.Run("out of range", func(t *testing.T) {
		_, err := megakernel.PlanBarriers(2, deps(0, 2))
		var e *megakernel.InvalidWaveError
		require.ErrorAs(t, err, &e)
		assert.Equal(t, megakernel.InvalidWaveError{WaveCount: 2, Before: 0, After: 2, Index: 0}, *e)
		assert.Contains(t, err.Error(), "Fix:")
	})
	t.Run("negative id", func(t *testing.T) {
		_, err := megakernel.PlanBarriers(2, deps(-1, 1))
		var e *megakernel.InvalidWaveError
		require.ErrorAs(t, err, &e)
	})
	t.Run("zero waves with dependencies names the first", func(t *testing.T) {
		_, err := megakernel.PlanBarriers(0, deps(5, 7, 1, 2))
		var e *megakernel.InvalidWaveError
		require.ErrorAs(t, err, &e)
		assert.Equal(t, megakernel.InvalidWaveError{WaveCount: 0, Before: 5, After: 7}, *e)
	})
	t.Run("cycle", func(t *testing.T) {
		_, err := megakernel.PlanBarriers(2, deps(0, 1, 1, 0))
		var e *megakernel.CycleError
		require.ErrorAs(t, err, &e)
		assert.Equal(t, 2, e.UnscheduledWaves)
		assert.Equal(t, []int{0, 1}, e.Witness)
		assert.Contains(t, err.Error(), "0 -> 1 -> 0")
		assert.Contains(t, err.Error(), "Fix:")
	})
	t.Run("cycle witness behind a tail", func(t *testing.T) {
		// 0 -> 1 -> 2 -> 3 -> 1, and 3 -> 4: waves 1..4 are unscheduled.
		_, err := megakernel.PlanBarriers(5, deps(0, 1, 1, 2, 2, 3, 3, 1, 3, 4))
		var e *megakernel.CycleError
		require.ErrorAs(t, err, &e)
		assert.Equal(t, 4, e.UnscheduledWaves)
		assert.Equal(t, []int{1, 2, 3}, e.Witness)
	})
	t.Run("a million-wave cycle gives a short message", func(t *testing.T) {
		const n = 1_000_000
		ds := make([]megakernel.Dependency, n)
		for i := range ds {
			ds[i] = megakernel.Dependency{Before: i, After: (i + 1) % n}
		}
		_, err := megakernel.PlanBarriers(n, ds)
		var e *megakernel.CycleError
		require.ErrorAs(t, err, &e)
		assert.Len(t, e.Witness, n)
		msg := err.Error()
		assert.Less(t, len(msg), 400, msg)
		assert.Contains(t, msg, "(0 -> 1 -> 2 -> 3 -> 4 -> 5 -> 6 -> 7 -> 8 -> 9 -> 10 -> 11 -> 12 -> 13 -> 14 -> 15 -> 16 -> 17 -> 18 -> 19 -> ... 999980 more -> 0)")
	})
	t.Run("a cycle of exactly MaxWitnessShown waves is shown whole", func(t *testing.T) {
		n := megakernel.MaxWitnessShown
		ds := make([]megakernel.Dependency, n)
		for i := range ds {
			ds[i] = megakernel.Dependency{Before: i, After: (i + 1) % n}
		}
		_, err := megakernel.PlanBarriers(n, ds)
		require.Error(t, err)
		assert.NotContains(t, err.Error(), "more")
		assert.Contains(t, err.Error(), "18 -> 19 -> 0)")
	})
	t.Run("self dependency", func(t *testing.T) {
		_, err := megakernel.PlanBarriers(3, deps(0, 1, 2, 2))
		var e *megakernel.SelfDependencyError
		require.ErrorAs(t, err, &e)
		assert.Equal(t, 2, e.Wave)
		assert.Equal(t, 1, e.Index)
	})
	t.Run("range is checked before self, per dependency in order", func(t *testing.T) {
		_, err := megakernel.PlanBarriers(3, deps(1, 1, 0, 9))
		var s *megakernel.SelfDependencyError
		require.ErrorAs(t, err, &s, "the first dependency fails first")
		_, err = megakernel.PlanBarriers(3, deps(9, 9))
		var iw *megakernel.InvalidWaveError
		require.ErrorAs(t, err, &iw)
	})
	t.Run("too many waves", func(t *testing.T) {
		_, err := megakernel.PlanBarriers(megakernel.MaxWaves+1, nil)
		var o *checked.OverflowError
		require.ErrorAs(t, err, &o)
		assert.Equal(t, "barrier scratch wave offsets", o.Field)
	})
}

// layeredDAG builds depth layers of width waves; every wave of layer k > 0
// depends on a random wave of layer k-1 plus extra random earlier waves.
func layeredDAG(r *rand.Rand, depth, width, extra int) (int, []megakernel.Dependency) {
	n := depth * width
	var ds []megakernel.Dependency
	for k := 1; k < depth; k++ {
		for i := 0; i < width; i++ {
			v := k*width + i
			ds = append(ds, megakernel.Dependency{Before: (k-1)*width + r.IntN(width), After: v})
			for e := 0; e < r.IntN(extra+1); e++ {
				ds = append(ds, megakernel.Dependency{Before: r.IntN(k * width), After: v})
			}
		}
	}
	r.Shuffle(len(ds), func(i, j int) { ds[i], ds[j] = ds[j], ds[i] })
	return n, ds
}

func TestPropertyLayeredDAGs(t *testing.T) {
	// vyre's generated property: 2048 (depth, width) shapes give exactly
	// depth groups of width waves and depth-1 barriers.
	r := rand.New(rand.NewPCG(2048, 1))
	for shape := 0; shape < 2048; shape++ {
		depth, width := 1+r.IntN(12), 1+r.IntN(12)
		n, ds := layeredDAG(r, depth, width, 3)
		p, err := megakernel.PlanBarriers(n, ds)
		require.NoError(t, err)
		require.Equal(t, depth, p.GroupCount(), "shape %d", shape)
		require.Equal(t, depth-1, p.GlobalBarriers)
		for g := 0; g < depth; g++ {
			require.Len(t, p.Group(g), width)
		}
		checkBarrierInvariants(t, n, ds, p)
		w, err := megakernel.PlanProducerWaits(n, ds)
		require.NoError(t, err)
		checkWaitInvariants(t, n, ds, w)
	}
}

func TestPropertyRandomGraphs(t *testing.T) {
	// Random graphs with and without cycles: a plan satisfies the invariants,
	// a cycle error's witness is a real cycle of the input.
	for seed := uint64(0); seed < 300; seed++ {
		r := rand.New(rand.NewPCG(seed, 7))
		n := 1 + r.IntN(40)
		m := r.IntN(3 * n)
		ds := make([]megakernel.Dependency, 0, m)
		for i := 0; i < m; i++ {
			a, b := r.IntN(n), r.IntN(n)
			if a == b {
				continue
			}
			if seed%2 == 0 && a > b { // even seeds: acyclic
				a, b = b, a
			}
			ds = append(ds, megakernel.Dependency{Before: a, After: b})
		}
		p, err := megakernel.PlanBarriers(n, ds)
		var ce *megakernel.CycleError
		switch {
		case err == nil:
			checkBarrierInvariants(t, n, ds, p)
		case errors.As(err, &ce):
			require.NotZero(t, seed%2, "acyclic input reported a cycle")
			checkWitness(t, ds, ce.Witness)
		default:
			require.NoError(t, err)
		}
	}
}

func checkWitness(t testing.TB, ds []megakernel.Dependency, w []int) {
	t.Helper()
	require.GreaterOrEqual(t, len(w), 2)
	edges := map[[2]int]bool{}
	for _, d := range ds {
		edges[[2]int{d.Before, d.After}] = true
	}
	seen := map[int]bool{}
	for i, a := range w {
		require.False(t, seen[a], "witness repeats wave %d", a)
		seen[a] = true
		b := w[(i+1)%len(w)]
		require.True(t, edges[[2]int{a, b}], "witness edge %d -> %d is not a dependency", a, b)
	}
}

func ExamplePlanBarriers() {
	// A diamond: 0 feeds 1 and 2, which both feed 3.
	plan, err := megakernel.PlanBarriers(4, []megakernel.Dependency{
		{Before: 0, After: 1}, {Before: 0, After: 2}, {Before: 1, After: 3}, {Before: 2, After: 3},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(plan.Groups(), "barriers:", plan.GlobalBarriers)
	// Output: [[0] [1 2] [3]] barriers: 2
}

func ExamplePlanBarriers_cycle() {
	_, err := megakernel.PlanBarriers(3, []megakernel.Dependency{
		{Before: 0, After: 1}, {Before: 1, After: 2}, {Before: 2, After: 1},
	})
	fmt.Println(err)
	// Output: megakernel dependencies contain a cycle (1 -> 2 -> 1); 2 waves cannot be scheduled. Fix: remove one dependency of the cycle so the waves form a DAG
}
