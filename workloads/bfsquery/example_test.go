package bfsquery_test

import (
	"context"
	"fmt"

	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/workloads/bfsquery"
)

// openGrid keeps a 4 x 4 grid resident, answered by the CPU reference. On
// a GPU, open it with bfsquery.Open(x, g, opts) on an executor instead: the
// answers are the same.
func openGrid() (*bfsquery.Graph, error) {
	g, err := frontier.Grid(4)
	if err != nil {
		return nil, err
	}
	return bfsquery.OpenCPU(g, bfsquery.Options{})
}

// Example keeps a 4 x 4 grid resident (openGrid) and asks for the distances
// from the corner 0 to three vertices, with their parents in a BFS tree.
func Example() {
	r, err := openGrid()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()
	a, err := r.Query(context.Background(), bfsquery.Query{Root: 0, Targets: []int32{5, 15, 3}, MaxDepth: bfsquery.NoDepthLimit, Parents: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("levels:", a.Levels)
	fmt.Println("parents:", a.Parents)
	// Within two steps, vertex 15 (six steps away) is unreached.
	a, err = r.Query(context.Background(), bfsquery.Query{Root: 0, Targets: []int32{5, 15}, MaxDepth: 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("levels within 2:", a.Levels, "reached:", a.Reached)
	// Output:
	// levels: [2 6 3]
	// parents: [1 11 2]
	// levels within 2: [2 -1] reached: 6
}

// ExampleGraph_Batch answers many roots of the 4 x 4 grid (openGrid) at
// once: on a GPU, an undirected graph's roots share multi-source passes of
// 64.
func ExampleGraph_Batch() {
	qs := []bfsquery.Query{{Root: 0, Targets: []int32{15}, MaxDepth: -1}, {Root: 5, Targets: []int32{15}, MaxDepth: -1}, {Root: 15, Targets: []int32{15}, MaxDepth: -1}}
	r, err := openGrid()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()
	as, err := r.Batch(context.Background(), qs)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, a := range as {
		fmt.Printf("from %d: %d\n", a.Root, a.Levels[0])
	}
	// Output:
	// from 0: 6
	// from 5: 4
	// from 15: 0
}
