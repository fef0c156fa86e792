package frontier

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
)

// Graph500 Kronecker initiator probabilities (D = 1 - A - B - C = 0.05).
const (
	KroneckerA = 0.57
	KroneckerB = 0.19
	KroneckerC = 0.19
)

// DefaultEdgeFactor is Graph500's edge factor: 16 generated edges per vertex.
const DefaultEdgeFactor = 16

// MaxKroneckerScale is the largest scale Kronecker accepts at edge factor 16:
// 2 x 16 x 2^29 adjacency entries are MaxGraphEdgeEntries. A smaller edge
// factor allows a larger scale, up to maxKroneckerScaleAny; see
// MaxKroneckerScaleFor.
const MaxKroneckerScale = 29

// maxKroneckerScaleAny is the largest scale Kronecker accepts at any edge
// factor: 2^30 is the largest power of two of vertices within
// MaxGraphVertices. It holds at an edge factor of at most 8, whose
// 2 x 8 x 2^30 adjacency entries are MaxGraphEdgeEntries.
const maxKroneckerScaleAny = 30

// maxKroneckerEdgeFactor is the largest edge factor Kronecker accepts.
const maxKroneckerEdgeFactor = 1024

// kronChunk is the number of edges one deterministic random stream makes.
const kronChunk = 1 << 16

// kronBatch is the number of edges drawn before their labels are looked up.
const kronBatch = 256

// GeneratorError reports an invalid generator parameter.
type GeneratorError struct {
	Generator string
	Field     string
	Value     int64
	Msg       string
}

func (e *GeneratorError) Error() string {
	return fmt.Sprintf("%s generator: %s=%d %s", e.Generator, e.Field, e.Value, e.Msg)
}

// Kronecker generates a Graph500 Kronecker (R-MAT) graph with 2^scale
// vertices and edgeFactor x 2^scale generated edges, initiator A=0.57,
// B=C=0.19, D=0.05, as the Graph500 reference generator does: each edge
// picks one quadrant per bit, then vertex labels are permuted at random. The
// graph is symmetrized, and self loops and duplicate edges are dropped, so
// it has fewer than 2 x edgeFactor x 2^scale adjacency entries. Vertices may
// be isolated. The result depends only on (scale, edgeFactor, seed), not on
// the number of CPUs.
func Kronecker(scale, edgeFactor int, seed uint64) (*CSR, error) {
	if err := CheckKronecker(scale, edgeFactor); err != nil {
		return nil, err
	}
	n := 1 << scale
	m := uint64(edgeFactor) << scale
	edges := kroneckerEdges(scale, edgeFactor, seed)
	return buildOwned(KroneckerName(scale), n, edges[:m], edges[m:], edges)
}

// CheckKronecker returns the error Kronecker refuses (scale, edgeFactor)
// with, before it allocates anything: a *GeneratorError for a scale outside
// 1..30 or an edge factor outside 1..1024, a *TooLargeError when the
// adjacency entries, 2 x edgeFactor x 2^scale, pass MaxGraphEdgeEntries
// (a scale above MaxKroneckerScaleFor(edgeFactor)). Each error's fix names
// the largest scale valid at the edge factor. It returns nil for the
// parameters Kronecker accepts.
func CheckKronecker(scale, edgeFactor int) error {
	if scale < 1 || scale > maxKroneckerScaleAny {
		return &GeneratorError{Generator: "kronecker", Field: "scale", Value: int64(scale),
			Msg: fmt.Sprintf("is outside 1..%d. Fix: %s", maxKroneckerScaleAny, kroneckerScaleFix(edgeFactor))}
	}
	if edgeFactor < 1 || edgeFactor > maxKroneckerEdgeFactor {
		return &GeneratorError{Generator: "kronecker", Field: "edgefactor", Value: int64(edgeFactor), Msg: fmt.Sprintf("is outside 1..%d. Fix: use Graph500's %d", maxKroneckerEdgeFactor, DefaultEdgeFactor)}
	}
	if m := uint64(edgeFactor) << scale; 2*m > MaxGraphEdgeEntries {
		return &TooLargeError{Source: KroneckerName(scale), Field: "edge entries", Value: 2 * m, Limit: MaxGraphEdgeEntries,
			Fix: fmt.Sprintf("pass a scale of at most %d at edge factor %d, or an edge factor of at most %d at scale %d: the 2 x edge factor x 2^scale adjacency entries must be at most %d",
				MaxKroneckerScaleFor(edgeFactor), edgeFactor, maxKroneckerEdgeFactorFor(scale), scale, uint64(MaxGraphEdgeEntries))}
	}
	return nil
}

// MaxKroneckerScaleFor returns the largest scale Kronecker accepts at
// edgeFactor: the largest whose 2 x edgeFactor x 2^scale adjacency entries
// are within MaxGraphEdgeEntries, and at most 30 (2^30 vertices, the most
// of a power of two within MaxGraphVertices). It is MaxKroneckerScale, 29,
// at Graph500's 16, 30 at an edge factor of at most 8, and 23 at 1024. It
// returns 0 for an edge factor outside 1..1024, which Kronecker refuses.
func MaxKroneckerScaleFor(edgeFactor int) int {
	if edgeFactor < 1 || edgeFactor > maxKroneckerEdgeFactor {
		return 0
	}
	// 2^scale <= MaxGraphEdgeEntries / (2 x edgeFactor), rounded down.
	most := uint64(MaxGraphEdgeEntries) / (2 * uint64(edgeFactor))
	return min(bits.Len64(most)-1, maxKroneckerScaleAny)
}

// maxKroneckerEdgeFactorFor returns the largest edge factor Kronecker
// accepts at scale (in 1..30): the largest whose 2 x edgeFactor x 2^scale
// adjacency entries are within MaxGraphEdgeEntries, and at most 1024.
func maxKroneckerEdgeFactorFor(scale int) int {
	return int(min(uint64(MaxGraphEdgeEntries)>>(scale+1), maxKroneckerEdgeFactor))
}

// kroneckerLimits names the limits that bound a Kronecker graph's scale.
func kroneckerLimits() string {
	return fmt.Sprintf("a CSR holds at most 2^%d vertices of a power of two and %d adjacency entries (2 x edge factor x 2^scale)",
		maxKroneckerScaleAny, uint64(MaxGraphEdgeEntries))
}

// kroneckerScaleFix is the fix of a scale outside 1..30: the scales valid
// at edgeFactor, or, for an edge factor Kronecker refuses too, at any edge
// factor and at Graph500's.
func kroneckerScaleFix(edgeFactor int) string {
	if most := MaxKroneckerScaleFor(edgeFactor); most > 0 {
		return fmt.Sprintf("pass a scale between 1 and %d, the largest at edge factor %d: %s", most, edgeFactor, kroneckerLimits())
	}
	return fmt.Sprintf("pass a scale between 1 and %d, at most %d at Graph500's edge factor %d and %d at an edge factor of at most %d: %s",
		maxKroneckerScaleAny, MaxKroneckerScale, DefaultEdgeFactor, maxKroneckerScaleAny, maxKroneckerEdgeFactorFor(maxKroneckerScaleAny), kroneckerLimits())
}

// KroneckerName is the name of the Kronecker graph of a scale, "kron-SCALE".
func KroneckerName(scale int) string { return fmt.Sprintf("kron-%d", scale) }

// kroneckerEdges draws the edgeFactor x 2^scale edges of a Kronecker graph
// with permuted labels: sources in the first half of the result,
// destinations in the second. Edges are drawn in chunks of kronChunk, each
// from its own SplitMix64 stream, so they do not depend on the number of
// CPUs.
func kroneckerEdges(scale, edgeFactor int, seed uint64) []int32 {
	m := uint64(edgeFactor) << scale
	edges := make([]int32, 2*m)
	src, dst := edges[:m], edges[m:]
	perm := KroneckerPermutation(scale, seed)
	q := kronQuadrants{scale: scale}
	q.tAB, q.tA, q.tC = KroneckerThresholds()
	chunks := int((m + kronChunk - 1) / kronChunk)
	dynamicRun(chunks, workersFor(int(m), parallelGrain), func(_, c int) {
		s := splitmix{state: seed ^ (uint64(c)+1)*0xbf58476d1ce4e5b9}
		end := min(uint64(c+1)*kronChunk, m)
		// Draw a batch of endpoints, then look their labels up: the
		// lookups, cache misses into a large permutation, are then
		// independent of one another and overlap.
		var is, js [kronBatch]uint32
		for e := uint64(c) * kronChunk; e < end; e += kronBatch {
			k := min(kronBatch, end-e)
			for x := uint64(0); x < k; x++ {
				is[x], js[x] = q.edge(&s)
			}
			for x := uint64(0); x < k; x++ {
				src[e+x] = perm[is[x]]
				dst[e+x] = perm[js[x]]
			}
		}
	})
	return edges
}

// KroneckerChunkEdges is the number of edges Kronecker draws from one
// SplitMix64 stream: edge e is the (e mod KroneckerChunkEdges)-th edge of
// stream e / KroneckerChunkEdges, whose state starts at
// seed ^ (stream+1) * 0xbf58476d1ce4e5b9 and which draws one 64-bit word per
// bit of an edge (scale words an edge, bit 0 first).
const KroneckerChunkEdges = kronChunk

// KroneckerThresholds returns the uint32 thresholds Kronecker draws an
// edge's quadrants against, one 64-bit word per bit: the row bit is 1 when
// the word's low 32 bits are at least tAB (row half C+D, against A+B);
// the column bit is 1 when its high 32 bits are at least tA in the row
// half A+B, or at least tC in the row half C+D.
func KroneckerThresholds() (tAB, tA, tC uint32) {
	ab := KroneckerA + KroneckerB
	return threshold32(ab), threshold32(KroneckerA / ab), threshold32(KroneckerC / (1 - ab))
}

// KroneckerPermutation returns the vertex labels of Kronecker(scale, _,
// seed): the generated vertex i is labelled perm[i]. It is the identity
// of 0..2^scale-1 shuffled by math/rand/v2's Rand.Shuffle over the PCG
// that KroneckerPermutationPCG seeds. scale must be in 1..30.
func KroneckerPermutation(scale int, seed uint64) []int32 {
	return permutation(1<<scale, seed^kronPermSeed)
}

// KroneckerPermutationPCG returns the seeds of the math/rand/v2 PCG
// (rand.NewPCG(seed1, seed2), whose state they are) whose Shuffle draws
// KroneckerPermutation's labels for seed.
func KroneckerPermutationPCG(seed uint64) (seed1, seed2 uint64) {
	return seed ^ kronPermSeed, permutationStream
}

// kronPermSeed is mixed into a Kronecker seed for its label permutation.
const kronPermSeed = 0x9e3779b97f4a7c15

// permutationStream is the second seed of permutation's PCG.
const permutationStream = 0x5851f42d4c957f2d

// kronQuadrants draws Kronecker edges: per bit, the low 32 bits of one
// random word pick the row half (A+B against C+D) and the high 32 bits the
// column half, against the threshold of the row half drawn.
type kronQuadrants struct {
	scale       int
	tAB, tA, tC uint32
}

// edge draws one edge's endpoints before the label permutation. The
// comparisons are computed arithmetically (a borrow out of a 64-bit
// subtraction) rather than by branches, which the random quadrants would
// mispredict half the time; the result equals u >= t for each draw.
func (q *kronQuadrants) edge(s *splitmix) (i, j uint32) {
	tAB, tA, dC := uint64(q.tAB), uint64(q.tA), uint64(q.tC)-uint64(q.tA)
	for bit := 0; bit < q.scale; bit++ {
		r := s.next()
		ii := 1 - (uint64(uint32(r))-tAB)>>63
		t := tA + ii*dC
		jj := 1 - ((r>>32)-t)>>63
		i |= uint32(ii) << bit
		j |= uint32(jj) << bit
	}
	return i, j
}

// threshold32 maps a probability p in [0,1] to the uint32 t such that a
// uniform uint32 u satisfies u >= t with probability 1-p.
func threshold32(p float64) uint32 {
	v := p * (1 << 32)
	if v >= 1<<32-1 {
		return 1<<32 - 1
	}
	return uint32(v)
}

// splitmix is the SplitMix64 generator: tiny, fast and good enough to draw
// Kronecker quadrants; one stream per chunk keeps generation deterministic
// under any parallel schedule.
type splitmix struct{ state uint64 }

func (s *splitmix) next() uint64 {
	s.state += 0x9e3779b97f4a7c15
	z := s.state
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// permutation returns a uniformly random permutation of 0..n-1 drawn from a
// PCG stream seeded by seed.
func permutation(n int, seed uint64) []int32 {
	p := make([]int32, n)
	for i := range p {
		p[i] = int32(i)
	}
	r := rand.New(rand.NewPCG(seed, permutationStream))
	r.Shuffle(n, func(i, j int) { p[i], p[j] = p[j], p[i] })
	return p
}

// Grid generates the n x n 2D grid with 4-neighbour connectivity: vertex
// (r, c) has id r*n+c. Its diameter is 2(n-1), so BFS from a corner runs
// 2n-1 levels: the high-diameter case where per-level overhead dominates.
func Grid(n int) (*CSR, error) {
	if n < 2 {
		return nil, &GeneratorError{Generator: "grid", Field: "n", Value: int64(n), Msg: "is below 2 (a grid needs at least one edge). Fix: pass a side length of at least 2"}
	}
	if uint64(n)*uint64(n) > MaxGraphVertices || 4*uint64(n)*uint64(n) > MaxGraphEdgeEntries {
		return nil, &TooLargeError{Source: fmt.Sprintf("grid-%d", n), Field: "vertices", Value: uint64(n) * uint64(n), Limit: MaxGraphVertices}
	}
	nv := n * n
	offsets := make([]uint64, nv+1)
	entries := 4 * uint64(n) * uint64(n-1)
	targets := make([]int32, entries)
	// Degrees depend only on position, so the offsets of each row are known
	// in closed form and rows fill in parallel.
	rowStart := func(r int) uint64 {
		// Rows 0 and n-1 have 3n-2 entries, inner rows 4n-2.
		if r == 0 {
			return 0
		}
		return uint64(3*n-2) + uint64(r-1)*uint64(4*n-2)
	}
	splitRun(n, workersFor(n*n, parallelGrain), func(_, lo, hi int) {
		for r := lo; r < hi; r++ {
			pos := rowStart(r)
			for c := 0; c < n; c++ {
				v := r*n + c
				offsets[v] = pos
				if r > 0 {
					targets[pos] = int32(v - n)
					pos++
				}
				if c > 0 {
					targets[pos] = int32(v - 1)
					pos++
				}
				if c < n-1 {
					targets[pos] = int32(v + 1)
					pos++
				}
				if r < n-1 {
					targets[pos] = int32(v + n)
					pos++
				}
			}
		}
	})
	offsets[nv] = entries
	return &CSR{Name: fmt.Sprintf("grid-%d", n), Offsets: offsets, Targets: targets}, nil
}

// Grid3D generates the n x n x n 3D grid with 6-neighbour connectivity:
// vertex (z, r, c) has id (z*n+r)*n+c. Its diameter is 3(n-1); its levels
// from a corner grow and shrink as triangular numbers, so the per-level
// work varies far more than on the 2D grid.
func Grid3D(n int) (*CSR, error) {
	if n < 2 {
		return nil, &GeneratorError{Generator: "grid3d", Field: "n", Value: int64(n), Msg: "is below 2 (a grid needs at least one edge). Fix: pass a side length of at least 2"}
	}
	nv := uint64(n) * uint64(n) * uint64(n)
	if n > 1<<11 || nv > MaxGraphVertices || 6*nv > MaxGraphEdgeEntries {
		return nil, &TooLargeError{Source: fmt.Sprintf("grid3d-%d", n), Field: "vertices", Value: nv, Limit: MaxGraphVertices}
	}
	offsets := make([]uint64, nv+1)
	entries := 6 * uint64(n) * uint64(n) * uint64(n-1)
	targets := make([]int32, entries)
	plane := n * n
	// Each z-plane's offsets are known in closed form (the end planes have
	// one neighbour fewer per vertex), so planes fill in parallel.
	planeEntries := func(z int) uint64 {
		inner := uint64(4*n*(n-1)) + 2*uint64(plane)
		if z == 0 || z == n-1 {
			return inner - uint64(plane)
		}
		return inner
	}
	starts := make([]uint64, n+1)
	for z := range n {
		starts[z+1] = starts[z] + planeEntries(z)
	}
	splitRun(n, workersFor(int(nv), parallelGrain), func(_, lo, hi int) {
		for z := lo; z < hi; z++ {
			pos := starts[z]
			for r := range n {
				for c := range n {
					v := (z*n+r)*n + c
					offsets[v] = pos
					for _, u := range grid3DNeighbours(n, z, r, c, v) {
						if u >= 0 {
							targets[pos] = int32(u)
							pos++
						}
					}
				}
			}
		}
	})
	offsets[nv] = entries
	return &CSR{Name: fmt.Sprintf("grid3d-%d", n), Offsets: offsets, Targets: targets}, nil
}

// grid3DNeighbours returns v's six lattice neighbours in increasing order,
// -1 where v is on that face.
func grid3DNeighbours(n, z, r, c, v int) [6]int {
	plane := n * n
	nb := [6]int{-1, -1, -1, -1, -1, -1}
	if z > 0 {
		nb[0] = v - plane
	}
	if r > 0 {
		nb[1] = v - n
	}
	if c > 0 {
		nb[2] = v - 1
	}
	if c < n-1 {
		nb[3] = v + 1
	}
	if r < n-1 {
		nb[4] = v + n
	}
	if z < n-1 {
		nb[5] = v + plane
	}
	return nb
}

// Road generates a road-like planar graph on an n x n lattice: a random
// spanning tree of the lattice (so the graph is connected and, like a road
// network, has long detours), plus each remaining lattice edge with
// probability 0.3 and, in each lattice cell, one of its two diagonals with
// probability 0.05 (never both, so the embedding stays planar). The average
// degree is about 2.6, close to real road networks, and the diameter is
// well above the grid's. The result depends only on (n, seed).
func Road(n int, seed uint64) (*CSR, error) {
	if n < 2 {
		return nil, &GeneratorError{Generator: "road", Field: "n", Value: int64(n), Msg: "is below 2. Fix: pass a side length of at least 2"}
	}
	if uint64(n)*uint64(n) > 1<<28 {
		return nil, &TooLargeError{Source: fmt.Sprintf("road-%d", n), Field: "vertices", Value: uint64(n) * uint64(n), Limit: 1 << 28}
	}
	nv := n * n
	// Lattice edges: horizontal ones first (r, c)-(r, c+1), then vertical.
	nh := n * (n - 1)
	order := permutation(2*nh, seed)
	parent := make([]int32, nv)
	for i := range parent {
		parent[i] = int32(i)
	}
	find := func(x int32) int32 {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	ends := func(e int32) (int32, int32) {
		if int(e) < nh {
			r, c := int(e)/(n-1), int(e)%(n-1)
			v := int32(r*n + c)
			return v, v + 1
		}
		e -= int32(nh)
		v := e // vertical edge (r, c)-(r+1, c) has index r*n+c
		return v, v + int32(n)
	}
	rng := rand.New(rand.NewPCG(seed, 0xda942042e4dd58b5))
	src := make([]int32, 0, nv+nv/2)
	dst := make([]int32, 0, nv+nv/2)
	for _, e := range order {
		u, v := ends(e)
		ru, rv := find(u), find(v)
		if ru != rv {
			parent[ru] = rv
			src, dst = append(src, u), append(dst, v)
		} else if rng.Float64() < 0.3 {
			src, dst = append(src, u), append(dst, v)
		}
	}
	for r := 0; r+1 < n; r++ {
		for c := 0; c+1 < n; c++ {
			if rng.Float64() >= 0.05 {
				continue
			}
			v := int32(r*n + c)
			if rng.IntN(2) == 0 {
				src, dst = append(src, v), append(dst, v+int32(n)+1)
			} else {
				src, dst = append(src, v+1), append(dst, v+int32(n))
			}
		}
	}
	return BuildUndirected(fmt.Sprintf("road-%d", n), nv, src, dst)
}
