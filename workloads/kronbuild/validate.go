package kronbuild

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/internal/checked"
)

// validatePiece is the most vertices one goroutine of checkGraph checks at
// a time: small enough that the few rows of a Kronecker graph's hubs,
// millions of entries each, do not leave the other goroutines idle.
const validatePiece = 1 << 12

// SplitMix64's constants, which edgeHash mixes an edge's key with.
const (
	hashGamma = 0x9e3779b97f4a7c15
	hashMul1  = 0xbf58476d1ce4e5b9
	hashMul2  = 0x94d049bb133111eb
)

// checkGraph checks, without another build to compare it with, that g is
// a CSR frontier.Kronecker(scale, edgeFactor, seed) could return for some
// seed: 2^scale vertices and between 1 and 2 x edgeFactor x 2^scale
// adjacency entries (checkSize), frontier.CSR.Check's structure (offsets
// from 0, never decreasing, ending at len(Targets); every target a
// vertex), every row sorted ascending without a duplicate or a self loop,
// and every entry u->v matched by v->u. The structure is checked by Check
// and the rows by checkRows, both on every CPU: at scale 28 (8.6e9
// entries), going by their speed at scale 21, a few seconds on 16 cores
// where one would take most of a minute. The rows are checked
// validatePiece vertices at a time, so that a few hubs do not leave the
// other goroutines idle. Symmetry is checked by a signed sum of the
// edges' hashes (edgeTerm), which a symmetric graph brings to 0; only when
// it is not 0 are the entries' reverses searched for, to name the first
// entry without one. scale and edgeFactor are Check's.
func checkGraph(g *frontier.CSR, scale, edgeFactor int) error {
	if err := checkSize(g, scale, edgeFactor); err != nil {
		return err
	}
	if err := checkStructure(g); err != nil {
		return err
	}
	n := g.NumVertices()
	pieces := (n + validatePiece - 1) / validatePiece
	sums := make([]uint64, pieces)
	faults := make([]error, pieces)
	frontier.EachPiece(pieces, func(p int) {
		lo, hi := p*validatePiece, min((p+1)*validatePiece, n)
		sums[p], faults[p] = checkRows(g, lo, hi)
	})
	if err := cmp.Or(faults...); err != nil {
		return err
	}
	var sum uint64
	for _, s := range sums {
		sum += s
	}
	if sum != 0 {
		return firstAsymmetry(g, sum)
	}
	return nil
}

// malformed is the error of a graph that breaks one of checkGraph's rules.
func malformed(g *frontier.CSR, format string, args ...any) error {
	return fmt.Errorf("graph %q: %s. Fix: this is a defect in the build; report the scale and seed", g.Name, fmt.Sprintf(format, args...))
}

// checkSize checks g's vertices, 2^scale (its offsets, 2^scale+1), and
// its adjacency entries, between 1 and 2 x edgeFactor x 2^scale.
func checkSize(g *frontier.CSR, scale, edgeFactor int) error {
	n := 1 << scale
	most, err := checked.Mul(uint64(edgeFactor)<<scale, 2, "kronbuild adjacency entries")
	if err != nil {
		return err
	}
	entries := uint64(len(g.Targets))
	switch {
	case len(g.Offsets) != n+1:
		return malformed(g, "%d offsets, want 2^%d+1 = %d", len(g.Offsets), scale, n+1)
	case entries == 0:
		return malformed(g, "no adjacency entries")
	case entries > most:
		return malformed(g, "%d adjacency entries, more than the %d of 2 x %d x 2^%d generated", entries, most, edgeFactor, scale)
	}
	return nil
}

// checkStructure checks g's structure with frontier.CSR.Check, on every
// CPU, and names a *frontier.StructureError's fault as a defect in the
// build, as checkGraph's other rules are; Check's other errors (a graph
// past the CSR's limits) are returned as they are.
func checkStructure(g *frontier.CSR) error {
	err := g.Check()
	var se *frontier.StructureError
	if errors.As(err, &se) {
		return malformed(g, "%s", se.Msg)
	}
	return err
}

// checkRows checks rows [lo, hi) of g, whose structure checkStructure has
// checked, with checkRow. It returns the sum of their entries' edgeTerms
// and the first fault.
func checkRows(g *frontier.CSR, lo, hi int) (uint64, error) {
	var sum uint64
	for u := lo; u < hi; u++ {
		s, err := checkRow(g, int32(u))
		if err != nil {
			return sum, err
		}
		sum += s
	}
	return sum, nil
}

// checkRow checks row u of g, g.Targets[g.Offsets[u]:g.Offsets[u+1]],
// whose targets are vertices (checkStructure): every target other than u
// and above the one before it. It returns the sum of the row's edgeTerms.
func checkRow(g *frontier.CSR, u int32) (uint64, error) {
	var sum uint64
	a := g.Offsets[u]
	prev := int32(-1)
	for i, t := range g.Neighbors(u) {
		switch {
		case t == u:
			return 0, malformed(g, "targets[%d] = %d is a self loop of vertex %d", a+uint64(i), t, u)
		case t <= prev:
			return 0, malformed(g, "targets[%d] = %d follows %d in row %d: the row is not sorted ascending without duplicates", a+uint64(i), t, prev, u)
		}
		prev = t
		sum += edgeTerm(u, t)
	}
	return sum, nil
}

// edgeTerm is entry u->v's term of the symmetric sum: edgeHash(u, v) when
// u < v and its negation, -edgeHash(v, u), when u > v, so that the two
// entries of an undirected edge cancel (mod 2^64). An entry without its
// reverse leaves its edge's hash in the sum, which is never 0, and two or
// more such entries cancel only by a coincidence of their hashes (a chance
// of about 2^-64).
//
// It has no branch: the sign of v-u (which fits an int32, both being
// vertex ids) picks the negation, which a branch would mispredict on
// about every other entry.
func edgeTerm(u, v int32) uint64 {
	h := edgeHash(min(u, v), max(u, v))
	neg := uint64(int64(v-u) >> 63)
	return (h ^ neg) - neg
}

// edgeHash hashes the edge {u, v}, u < v: SplitMix64's finaliser of its
// key (u<<32 | v) + hashGamma. The finaliser is a bijection that maps only
// 0 to 0, and the one key that reaches 0, -hashGamma, has a low word at or
// above 2^31, which no vertex id has: distinct edges hash apart and no
// edge hashes to 0.
func edgeHash(u, v int32) uint64 {
	z := (uint64(u)<<32 | uint64(v)) + hashGamma
	z = (z ^ z>>30) * hashMul1
	z = (z ^ z>>27) * hashMul2
	return z ^ z>>31
}

// asymmetric is an entry, targets[at] in row u, whose reverse is missing
// (ok set when there is one).
type asymmetric struct {
	u  int32
	at uint64
	ok bool
}

// firstAsymmetry names the first entry of g (in row order) whose reverse
// is missing, searched for on every CPU. g's rows are sorted (checkRows)
// and their symmetric sum is sum, not 0.
func firstAsymmetry(g *frontier.CSR, sum uint64) error {
	n := g.NumVertices()
	pieces := (n + validatePiece - 1) / validatePiece
	found := make([]asymmetric, pieces)
	frontier.EachPiece(pieces, func(p int) {
		found[p] = firstUnreversed(g, p*validatePiece, min((p+1)*validatePiece, n))
	})
	for _, f := range found {
		if f.ok {
			v := g.Targets[f.at]
			return malformed(g, "targets[%d] = %d, in row %d, has no reverse: row %d does not hold %d, so the graph is not symmetric", f.at, v, f.u, v, f.u)
		}
	}
	return malformed(g, "the symmetric sum of the entries' edge hashes is %#x, not 0, though every entry has its reverse", sum)
}

// firstUnreversed returns the first entry of rows [lo, hi) of g whose
// reverse is missing from its target's row.
func firstUnreversed(g *frontier.CSR, lo, hi int) asymmetric {
	for u := lo; u < hi; u++ {
		for at := g.Offsets[u]; at < g.Offsets[u+1]; at++ {
			if _, ok := slices.BinarySearch(g.Neighbors(g.Targets[at]), int32(u)); !ok {
				return asymmetric{u: int32(u), at: at, ok: true}
			}
		}
	}
	return asymmetric{}
}
