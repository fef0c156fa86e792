package executor

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// vyre's four budget vectors.
func TestLiveResidentBudgetVyreVectors(t *testing.T) {
	cases := []struct {
		total, free, resident, want uint64
	}{
		{10_000, 1_000, 0, 900},
		{10_000, 8_000, 2_000, 9_000},
		{10_000, 0, 2_000, 2_000},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, LiveResidentBudget(c.total, c.free, c.resident), "%+v", c)
	}
	assert.Equal(t, uint64(9_000), TotalResidentBudget(10_000))
}

func TestLiveResidentBudgetProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 23))
	for i := 0; i < 20000; i++ {
		total := r.Uint64() >> r.IntN(64)
		free := r.Uint64() >> r.IntN(64)
		resident := r.Uint64() >> r.IntN(64)
		b := LiveResidentBudget(total, free, resident)
		tb := TotalResidentBudget(total)
		require.GreaterOrEqual(t, b, resident)
		if resident < tb {
			require.LessOrEqual(t, b, tb, "never above the total budget")
			require.LessOrEqual(t, b-resident, TotalResidentBudget(free), "never more than 90%% of free")
		} else {
			require.Equal(t, resident, b)
		}
	}
	assert.Equal(t, uint64(math.MaxUint64/10*9+5*9/10), TotalResidentBudget(math.MaxUint64))
	for tot := uint64(0); tot < 1000; tot++ {
		require.Equal(t, tot*9/10, TotalResidentBudget(tot))
	}
}
