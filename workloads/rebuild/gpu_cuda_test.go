//go:build cuda

package rebuild

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuplan/gpuplan/egraph"
	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/internal/gputest"
	"github.com/gpuplan/gpuplan/internal/input"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGPUArms runs every arm on random and adversarial generated e-graphs
// (long union chains, one giant class, deep cycles, all-distinct) and on
// egg's 1e4 dump, under the default plan, small blocks with a check every
// round, and a plan that launches every stage alone, and checks the
// partition, counts, rounds and e-node table against the CPU reference.
func TestGPUArms(t *testing.T) {
	x := gputest.Open(t)
	configs := []Config{{}, {CheckEvery: 1, Threads: 64, PersistentThreads: 64}, {CheckEvery: 3, splitStages: true, PersistentBlocksPerSM: 2}}
	specs := []string{"gen:3000:1", "gen:3000:2:chain", "gen:2000:3:giant", "gen:3000:4:cycle", "gen:2000:5:distinct", "gen:1:1"}
	if !raceEnabled {
		specs = append(specs, "gen:200000:6", "gen:200000:7:chain", "gen:100000:8:giant", "gen:200000:9:cycle")
	}
	for _, spec := range specs {
		checkArms(t, x, generate(t, spec), spec, configs)
	}
	g, p := eggDump(t)
	checkArms(t, x, g, "math-1e4", configs)
	checkEggPartition(t, x, g, p, "math-1e4")
}

// TestGPULarge runs the device loop and the persistent kernel on 10^6
// generated e-nodes, random and with a long union chain, and on 3*10^6
// (past the data-parallel reference's limit: the arms' rounds must
// agree).
func TestGPULarge(t *testing.T) {
	x := gputest.Open(t)
	if raceEnabled {
		t.Skip("the CPU references of 10^6 e-nodes take minutes under the race detector; the plain test binary runs this")
	}
	for _, spec := range []string{"gen:1e6:21", "gen:1e6:22:chain", "gen:3e6:23"} {
		g := generate(t, spec)
		w, rounds := references(t, g)
		s, err := NewSession(x, g, spec, Config{})
		require.NoError(t, err)
		armRounds := 0
		for _, arm := range []Arm{ArmDeviceLoop, ArmPersistent} {
			r, err := s.Run(arm)
			require.NoError(t, err, spec)
			out, err := s.Output(r)
			require.NoError(t, err, spec)
			require.NoError(t, CheckAgainst(out.Result, w, rounds), "%s %s", spec, arm)
			if armRounds == 0 {
				armRounds = r.Rounds
			}
			assert.Equal(t, armRounds, r.Rounds, "%s %s", spec, arm)
			t.Logf("%s %s: %d rounds, %.3f ms wall, %.3f ms device", spec, arm, r.Rounds, float64(r.WallNs)/1e6, float64(r.DeviceNs)/1e6)
		}
		require.NoError(t, s.Close())
	}
}

// TestGPUEggDumps runs every arm on the egg dumps named in GPUPLAN_EGG_DUMPS
// (comma-separated NAME.pre.txt paths, each with NAME.post.txt beside it:
// the 1e5 and 1e6 dumps are too large for the repository) and checks the
// partition against egg's own.
func TestGPUEggDumps(t *testing.T) {
	x := gputest.Open(t)
	names := os.Getenv("GPUPLAN_EGG_DUMPS")
	if names == "" {
		t.Skip("GPUPLAN_EGG_DUMPS names no dump")
	}
	for _, pre := range strings.Split(names, ",") {
		read := func(path string) *input.File {
			f, err := input.Open(path, nil, 1<<32)
			require.NoError(t, err)
			t.Cleanup(func() { f.Close() })
			return f
		}
		g, err := egraph.ReadDump(read(pre))
		require.NoError(t, err, pre)
		p, err := egraph.ReadPartition(read(strings.TrimSuffix(pre, ".pre.txt") + ".post.txt"))
		require.NoError(t, err, pre)
		checkArms(t, x, g, filepath.Base(pre), []Config{{}})
		checkEggPartition(t, x, g, p, filepath.Base(pre))
	}
}

// checkEggPartition checks every arm's partition against egg's.
func checkEggPartition(t *testing.T, x *executor.Executor, g *egraph.Graph, p *egraph.Partition, name string) {
	s, err := NewSession(x, g, name, Config{})
	require.NoError(t, err)
	defer s.Close()
	for _, arm := range FullRoundArms() {
		r, err := s.Run(arm)
		require.NoError(t, err)
		out, err := s.Output(r)
		require.NoError(t, err)
		require.NoError(t, egraph.ComparePartitions(out.Result.NodeClasses(g), p.Classes), "%s %s", name, arm)
		assert.Equal(t, p.DistinctNodes, out.Result.DistinctNodes, "%s %s", name, arm)
	}
}

// TestGPUStructural runs the structural-equivalence reference path and the
// hash grouping's parity with it on the GPU.
func TestGPUStructural(t *testing.T) {
	x := gputest.Open(t)
	g := withDuplicates(generate(t, map[bool]string{false: "gen:100000:1", true: "gen:10000:1"}[raceEnabled]), 5)
	s, err := NewSession(x, g, "dups", Config{})
	require.NoError(t, err)
	c, err := s.StructuralEquivalences()
	require.NoError(t, err)
	assert.True(t, c.Same(), "GPU %+v, CPU %+v", c.GPU.ExactPairCount, c.CPU.ExactPairCount)
	require.NoError(t, s.Close())
	checkHashGroupingMatchesPairwise(t, x)
}

// TestGPUPlanRefusesOversize checks that an e-graph over the memory budget
// is refused by the memory plan before anything is allocated, and that a
// misused launch is reported.
func TestGPUPlanRefusesOversize(t *testing.T) {
	x := gputest.Open(t)
	g := generate(t, "gen:20000:3")
	_, err := NewSession(x, g, "gen-20000", Config{MaxResidentBytes: 1 << 20})
	require.ErrorContains(t, err, "memory budget")
	assert.Zero(t, x.ResidentBytes())
	checkMisuse(t, x)
}

// TestGPUIncremental runs the incremental rounds (KernelIncremental and
// KernelIncrementalStep) with every arm on every generated shape and on
// egg's 1e4 dump, under the default plan and small blocks with a check
// every round and two persistent blocks per SM, and checks them as on the
// fake backend; then it times every incremental arm against the
// persistent arm's full rounds on gen:1000000:7:giant, whose 769 rounds
// each change little.
func TestGPUIncremental(t *testing.T) {
	x := gputest.Open(t)
	configs := []Config{{}, {CheckEvery: 1, Threads: 64, PersistentThreads: 64, PersistentBlocksPerSM: 2}}
	for _, spec := range []string{"gen:3000:1", "gen:3000:2:chain", "gen:2000:3:giant", "gen:3000:4:cycle", "gen:2000:5:distinct", "gen:1:1", "gen:20000:7:giant"} {
		checkIncremental(t, x, generate(t, spec), spec, configs)
	}
	g, _ := eggDump(t)
	checkIncremental(t, x, g, "math-1e4", configs)
	if raceEnabled {
		return
	}
	g = generate(t, "gen:1000000:7:giant")
	w, err := egraph.Rebuild(g)
	require.NoError(t, err)
	for _, cfg := range []Config{{}, {Incremental: true}} {
		s, err := NewSession(x, g, "giant-1e6", cfg)
		require.NoError(t, err)
		arms := []Arm{ArmPersistent}
		if cfg.Incremental {
			arms = IncrementalArms()
		}
		for _, arm := range arms {
			r, err := s.Run(arm)
			require.NoError(t, err)
			out, err := s.Output(r)
			require.NoError(t, err)
			require.NoError(t, CheckAgainst(out.Result, w, nil), "%s incremental %v", arm, cfg.Incremental)
			t.Logf("giant 1e6, %s, incremental %v: %d rounds, %.3f ms wall, %.3f ms device, %d touches, %d full passes",
				arm, cfg.Incremental, r.Rounds, float64(r.WallNs)/1e6, float64(r.DeviceNs)/1e6, r.NodeTouches, r.FullPasses)
		}
		require.NoError(t, s.Close())
	}
}
