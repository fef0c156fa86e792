package partbfs_test

import (
	"fmt"
	"sync"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/executor/nccl"
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

// ExampleNewRankSession runs the traversal of ExampleNewSession with one
// rank per part: three goroutines here, three processes (one per GPU,
// joined by package rendezvous and nccl.OpenRank) in a real run. Every
// rank runs from the same root; rank 0 gathers the levels, and the bytes
// every rank received add up to the one-process session's.
func ExampleNewRankSession() {
	dev, _ := occupancy.Lookup("h200")
	g, _ := frontier.Kronecker(12, 16, 1)
	const ranks = 3
	id := nccl.NewFakeUniqueID()
	runs := make([]partbfs.Run, ranks)
	var levels []int32
	var wg sync.WaitGroup
	for rank := range ranks {
		wg.Go(func() {
			x, _ := executor.New(partbfs.NewFake(dev, uint64(rank)), executor.Options{})
			defer x.Close()
			comm, err := nccl.OpenFakeRank(x, id, rank, ranks, nccl.Options{})
			if err != nil {
				return
			}
			defer comm.Close()
			s, err := partbfs.NewRankSession(x, g, partbfs.Rank{Rank: rank, Ranks: ranks, Comm: comm}, partbfs.Config{})
			if err != nil {
				return
			}
			defer s.Close()
			runs[rank], _ = s.Run(1078)
			if lv, _ := s.GatherLevels(); rank == 0 {
				levels = lv
			}
		})
	}
	wg.Wait()
	ref, _ := frontier.BFS(g, 1078)
	fmt.Println("levels as the CPU reference:", fmt.Sprint(levels) == fmt.Sprint(ref))
	for k, st := range runs[0].Steps {
		var moved uint64
		for _, r := range runs {
			moved += r.Steps[k].MeasuredBytes
		}
		x := st.Exchange
		fmt.Printf("level %d %s %s: %d bytes moved, %d planned\n", x.Decision.Level, x.Decision.Direction, x.Collective, moved, x.Bytes)
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
