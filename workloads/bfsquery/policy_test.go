package bfsquery

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/workloads/bfs"
)

// policyWith returns a policy whose costs are known: one single-root run
// of one and a pass of pass.
func policyWith(one, pass time.Duration) passPolicy {
	var p passPolicy
	for range 2 { // the first run of each is a warm-up
		p.one.add(one)
		p.pass.add(pass)
	}
	return p
}

func TestPassPolicy(t *testing.T) {
	ms := time.Millisecond
	cases := []struct {
		name   string
		policy passPolicy
		k      int
		singly bool
	}{
		{"one root", passPolicy{}, 1, true},
		{"nothing measured", passPolicy{}, 2, false},
		{"only the warm-ups", func() passPolicy { var p passPolicy; p.one.add(ms); p.pass.add(9 * ms); return p }(), 2, false},
		{"singles cheaper", policyWith(ms, 5*ms), 4, true},
		{"a pass cheaper", policyWith(ms, 5*ms), 6, false},
		{"a tie runs a pass", policyWith(ms, 5*ms), 5, false},
		{"a pass always cheaper", policyWith(ms, ms/2), 2, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.singly, c.policy.singly(c.k))
		})
	}
}

// The running mean follows the runs after the warm-up, weighting the
// last costWindow of them.
func TestRunCostFollowsTheRuns(t *testing.T) {
	var c runCost
	c.add(time.Second) // the warm-up
	require.False(t, c.known())
	for range 3 {
		c.add(2 * time.Millisecond)
	}
	assert.InDelta(t, float64(2*time.Millisecond), c.mean, 1)
	for range 10 * costWindow {
		c.add(4 * time.Millisecond)
	}
	assert.InDelta(t, float64(4*time.Millisecond), c.mean, float64(time.Microsecond))
}

// Property: a policy that runs k roots one at a time runs fewer one at a
// time too, and one that runs k in a pass runs more in a pass.
func TestPassPolicyIsMonotone(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 7))
	for range 500 {
		p := policyWith(time.Duration(1+rng.IntN(1e6)), time.Duration(1+rng.IntN(1e7)))
		for k := 2; k <= 64; k++ {
			if p.singly(k) {
				require.True(t, p.singly(k-1), "k=%d", k)
			} else if k < 64 {
				require.False(t, p.singly(k+1), "k=%d", k)
			}
		}
	}
}

// On the GPU a chunk runs as the policy says, and the answers are the
// reference's either way: a batch of 70 roots is a chunk of 64 and one of
// 6, and with single runs cheap enough the 6 run one at a time.
func TestBatchesRunAsThePolicySays(t *testing.T) {
	g := kron(t)
	roots, err := frontier.Roots(g, 70, 4)
	require.NoError(t, err)
	// Costs far apart, so that the runs the batch itself adds to the means
	// (on the emulation, a few milliseconds each) do not change the pick.
	cheap, dear := time.Microsecond, time.Second
	cases := []struct {
		name            string
		policy          passPolicy
		roots           int
		passes, singles int
	}{
		{"nothing measured", passPolicy{}, 3, 1, 0},
		{"singles cheaper", policyWith(cheap, dear), 3, 0, 3},
		{"a pass cheaper", policyWith(dear, cheap), 3, 1, 0},
		// 64 singles at 10 ms cost more than a pass at 300 ms, 6 less, even
		// once the pass run halves the pass's mean.
		{"a full chunk and a short one", policyWith(10*time.Millisecond, 300*time.Millisecond), 70, 1, 6},
		{"one root", policyWith(dear, cheap), 1, 0, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := openFake(t, g, Options{})
			r.policy = c.policy
			qs := make([]Query, c.roots)
			for i := range qs {
				qs[i] = Query{Root: roots[i], MaxDepth: NoDepthLimit, Targets: []int32{int32(i), int32(g.NumVertices() - 1 - i)}}
			}
			as, ph, err := r.BatchPhases(context.Background(), qs)
			require.NoError(t, err)
			assert.Equal(t, c.passes, ph.Passes)
			assert.Equal(t, c.singles, ph.Singles)
			for i, q := range qs {
				want, err := frontier.BFS(g, q.Root)
				require.NoError(t, err)
				require.Equal(t, []int32{want[q.Targets[0]], want[q.Targets[1]]}, as[i].Levels, "query %d", i)
			}
		})
	}
}

// A graph learns the costs from the runs it makes: single-root batches
// measure a single run, and pairs run as passes until a pass is measured
// too (the first run of each kind is a warm-up).
func TestThePolicyLearnsTheCosts(t *testing.T) {
	g := kron(t)
	roots, err := frontier.Roots(g, 4, 8)
	require.NoError(t, err)
	r := openFake(t, g, Options{})
	q := func(i int) Query { return Query{Root: roots[i], MaxDepth: NoDepthLimit, Targets: []int32{int32(i)}} }
	for range 2 {
		_, ph, err := r.BatchPhases(context.Background(), []Query{q(0)})
		require.NoError(t, err)
		require.Equal(t, 1, ph.Singles)
	}
	for range 2 {
		_, ph, err := r.BatchPhases(context.Background(), []Query{q(1), q(2)})
		require.NoError(t, err)
		require.Equal(t, 1, ph.Passes, "a pair runs as a pass until a pass is measured")
	}
	assert.True(t, r.policy.one.known())
	assert.True(t, r.policy.pass.known())
	assert.Positive(t, r.policy.one.mean)
	assert.Positive(t, r.policy.pass.mean)
}

// The automatic arm policy tries each arm in turn (a warm-up and
// armTrials runs), then keeps the cheapest, and moves on when its mean
// grows past another's.
func TestArmPolicy(t *testing.T) {
	p := newArmPolicy("")
	require.Equal(t, bfs.DefaultArms(), p.arms)
	costs := []time.Duration{3 * time.Millisecond, time.Millisecond, 2 * time.Millisecond}
	var order []int
	for range 3 * (armTrials + 1) {
		i := p.pick()
		order = append(order, i)
		p.add(i, costs[i], 1)
	}
	want := []int{0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2}
	require.Equal(t, want, order, "each arm's warm-up and trials, in turn")
	assert.Equal(t, bfs.DefaultArms()[1], p.arm(), "the cheapest")
	runs := 0
	for p.pick() == 1 && runs < 4*costWindow {
		p.add(1, 5*time.Millisecond, 1) // the kept arm gets slower
		runs++
	}
	assert.Equal(t, bfs.DefaultArms()[2], p.arm(), "the next cheapest once the kept one's mean passes it")
	assert.Less(t, runs, costWindow, "within a window of runs")

	fixed := newArmPolicy(bfs.ArmMegakernel)
	for range 10 {
		require.Equal(t, 0, fixed.pick())
		fixed.add(0, time.Second, 1)
	}
	assert.Equal(t, bfs.ArmMegakernel, fixed.arm())
}

// Arms are compared by wall time per level, so that the depth of the
// roots each arm happened to run in its trials does not decide the pick.
func TestArmPolicyComparesPerLevel(t *testing.T) {
	runs := []struct {
		wall   time.Duration
		levels int
	}{
		{10 * time.Millisecond, 2000}, // 5 µs a level from deep roots
		{2 * time.Millisecond, 40},    // 50 µs a level from shallow ones
		{4 * time.Millisecond, 0},     // no level counted: one level
	}
	p := newArmPolicy("")
	for range 3 * (armTrials + 1) {
		i := p.pick()
		p.add(i, runs[i].wall, runs[i].levels)
	}
	assert.Equal(t, bfs.DefaultArms()[0], p.arm(), "the cheapest per level, though its runs took longest")
	assert.InDelta(t, float64(5*time.Microsecond), p.costs[0].mean, 1)
	assert.InDelta(t, float64(4*time.Millisecond), p.costs[2].mean, 1)
}

// A graph without a configured arm answers right while it tries every
// arm, then keeps one; an unknown arm is refused at Open.
func TestGraphPicksItsArm(t *testing.T) {
	g := kron(t)
	roots, err := frontier.Roots(g, 5, 6)
	require.NoError(t, err)
	r := openFake(t, g, Options{})
	for i := range 3*(armTrials+1) + 3 {
		root := roots[i%len(roots)]
		a, err := r.Query(context.Background(), Query{Root: root, MaxDepth: NoDepthLimit, Targets: []int32{7, 300}})
		require.NoError(t, err)
		want, err := frontier.BFS(g, root)
		require.NoError(t, err)
		require.Equal(t, []int32{want[7], want[300]}, a.Levels, "query %d", i)
	}
	for i, c := range r.arms.costs {
		assert.Equal(t, armTrials, min(c.n, armTrials), "arm %s tried", r.arms.arms[i])
	}
	_, ph, err := r.BatchPhases(context.Background(), []Query{{Root: roots[0], MaxDepth: NoDepthLimit, Targets: []int32{7}}})
	require.NoError(t, err)
	assert.Equal(t, map[bfs.Arm]int{r.Arm(): 1}, ph.Arms, "the single run, by the arm kept")
	assert.Contains(t, bfs.DefaultArms(), r.Arm())
	cpu, err := OpenCPU(g, Options{})
	require.NoError(t, err)
	assert.Empty(t, cpu.Arm())
	_, err = OpenCPU(g, Options{Arm: "warp-drive"})
	require.ErrorContains(t, err, "warp-drive")
	require.ErrorContains(t, err, "Fix:")
}
