package kronbuild

import "math/bits"

// This file holds the generators' arithmetic as the kernels compute it,
// for their Go emulation: SplitMix64 at any draw of a stream, and
// math/rand/v2's PCG jumped to any draw.

// kronEdge draws edge e's endpoints before labelling, as the kernels'
// edge_of does: from the (k*scale+1)-th draw on of stream e /
// CHUNK_EDGES, k = e % CHUNK_EDGES, one draw per bit.
func kronEdge(seed uint64, scale int, tAB, tA, tC uint32, e uint64) (i, j uint32) {
	c, k := e/chunkEdges, e%chunkEdges
	state := (seed ^ (c+1)*splitStreamMul) + k*uint64(scale)*splitGamma
	for b := range scale {
		state += splitGamma
		z := state
		z = (z ^ (z >> 30)) * splitMix1
		z = (z ^ (z >> 27)) * splitMix2
		z ^= z >> 31
		var ii, jj uint32
		if uint32(z) >= tAB {
			ii = 1
		}
		t := tA
		if ii == 1 {
			t = tC
		}
		if uint32(z>>32) >= t {
			jj = 1
		}
		i |= ii << b
		j |= jj << b
	}
	return i, j
}

// u128 is a 128-bit unsigned integer.
type u128 struct{ hi, lo uint64 }

func mul128(a, b u128) u128 {
	hi, lo := bits.Mul64(a.lo, b.lo)
	return u128{hi: hi + a.hi*b.lo + a.lo*b.hi, lo: lo}
}

func add128(a, b u128) u128 {
	lo, c := bits.Add64(a.lo, b.lo, 0)
	hi, _ := bits.Add64(a.hi, b.hi, c)
	return u128{hi: hi, lo: lo}
}

var (
	pcgMul = u128{pcgMulHi, pcgMulLo}
	pcgInc = u128{pcgIncHi, pcgIncLo}
)

// pcgJump returns the PCG state k draws after state, as the kernels'
// pcg_jump does.
func pcgJump(state u128, k uint64) u128 {
	a, c := pcgMul, pcgInc
	accA, accC := u128{lo: 1}, u128{}
	for ; k != 0; k >>= 1 {
		if k&1 == 1 {
			accA = mul128(a, accA)
			accC = add128(mul128(a, accC), c)
		}
		c = add128(mul128(a, c), c)
		a = mul128(a, a)
	}
	return add128(mul128(accA, state), accC)
}

// pcgNext advances the state and returns its output, as math/rand/v2's
// PCG.Uint64 does.
func pcgNext(state *u128) uint64 {
	*state = add128(mul128(*state, pcgMul), pcgInc)
	hi := state.hi
	hi ^= hi >> 32
	hi *= pcgDXSMMul
	hi ^= hi >> 48
	hi *= state.lo | 1
	return hi
}

// shuffleDraw returns step i's draw, math/rand/v2's Rand.uint64n(i+1),
// and the draws it rejected.
func shuffleDraw(state *u128, i uint64) (j, rejected uint64) {
	bound := i + 1
	x := pcgNext(state)
	if bound&(bound-1) == 0 {
		return x & (bound - 1), 0
	}
	j, lo := bits.Mul64(x, bound)
	if lo < bound {
		thresh := -bound % bound
		for lo < thresh {
			j, lo = bits.Mul64(pcgNext(state), bound)
			rejected++
		}
	}
	return j, rejected
}
