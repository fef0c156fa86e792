package partbfs

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
