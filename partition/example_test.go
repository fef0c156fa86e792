package partition_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/partition"
	"github.com/gpuplan/gpuplan/planners"
)

func ExampleNew() {
	g, _ := frontier.Kronecker(12, 16, 1)
	devs := []partition.Device{{Name: "h200", BudgetBytes: 1 << 30}, {Name: "h200", BudgetBytes: 1 << 30}}
	plan, err := partition.New(partition.Request{Offsets: g.Offsets, Devices: devs, Strategy: partition.EdgeBalanced})
	fmt.Println(err)
	for _, p := range plan.Parts {
		fmt.Printf("device %d: vertices [%d, %d), %d edge entries, %d resident bytes\n", p.Device, p.First, p.End, p.EdgeEntries, p.ResidentBytes)
	}
	fmt.Println("bottom-up level all-gather:", plan.Exchange.AllGatherBytes, "bytes")

	devs[1].BudgetBytes = 100_000
	_, err = partition.New(partition.Request{Offsets: g.Offsets, Devices: devs, Strategy: partition.EdgeBalanced})
	fmt.Println(err)
	// Output:
	// <nil>
	// device 0: vertices [0, 1984), 48781 edge entries, 213172 resident bytes
	// device 1: vertices [1984, 4096), 48129 edge entries, 211588 resident bytes
	// bottom-up level all-gather: 528 bytes
	// partition: device 1 (h200): its part, vertices [1984, 4096) (2112 vertices, 48129 edge entries), needs 211588 bytes (targets 192516 + offsets 8452 + levels 8448 + frontier 528 + next 528 + exchange 528 + outbox 528 + counts 48 + bounds 12 + scratch 0), above devices[1].budget_bytes 100000 by 111588. Fix: spread the graph over more devices, use devices with more memory, or balance by edges
}

func ExamplePredictExchange() {
	g, _ := frontier.Kronecker(12, 16, 1)
	devs := []partition.Device{{Name: "h200", BudgetBytes: 1 << 30}, {Name: "h200", BudgetBytes: 1 << 30}}
	plan, _ := partition.New(partition.Request{Offsets: g.Offsets, Devices: devs, Strategy: partition.EdgeBalanced})
	roots, _ := frontier.Roots(g, 1, 1)
	levels, _ := frontier.BFS(g, roots[0])
	pred, err := partition.PredictExchange(plan, partition.Traversal{Offsets: g.Offsets, Targets: g.Targets,
		Levels: levels, Root: roots[0], Params: planners.DefaultDirectionParams()})
	fmt.Println(err)
	for _, l := range pred.Levels {
		fmt.Printf("level %d %s %s: %d bytes (%d queue pairs, %d bitmap pairs)\n", l.Decision.Level, l.Decision.Direction, l.Collective, l.Bytes, l.QueuePairs, l.BitmapPairs)
	}
	fmt.Println("total", pred.TotalBytes)
	// Output:
	// <nil>
	// level 1 top-down all-to-all: 36 bytes (2 queue pairs, 0 bitmap pairs)
	// level 2 top-down all-to-all: 524 bytes (1 queue pairs, 1 bitmap pairs)
	// level 3 bottom-up all-gather: 528 bytes (0 queue pairs, 0 bitmap pairs)
	// level 4 bottom-up all-gather: 528 bytes (0 queue pairs, 0 bitmap pairs)
	// level 5 top-down all-to-all: 284 bytes (2 queue pairs, 0 bitmap pairs)
	// level 6 bottom-up all-gather: 528 bytes (0 queue pairs, 0 bitmap pairs)
	// total 2428
}

// TestPredictionFollowsDirectionOptimizingBFS checks that the prediction
// replays the direction-optimizing BFS's decisions, step for step.
func TestPredictionFollowsDirectionOptimizingBFS(t *testing.T) {
	for _, build := range []func() (*frontier.CSR, error){
		func() (*frontier.CSR, error) { return frontier.Kronecker(13, 16, 5) },
		func() (*frontier.CSR, error) { return frontier.Grid(60) },
		func() (*frontier.CSR, error) { return frontier.RandomGeometric(5000, 12, 2) },
	} {
		g, err := build()
		require.NoError(t, err)
		plan, err := partition.New(partition.Request{Offsets: g.Offsets,
			Devices: []partition.Device{{"a", 1 << 30}, {"b", 1 << 30}, {"c", 1 << 30}}, Strategy: partition.EdgeBalanced})
		require.NoError(t, err)
		roots, err := frontier.Roots(g, 3, 7)
		require.NoError(t, err)
		for _, root := range roots {
			ref, err := frontier.BFSDirectionOptimizing(g, root, planners.DefaultDirectionParams())
			require.NoError(t, err)
			pred, err := partition.PredictExchange(plan, partition.Traversal{Offsets: g.Offsets, Targets: g.Targets,
				Levels: ref.Levels, Root: root, Params: planners.DefaultDirectionParams()})
			require.NoError(t, err)
			require.Len(t, pred.Levels, len(ref.Decisions))
			for i, d := range ref.Decisions {
				require.Equal(t, d, pred.Levels[i].Decision, "%s root %d step %d", g.Name, root, i)
			}
		}
	}
}
