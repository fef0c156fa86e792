package rebuild

import (
	"fmt"
	"testing"

	"github.com/gpuplan/gpuplan/egraph"
	"github.com/gpuplan/gpuplan/executor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// checkArms runs every arm on g under each config and checks the partition,
// the counts and the rounds against the CPU references, the e-node table
// against the final labels, and that nothing polluted the timed region.
func checkArms(t *testing.T, x *executor.Executor, g *egraph.Graph, name string, configs []Config) {
	t.Helper()
	worklist, rounds := references(t, g)
	for _, cfg := range configs {
		if cfg.MaxGroupBytes == splitGroups {
			cfg.MaxGroupBytes = largestStage(t, x, g)
		}
		s, err := NewSession(x, g, name, cfg)
		require.NoError(t, err, name)
		for _, arm := range FullRoundArms() {
			label := fmt.Sprintf("%s/%+v/%s", name, cfg, arm)
			// The first run of an executor may allocate pinned staging
			// memory; the measured run is the second.
			_, err := s.Run(arm)
			require.NoError(t, err, label)
			r, err := s.Run(arm)
			require.NoError(t, err, label)
			out, err := s.Output(r)
			require.NoError(t, err, label)
			require.NoError(t, CheckAgainst(out.Result, worklist, rounds), label)
			require.NoError(t, CheckNodeTable(g, out.Result.Labels, out.Nodes), label)
			assert.Equal(t, worklist.NodeClasses(g), out.Result.NodeClasses(g), label)
			assert.Zero(t, r.TimedUploads+r.TimedAllocations+r.TimedHostSyncs, label)
			checkLaunches(t, s, r, label)
		}
		require.NoError(t, s.Close())
	}
}

// checkLaunches checks that each arm launched what its plans say: the
// host loop one launch per wave of each stage's pass, the device loop
// exactly the fusion plan's groups per round, the persistent kernel one
// launch with a barrier after each group of every round.
func checkLaunches(t *testing.T, s *Session, r Run, label string) {
	p := s.Plans()
	switch r.Arm {
	case ArmHostLoop:
		assert.Equal(t, r.Rounds, r.RoundsLaunched, label)
	case ArmDeviceLoop:
		assert.GreaterOrEqual(t, r.RoundsLaunched, r.Rounds, label)
		assert.Zero(t, r.RoundsLaunched%s.Config().CheckEvery, label)
		assert.EqualValues(t, uint64(r.RoundsLaunched)*uint64(p.Fusion.LaunchCount), r.RoundLaunches, label)
		assert.EqualValues(t, p.CompactFusion.LaunchCount, r.Launches-r.RoundLaunches, label)
	case ArmPersistent:
		assert.EqualValues(t, 1, r.Launches, label)
		assert.Equal(t, r.Rounds*int(p.Fusion.LaunchCount), r.Barriers, label)
	}
}

// splitGroups in Config.MaxGroupBytes asks checkArms for the budget of
// the largest stage alone, so that the fusion plan splits the round into
// more launches.
const splitGroups = 1

// largestStage returns the bytes of the largest stage of g's rounds.
func largestStage(t *testing.T, x *executor.Executor, g *egraph.Graph) uint64 {
	s, err := NewSession(x, g, "probe", Config{})
	require.NoError(t, err)
	defer s.Close()
	var most uint64
	for _, st := range s.Plans().Stages {
		most = max(most, st.InputBytes+st.OutputBytes+st.ScratchBytes)
	}
	return most
}

// TestArmsOnFake runs the whole session, every arm and config, over the
// emulated kernels on random and adversarial generated e-graphs and on
// egg's 1e4 dump.
func TestArmsOnFake(t *testing.T) {
	x, _ := newFakeExecutor(t, 8<<30, 1)
	configs := []Config{{}, {CheckEvery: 1, Threads: 64, PersistentThreads: 64}, {CheckEvery: 3, MaxGroupBytes: splitGroups, splitStages: true}}
	for _, spec := range []string{"gen:3000:1", "gen:3000:2:chain", "gen:2000:3:giant", "gen:3000:4:cycle", "gen:2000:5:distinct", "gen:1:1", "gen:50:9"} {
		checkArms(t, x, generate(t, spec), spec, configs)
	}
	g, _ := eggDump(t)
	checkArms(t, x, g, "math-1e4", configs[:1])
}
