package checked

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAddMul(t *testing.T) {
	tests := []struct {
		name    string
		op      func(a, b uint64, f string) (uint64, error)
		a, b    uint64
		want    uint64
		wantErr bool
	}{
		{"add", Add, 3, 4, 7, false},
		{"add max", Add, math.MaxUint64, 0, math.MaxUint64, false},
		{"add overflow", Add, math.MaxUint64, 1, 0, true},
		{"mul", Mul, 1 << 31, 1 << 31, 1 << 62, false},
		{"mul zero", Mul, 0, math.MaxUint64, 0, false},
		{"mul overflow", Mul, 1 << 32, 1 << 32, 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.op(tc.a, tc.b, "test bytes")
			if tc.wantErr {
				var oe *OverflowError
				require.ErrorAs(t, err, &oe)
				assert.Equal(t, "test bytes", oe.Field)
				assert.Contains(t, err.Error(), "Fix:")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestOverflowErrorWidth(t *testing.T) {
	tests := []struct {
		name string
		err  OverflowError
		want string
	}{
		{"default 64", OverflowError{Field: "queue bytes"}, "queue bytes overflows 64 bits. Fix: reduce the sizes or counts that feed queue bytes"},
		{"explicit 64", OverflowError{Field: "queue bytes", Bits: 64}, "queue bytes overflows 64 bits. Fix: reduce the sizes or counts that feed queue bytes"},
		{"32", OverflowError{Field: "projected speedup bps", Bits: 32}, "projected speedup bps overflows 32 bits. Fix: reduce the sizes or counts that feed projected speedup bps"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.err.Error())
		})
	}
}

func TestSum(t *testing.T) {
	s, err := Sum("x", 1, 2, 3)
	require.NoError(t, err)
	assert.Equal(t, uint64(6), s)
	_, err = Sum("x", math.MaxUint64, 1)
	require.Error(t, err)
}

func TestCeilDiv(t *testing.T) {
	for _, tc := range []struct{ v, d, q uint64 }{{0, 3, 0}, {1, 3, 1}, {3, 3, 1}, {4, 3, 2}, {math.MaxUint64, 1, math.MaxUint64}, {math.MaxUint64, 2, 1 << 63}} {
		q, ok := CeilDiv(tc.v, tc.d)
		require.True(t, ok)
		assert.Equal(t, tc.q, q, "%d/%d", tc.v, tc.d)
	}
	_, ok := CeilDiv(5, 0)
	assert.False(t, ok)
}

func TestRatioBPS(t *testing.T) {
	assert.Equal(t, uint32(5000), RatioBPS(1<<62, 1<<63, 0))
	assert.Equal(t, uint32(7), RatioBPS(0, 0, 7))
	assert.Equal(t, uint32(math.MaxUint32), RatioBPS(math.MaxUint64, 1, 0))
	assert.Equal(t, uint32(9296), RatioBPS(476, 512, 0))
	assert.Equal(t, uint64(math.MaxUint64), RatioBPSWide(math.MaxUint64, 1, 0))
	assert.Equal(t, uint64(40000), RatioBPSWide(4000, 1000, 0))
}

func TestClamp01(t *testing.T) {
	for in, want := range map[float64]float64{-1: 0, 0.5: 0.5, 2: 1, math.NaN(): 0, math.Inf(1): 0} {
		assert.Equal(t, want, Clamp01(in))
	}
	assert.True(t, Finite(1))
	assert.False(t, Finite(math.Inf(-1)))
}

// MulDiv is checked against math/big over edge cases and fixed-seed random
// operands, including products that need the full 128 bits.
func TestMulDivMatchesBigInt(t *testing.T) {
	type triple struct{ a, b, c uint64 }
	cases := []triple{
		{0, 0, 1}, {7, 3, 2}, {math.MaxUint64, math.MaxUint64, math.MaxUint64},
		{math.MaxUint64, 2, 2}, {math.MaxUint64, 2, 1}, {1 << 32, 1 << 32, 1 << 32}, {1 << 63, 4, 3},
	}
	r := rand.New(rand.NewPCG(11, 12))
	for range 2000 {
		cases = append(cases, triple{r.Uint64(), r.Uint64() >> r.UintN(64), r.Uint64()>>r.UintN(64) | 1})
	}
	for _, tc := range cases {
		want := new(big.Int).Mul(new(big.Int).SetUint64(tc.a), new(big.Int).SetUint64(tc.b))
		want.Quo(want, new(big.Int).SetUint64(tc.c))
		got, ok := MulDiv(tc.a, tc.b, tc.c)
		if want.IsUint64() {
			require.True(t, ok, "%v", tc)
			require.Equal(t, want.Uint64(), got, "%v", tc)
		} else {
			require.False(t, ok, "%v", tc)
		}
	}
	// A zero divisor reports no fit instead of panicking.
	_, ok := MulDiv(1, 1, 0)
	assert.False(t, ok)
}

func TestOverflowErrorNamesItsInputs(t *testing.T) {
	_, err := Add(math.MaxUint64, 1, "stage io bytes")
	require.Equal(t, err, Inputs(err, "stages[3].input_bytes + stages[3].output_bytes"))
	assert.EqualError(t, err, "stage io bytes (stages[3].input_bytes + stages[3].output_bytes) overflows 64 bits. Fix: reduce the values in stages[3].input_bytes + stages[3].output_bytes so it fits 64 bits")
	// The first description wins: the innermost caller knows best.
	Inputs(err, "something else")
	assert.Contains(t, err.Error(), "stages[3]")
	oe := &OverflowError{Field: "launch count", Bits: 32}
	Inputs(fmt.Errorf("plan: %w", oe), "stages")
	assert.Contains(t, oe.Error(), "launch count (stages) overflows 32 bits")
	assert.NoError(t, Inputs(nil, "x"))
	other := errors.New("other")
	assert.Equal(t, other, Inputs(other, "x"))
}
