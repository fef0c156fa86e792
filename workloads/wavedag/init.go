package wavedag

import (
	"encoding/binary"
	"math"
	"math/rand/v2"

	"github.com/gpuplan/gpuplan/megakernel"
)

// randomStream is the PCG stream of random fills: a fill's seed and this
// stream give the same bytes on every machine.
const randomStream = 0x67707570_6c616e31

// InitialContents returns buffer i's initial bytes: zeros, a random fill
// or the file's contents.
func (p *Program) InitialContents(i int) []byte {
	b := p.Workload.Buffers[i]
	out := make([]byte, *b.Bytes)
	switch {
	case b.Init == nil || b.Init.Fill == megakernel.FillZeros:
	case b.Init.Fill == megakernel.FillFile:
		copy(out, p.Files[i])
	default:
		fillRandom(out, b.Init)
	}
	return out
}

// fillRandom fills out from the init's seed: every value of an integer
// type, or floats uniform in [min, max) (default [-1, 1)).
func fillRandom(out []byte, in *megakernel.BufferInit) {
	r := rand.New(rand.NewPCG(*in.Seed, randomStream))
	lo, hi := -1.0, 1.0
	if in.Min != nil {
		lo = *in.Min
	}
	if in.Max != nil {
		hi = *in.Max
	}
	uniform := func() float64 { return lo + (hi-lo)*r.Float64() }
	switch megakernel.ElementType(in.Type) {
	case megakernel.TypeF32:
		for i := 0; i+4 <= len(out); i += 4 {
			binary.LittleEndian.PutUint32(out[i:], math.Float32bits(float32(uniform())))
		}
	case megakernel.TypeF64:
		for i := 0; i+8 <= len(out); i += 8 {
			binary.LittleEndian.PutUint64(out[i:], math.Float64bits(uniform()))
		}
	case megakernel.TypeBF16:
		for i := 0; i+2 <= len(out); i += 2 {
			binary.LittleEndian.PutUint16(out[i:], BF16(float32(uniform())))
		}
	default:
		for i := 0; i < len(out); i += 8 {
			var w [8]byte
			binary.LittleEndian.PutUint64(w[:], r.Uint64())
			copy(out[i:], w[:])
		}
	}
}

// BF16 rounds a float32 to bfloat16 (round to nearest, ties to even).
func BF16(f float32) uint16 {
	u := math.Float32bits(f)
	if u&0x7fffffff > 0x7f800000 { // NaN stays NaN
		return uint16(u>>16) | 0x40
	}
	u += 0x7fff + (u>>16)&1
	return uint16(u >> 16)
}

// BF16Float widens a bfloat16 to float32 exactly.
func BF16Float(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }
