package executor

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
)

// Module cache limits, vyre's: at 2048 modules the cache evicts down to 1024.
const (
	ModuleCacheSoftCap   = 2048
	ModuleCacheKeepAfter = 1024
)

// moduleKeyDomain separates module-cache keys from every other hash. vyre
// hashes raw PTX with blake3 under "vyre.cuda.module-cache.raw-ptx-artifact.v1";
// gpuplan uses SHA-256 (no blake3 dependency) under its own domain.
const moduleKeyDomain = "gpuplan.cuda.module-cache.raw-ptx-artifact.v1"

// ModuleKey is the 32-byte content key of a PTX module for one compute
// capability.
type ModuleKey [32]byte

// String is the key in lowercase hex.
func (k ModuleKey) String() string { return hex.EncodeToString(k[:]) }

// ModuleKeyFor hashes the domain, the compute capability (major, minor as
// little-endian uint32) and the PTX bytes, each length-prefixed.
func ModuleKeyFor(major, minor int, ptx []byte) ModuleKey {
	return moduleKey(moduleKeyDomain, major, minor, ptx)
}

// moduleKey hashes domain, the compute capability and parts, each
// length-prefixed.
func moduleKey(domain string, major, minor int, parts ...[]byte) ModuleKey {
	h := sha256.New()
	var n [8]byte
	write := func(b []byte) {
		binary.LittleEndian.PutUint64(n[:], uint64(len(b)))
		h.Write(n[:])
		h.Write(b)
	}
	write([]byte(domain))
	var cc [8]byte
	binary.LittleEndian.PutUint32(cc[:4], uint32(major))
	binary.LittleEndian.PutUint32(cc[4:], uint32(minor))
	write(cc[:])
	for _, p := range parts {
		write(p)
	}
	var k ModuleKey
	h.Sum(k[:0])
	return k
}

// KeepTopK is vyre's cache eviction (greedy top-k): it returns, in
// ascending index order, the indices of at most k entries with the highest
// access counts. Ties go to the lower index, and zero-count entries are never
// kept.
func KeepTopK(counts []uint64, k int) []int {
	picked := make([]bool, len(counts))
	var keep []int
	for len(keep) < k {
		best := -1
		for i, c := range counts {
			if picked[i] || c == 0 {
				continue
			}
			if best < 0 || c > counts[best] {
				best = i
			}
		}
		if best < 0 {
			break
		}
		picked[best] = true
		keep = append(keep, best)
	}
	out := keep[:0:0]
	for i := range counts {
		if picked[i] {
			out = append(out, i)
		}
	}
	return out
}
