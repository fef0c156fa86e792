package wavedag

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/workloads/harness"
)

func TestBenchRunsEveryArmChecked(t *testing.T) {
	p := parseTest(t, testWorkload(t, func(w obj) { w["bytes_moved"] = 40000 }))
	x, err := executor.New(NewFake(testDevice(t), testFuncs(), 9), executor.Options{})
	require.NoError(t, err)
	defer x.Close()
	var logs []string
	res, err := Bench(x, p, BenchConfig{Samples: 3, Reference: testFuncs(), CopyBytes: 1 << 16,
		Reporting: harness.Reporting{Log: func(f string, a ...any) { logs = append(logs, f) }}})
	require.NoError(t, err)
	require.Len(t, res.Arms, len(Arms()))
	require.Len(t, res.Samples, 3*len(Arms())+MinCopySamples)
	for _, a := range res.Arms {
		require.Equal(t, a.Planned.Launches, a.Executed.Launches, a.Arm)
		require.Equal(t, a.Planned.CounterWaits, a.Executed.CounterWaits, a.Arm)
		require.Positive(t, a.Wall.Center, a.Arm)
		require.Positive(t, a.BytesPerSecond, a.Arm)
		if a.Arm != string(ArmStreams) {
			require.NotNil(t, a.OverStreams, a.Arm)
		}
	}
	require.NotEmpty(t, res.Pick.Arm)
	require.NotEmpty(t, res.Pick.Fastest)
	require.Positive(t, res.CopyBytesPerSecond)
	want, err := Reference(p, testFuncs())
	require.NoError(t, err)
	require.Equal(t, want, res.Outputs)
}

// Without Go references the arms are held against the first run.
func TestBenchWithoutReference(t *testing.T) {
	p := parseTest(t, testWorkload(t, nil))
	x, err := executor.New(NewFake(testDevice(t), testFuncs(), 10), executor.Options{})
	require.NoError(t, err)
	defer x.Close()
	res, err := Bench(x, p, BenchConfig{Samples: 2, Arms: []Arm{ArmWaits, ArmStreams}})
	require.NoError(t, err)
	require.Len(t, res.Samples, 4)
	require.Empty(t, res.Pick.Arm, "no graph arm, no profile to pick from")
}

func TestBenchTunesTheRegisterCap(t *testing.T) {
	p := parseTest(t, testWorkload(t, nil))
	cases := []struct {
		name  string
		caps  []int
		tried []int
	}{
		{"every cap below the image's registers", []int{0, 64, 32}, []int{0, 64, 32}},
		{"a cap above them is the same as none", []int{0, 255, 32}, []int{0, 32}},
		{"one cap tunes nothing", []int{64}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			x, err := executor.New(NewFake(testDevice(t), testFuncs(), 3), executor.Options{})
			require.NoError(t, err)
			defer x.Close()
			res, err := Bench(x, p, BenchConfig{Samples: 2, Reference: testFuncs(), RegisterCaps: c.caps})
			require.NoError(t, err)
			if c.tried == nil {
				require.Nil(t, res.Tuning)
				return
			}
			require.NotNil(t, res.Tuning)
			var tried []int
			for _, tr := range res.Tuning.Registers {
				tried = append(tried, tr.Cap)
				require.Positive(t, tr.WallNs)
				require.Contains(t, []Arm{ArmBarriers, ArmWaits}, tr.Arm)
			}
			require.Equal(t, c.tried, tried)
			require.Contains(t, tried, res.Tuning.ChosenCap)
			for _, g := range res.Tuning.Grids {
				require.Positive(t, g.WallNs)
			}
			require.GreaterOrEqual(t, len(res.Tuning.Grids), 2, "the default waits grid and a smaller one")
			if len(res.Tuning.Grids) > 0 {
				require.Equal(t, res.Tuning.ChosenGrid, res.Grid.GridBlocks, "the kept waits grid is the bench's grid")
			}
			want, err := Reference(p, testFuncs())
			require.NoError(t, err)
			require.Equal(t, want, res.Outputs, "the kept cap's runs are checked too")
		})
	}
}
