package validate_test

import (
	"fmt"

	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/frontier/validate"
)

// Levels checks a BFS result in one pass over the edges; a wrong level is
// named with the rule it breaks.
func ExampleLevels() {
	g, _ := frontier.Grid(3) // vertices 0..8, row by row
	levels, _ := frontier.BFS(g, 0)
	fmt.Println(validate.Levels(g, g, 0, levels))
	levels[8] = 3 // the far corner is 4 steps away
	fmt.Println(validate.Levels(g, g, 0, levels))
	// Output:
	// <nil>
	// BFS result breaks rule 3 at vertex 8 (level 3): no in-neighbour is one level closer to the root. Fix: the traversal that produced it is wrong; compare it with frontier.BFS on a smaller graph
}
