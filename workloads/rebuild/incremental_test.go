package rebuild

import (
	"fmt"
	"testing"

	"github.com/gpuplan/gpuplan/egraph"
	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/internal/kernelabi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// checkIncremental runs the incremental rounds on g with every arm under
// each config (the full-round arms' names run them too on such a session;
// the persistent arm twice: the second run must reset every incremental
// buffer) and checks the partition against egraph.Rebuild, the counts and rounds against
// egraph.RebuildRounds, the touches against egraph.RebuildIncremental, the
// e-node table against the final labels, and each arm's launches or
// barriers against the rounds.
func checkIncremental(t *testing.T, x *executor.Executor, g *egraph.Graph, name string, configs []Config) {
	t.Helper()
	worklist, rounds := references(t, g)
	want, err := egraph.RebuildIncremental(g)
	require.NoError(t, err)
	for _, cfg := range configs {
		cfg.Incremental = true
		s, err := NewSession(x, g, name, cfg)
		require.NoError(t, err, name)
		assert.Equal(t, s.Plans().Memory.RequiredBytes, x.ResidentBytes(), "%s: the session holds exactly its memory plan", name)
		for run, arm := range append(Arms(), ArmPersistentIncremental) {
			label := fmt.Sprintf("%s/%+v/%s/run %d", name, cfg, arm, run)
			r, err := s.Run(arm)
			require.NoError(t, err, label)
			out, err := s.Output(r)
			require.NoError(t, err, label)
			require.NoError(t, CheckAgainst(out.Result, worklist, rounds), label)
			require.NoError(t, CheckNodeTable(g, out.Result.Labels, out.Nodes), label)
			assert.Equal(t, worklist.NodeClasses(g), out.Result.NodeClasses(g), label)
			assert.Equal(t, []any{want.Rounds, uint64(want.NodeTouches), true}, []any{r.Rounds, r.NodeTouches, r.Incremental}, label)
			checkIncLaunches(t, s, r, label)
			assert.Zero(t, r.TimedUploads+r.TimedAllocations+r.TimedHostSyncs, label)
			if run == 0 && g.NodeCount() >= 5000 {
				t.Logf("%s: %d rounds, %d touches (%.2f per e-node), %d full passes", label, r.Rounds, r.NodeTouches, float64(r.NodeTouches)/float64(g.NodeCount()), r.FullPasses)
			}
		}
		require.NoError(t, s.Close())
		assert.Zero(t, x.ResidentBytes(), name)
	}
}

// checkIncLaunches checks each arm's launches: a launch per phase of every
// round launched for the loops (the initialisation and the compaction
// outside the rounds), one launch with IncPhases barriers a round and one
// more for the persistent kernel.
func checkIncLaunches(t *testing.T, s *Session, r Run, label string) {
	p := s.Plans()
	switch r.Arm.Driver() {
	case ArmHostLoop:
		assert.Equal(t, r.Rounds, r.RoundsLaunched, label)
	case ArmDeviceLoop:
		assert.GreaterOrEqual(t, r.RoundsLaunched, r.Rounds, label)
		assert.Zero(t, r.RoundsLaunched%s.Config().CheckEvery, label)
	case ArmPersistent:
		assert.Equal(t, 1+IncPhases*r.Rounds, r.Barriers, label)
		assert.EqualValues(t, 1, r.Launches, label)
		return
	}
	assert.EqualValues(t, IncPhases*r.RoundsLaunched, r.RoundLaunches, label)
	assert.EqualValues(t, 1+p.CompactFusion.LaunchCount, r.Launches-r.RoundLaunches, label)
}

// TestIncrementalOnFake runs the incremental kernel over the emulation on
// every generated shape at several sizes and seeds, and on egg's 1e4 dump.
func TestIncrementalOnFake(t *testing.T) {
	x, _ := newFakeExecutor(t, 8<<30, 3)
	configs := []Config{{}, {CheckEvery: 1, Threads: 64, PersistentThreads: 64}, {CheckEvery: 3}}
	for _, shape := range egraph.GenShapeNames() {
		for _, n := range []int{1, 2, 17, 300, 3000} {
			for seed := range 3 {
				spec := fmt.Sprintf("gen:%d:%d:%s", n, seed+1, shape)
				checkIncremental(t, x, generate(t, spec), spec, configs)
			}
		}
	}
	g, _ := eggDump(t)
	checkIncremental(t, x, g, "math-1e4", configs[:1])
}

// TestIncrementalDeepRounds checks the incremental kernel where it matters:
// many rounds that each change little, with full passes for tombstones.
func TestIncrementalDeepRounds(t *testing.T) {
	x, _ := newFakeExecutor(t, 8<<30, 4)
	for _, spec := range []string{"gen:20000:7:giant", "gen:20000:3:chain"} {
		checkIncremental(t, x, generate(t, spec), spec, []Config{{}})
	}
	g, err := egraph.Generate(egraph.GenConfig{Nodes: 8000, Seed: 2, Shape: egraph.ShapeDeepCycle, CycleLength: 1000})
	require.NoError(t, err)
	checkIncremental(t, x, g, "cycles of 1000", []Config{{}})
}

// TestIncrementalPlans checks that a session with the incremental rounds
// plans their buffers as scratch and their grid, and that a session
// without them plans neither.
func TestIncrementalPlans(t *testing.T) {
	x, _ := newFakeExecutor(t, 1<<30, 5)
	g := generate(t, "gen:500:1")
	s, err := NewSession(x, g, "gen-500", Config{Incremental: true})
	require.NoError(t, err)
	inc := s.Plans()
	require.NotNil(t, inc.IncrementalGrid)
	require.NoError(t, s.Close())
	plain, err := NewSession(x, g, "gen-500", Config{})
	require.NoError(t, err)
	p := plain.Plans()
	require.NoError(t, plain.Close())
	assert.Nil(t, p.IncrementalGrid)
	assert.Zero(t, p.Sizes.UsesBytes+p.Sizes.LinkBytes+p.Sizes.ListsBytes+p.Sizes.IncCtlBytes)
	var extra uint64
	for _, b := range inc.Sizes.incBuffers() {
		extra += b
	}
	assert.Equal(t, p.Memory.RequiredBytes+extra, inc.Memory.RequiredBytes, "the incremental buffers are scratch")
	z := inc.Sizes
	assert.Equal(t, []uint64{4 * (z.Classes + 1), 4 * (z.Rows + z.ChildSlots), 12 * z.Classes, 4 * z.Rows, 4 * (z.Classes + z.Rows), 4 * (z.Classes + 2*z.Rows), 4 * IncCtlWords},
		z.incBuffers())
}

// TestIncrementalStepMisuse checks that a step launch with a phase past
// IncPhaseInit sets the misuse result and does nothing.
func TestIncrementalStepMisuse(t *testing.T) {
	x, _ := newFakeExecutor(t, 1<<30, 6)
	s, err := NewSession(x, generate(t, "gen:100:1"), "gen-100", Config{Incremental: true})
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.reset())
	_, err = x.Launch(s.k.incStep, executor.Linear(1, 32), kernelabi.MustArgs(IncStepParams[executor.Buffer]{
		StateParams: s.stepParams(0, 0, 0, 0).StateParams, IncStateParams: s.incState(), Phase: IncPhaseInit + 1})...)
	require.NoError(t, err)
	w, err := s.resultWords()
	require.NoError(t, err)
	assert.EqualValues(t, MisusePhases, w[ResultMisuse])
	assert.Zero(t, w[ResultRounds])
}
