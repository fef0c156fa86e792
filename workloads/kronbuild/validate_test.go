package kronbuild

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/frontier"
)

// path4 is the path 0-1-2-3 as a CSR: a scale-2 graph (at edge factor 1,
// at most 8 entries) that checkGraph takes.
func path4() *frontier.CSR {
	return &frontier.CSR{Name: "kron-2", Offsets: []uint64{0, 1, 3, 5, 6}, Targets: []int32{1, 0, 2, 1, 3, 2}}
}

// checkGraph takes a well-formed graph and refuses every broken rule,
// naming the array, the index and the rule, with a Fix. A fault in the
// structure frontier.CSR.Check checks is named in Check's words, as a
// defect of the build.
func TestCheckGraph(t *testing.T) {
	cases := []struct {
		name  string
		edit  func(g *frontier.CSR)
		wants []string
	}{
		{"well formed", func(*frontier.CSR) {}, nil},
		{"vertices", func(g *frontier.CSR) { g.Offsets = g.Offsets[:4] }, []string{"4 offsets, want 2^2+1 = 5"}},
		{"first offset", func(g *frontier.CSR) { g.Offsets[0] = 1 }, []string{"offsets[0] is 1, want 0"}},
		{"last offset", func(g *frontier.CSR) { g.Offsets[4] = 5 }, []string{"offsets[4]=5, want len(targets)=6"}},
		{"decreasing offsets", func(g *frontier.CSR) { g.Offsets[2] = 0 }, []string{"offsets[2]=0 is below offsets[1]=1"}},
		// An offset past the targets is followed by a smaller one, as the
		// last is len(targets): Check names the decrease.
		{"offsets past the targets", func(g *frontier.CSR) { g.Offsets[2] = 9 }, []string{"offsets[3]=5 is below offsets[2]=9"}},
		{"no entries", func(g *frontier.CSR) { g.Offsets, g.Targets = make([]uint64, 5), nil }, []string{"no adjacency entries"}},
		{"too many entries", func(g *frontier.CSR) {
			// The complete graph on 4 vertices: 12 entries, more than 2 x 1 x 4.
			g.Offsets, g.Targets = []uint64{0, 3, 6, 9, 12}, []int32{1, 2, 3, 0, 2, 3, 0, 1, 3, 0, 1, 2}
		}, []string{"12 adjacency entries, more than the 8 of 2 x 1 x 2^2 generated"}},
		{"not a vertex", func(g *frontier.CSR) { g.Targets[5] = 4 }, []string{"targets[5]=4 is not a vertex (0..3)"}},
		{"negative target", func(g *frontier.CSR) { g.Targets[0] = -1 }, []string{"targets[0]=-1 is not a vertex"}},
		{"a structure fault before a row fault", func(g *frontier.CSR) { g.Targets[0], g.Targets[5] = 0, 4 }, []string{"targets[5]=4 is not a vertex"}},
		{"self loop", func(g *frontier.CSR) { g.Targets[0] = 0 }, []string{"targets[0] = 0 is a self loop of vertex 0"}},
		{"unsorted row", func(g *frontier.CSR) { g.Targets[1], g.Targets[2] = 2, 0 }, []string{"targets[2] = 0 follows 2 in row 1", "not sorted"}},
		{"duplicate", func(g *frontier.CSR) { g.Targets[2] = 0 }, []string{"targets[2] = 0 follows 0 in row 1", "without duplicates"}},
		{"asymmetric", func(g *frontier.CSR) { g.Targets[0] = 2 }, []string{"targets[0] = 2, in row 0, has no reverse: row 2 does not hold 0", "not symmetric"}},
		{"one direction missing", func(g *frontier.CSR) {
			// Row 3 loses its entry 3->2: 2->3 has no reverse.
			g.Offsets[4], g.Targets = 5, g.Targets[:5]
		}, []string{"targets[4] = 3, in row 2, has no reverse: row 3 does not hold 2"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := path4()
			c.edit(g)
			err := checkGraph(g, 2, 1)
			if c.wants == nil {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			for _, want := range c.wants {
				assert.Contains(t, err.Error(), want)
			}
			assert.Contains(t, err.Error(), `graph "kron-2"`)
			assert.Contains(t, err.Error(), "Fix: this is a defect in the build")
			var se *frontier.StructureError
			if errors.As(g.Check(), &se) && len(g.Offsets) == 5 {
				assert.Contains(t, err.Error(), se.Msg, "Check's fault")
			}
		})
	}
}

// On a Kronecker graph of many pieces checkGraph takes frontier's CSR and
// finds a corrupted entry in any piece, naming the first in row order.
func TestCheckGraphPieces(t *testing.T) {
	const scale = 14
	g, err := frontier.Kronecker(scale, frontier.DefaultEdgeFactor, 2)
	require.NoError(t, err)
	require.Greater(t, g.NumVertices(), 3*validatePiece, "several pieces")
	require.NoError(t, checkGraph(g, scale, frontier.DefaultEdgeFactor))
	last := int32(g.NumVertices() - 1)
	for _, u := range []int32{5, validatePiece + 3, last - 7} {
		u = nextRowBelow(g, u, last)
		bad := &frontier.CSR{Name: g.Name, Offsets: g.Offsets, Targets: slices.Clone(g.Targets)}
		// Row u's last target becomes the last vertex, which row u did not
		// hold: the row stays sorted, but u->last has no reverse and
		// neither has the entry that pointed back at u.
		at := g.Offsets[u+1] - 1
		was := bad.Targets[at]
		bad.Targets[at] = last
		err := checkGraph(bad, scale, frontier.DefaultEdgeFactor)
		require.Error(t, err, "row %d", u)
		assert.Contains(t, err.Error(), "not symmetric", "row %d", u)
		first := min(u, was) // the first row holding an entry without its reverse
		assert.Contains(t, err.Error(), fmt.Sprintf(", in row %d, has no reverse", first), "row %d", u)
	}
}

// nextRowBelow returns the first vertex from u on whose row is not empty
// and whose last target is below last (and that is not last).
func nextRowBelow(g *frontier.CSR, u, last int32) int32 {
	for ; u < last; u++ {
		if row := g.Neighbors(u); len(row) > 0 && row[len(row)-1] < last {
			return u
		}
	}
	panic("no row to corrupt")
}

// The one key SplitMix64's finaliser maps to 0 is no edge's: its low word,
// the target, is at or above 2^31. So no edge hashes to 0, and an edge's
// two entries cancel in the symmetric sum.
func TestEdgeHash(t *testing.T) {
	var gamma uint64 = hashGamma
	zeroKey := -gamma
	assert.GreaterOrEqual(t, uint32(zeroKey), uint32(1)<<31)
	assert.NotZero(t, edgeHash(0, 1))
	assert.NotEqual(t, edgeHash(0, 1), edgeHash(1, 2))
	assert.Zero(t, edgeTerm(3, 9)+edgeTerm(9, 3))
	assert.NotZero(t, edgeTerm(3, 9)+edgeTerm(9, 4))
}
