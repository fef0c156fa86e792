package megakernel

import "math/bits"

// csrSmall is the dependency count below which buildCSR fills the arrays
// directly; above it, a cache-friendly two-level counting sort is used.
const csrSmall = 1 << 15

// buildCSR builds a compressed adjacency of deps over n waves: for each
// source wave s (Before, or After when reverse is set), adj[off[s]:off[s+1]]
// lists the other endpoints in dependency input order. deps must already be
// validated.
//
// Large inputs are first partitioned by the high bits of the source id into
// at most 256 buckets (sequential write streams), and each bucket is then
// counted and filled within a window of sources small enough to stay in
// cache. Both passes are stable, so the result equals the direct counting
// sort; the scattered random accesses of the direct fill over a large graph
// are what dominates its run time.
func buildCSR(n int, deps []Dependency, reverse bool) (off, adj []int32) {
	off = make([]int32, n+1)
	adj = make([]int32, len(deps))
	ends := func(d Dependency) (int, int) {
		if reverse {
			return d.After, d.Before
		}
		return d.Before, d.After
	}
	if len(deps) < csrSmall || n < 1<<12 {
		for _, d := range deps {
			s, _ := ends(d)
			off[s+1]++
		}
		for i := 1; i <= n; i++ {
			off[i] += off[i-1]
		}
		for _, d := range deps {
			s, t := ends(d)
			adj[off[s]] = int32(t)
			off[s]++
		}
		for i := n; i > 0; i-- {
			off[i] = off[i-1]
		}
		off[0] = 0
		return off, adj
	}
	shift := uint(max(bits.Len(uint(n))-8, 0))
	nb := (n >> shift) + 1
	bstart := make([]int, nb+1)
	for _, d := range deps {
		s, _ := ends(d)
		bstart[(s>>shift)+1]++
	}
	for i := 1; i <= nb; i++ {
		bstart[i] += bstart[i-1]
	}
	part := make([]uint64, len(deps))
	cur := make([]int, nb)
	copy(cur, bstart[:nb])
	for _, d := range deps {
		s, t := ends(d)
		b := s >> shift
		part[cur[b]] = uint64(s)<<32 | uint64(uint32(t))
		cur[b]++
	}
	// Per bucket: count into off[s+1], prefix within the bucket (the buckets
	// are in source order, so a running base gives global offsets), fill.
	for b := 0; b < nb; b++ {
		lo := b << shift
		hi := min((b+1)<<shift, n)
		if lo >= n {
			break
		}
		seg := part[bstart[b]:bstart[b+1]]
		for _, p := range seg {
			off[int(p>>32)+1]++
		}
		base := int32(bstart[b])
		off[lo] = base
		for s := lo + 1; s <= hi; s++ {
			off[s] += off[s-1]
		}
		// off[lo..hi-1] are the starts of the window; use them as cursors,
		// then restore (off[hi] already holds the window's end).
		for _, p := range seg {
			s := int(p >> 32)
			adj[off[s]] = int32(uint32(p))
			off[s]++
		}
		for s := hi - 1; s > lo; s-- {
			off[s] = off[s-1]
		}
		off[lo] = base
	}
	return off, adj
}
