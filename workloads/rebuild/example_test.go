package rebuild_test

import (
	"fmt"

	"github.com/gpuplan/gpuplan/egraph"
	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/occupancy"
	"github.com/gpuplan/gpuplan/workloads/rebuild"
)

// Example rebuilds a generated e-graph with every arm, here on the
// executor's CPU fake with the kernels emulated (executor.Open(0, ...)
// in the CUDA build runs the same code on a GPU), and checks each
// partition against the CPU reference.
func Example() {
	dev, _ := occupancy.Lookup("h100")
	x, err := executor.New(rebuild.NewFake(dev, 1), executor.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer x.Close()
	g, _ := egraph.Generate(egraph.GenConfig{Nodes: 2000, Seed: 3, Shape: egraph.ShapeDeepCycle})
	s, err := rebuild.NewSession(x, g, "gen-2000", rebuild.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	ref, _ := egraph.Rebuild(g)
	for _, arm := range rebuild.FullRoundArms() {
		run, err := s.Run(arm)
		if err != nil {
			fmt.Println(err)
			return
		}
		out, err := s.Output(run)
		if err != nil {
			fmt.Println(err)
			return
		}
		same := egraph.ComparePartitions(out.Result.NodeClasses(g), ref.NodeClasses(g)) == nil
		fmt.Printf("%s: %d rounds, %d classes, %d distinct e-nodes, same as the CPU: %t\n",
			arm, run.Rounds, out.Result.Classes, len(out.Nodes), same)
	}
	fmt.Printf("launches per round: %d fused groups of %d stages\n", s.Plans().Fusion.LaunchCount, len(s.Plans().Stages))
	// Output:
	// host-loop: 64 rounds, 1040 classes, 1040 distinct e-nodes, same as the CPU: true
	// device-loop: 64 rounds, 1040 classes, 1040 distinct e-nodes, same as the CPU: true
	// persistent: 64 rounds, 1040 classes, 1040 distinct e-nodes, same as the CPU: true
	// launches per round: 2 fused groups of 5 stages
}

// ExampleEggArgsFromDump derives the egg-bench options that reproduce an
// egg dump from its header.
func ExampleEggArgsFromDump() {
	head := []byte("egg-prerebuild-dump v1\n" +
		"# egg 0.9.5, math rules (analysis-free port), SimpleScheduler, 7 iterations, the last one stopped before rebuild()\n" +
		"# expr (i (ln x) x)\n" +
		"ops 12\n")
	args, err := rebuild.EggArgsFromDump(head)
	fmt.Println(args, err)
	// Output: [--iters 7 --scheduler simple --expr (i (ln x) x)] <nil>
}
