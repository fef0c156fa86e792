package validate

import (
	"testing"

	"github.com/gpuplan/gpuplan/frontier"
)

// BenchmarkLevels checks a Kronecker graph's levels from a root in its
// giant component: one pass over its adjacency entries (and the
// in-neighbours up to one closer a vertex) per op.
func BenchmarkLevels(b *testing.B) {
	g, err := frontier.Kronecker(16, 8, 1)
	if err != nil {
		b.Fatal(err)
	}
	roots, err := frontier.Roots(g, 1, 1)
	if err != nil {
		b.Fatal(err)
	}
	levels, err := frontier.BFS(g, roots[0])
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(4 * int64(len(g.Targets)))
	for b.Loop() {
		if err := Levels(g, g, roots[0], levels); err != nil {
			b.Fatal(err)
		}
	}
}
