package wavedag

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/megakernel"
)

func TestTestWorkloadPlans(t *testing.T) {
	p := parseTest(t, testWorkload(t, nil))
	tp := p.Plan.Tiles
	require.Equal(t, []string{"t_seed", "t_all", "t_block", "t_prologue"}, p.Funcs)
	// The same-tile readers follow their producer in one task.
	require.Equal(t, []int32{0, 4, 1, 5, 2, 3, 6, 7}, tp.Order)
	var fused [][]int32
	for u := range tp.Units {
		if tp.Units[u].Count > 1 {
			fused = append(fused, tp.UnitWaves(u))
		}
	}
	require.Equal(t, [][]int32{{0, 4}, {2, 3}}, fused)
	require.Equal(t, []bool{true, false, false, false, false, false, false, false}, tp.Flags,
		"only a, read by blocks by f, publishes flags: d reads c's tiles in c's own task")
	// Waits: c on a and b (4 tiles each), f on a's blocks (2 tiles x 2
	// flags), g on c, h on d, e, f and g; d and e wait on nothing.
	require.Equal(t, uint64(4*2+4+4+4*4), tp.CounterWaits)
	require.Equal(t, uint64(4+4+2+4+4+4), tp.Tasks)
}

func TestArmsMatchTheReference(t *testing.T) {
	p := parseTest(t, testWorkload(t, nil))
	want, err := Reference(p, testFuncs())
	require.NoError(t, err)
	for _, seed := range []uint64{1, 2, 3} {
		s, x := openFake(t, p, testFuncs(), seed, Options{Grid: 5, MaxRegisters: 32 * int(seed)})
		arms := Arms()
		for round := range 3 {
			for k := range arms {
				arm := arms[(round+k)%len(arms)]
				require.NoError(t, s.Reset())
				r, err := s.Run(arm)
				require.NoError(t, err, "seed %d arm %s", seed, arm)
				got, err := s.Outputs()
				require.NoError(t, err)
				for i, o := range p.Workload.Outputs {
					require.NoError(t, Compare(o, got[i], want[i]), "seed %d arm %s round %d", seed, arm, round)
				}
				require.NoError(t, s.CheckPlan(r), "arm %s", arm)
			}
		}
		require.Zero(t, x.Telemetry().ResidentBorrowedFallbackDispatches)
	}
}

func TestArmsCountWhatThePlansSay(t *testing.T) {
	p := parseTest(t, testWorkload(t, nil))
	s, _ := openFake(t, p, testFuncs(), 4, Options{})
	want := map[Arm]Run{
		ArmStreams:  {Launches: 8},
		ArmGraph:    {GraphLaunches: 1},
		ArmGraphPDL: {GraphLaunches: 1},
		ArmBarriers: {Launches: 1, Barriers: uint64(p.Plan.GlobalBarriers), Tasks: 30},
		ArmWaits:    {Launches: 1, CounterWaits: p.Plan.Tiles.CounterWaits, Tasks: p.Plan.Tiles.Tasks},
	}
	for _, arm := range Arms() {
		r, err := s.Run(arm)
		require.NoError(t, err)
		w := want[arm]
		require.Equal(t, w.Launches, r.Launches, "%s launches", arm)
		require.Equal(t, w.GraphLaunches, r.GraphLaunches, "%s graph launches", arm)
		require.Equal(t, w.Barriers, r.Barriers, "%s barriers", arm)
		require.Equal(t, w.CounterWaits, r.CounterWaits, "%s counter waits", arm)
		require.Equal(t, w.Tasks, r.Tasks, "%s tasks", arm)
	}
	require.Equal(t, 3, p.Plan.GlobalBarriers)
}

// A reference that reads its producer before gp_wait sees the producer
// unfinished in the emulated waits arm.
func TestPrologueReadingAProducerEarlyIsCaught(t *testing.T) {
	p := parseTest(t, testWorkload(t, nil))
	want, err := Reference(p, testFuncs())
	require.NoError(t, err)
	funcs := testFuncs()
	funcs["t_prologue"] = func(t *Tile) error {
		n := t.U32(1)
		out, w, in := t.Uint32s(0, 0, uint64(n)), t.Uint32s(2, 0, uint64(n)), t.Uint32s(3, 0, uint64(n))
		lo, hi := elems(t, n)
		early := append([]uint32(nil), in[lo:hi]...) // a bug: before gp_wait
		t.Wait()
		for i := lo; i < hi; i++ {
			out[i] = w[i]*3 + early[i-lo]
		}
		return t.Err()
	}
	caught := false
	for seed := range uint64(8) {
		s, _ := openFake(t, p, funcs, seed, Options{Grid: 8})
		require.NoError(t, s.Reset())
		_, err := s.Run(ArmWaits)
		require.NoError(t, err)
		got, err := s.Outputs()
		require.NoError(t, err)
		caught = caught || Compare(p.Workload.Outputs[0], got[0], want[0]) != nil
	}
	require.True(t, caught, "no interleaving ran the prologue before its producer")
}

func TestWatchdogReportsTheWaits(t *testing.T) {
	p := parseTest(t, testWorkload(t, nil))
	s, x := openFake(t, p, testFuncs(), 5, Options{Watchdog: time.Second})
	// Make wave 7 wait on itself: it can never start.
	im := s.Image()
	bad := append([]byte(nil), im.Plan...)
	first := p.Plan.Tiles.WaitStart[7]
	off := im.Waits.Offset + uint64(first)*waitWords*4
	bad[off] = 7
	require.NoError(t, x.Upload(s.planBuf, bad))
	_, err := s.Run(ArmWaits)
	var we *WatchdogError
	require.ErrorAs(t, err, &we)
	require.NotEmpty(t, we.Records)
	for _, r := range we.Records {
		require.Equal(t, 7, r.Wave)
		require.Equal(t, uint64(7), r.Producer)
		require.Equal(t, DiagCounter, r.Kind)
	}
	require.Contains(t, err.Error(), "wave 7 (join-h) tile")
	require.Contains(t, err.Error(), "waits on wave 7 (join-h)'s counter")
	require.Contains(t, err.Error(), "Fix:")
	// The state was reset: with the plan mended, the session runs again.
	require.NoError(t, x.Upload(s.planBuf, im.Plan))
	require.NoError(t, s.Reset())
	r, err := s.Run(ArmWaits)
	require.NoError(t, err)
	require.NoError(t, s.CheckPlan(r))
}

func TestFaultLosesTheSession(t *testing.T) {
	p := parseTest(t, testWorkload(t, nil))
	funcs := testFuncs()
	funcs["t_block"] = func(t *Tile) error {
		_ = t.Uint32s(2, 1<<40, 4) // far outside the buffer
		return t.Err()
	}
	for _, arm := range Arms() {
		s, _ := openFake(t, p, funcs, 6, Options{})
		_, err := s.Run(arm)
		var fe *FaultError
		require.ErrorAs(t, err, &fe, "arm %s", arm)
		require.Equal(t, arm, fe.Arm)
		require.Equal(t, -1, fe.Wave, "the wave is unknown until the waves run one at a time")
		require.Contains(t, err.Error(), "the device context is lost")
		_, err = s.Run(ArmStreams)
		require.ErrorAs(t, err, &fe, "a lost session stays lost")
		require.NoError(t, s.Close())
	}
}

func TestOpenRefuses(t *testing.T) {
	cases := []struct {
		name string
		edit func(w obj)
		opts Options
		want string
	}{
		{"over budget", func(w obj) { w["memory_budget_bytes"] = 36000 }, Options{},
			"the run needs 40480 bytes on the device (buffers 34000, plan image 1008, state 5120, argument slots 352) but the memory budget is 36000"},
		{"grid not co-resident", nil, Options{Grid: 1 << 20}, "cannot be co-resident"},
		{"too many streams", nil, Options{Streams: 1000}, "Fix: use at most 64"},
		{"register cap", nil, Options{MaxRegisters: 300}, "a register cap of 300 per thread. Fix: use 0 for no cap, or 16 to 255"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := parseTest(t, testWorkload(t, c.edit))
			x, err := executor.New(NewFake(testDevice(t), testFuncs(), 1), executor.Options{})
			require.NoError(t, err)
			defer x.Close()
			_, err = Open(x, p, c.opts)
			require.ErrorContains(t, err, c.want)
			require.Zero(t, x.ResidentBytes(), "nothing stays allocated")
		})
	}
}

func TestProgramRefusesBadModules(t *testing.T) {
	setFn := func(fn string) func(w obj) {
		return func(w obj) { w["waves"].([]obj)[3]["kernel"].(obj)["function"] = fn }
	}
	cases := []struct {
		name  string
		edit  func(w obj)
		files Files
		want  []string
	}{
		{"missing function", setFn("t_missing"), testFiles,
			[]string{`field "waves[3].kernel.function"`, "t_missing is not a visible device function of testwaves.ptx", "Fix: define it with GP_WAVE"}},
		{"wrong signature", setFn("t_wrong_args"), testFiles,
			[]string{"t_wrong_args(.param .b64)", "but a wave function is t_wrong_args(.param .b32, .param .b32, .param .b64)"}},
		{"undefined extern", nil, func(string) ([]byte, error) {
			return append(append([]byte(nil), testPTX...), "\n.extern .func gp_other_helper()\n;\n"...), nil
		}, []string{"declares .extern function gp_other_helper"}},
		{"missing module", nil, func(string) ([]byte, error) { return nil, errors.New("no such file. Fix: give the path") },
			[]string{`field "module"`, "no such file"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("test.json", testWorkload(t, c.edit), c.files, LoadOptions{})
			require.Error(t, err)
			for _, w := range c.want {
				require.Contains(t, err.Error(), w)
			}
		})
	}
}

func TestWorkloadErrorsNameTheField(t *testing.T) {
	cases := []struct {
		name string
		edit func(w obj)
		want string
	}{
		{"unknown buffer", func(w obj) {
			w["waves"].([]obj)[0]["kernel"].(obj)["args"].([]obj)[0]["buffer"] = "zz"
		}, `"waves[0].kernel.args[0].buffer": unknown buffer "zz"`},
		{"offset outside", func(w obj) {
			w["waves"].([]obj)[0]["kernel"].(obj)["args"].([]obj)[0]["offset"] = 4000
		}, `"waves[0].kernel.args[0].offset": offset 4000 is outside buffer a`},
		{"bytes outside", func(w obj) {
			a := w["waves"].([]obj)[0]["kernel"].(obj)["args"].([]obj)[0]
			a["offset"], a["bytes"] = 100, 3901
		}, "offset 100 plus 3901 bytes is outside buffer a of 4000 bytes"},
		{"cycle", func(w obj) {
			w["dependencies"] = append(w["dependencies"].([]obj), dep(7, 0, ""))
		}, "cycle (0 -> 2 -> 3 -> 7 -> 0)"},
		{"over the planned budget", func(w obj) { w["memory_budget_bytes"] = 10000 }, "34000 bytes required but only 10000 bytes of budget"},
		{"same with other tiles", func(w obj) {
			w["dependencies"].([]obj)[4]["tiles"] = "same"
		}, "wave 0 has 4 tiles and wave 5 has 2"},
		{"bad block", func(w obj) { w["waves"].([]obj)[0]["kernel"].(obj)["block"] = 100 }, "give a multiple of 32"},
		{"reserved name", func(w obj) { w["waves"].([]obj)[0]["kernel"].(obj)["function"] = "gp_seed" }, "reserved prefix gp_"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("test.json", testWorkload(t, c.edit), testFiles, LoadOptions{})
			require.ErrorContains(t, err, c.want)
			require.Contains(t, err.Error(), "Fix:")
			var we *megakernel.WorkloadError
			_ = errors.As(err, &we)
		})
	}
}

func TestGridSetByTheCallerNeedsOnlyCoResidency(t *testing.T) {
	p := parseTest(t, testWorkload(t, nil))
	// Beyond the barriers arm's widest group (and the waits arm's tasks),
	// but co-resident: taken as given, and both arms still run correctly.
	widest := uint32(0)
	for _, g := range p.Plan.Groups {
		var tiles uint32
		for _, v := range g {
			tiles += uint32(*p.wave(v).Kernel.Tiles)
		}
		widest = max(widest, tiles)
	}
	grid := 4 * widest
	s, _ := openFake(t, p, testFuncs(), 1, Options{Grid: grid})
	require.Equal(t, grid, s.Grid().GridBlocks)
	for _, arm := range []Arm{ArmBarriers, ArmWaits} {
		runMatchesReference(t, s, arm, "arm "+string(arm))
	}
}

// runMatchesReference runs arm from the initial buffers and holds its
// outputs against the CPU reference.
func runMatchesReference(t *testing.T, s *Session, arm Arm, what string) {
	t.Helper()
	p := s.Program()
	want, err := Reference(p, testFuncs())
	require.NoError(t, err)
	require.NoError(t, s.Reset())
	_, err = s.Run(arm)
	require.NoError(t, err, what)
	got, err := s.Outputs()
	require.NoError(t, err)
	for i, o := range p.Workload.Outputs {
		require.NoError(t, Compare(o, got[i], want[i]), what)
	}
}

func TestSetMaxRegistersRelinksTheSchedulers(t *testing.T) {
	p := parseTest(t, testWorkload(t, nil))
	s, _ := openFake(t, p, testFuncs(), 2, Options{})
	for _, r := range []int{64, 0, 32} {
		require.NoError(t, s.SetMaxRegisters(r))
		require.Equal(t, r, s.MaxRegisters())
		require.Positive(t, s.Registers())
		runMatchesReference(t, s, ArmWaits, fmt.Sprintf("cap %d", r))
	}
	require.ErrorContains(t, s.SetMaxRegisters(8), "a register cap of 8 per thread. Fix:")
	require.Equal(t, 32, s.MaxRegisters(), "a refused cap changes nothing")
}

func TestSetWaitsGrid(t *testing.T) {
	p := parseTest(t, testWorkload(t, nil))
	s, _ := openFake(t, p, testFuncs(), 4, Options{})
	def := s.Grid().GridBlocks
	require.NoError(t, s.SetWaitsGrid(3))
	require.Equal(t, uint32(3), s.Grid().GridBlocks)
	require.NoError(t, s.Reset())
	_, err := s.Run(ArmWaits)
	require.NoError(t, err, "three blocks run every task")
	require.ErrorContains(t, s.SetWaitsGrid(1<<30), "cannot be co-resident")
	require.Equal(t, uint32(3), s.Grid().GridBlocks, "a refused grid changes nothing")
	require.NoError(t, s.SetWaitsGrid(0))
	require.Equal(t, def, s.Grid().GridBlocks)
	require.Positive(t, s.WidestLayerTiles())
}
