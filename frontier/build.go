package frontier

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
)

// maxBucketShift bounds a CSR build bucket to 2^14 vertices: its degree
// counters (64 KiB) and, at the degrees of the benchmark graphs, its
// adjacency entries stay in a core's cache while the bucket is sorted.
const maxBucketShift = 14

// BuildUndirected builds an undirected CSR over n vertices from the edge
// list (src[i], dst[i]). Each edge is stored in both directions; self loops
// and duplicate edges are dropped, and every adjacency list is sorted. The
// result does not depend on the order of the input edges nor on the number
// of CPUs. It returns *EmptyGraphError when no edge remains, *TooLargeError
// when the graph does not fit the CSR's index types, and *VertexRangeError
// for an endpoint outside 0..n-1 (the first such edge in input order).
//
// The build runs on every CPU (GOMAXPROCS): the entries are first scattered
// into buckets of consecutive vertices, then each bucket is counted, sorted
// and deduplicated on its own, without atomic operations.
func BuildUndirected(name string, n int, src, dst []int32) (*CSR, error) {
	workers := workersFor(len(src), parallelGrain)
	if err := checkEdgeList(name, n, src, dst, workers); err != nil {
		return nil, err
	}
	return buildCSR(name, n, src, dst, workers, bucketShift(n, workers), nil)
}

// buildOwned is BuildUndirected for an edge list the caller gives up:
// edges holds src and dst (2*len(src) entries), and the build reuses its
// memory for the adjacency rows once it has read them.
func buildOwned(name string, n int, src, dst, edges []int32) (*CSR, error) {
	workers := workersFor(len(src), parallelGrain)
	if err := checkEdgeList(name, n, src, dst, workers); err != nil {
		return nil, err
	}
	return buildCSR(name, n, src, dst, workers, bucketShift(n, workers), edges)
}

// checkEdgeList validates BuildUndirected's input before anything is
// allocated for the graph.
func checkEdgeList(name string, n int, src, dst []int32, workers int) error {
	if len(src) != len(dst) {
		return fmt.Errorf("graph %q: %d sources but %d destinations. Fix: pass edge endpoint slices of equal length", name, len(src), len(dst))
	}
	if n <= 0 {
		return &EmptyGraphError{Source: name, Vertices: 0}
	}
	if n > MaxGraphVertices {
		return &TooLargeError{Source: name, Field: "vertices", Value: uint64(n), Limit: MaxGraphVertices}
	}
	if 2*uint64(len(src)) > MaxGraphEdgeEntries {
		return &TooLargeError{Source: name, Field: "edge entries", Value: 2 * uint64(len(src)), Limit: MaxGraphEdgeEntries}
	}
	if i := firstOutOfRange(n, src, dst, workers); i >= 0 {
		v := src[i]
		if uint32(v) < uint32(n) {
			v = dst[i]
		}
		return &VertexRangeError{Source: name, Edge: i, Vertex: int64(v), NumVertices: n}
	}
	return nil
}

// firstOutOfRange returns the first index i at which src[i] or dst[i] is
// not in 0..n-1, or -1. Each worker scans its own range; the first range
// with a bad edge holds the first bad edge.
func firstOutOfRange(n int, src, dst []int32, workers int) int {
	bad := make([]int, max(1, workers))
	splitRun(len(src), workers, func(w, lo, hi int) {
		bad[w] = -1
		for i := lo; i < hi; i++ {
			// A negative id becomes a uint32 of at least 2^31 > n.
			if uint32(src[i]) >= uint32(n) || uint32(dst[i]) >= uint32(n) {
				bad[w] = i
				return
			}
		}
	})
	for _, b := range bad[:max(1, min(workers, len(src)))] {
		if b >= 0 {
			return b
		}
	}
	return -1
}

// bucketShift picks log2 of the vertices per build bucket: at most
// maxBucketShift, and small enough that every worker gets a few buckets.
func bucketShift(n, workers int) uint {
	per := n / max(1, 4*workers)
	return uint(min(maxBucketShift, max(6, bits.Len(uint(per))-1)))
}

// csrBuild holds the arrays of one bucketed CSR build.
type csrBuild struct {
	n, workers, buckets int
	shift               uint
	// idBits is the bit length of the largest vertex id.
	idBits int
	// start[k] is where bucket k's entries begin in tgt, loc and rows.
	start []int
	// tgt and loc hold each entry's target and its source minus the first
	// vertex of its bucket, bucket by bucket.
	tgt []int32
	loc []uint16
	// rows holds the targets row by row: bucket k's deduplicated rows are
	// first compacted to the front of its range, then moved to their final
	// place.
	rows []int32
	// offsets holds each vertex's deduplicated degree until finish turns
	// it into the CSR offsets.
	offsets []uint64
	// kept is each bucket's entry count after deduplication.
	kept []int
	// wideFrom is the most entries a bucket counts with uint32 counters;
	// a larger bucket (a multigraph's repeated edges) counts with uint64.
	wideFrom int
}

// buildCSR builds the CSR of a validated edge list with the given number
// of workers and 2^shift vertices per bucket (shift at most 16); the result
// depends on neither. reuse, when it holds at least 2*len(src) entries, is
// memory the build may overwrite once it has read src and dst (they may
// lie inside it); otherwise the build allocates its own.
func buildCSR(name string, n int, src, dst []int32, workers int, shift uint, reuse []int32) (*CSR, error) {
	return newCSRBuild(n, workers, shift).build(name, src, dst, reuse)
}

// newCSRBuild returns the build of a CSR over n vertices with the given
// number of workers and 2^shift vertices per bucket.
func newCSRBuild(n, workers int, shift uint) *csrBuild {
	return &csrBuild{n: n, workers: max(1, workers), shift: shift, buckets: (n-1)>>shift + 1, wideFrom: math.MaxUint32}
}

// build is buildCSR's work on b.
func (b *csrBuild) build(name string, src, dst, reuse []int32) (*CSR, error) {
	total := b.scatter(src, dst)
	if total == 0 {
		return nil, &EmptyGraphError{Source: name, Vertices: b.n}
	}
	if len(reuse) >= total {
		b.rows = reuse[:total]
	} else {
		b.rows = make([]int32, total)
	}
	b.sortBuckets()
	return &CSR{Name: name, Offsets: b.offsets, Targets: b.finish()}, nil
}

// scatter counts each worker's entries per bucket, then writes them into
// tgt and loc, bucket by bucket (worker by worker within a bucket). Self
// loops are dropped. It returns the number of entries.
func (b *csrBuild) scatter(src, dst []int32) int {
	nb, shift := b.buckets, b.shift
	workers := max(1, min(b.workers, len(src)))
	cursor := make([]int, workers*nb)
	splitRun(len(src), workers, func(w, lo, hi int) {
		count := cursor[w*nb : (w+1)*nb]
		for i := lo; i < hi; i++ {
			if u, v := src[i], dst[i]; u != v {
				count[uint32(u)>>shift]++
				count[uint32(v)>>shift]++
			}
		}
	})
	b.start = make([]int, nb+1)
	pos := 0
	for k := 0; k < nb; k++ {
		b.start[k] = pos
		for w := 0; w < workers; w++ {
			c := cursor[w*nb+k]
			cursor[w*nb+k] = pos
			pos += c
		}
	}
	b.start[nb] = pos
	if pos == 0 {
		return 0
	}
	b.tgt = make([]int32, pos)
	b.loc = make([]uint16, pos)
	mask := uint32(1)<<shift - 1
	splitRun(len(src), workers, func(w, lo, hi int) {
		cur := cursor[w*nb : (w+1)*nb]
		tgt, loc := b.tgt, b.loc
		for i := lo; i < hi; i++ {
			u, v := uint32(src[i]), uint32(dst[i])
			if u == v {
				continue
			}
			p := cur[u>>shift]
			tgt[p], loc[p] = int32(v), uint16(u&mask)
			cur[u>>shift] = p + 1
			p = cur[v>>shift]
			tgt[p], loc[p] = int32(u), uint16(v&mask)
			cur[v>>shift] = p + 1
		}
	})
	return pos
}

// sortBuckets turns every bucket's entries into sorted, deduplicated rows
// at the front of its range of rows, recording each vertex's degree.
func (b *csrBuild) sortBuckets() {
	b.offsets = make([]uint64, b.n+1)
	b.kept = make([]int, b.buckets)
	b.idBits = bits.Len(uint(b.n - 1))
	scratch := make([][]uint32, b.workers)
	wide := make([][]uint64, b.workers)
	radix := make([]radixScratch, b.workers)
	dynamicRun(b.buckets, b.workers, func(w, k int) {
		if b.start[k+1]-b.start[k] > b.wideFrom {
			// A bucket of more than 2^32-1 entries (a multigraph's
			// repeated edges) counts its rows in 64 bits.
			if wide[w] == nil {
				wide[w] = make([]uint64, 1<<b.shift+1)
			}
			sortBucket(b, k, wide[w], &radix[w])
			return
		}
		if scratch[w] == nil {
			scratch[w] = make([]uint32, 1<<b.shift+1)
		}
		sortBucket(b, k, scratch[w], &radix[w])
	})
	b.tgt, b.loc = nil, nil
}

// sortBucket sorts bucket k of b, using cnt (1<<shift + 1 counters, wide
// enough for the bucket's entries) and radix as scratch: a counting sort by
// source, then a sort of each row.
func sortBucket[C uint32 | uint64](b *csrBuild, k int, cnt []C, radix *radixScratch) {
	v0 := k << b.shift
	width := min(1<<b.shift, b.n-v0)
	cnt = cnt[:width+1]
	clear(cnt)
	lo, hi := b.start[k], b.start[k+1]
	tgt, loc, rows := b.tgt[lo:hi], b.loc[lo:hi], b.rows[lo:hi]
	for _, x := range loc {
		cnt[x+1]++
	}
	for x := 1; x <= width; x++ {
		cnt[x] += cnt[x-1]
	}
	// cnt[x] is where row x begins; after the scatter it is where it ends.
	for i, x := range loc {
		rows[cnt[x]] = tgt[i]
		cnt[x]++
	}
	kept, begin := 0, C(0)
	for x := 0; x < width; x++ {
		end := cnt[x]
		row := rows[begin:end]
		if len(row) > 1 {
			sortRow(row, radix, b.idBits)
			row = slices.Compact(row)
		}
		// kept <= begin: the copy moves the row forward or not at all.
		copy(rows[kept:], row)
		b.offsets[v0+x] = uint64(len(row))
		kept += len(row)
		begin = end
	}
	b.kept[k] = kept
}

// finish turns the degrees into CSR offsets and moves every bucket's rows
// to their final place, and returns the targets.
func (b *csrBuild) finish() []int32 {
	base := make([]int, b.buckets+1)
	for k, c := range b.kept {
		base[k+1] = base[k] + c
	}
	dynamicRun(b.buckets, b.workers, func(_, k int) {
		to := uint64(base[k])
		for v := k << b.shift; v < min((k+1)<<b.shift, b.n); v++ {
			d := b.offsets[v]
			b.offsets[v] = to
			to += d
		}
	})
	kept := base[b.buckets]
	b.offsets[b.n] = uint64(kept)
	// base[k] <= start[k], so moving the buckets in order never overwrites
	// a bucket that has not moved yet.
	for k := 0; k < b.buckets; k++ {
		copy(b.rows[base[k]:base[k+1]], b.rows[b.start[k]:b.start[k]+b.kept[k]])
	}
	targets := b.rows[:kept]
	if cap(targets)-kept > kept/4 {
		// Most of the memory would be wasted: keep a tight copy instead.
		targets = slices.Clone(targets)
	}
	b.rows = nil
	return targets
}

// radixRowMin is the row length from which a radix sort beats a
// comparison sort.
const radixRowMin = 256

// radixScratch is one worker's buffer for radix-sorting rows.
type radixScratch struct{ buf []int32 }

// sortRow sorts a row of vertex ids below 2^idBits: a comparison sort for
// short rows, an LSD radix sort with 8-bit digits for long ones (the hubs
// of skewed graphs, which hold most entries).
func sortRow(row []int32, r *radixScratch, idBits int) {
	if len(row) < radixRowMin {
		slices.Sort(row)
		return
	}
	if cap(r.buf) < len(row) {
		r.buf = make([]int32, len(row))
	}
	from, to := row, r.buf[:len(row)]
	for shift := 0; shift < idBits; shift += 8 {
		var count [257]int
		for _, v := range from {
			count[(v>>shift)&0xff+1]++
		}
		for d := 1; d < len(count); d++ {
			count[d] += count[d-1]
		}
		for _, v := range from {
			d := (v >> shift) & 0xff
			to[count[d]] = v
			count[d]++
		}
		from, to = to, from
	}
	if &from[0] != &row[0] {
		copy(row, from)
	}
}
