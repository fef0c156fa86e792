package kronbuild

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPCGMatchesMathRand checks the kernels' PCG against math/rand/v2's:
// the same outputs from the same seeds, and a jump of k draws landing
// where k draws do.
func TestPCGMatchesMathRand(t *testing.T) {
	for _, seed := range [][2]uint64{{0, 0}, {1, 2}, {0x9e3779b97f4a7c15, 0x5851f42d4c957f2d}, {^uint64(0), ^uint64(0)}} {
		ref := rand.NewPCG(seed[0], seed[1])
		state := u128{seed[0], seed[1]}
		for k := range uint64(300) {
			assert.Equal(t, pcgJump(u128{seed[0], seed[1]}, k), state, "jump %d", k)
			require.Equal(t, ref.Uint64(), pcgNext(&state), "draw %d", k)
		}
		far := u128{seed[0], seed[1]}
		for range 1 << 12 {
			pcgNext(&far)
		}
		assert.Equal(t, far, pcgJump(u128{seed[0], seed[1]}, 1<<12))
	}
}

// TestShuffleDrawsMatchMathRand checks the kernels' draws against the
// indices math/rand/v2's Shuffle swaps with.
func TestShuffleDrawsMatchMathRand(t *testing.T) {
	for _, n := range []int{2, 3, 17, 1000, 4096} {
		want := make([]uint64, n)
		rand.New(rand.NewPCG(uint64(n), 7)).Shuffle(n, func(i, j int) { want[i] = uint64(j) })
		state := u128{uint64(n), 7}
		for i := n - 1; i > 0; i-- {
			j, rejected := shuffleDraw(&state, uint64(i))
			require.Zero(t, rejected)
			require.Equal(t, want[i], j, "n %d step %d", n, i)
		}
	}
}

// TestShuffleDrawRejects checks a draw in the biased sliver: a PCG output
// of 0 for a bound that is not a power of two is drawn again, as
// math/rand/v2 does.
func TestShuffleDrawRejects(t *testing.T) {
	for _, i := range []uint64{2, 5, 700, 1<<20 + 3} {
		start := pcgBack(u128{hi: 0, lo: 12345}, 1)
		state := start
		j, rejected := shuffleDraw(&state, i)
		assert.Equal(t, uint64(1), rejected, "step %d", i)
		ref := rand.New(rand.NewPCG(start.hi, start.lo))
		assert.Equal(t, ref.Uint64N(i+1), j, "step %d", i)
	}
}

// pcgBack returns the PCG state k draws before state: the LCG's step
// undone, x = (x' - inc) / mul modulo 2^128.
func pcgBack(state u128, k uint64) u128 {
	inv := pcgMul
	for range 7 {
		// Newton's iteration doubles the correct low bits of the inverse.
		prod := mul128(pcgMul, inv)
		two := add128(u128{}, u128{lo: 2})
		inv = mul128(inv, add128(two, neg128(prod)))
	}
	for range k {
		state = mul128(add128(state, neg128(pcgInc)), inv)
	}
	return state
}

// neg128 is -a modulo 2^128.
func neg128(a u128) u128 { return add128(u128{hi: ^a.hi, lo: ^a.lo}, u128{lo: 1}) }
