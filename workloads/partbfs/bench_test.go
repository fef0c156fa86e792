package partbfs

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/executor/nccl"
	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/workloads/harness"
)

func TestBenchOnTheFake(t *testing.T) {
	g, err := frontier.Kronecker(11, 16, 2)
	require.NoError(t, err)
	g.Name = "kron-11"
	roots, err := frontier.Roots(g, 3, 1)
	require.NoError(t, err)
	for _, simulated := range []bool{false, true} {
		var logged []string
		res, err := Bench(fakeDevices(t, 2, simulated), g, roots, BenchConfig{Samples: 4,
			Reporting: harness.Reporting{Log: func(f string, a ...any) { logged = append(logged, f) }}})
		require.NoError(t, err)
		s := res.Summary
		trav, exch := ArmNames(2, simulated)
		assert.Equal(t, trav, s.Arm)
		assert.Equal(t, 2, s.Devices)
		assert.Equal(t, simulated, s.Simulated)
		require.Len(t, res.Samples, 8, "4 traversal samples, then 4 exchange samples")
		for i, row := range res.Samples {
			if i < 4 {
				assert.Equal(t, trav, row.Arm)
				assert.Equal(t, res.ReferenceChecksum, row.Checksum)
				assert.Positive(t, row.WallNs)
			} else {
				assert.Equal(t, exch, row.Arm)
				assert.Equal(t, s.ExchangeBytes, row.BytesMoved)
			}
		}
		assert.Equal(t, s.PredictedBytes, s.ExchangeBytes, "the prediction is exact")
		assert.Zero(t, s.MaxStepDeviation)
		assert.Empty(t, s.Notes)
		assert.Positive(t, s.GTEPS)
		var levels uint64
		for _, r := range s.Roots {
			levels += uint64(r.Levels)
		}
		assert.Equal(t, levels, s.TotalLevels)
		assert.Len(t, res.Steps, int(levels), "one step per level of every root")
		assert.NotEmpty(t, logged)
	}
	assert.Equal(t, "simulated-p4", func() string { a, _ := ArmNames(4, true); return a }())
	_, err = Bench(fakeDevices(t, 2, false), g, nil, BenchConfig{})
	assert.ErrorContains(t, err, "no roots")
}

// TestBenchRankOnTheFake runs the benchmark with one rank per part
// (goroutines on the fake communicator): every rank's result carries the
// one-process run's exchange bytes and steps, the prediction is exact, and
// the arms name one process per GPU.
func TestBenchRankOnTheFake(t *testing.T) {
	g, err := frontier.Kronecker(10, 16, 2)
	require.NoError(t, err)
	roots, err := frontier.Roots(g, 3, 1)
	require.NoError(t, err)
	cfg := BenchConfig{Samples: 3, Session: Config{MaxResidentBytes: rankBudget}}
	one, err := Bench(fakeDevices(t, 3, false), g, roots, cfg)
	require.NoError(t, err)
	results := make([]*BenchResult, 3)
	errs := onRanks(t, 3, nccl.Options{}, func(r Rank, x *executor.Executor) error {
		var err error
		results[r.Rank], err = BenchRank(x, g, roots, r, cfg)
		return err
	})
	trav, exch := ProcessArmNames(3)
	assert.Equal(t, "process-per-gpu-p3", trav)
	for rank, res := range results {
		require.NoError(t, errs[rank], "rank %d", rank)
		s := res.Summary
		assert.Equal(t, trav, s.Arm)
		assert.True(t, s.Processes)
		assert.Equal(t, 3, s.Devices)
		assert.Equal(t, one.Plan, res.Plan)
		assert.Equal(t, one.Summary.ExchangeBytes, s.ExchangeBytes)
		assert.Equal(t, s.PredictedBytes, s.ExchangeBytes, "the prediction is exact")
		assert.Zero(t, s.MaxStepDeviation)
		require.Len(t, res.Steps, len(one.Steps))
		for k, st := range res.Steps {
			want := one.Steps[k]
			assert.Equal(t, []any{want.Root, want.Level, want.Direction, want.Collective, want.MeasuredBytes, want.PredictedBytes},
				[]any{st.Root, st.Level, st.Direction, st.Collective, st.MeasuredBytes, st.PredictedBytes}, "rank %d step %d", rank, k)
		}
		require.Len(t, res.Samples, 6)
		assert.Equal(t, exch, res.Samples[5].Arm)
		assert.Equal(t, one.ReferenceChecksum, res.Samples[0].Checksum)
	}
}
