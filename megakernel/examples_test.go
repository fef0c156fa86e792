package megakernel_test

import (
	"fmt"
	"os"

	"github.com/gpuplan/gpuplan/megakernel"
	"github.com/gpuplan/gpuplan/occupancy"
)

func ExamplePlanFrontierMemory() {
	// Three independent waves of 10/10/10 bytes cost 60 each when fused;
	// a 100-byte budget fits one per group.
	p, err := megakernel.PlanFrontierMemory(megakernel.FrontierMemoryRequest{
		Waves:       []megakernel.FrontierWave{{10, 10, 10}, {10, 10, 10}, {10, 10, 10}},
		BudgetBytes: 100,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.Layers, "layer ->", p.Barriers.Groups(), "barriers:", p.Barriers.GlobalBarriers)
	// Output: 1 layer -> [[0] [1] [2]] barriers: 2
}

func ExamplePlanMemoryBudget() {
	m, err := megakernel.PlanMemoryBudget(megakernel.FusedWave, megakernel.MemoryRequest{
		Graph:        megakernel.GraphShape{NodeCount: 1000, EdgeCount: 4000},
		BytesPerNode: 16, BytesPerEdge: 8,
		FrontierBytes: 4096, ScratchBytes: 2048, OutputBytes: 512,
		BudgetBytes: 128 << 10,
	})
	fmt.Println(m.GraphBytes, m.ScratchBytes, m.RequiredBytes, err)
	_, err = megakernel.PlanMemoryBudget(megakernel.DenseFrontier, megakernel.MemoryRequest{
		Graph: megakernel.GraphShape{NodeCount: 1000, EdgeCount: 4000}, BytesPerNode: 16, BytesPerEdge: 8, BudgetBytes: 32 << 10,
	})
	fmt.Println(err)
	// Output:
	// 48000 8192 60800 <nil>
	// megakernel DenseFrontier needs 48000 bytes (graph of 1000 nodes and 4000 edges plus frontier, scratch and output) but the memory budget is 32768 bytes. Fix: choose a sparse topology, shrink the frontier and scratch buffers, or raise the memory budget
}

func ExampleSelectTopologyStable() {
	graph := megakernel.GraphShape{NodeCount: 1000, EdgeCount: 4000}
	memory := megakernel.MemoryBudget{RequiredBytes: 1000, BudgetBytes: 10000}
	s := megakernel.ScheduleSample{DispatchCostNS: 1000, FrontierDensity: 0.68}
	fresh := megakernel.SelectTopology(s, graph, memory, 100, 0)
	held := megakernel.SelectTopologyStable(s, graph, memory, 100, 0, megakernel.DenseFrontier)
	fmt.Println(fresh.Topology, held.Topology)
	// Output: HybridFrontier DenseFrontier
}

func ExampleDeviceKeyFor() {
	dev, err := occupancy.Lookup("h100-sxm")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%+v\n", megakernel.DeviceKeyFor(dev))
	fmt.Printf("%+v\n", megakernel.DeviceKeyFor(occupancy.Blackwell5090Default()))
	// Output:
	// {SMMajor:9 SMMinor:0 WarpSize:32 SupportsGridSync:true SupportsTensorCores:true MaxWorkgroupSize:1024}
	// {SMMajor:12 SMMinor:0 WarpSize:32 SupportsGridSync:true SupportsTensorCores:true MaxWorkgroupSize:1024}
}

func ExampleNewPlanCacheKey() {
	id := megakernel.PlanIdentity{GraphLayoutHash: 7, Kind: megakernel.PointsTo}
	k := megakernel.NewPlanCacheKey(id,
		megakernel.ScheduleSample{DispatchCostNS: 1000, FrontierDensity: 0.90, ReadbackBytes: 1 << 20},
		megakernel.MemoryBudget{RequiredBytes: 1 << 62, BudgetBytes: 1 << 63},
		250, 0.95)
	fmt.Println(k.FrontierDensityBucket, k.MemoryPressureBucket, k.ReadbackPressureBucket, k.LaunchPressureBucket, k.FusionPressureBucket)
	// Output: 14 5 9 2 9
}

func ExampleWorkloadPlan_WriteDOT() {
	w, err := megakernel.DecodeWorkload("w.json", []byte(minimalWorkload))
	if err != nil {
		fmt.Println(err)
		return
	}
	dev, _ := occupancy.Lookup("h100-sxm")
	p, err := megakernel.PlanWorkload("w.json", w, dev, "h100-sxm", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := p.WriteDOT(os.Stdout); err != nil {
		fmt.Println(err)
	}
	// Output:
	// strict digraph megakernel {
	//   graph [
	//     label="megakernel: FusedWave, 2 barrier groups, 1 grid-wide barrier, 1 producer wait"
	//     labelloc=t
	//     compound=true
	//   ];
	//   node [
	//     shape=box
	//     style=rounded
	//     fontsize=10
	//   ];
	//
	//   subgraph cluster_0 {
	//     graph [
	//       label="group 0"
	//       style=dashed
	//     ];
	//
	//     // Node definitions.
	//     w0 [label="0 a\nfrontier 1.0 KiB, scratch 512 B, output 256 B"];
	//   }
	//   subgraph cluster_1 {
	//     graph [
	//       label="group 1"
	//       style=dashed
	//     ];
	//
	//     // Node definitions.
	//     w1 [label="1 b\nfrontier 2.0 KiB, scratch 1.0 KiB, output 512 B"];
	//   }
	//   // Node definitions.
	//   w0;
	//   w1;
	//
	//   // Edge definitions.
	//   w0 -> w1;
	// }
}

func ExampleParseAnalysisKind() {
	for _, s := range []string{"reaching_definitions", "custom:7", "taint"} {
		k, err := megakernel.ParseAnalysisKind(s)
		if err != nil {
			fmt.Println("error:", err)
			continue
		}
		fmt.Println(k, k == megakernel.CustomAnalysis(7))
	}
	// Output:
	// reaching_definitions false
	// custom:7 true
	// error: unknown analysis kind "taint". Fix: use one of dataflow, ifds, reaching_definitions, liveness, points_to, parser_frontend or custom:<integer>
}
