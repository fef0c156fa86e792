package partbfs_test

import (
	"fmt"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/occupancy"
	"github.com/gpuplan/gpuplan/workloads/partbfs"
)

// ExampleNewSession partitions a Kronecker graph over three parts
// simulated on one device (here the CPU fake with the kernels emulated;
// on a GPU, executor.Open(0, ...)), runs one traversal and prints every
// level step's exchange.
func ExampleNewSession() {
	dev, _ := occupancy.Lookup("h200")
	x, _ := executor.New(partbfs.NewFake(dev, 1), executor.Options{})
	defer x.Close()
	devs, _ := partbfs.SimulatedDevices(x, 3, "", false)
	defer devs.Close()
	g, _ := frontier.Kronecker(12, 16, 1)
	s, err := partbfs.NewSession(devs, g, partbfs.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	run, _ := s.Run(1078)
	levels, _ := s.Levels()
	ref, _ := frontier.BFS(g, 1078)
	fmt.Println("levels as the CPU reference:", fmt.Sprint(levels) == fmt.Sprint(ref))
	for _, st := range run.Steps {
		x := st.Exchange
		fmt.Printf("level %d %s %s: %d bytes moved, %d planned\n", x.Decision.Level, x.Decision.Direction, x.Collective, st.MeasuredBytes, x.Bytes)
	}
	// Output:
	// levels as the CPU reference: true
	// level 1 top-down all-to-all: 156 bytes moved, 156 planned
	// level 2 top-down all-to-all: 768 bytes moved, 768 planned
	// level 3 bottom-up all-gather: 1056 bytes moved, 1056 planned
	// level 4 bottom-up all-gather: 1056 bytes moved, 1056 planned
	// level 5 top-down all-to-all: 508 bytes moved, 508 planned
	// level 6 bottom-up all-gather: 1056 bytes moved, 1056 planned
}
