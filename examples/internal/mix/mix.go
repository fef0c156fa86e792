// Package mix is the integer hash the examples' wave functions use, as
// their CUDA sources compute it.
package mix

// Fmix32 is MurmurHash3's 32-bit finaliser.
func Fmix32(h uint32) uint32 {
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return h
}
