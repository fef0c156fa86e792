package kronbuild

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/frontier"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// deviceLabels draws the labels of a build of scale on x with the device
// shuffle seeded with pcg, and reads them back with the redraws it made.
func deviceLabels(t *testing.T, x *executor.Executor, scale int, pcg u128) ([]int32, int) {
	t.Helper()
	budget, err := x.Budget()
	require.NoError(t, err)
	plan, err := newPlan(scale, 16, budget, false)
	require.NoError(t, err)
	b := &builder{x: x, plan: plan, pcg: [2]uint64{pcg.hi, pcg.lo}}
	defer func() { require.NoError(t, b.close()) }()
	require.NoError(t, b.open())
	require.NoError(t, b.labels())
	raw, err := x.Download(b.fixed.perm)
	require.NoError(t, err)
	perm := make([]int32, plan.Vertices)
	for i := range perm {
		perm[i] = int32(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return perm, b.rejections
}

// shuffled is the identity of 0..n-1 shuffled by math/rand/v2 from pcg.
func shuffled(n int, pcg u128) []int32 {
	p := make([]int32, n)
	for i := range p {
		p[i] = int32(i)
	}
	rand.New(rand.NewPCG(pcg.hi, pcg.lo)).Shuffle(n, func(i, j int) { p[i], p[j] = p[j], p[i] })
	return p
}

// TestDeviceLabelsMatchFrontier checks the device shuffle against
// frontier.KroneckerPermutation at every scale from 1 to 16.
func TestDeviceLabelsMatchFrontier(t *testing.T) {
	x, _ := newFakeExecutor(t, 1<<30, 1)
	for scale := 1; scale <= 16; scale++ {
		for _, seed := range []uint64{1, 0xdeadbeef} {
			s1, s2 := frontier.KroneckerPermutationPCG(seed)
			got, redraws := deviceLabels(t, x, scale, u128{s1, s2})
			require.Equal(t, frontier.KroneckerPermutation(scale, seed), got, "scale %d seed %d", scale, seed)
			assert.Zero(t, redraws)
		}
	}
}

// TestDeviceLabelsRedrawAfterRejection seeds the shuffle so that one
// step's draw is rejected (the PCG outputs 0 there, which no bound but a
// power of two accepts) and checks that the steps after it are drawn
// again from the right draw: the labels are still math/rand/v2's.
func TestDeviceLabelsRedrawAfterRejection(t *testing.T) {
	x, _ := newFakeExecutor(t, 1<<30, 2)
	checkRedraws(t, x, []int{6, 10, 12})
}

// checkRedraws forces a rejection at a few steps of the shuffle at each
// scale (at most 2^24 vertices) and checks the labels against
// math/rand/v2's.
func checkRedraws(t *testing.T, x *executor.Executor, scales []int) {
	for _, scale := range scales {
		n := uint64(1) << scale
		for _, step := range []uint64{2, n/2 + 3, n - 2, n/3 + 1} {
			require.NotZero(t, (step+1)&step, "step %d draws below a power of two, which rejects nothing", step)
			// Step i is the PCG's draw n-1-i: its state then has a zero
			// high word.
			pcg := pcgBack(u128{hi: 0, lo: 0x5851f42d4c957f2d}, n-step)
			got, redraws := deviceLabels(t, x, scale, pcg)
			require.Equal(t, shuffled(int(n), pcg), got, "scale %d step %d", scale, step)
			assert.Equal(t, 1, redraws, "scale %d step %d", scale, step)
		}
	}
}
