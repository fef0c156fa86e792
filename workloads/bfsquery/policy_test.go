package bfsquery

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
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
// armTrials runs), then keeps the cheapest, and moves on when its cost
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
	for p.pick() == 1 && runs < 4*armWindow {
		p.add(1, 5*time.Millisecond, 1) // the kept arm gets slower
		runs++
	}
	assert.Equal(t, bfs.DefaultArms()[2], p.arm(), "the next cheapest once the kept one's cost passes it")
	// An arm's cost is the median of its last armWindow runs now, not a
	// mean over costWindow: it passes once most of its runs are slow.
	assert.Less(t, runs, armWindow, "within a window of runs")

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
	// An arm's cost is a median of durations now, not a float mean: exact.
	assert.Equal(t, 5*time.Microsecond, p.costs[0].cost())
	assert.Equal(t, 4*time.Millisecond, p.costs[2].cost())
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

// armSim runs an automatic arm policy over simulated arms. A run of arm i
// traverses 5 to 9 levels, each costing cost(run, i, nth) (nth counts arm
// i's runs, 0 its warm-up) times noise in [0.9, 1.1), and, with
// probability spikes, 5 times that (a hiccup).
type armSim struct {
	p      armPolicy
	rng    *rand.Rand
	spikes float64
	nth    []int
	ran    []int
}

func newArmSim(arms int, seed uint64, spikes float64) *armSim {
	p := newArmPolicy("")
	p.arms, p.costs = p.arms[:arms], p.costs[:arms]
	return &armSim{p: p, rng: rand.New(rand.NewPCG(seed, 11)), spikes: spikes, nth: make([]int, arms)}
}

func (s *armSim) run(n int, cost func(run, arm, nth int) time.Duration) {
	for range n {
		i := s.p.pick()
		levels := 5 + s.rng.IntN(5)
		f := 0.9 + 0.2*s.rng.Float64()
		if s.rng.Float64() < s.spikes {
			f *= 5
		}
		d := time.Duration(f * float64(cost(len(s.ran), i, s.nth[i])) * float64(levels))
		s.p.add(i, d, levels)
		s.ran = append(s.ran, i)
		s.nth[i]++
	}
}

// share returns the fraction of the runs from..to that ran arm.
func (s *armSim) share(arm, from, to int) float64 {
	n := 0
	for _, i := range s.ran[from:to] {
		if i == arm {
			n++
		}
	}
	return float64(n) / float64(to-from)
}

// The defect measured on an H200: the cheapest arm (the device loop, 367
// µs a traversal of 7 levels, against the host loop's 445) had a bad
// trial, its frozen mean stayed above the host loop's, and every query ran
// the host loop. A median sets one bad trial aside, and the
// re-measurements mend even a median made bad by two.
func TestArmPolicyOutgrowsABadTrial(t *testing.T) {
	us := time.Microsecond
	kron := []time.Duration{445 * us / 7, 367 * us / 7}
	three := []time.Duration{63 * us, 52 * us, 80 * us}
	cases := []struct {
		name   string
		costs  []time.Duration
		bad    []int   // the cheapest arm's runs that cost 5 times its cost (0: the warm-up)
		spikes float64 // the chance of any run costing 5 times
		soon   bool    // kept within armWindow runs of the end of the trials
	}{
		{"two arms, the second trial bad", kron, []int{2}, 0, true},
		{"two arms, the first trial bad", kron, []int{1}, 0, true},
		{"three arms, the last trial bad", three, []int{3}, 0, true},
		{"three arms, the warm-up and a trial bad", three, []int{0, 1}, 0, true},
		{"three arms, a bad trial and hiccups", three, []int{2}, 0.02, false},
		{"two arms, two of three trials bad", kron, []int{1, 2}, 0, false},
	}
	for seed, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newArmSim(len(c.costs), uint64(seed), c.spikes)
			cheapest := 1
			s.run(1000, func(_, arm, nth int) time.Duration {
				if arm == cheapest && slices.Contains(c.bad, nth) {
					return 5 * c.costs[arm]
				}
				return c.costs[arm]
			})
			if c.soon {
				// Not at once: the noise can make another arm's trials look
				// cheaper for a few runs of its own.
				trials := len(c.costs) * (armTrials + 1)
				assert.Contains(t, s.ran[trials:trials+armWindow], cheapest, "the runs after the trials")
			}
			assert.GreaterOrEqual(t, s.share(cheapest, 500, 1000), 0.9, "the cheapest arm's share of the last 500 runs")
		})
	}
}

// A loser is measured again, so the policy follows costs that change:
// within armWindow/2+1 re-measurements of each arm after a change (a
// loser's median has then seen it), the new cheapest arm runs.
// "the kept arm gets slower" passed before the re-measurements too (the
// kept arm measures itself, and its cost passes a loser's frozen one); the
// other cases need them.
func TestArmPolicyFollowsChangingCosts(t *testing.T) {
	us := time.Microsecond
	cases := []struct {
		name          string
		before, after []time.Duration
	}{
		{"a loser gets faster", []time.Duration{50 * us, 70 * us, 90 * us}, []time.Duration{50 * us, 30 * us, 90 * us}},
		{"the kept arm gets slower past a loser", []time.Duration{50 * us, 100 * us, 120 * us}, []time.Duration{80 * us, 60 * us, 120 * us}},
		{"the kept arm gets slower", []time.Duration{50 * us, 70 * us, 90 * us}, []time.Duration{100 * us, 70 * us, 90 * us}},
		{"two arms, the kept slower and the loser faster", []time.Duration{50 * us, 70 * us}, []time.Duration{60 * us, 40 * us}},
	}
	const change = 1000
	for seed, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newArmSim(len(c.before), uint64(100+seed), 0)
			bound := (armWindow/2 + 1) * (armRetryEvery + len(c.before) - 1)
			s.run(change+bound+500, func(run, arm, _ int) time.Duration {
				if run < change {
					return c.before[arm]
				}
				return c.after[arm]
			})
			cheapest := func(costs []time.Duration) int { return slices.Index(costs, slices.Min(costs)) }
			assert.GreaterOrEqual(t, s.share(cheapest(c.before), change-500, change), 0.9, "before the change")
			assert.GreaterOrEqual(t, s.share(cheapest(c.after), change+bound, change+bound+500), 0.9, "%d runs after the change", bound)
		})
	}
}

// With stable costs, the re-measurements are all the other arms get: in
// every armRetryEvery+len(arms)-1 runs after the trials, each other arm
// runs exactly once.
func TestArmPolicyExploresABoundedShare(t *testing.T) {
	us := time.Microsecond
	for _, costs := range [][]time.Duration{{90 * us, 50 * us, 70 * us}, {70 * us, 50 * us}} {
		t.Run(fmt.Sprint(len(costs), " arms"), func(t *testing.T) {
			s := newArmSim(len(costs), 7, 0)
			trials := len(costs) * (armTrials + 1)
			cycle := armRetryEvery + len(costs) - 1
			s.run(trials+200*cycle, func(_, arm, _ int) time.Duration { return costs[arm] })
			after := s.ran[trials:]
			others := 0
			for _, i := range after {
				if i != 1 {
					others++
				}
			}
			assert.Equal(t, 200*(len(costs)-1), others, "the runs of other arms than the cheapest")
			for from := 0; from+cycle <= len(after); from++ {
				for arm := range costs {
					n := 0
					for _, i := range after[from : from+cycle] {
						if i == arm {
							n++
						}
					}
					if arm == 1 {
						require.Equal(t, armRetryEvery, n, "the kept arm's runs of %d from run %d", cycle, from)
					} else {
						require.Equal(t, 1, n, "arm %d's runs of %d from run %d", arm, cycle, from)
					}
				}
			}
		})
	}
}

// Property: whatever runs are added (the arm picked or another, no level,
// no time, a run of 0 or huge cost), pick returns an arm of the policy,
// the same one each time until the next add (Graph.Arm reports the next
// run's arm by it), and a fixed arm's policy always picks it.
func TestArmPolicyPicksInRange(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 9))
	durations := []func() time.Duration{
		func() time.Duration { return 0 },
		func() time.Duration { return 1 },
		func() time.Duration { return time.Duration(rng.Int64N(int64(time.Second))) },
		func() time.Duration { return time.Duration(math.MaxInt64 - rng.Int64N(1000)) },
	}
	for trial := range 300 {
		p := newArmPolicy("")
		if k := rng.IntN(4); k > 0 {
			p.arms, p.costs = p.arms[:k], p.costs[:k]
		}
		if trial%10 == 0 {
			p = newArmPolicy(bfs.ArmMegakernel)
		}
		for step := range 400 {
			i := p.pick()
			require.GreaterOrEqual(t, i, 0, "trial %d step %d", trial, step)
			require.Less(t, i, len(p.arms), "trial %d step %d", trial, step)
			require.Equal(t, i, p.pick(), "trial %d step %d", trial, step)
			if len(p.arms) == 1 {
				require.Equal(t, 0, i)
			}
			if rng.IntN(8) == 0 {
				i = rng.IntN(len(p.arms)) // a run the policy did not pick
			}
			p.add(i, durations[rng.IntN(len(durations))](), rng.IntN(12)-1)
		}
	}
}
