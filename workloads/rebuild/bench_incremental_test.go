package rebuild

import (
	"fmt"
	"testing"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/internal/gputest"
	"github.com/gpuplan/gpuplan/internal/kernelabi"
	"github.com/gpuplan/gpuplan/occupancy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// armCounts counts a result's samples by arm, and checks that each has the
// reference's checksum.
func armCounts(t *testing.T, res *BenchResult, want string) map[string]int {
	t.Helper()
	counts := map[string]int{}
	for _, s := range res.Samples {
		counts[s.Arm]++
		assert.Equal(t, want, s.Checksum, s.Arm)
		assert.Zero(t, s.TimedUploads+s.TimedAllocations+s.TimedHostSyncs, s.Arm)
	}
	return counts
}

// TestBenchIncrementalArms runs the benchmark protocol with the default
// arms on a small generated e-graph of each shape: all six arms are
// measured in one run, the incremental ones on a second session beside
// the first, every sample with the reference's partition and rounds; the
// incremental arms launch what their plans say; the arm plan weighs both
// families of rounds; and both sessions are freed.
func TestBenchIncrementalArms(t *testing.T) {
	cases := []struct {
		spec string
	}{
		{"gen:3000:1:random"},
		{"gen:3000:2:chain"},
		{"gen:2000:3:giant"},
	}
	for _, c := range cases {
		t.Run(c.spec, func(t *testing.T) {
			x, _ := newFakeExecutor(t, 8<<30, 7)
			g := generate(t, c.spec)
			worklist, rounds := references(t, g)
			res, err := Bench(x, g, c.spec, BenchConfig{Samples: 2, CPUSamples: 1, FloorRounds: 5, Structural: true})
			require.NoError(t, err)
			want := SampleChecksum(PartitionChecksum(worklist.NodeClasses(g)), "")
			assert.Equal(t, want, res.ReferenceChecksum)
			wantCounts := map[string]int{ArmCPU: 1}
			for _, a := range Arms() {
				wantCounts[string(a)] = 2
			}
			assert.Equal(t, wantCounts, armCounts(t, res, want))
			assert.Equal(t, rounds.Rounds, res.Summary.Rounds)
			assert.Len(t, res.Summary.Arms, len(Arms())+1)
			require.Len(t, res.Launches, len(Arms()))
			for _, l := range res.Launches {
				assert.Equal(t, l.PlannedLaunches, l.ExecutedLaunches, l.Arm)
				assert.Equal(t, l.PlannedBarriers, l.ExecutedBarriers, l.Arm)
			}
			require.NotNil(t, res.IncrementalPlans)
			assert.NotNil(t, res.IncrementalPlans.IncrementalGrid)
			assert.Nil(t, res.Plans.IncrementalGrid, "Plans are the full rounds' session's")
			require.Len(t, res.ArmPlans, 2)
			assert.False(t, res.ArmPlans[0].Arm.IsIncremental())
			assert.True(t, res.ArmPlans[1].Arm.IsIncremental())
			assert.Contains(t, res.ArmPlans, res.ArmPlan)
			assert.Contains(t, res.ArmPlanNote, "profiled host-loop rebuild took")
			assert.Len(t, res.FloorSamples, floorLaunches)
			assert.Zero(t, x.ResidentBytes(), "the bench frees both sessions")
		})
	}
}

// TestBenchIncrementalAlone runs one incremental arm alone, and each
// family of rounds alone: only the sessions the arms need are opened, the
// arm plan says why it chose among one family, and the persistent round
// floor is measured only with the full rounds' persistent arm.
func TestBenchIncrementalAlone(t *testing.T) {
	cases := []struct {
		arms    []Arm
		note    string
		floor   int
		incGrid bool
	}{
		{arms: []Arm{ArmPersistentIncremental}, note: "the full rounds' arms are not measured", incGrid: true},
		{arms: IncrementalArms(), note: "the full rounds' arms are not measured", incGrid: true},
		{arms: FullRoundArms(), note: "the incremental rounds' arms are not measured", floor: floorLaunches},
	}
	x, _ := newFakeExecutor(t, 8<<30, 8)
	g := generate(t, "gen:2000:5:giant")
	worklist, _ := references(t, g)
	want := SampleChecksum(PartitionChecksum(worklist.NodeClasses(g)), "")
	for _, c := range cases {
		label := fmt.Sprint(c.arms)
		res, err := Bench(x, g, "giant-2000", BenchConfig{Arms: c.arms, Samples: 2, FloorRounds: 5, Structural: true})
		require.NoError(t, err, label)
		wantCounts := map[string]int{}
		for _, a := range c.arms {
			wantCounts[string(a)] = 2
		}
		assert.Equal(t, wantCounts, armCounts(t, res, want), label)
		assert.Nil(t, res.IncrementalPlans, label)
		assert.Equal(t, c.incGrid, res.Plans.IncrementalGrid != nil, label)
		require.Len(t, res.ArmPlans, 1, label)
		assert.Equal(t, c.incGrid, res.ArmPlan.Arm.IsIncremental(), label)
		assert.Contains(t, res.ArmPlanNote, c.note, label)
		assert.Len(t, res.FloorSamples, c.floor, label)
		require.NotNil(t, res.Structural, label)
		assert.True(t, res.Structural.Same(), label)
		assert.Zero(t, x.ResidentBytes(), label)
	}
}

// TestBenchRefusesArms checks that the bench refuses no arms, an unknown
// arm and an arm listed twice before it opens anything, and that a
// session without the incremental rounds refuses their arms.
func TestBenchRefusesArms(t *testing.T) {
	x, _ := newFakeExecutor(t, 1<<30, 9)
	g := generate(t, "gen:200:1")
	cases := []struct {
		name string
		arms []Arm
		want string
	}{
		{"empty", []Arm{}, "BenchConfig.Arms is empty"},
		{"unknown", []Arm{ArmPersistent, "warp"}, `unknown rebuild arm "warp". Fix: use host-loop, device-loop, persistent, host-loop-incremental, device-loop-incremental or persistent-incremental`},
		{"twice", []Arm{ArmPersistentIncremental, ArmHostLoop, ArmPersistentIncremental}, "lists persistent-incremental twice"},
	}
	for _, c := range cases {
		_, err := Bench(x, g, "gen-200", BenchConfig{Arms: c.arms, Samples: 1})
		require.ErrorContains(t, err, c.want, c.name)
		assert.Contains(t, err.Error(), "Fix:", c.name)
		assert.Zero(t, x.ResidentBytes(), c.name)
	}
	s, err := NewSession(x, g, "gen-200", Config{})
	require.NoError(t, err)
	defer s.Close()
	for _, arm := range IncrementalArms() {
		_, err := s.Run(arm)
		require.ErrorContains(t, err, "opened without them. Fix: open the session with Config.Incremental", arm)
	}
}

// TestBenchIncrementalOverBudget checks that the incremental rounds'
// session is planned against the memory the full rounds' session leaves:
// where each fits alone but not both, its memory plan refuses it before
// anything of it is allocated, and the error says how to measure them.
func TestBenchIncrementalOverBudget(t *testing.T) {
	big, _ := newFakeExecutor(t, 8<<30, 10)
	g := generate(t, "gen:20000:4:giant")
	required := func(cfg Config) uint64 {
		s, err := NewSession(big, g, "probe", cfg)
		require.NoError(t, err)
		defer s.Close()
		return s.Plans().Memory.RequiredBytes
	}
	full, inc := required(Config{}), required(Config{Incremental: true})
	mem := int64((inc + full/2) * 10 / 9)
	x, _ := newFakeExecutor(t, mem, 10)
	for _, arms := range [][]Arm{{ArmPersistent}, {ArmPersistentIncremental}} {
		_, err := Bench(x, g, "giant-20000", BenchConfig{Arms: arms, Samples: 1})
		require.NoError(t, err, "%v fits alone", arms)
	}
	_, err := Bench(x, g, "giant-20000", BenchConfig{Arms: []Arm{ArmPersistent, ArmPersistentIncremental}, Samples: 1})
	require.ErrorContains(t, err, "the incremental rounds' session of giant-20000 beside the full rounds' one")
	assert.Contains(t, err.Error(), "memory budget")
	assert.Contains(t, err.Error(), "in runs of their own")
	assert.Zero(t, x.ResidentBytes())
}

// faultyIncremental is the rebuild emulation with KernelIncremental doing
// nothing on its launch number bad (from 1).
func faultyIncremental(bad int) func(occupancy.Device, uint64) *executor.Fake {
	return func(dev occupancy.Device, seed uint64) *executor.Fake {
		return kernelabi.NewEmulation(seed, func(seeds *kernelabi.LaunchSeeds) map[string]kernelabi.Fake {
			m := fakes(seeds)
			f := m[KernelIncremental]
			run, n := f.Run, 0
			f.Run = func(l *executor.FakeLaunch) error {
				if n++; n == bad {
					return nil
				}
				return run(l)
			}
			m[KernelIncremental] = f
			return m
		}).NewFake(dev)
	}
}

// TestBenchChecksIncrementalSamples checks that a timed sample of an
// incremental arm is checked against the reference as every arm's is: a
// persistent incremental launch that does nothing on the second timed
// sample (after the warm-up run and the first sample) fails the bench.
func TestBenchChecksIncrementalSamples(t *testing.T) {
	x, _ := gputest.OpenFake(t, "h100", 8<<30, 11, faultyIncremental(3))
	g := generate(t, "gen:3000:6:chain")
	_, err := Bench(x, g, "chain-3000", BenchConfig{Samples: 3})
	require.ErrorContains(t, err, "arm persistent-incremental on chain-3000")
	assert.Contains(t, err.Error(), "Fix:")
	_, err = Bench(x, g, "chain-3000", BenchConfig{Samples: 3})
	require.NoError(t, err, "the fault was one launch")
}
