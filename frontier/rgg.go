package frontier

import (
	"fmt"
	"math"
)

// DefaultRGGDegree is the expected average degree of a random geometric
// graph when the spec gives none.
const DefaultRGGDegree = 8

// MaxRGGDegree is the largest expected average degree RandomGeometric
// accepts.
const MaxRGGDegree = 1024

// rggChunk is the number of points one deterministic random stream draws.
const rggChunk = 1 << 16

// RandomGeometric generates a random geometric graph: n points drawn
// uniformly in the unit square, and an edge between every two points closer
// than the radius r at which the expected average degree is degree. The
// radius accounts for the square's border: a point has (n-1) x A(r)
// neighbours on average, with A(r) = pi r^2 - 8/3 r^3 + 1/2 r^4 the chance
// that two uniform points lie closer than r.
//
// The square is cut into a grid of cells at least r wide, so the build is
// O(n) and runs on every CPU; vertices are numbered cell by cell (cells in
// row-major order, points in a cell in the order they were drawn), so
// neighbours have close ids. The result depends only on (n, degree, seed),
// not on the number of CPUs. Vertices may be isolated.
func RandomGeometric(n, degree int, seed uint64) (*CSR, error) {
	name := fmt.Sprintf("rgg-%d-%d", n, degree)
	if n < 2 {
		return nil, &GeneratorError{Generator: "rgg", Field: "n", Value: int64(n), Msg: "is below 2 (an edge needs two points). Fix: pass at least 2 points"}
	}
	if n > MaxGraphVertices {
		return nil, &TooLargeError{Source: name, Field: "vertices", Value: uint64(n), Limit: MaxGraphVertices}
	}
	if degree < 1 || degree > MaxRGGDegree || degree > (n-1)/2 {
		return nil, &GeneratorError{Generator: "rgg", Field: "degree", Value: int64(degree),
			Msg: fmt.Sprintf("is outside 1..%d for %d points. Fix: ask for an average degree between 1 and half the point count (at most %d)", min(MaxRGGDegree, (n-1)/2), n, MaxRGGDegree)}
	}
	if e := uint64(n) * uint64(degree); e > MaxGraphEdgeEntries/2 {
		return nil, &TooLargeError{Source: name, Field: "expected edge entries", Value: e, Limit: MaxGraphEdgeEntries / 2}
	}
	pts := rggPoints(n, seed)
	g, _, err := pts.graph(rggRadius(n, degree))
	if err != nil {
		return nil, err
	}
	g.Name = name
	return g, nil
}

// rggArea is the chance that two points drawn uniformly in the unit square
// lie closer than r, for 0 <= r <= 1.
func rggArea(r float64) float64 {
	return math.Pi*r*r - 8.0/3.0*r*r*r + 0.5*r*r*r*r
}

// rggRadius returns the radius at which n uniform points in the unit
// square have degree neighbours on average: the root of
// (n-1) rggArea(r) = degree, found by bisection (rggArea increases on
// [0, 1]). degree <= (n-1)/2 keeps the root below 1.
func rggRadius(n, degree int) float64 {
	want := float64(degree) / float64(n-1)
	lo, hi := 0.0, 1.0
	for i := 0; i < 100; i++ {
		mid := (lo + hi) / 2
		if rggArea(mid) < want {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// rggPointSet holds the points of a random geometric graph in the order
// they were drawn.
type rggPointSet struct {
	x, y []float64
}

// rggPoints draws n points uniformly in the unit square, chunk by chunk,
// each chunk from its own SplitMix64 stream, so the points do not depend
// on the number of CPUs.
func rggPoints(n int, seed uint64) rggPointSet {
	p := rggPointSet{x: make([]float64, n), y: make([]float64, n)}
	chunks := (n + rggChunk - 1) / rggChunk
	dynamicRun(chunks, workersFor(n, parallelGrain), func(_, c int) {
		s := splitmix{state: seed ^ (uint64(c)+1)*0xd1b54a32d192ed03}
		for i := c * rggChunk; i < min((c+1)*rggChunk, n); i++ {
			p.x[i] = unitFloat(s.next())
			p.y[i] = unitFloat(s.next())
		}
	})
	return p
}

// unitFloat maps a random word to a float64 in [0, 1) with 53 random bits.
func unitFloat(r uint64) float64 { return float64(r>>11) * 0x1p-53 }

// rggCells returns the cells per side of the cell grid for radius r: cells
// at least r wide (with a margin for rounding, so two points closer than r
// always lie in the same or adjacent cells), and no more cells than points.
func rggCells(n int, r float64) int {
	k := int(math.Floor(1 / r))
	for k > 1 && float64(k)*r > 1-1e-9 {
		k--
	}
	return max(1, min(k, int(math.Sqrt(float64(n)))))
}

// graph builds the CSR of the points with an edge between every two points
// closer than r, and returns with it which point each vertex is (its index
// in the order drawn). Vertex ids follow the cell grid (see RandomGeometric);
// each row lists its neighbours in ascending order, because the 3 x 3 cells
// around a point are visited in row-major order and every cell holds a
// contiguous, ascending range of ids.
func (p rggPointSet) graph(r float64) (*CSR, []int32, error) {
	n := len(p.x)
	k := rggCells(n, r)
	workers := workersFor(n, parallelGrain)
	cellOf := make([]uint32, n)
	splitRun(n, workers, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			cx, cy := rggCell(p.x[i], k), rggCell(p.y[i], k)
			cellOf[i] = uint32(cy*k + cx)
		}
	})
	order, start := countingOrder(cellOf, k*k, workers)
	cellOf = nil
	g := rggGrid{k: k, r2: r * r, start: start, x: make([]float64, n), y: make([]float64, n)}
	splitRun(n, workers, func(_, lo, hi int) {
		for j := lo; j < hi; j++ {
			g.x[j], g.y[j] = p.x[order[j]], p.y[order[j]]
		}
	})
	offsets := make([]uint64, n+1)
	splitRun(n, workers, func(_, lo, hi int) {
		for v := lo; v < hi; v++ {
			offsets[v+1] = uint64(g.neighbors(v, nil))
		}
	})
	// A degree is below n < 2^31 and the sum is checked after each, so it
	// never wraps.
	var sum uint64
	for v := 1; v <= n; v++ {
		sum += offsets[v]
		if sum > MaxGraphEdgeEntries {
			return nil, nil, &TooLargeError{Source: "rgg", Field: "edge entries", Value: sum, Limit: MaxGraphEdgeEntries}
		}
		offsets[v] = sum
	}
	if sum == 0 {
		return nil, nil, &EmptyGraphError{Source: "rgg", Vertices: n}
	}
	targets := make([]int32, sum)
	splitRun(n, workers, func(_, lo, hi int) {
		for v := lo; v < hi; v++ {
			g.neighbors(v, targets[offsets[v]:offsets[v+1]])
		}
	})
	return &CSR{Offsets: offsets, Targets: targets}, order, nil
}

// rggCell returns the cell column (or row) of coordinate c on a grid of k
// cells per side.
func rggCell(c float64, k int) int { return min(int(c*float64(k)), k-1) }

// rggGrid holds the points renumbered cell by cell: x[v], y[v] for vertex
// v, and the vertices of cell c are start[c]..start[c+1]-1.
type rggGrid struct {
	k     int
	r2    float64
	start []uint32
	x, y  []float64
}

// neighbors counts the vertices closer than r to v and, when out is not
// nil, writes them to out in ascending order.
func (g *rggGrid) neighbors(v int, out []int32) int {
	cx, cy := rggCell(g.x[v], g.k), rggCell(g.y[v], g.k)
	c0, c1 := max(cx-1, 0), min(cx+1, g.k-1)
	found := 0
	for row := max(cy-1, 0); row <= min(cy+1, g.k-1); row++ {
		lo, hi := g.start[row*g.k+c0], g.start[row*g.k+c1+1]
		for w := lo; w < hi; w++ {
			if int(w) == v {
				continue
			}
			dx, dy := g.x[w]-g.x[v], g.y[w]-g.y[v]
			// The conversions keep the products from being fused into
			// one rounding, so the test is the same on every platform
			// and symmetric in v and w.
			if float64(dx*dx)+float64(dy*dy) < g.r2 {
				if out != nil {
					out[found] = int32(w)
				}
				found++
			}
		}
	}
	return found
}

// countingOrder sorts the indices 0..len(keys)-1 by key (keys below
// nkeys), stably, and returns them with start, where the indices of key c
// are order[start[c]:start[c+1]]. Keys are cut into bands of consecutive
// keys: each worker scatters its range of indices by band, then each band
// is counting-sorted on its own.
func countingOrder(keys []uint32, nkeys, workers int) (order []int32, start []uint32) {
	n := len(keys)
	bands := max(1, min(4*workers, nkeys))
	perBand := (nkeys + bands - 1) / bands
	bands = (nkeys + perBand - 1) / perBand
	byBand := make([]int32, n)
	bandStart := scatterByBand(keys, byBand, bands, perBand, workers)
	order = make([]int32, n)
	start = make([]uint32, nkeys+1)
	dynamicRun(bands, workers, func(_, b int) {
		k0, k1 := b*perBand, min((b+1)*perBand, nkeys)
		lo, hi := bandStart[b], bandStart[b+1]
		cnt := make([]uint32, k1-k0+1)
		for _, i := range byBand[lo:hi] {
			cnt[keys[i]-uint32(k0)+1]++
		}
		cnt[0] = uint32(lo)
		for c := 1; c < len(cnt); c++ {
			cnt[c] += cnt[c-1]
		}
		copy(start[k0:k1], cnt)
		for _, i := range byBand[lo:hi] {
			c := keys[i] - uint32(k0)
			order[cnt[c]] = i
			cnt[c]++
		}
	})
	start[nkeys] = uint32(n)
	return order, start
}

// scatterByBand writes the indices of keys into out grouped by band (key /
// perBand), stably: each worker counts its range of indices per band, and
// then writes them after the indices of the lower bands and of the earlier
// workers. It returns where each band begins in out (bands+1 entries).
func scatterByBand(keys []uint32, out []int32, bands, perBand, workers int) []int {
	n := len(keys)
	workers = max(1, min(workers, n))
	cursor := make([]int, workers*bands)
	splitRun(n, workers, func(w, lo, hi int) {
		count := cursor[w*bands : (w+1)*bands]
		for _, c := range keys[lo:hi] {
			count[int(c)/perBand]++
		}
	})
	bandStart := make([]int, bands+1)
	pos := 0
	for b := 0; b < bands; b++ {
		bandStart[b] = pos
		for w := 0; w < workers; w++ {
			c := cursor[w*bands+b]
			cursor[w*bands+b] = pos
			pos += c
		}
	}
	bandStart[bands] = pos
	splitRun(n, workers, func(w, lo, hi int) {
		cur := cursor[w*bands : (w+1)*bands]
		for i := lo; i < hi; i++ {
			b := int(keys[i]) / perBand
			out[cur[b]] = int32(i)
			cur[b]++
		}
	})
	return bandStart
}
