package megakernel_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	dgraph "github.com/dominikbraun/graph"
	"github.com/gpuplan/gpuplan/megakernel"
	"github.com/gpuplan/gpuplan/occupancy"
	"gonum.org/v1/gonum/graph/simple"
	"gonum.org/v1/gonum/graph/topo"
)

// The benchmarks below measure why the planners keep their own CSR arrays
// rather than a graph library: the same DAG (n waves in layers of 100,
// four dependencies per wave from the four layers before it) ordered by
// PlanBarriers (Kahn layers, cycle check, barrier placement), by gonum's
// topo.Sort and by dominikbraun/graph's TopologicalSort, each including
// building the graph from the dependency list, as a planner must.

func layeredDeps(n int) []megakernel.Dependency {
	const width = 100
	r := rand.New(rand.NewPCG(uint64(n), 3))
	var deps []megakernel.Dependency
	for v := width; v < n; v++ {
		layer := v / width
		for range 4 {
			from := layer - 1 - r.IntN(min(layer, 4))
			deps = append(deps, megakernel.Dependency{Before: from*width + r.IntN(width), After: v})
		}
	}
	return deps
}

var graphLibSizes = []int{1_000, 10_000}

func BenchmarkDAGOrderOwnCSR(b *testing.B) {
	for _, n := range graphLibSizes {
		deps := layeredDeps(n)
		b.Run(fmt.Sprintf("waves=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := megakernel.PlanBarriers(n, deps); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkDAGOrderGonum(b *testing.B) {
	for _, n := range graphLibSizes {
		deps := layeredDeps(n)
		b.Run(fmt.Sprintf("waves=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				g := simple.NewDirectedGraph()
				for i := range n {
					g.AddNode(simple.Node(i))
				}
				for _, d := range deps {
					g.SetEdge(g.NewEdge(simple.Node(d.Before), simple.Node(d.After)))
				}
				if _, err := topo.Sort(g); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// dominikbraunGraph builds the DAG; with preventCycles every AddEdge first
// searches for the cycle it would close, which is how that library
// reports a cycle at the dependency that makes it.
func dominikbraunGraph(b *testing.B, n int, deps []megakernel.Dependency, preventCycles bool) dgraph.Graph[int, int] {
	traits := []func(*dgraph.Traits){dgraph.Directed()}
	if preventCycles {
		traits = append(traits, dgraph.PreventCycles())
	}
	g := dgraph.New(dgraph.IntHash, traits...)
	for i := range n {
		if err := g.AddVertex(i); err != nil {
			b.Fatal(err)
		}
	}
	for _, d := range deps {
		if err := g.AddEdge(d.Before, d.After); err != nil && err != dgraph.ErrEdgeAlreadyExists {
			b.Fatal(err)
		}
	}
	return g
}

func BenchmarkDAGOrderDominikbraun(b *testing.B) {
	for _, n := range graphLibSizes {
		deps := layeredDeps(n)
		b.Run(fmt.Sprintf("waves=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := dgraph.TopologicalSort(dominikbraunGraph(b, n, deps, false)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDAGBuildDominikbraunPreventCycles builds the graph with cycle
// prevention only (no sort), at the smaller size: at 10,000 waves one build
// takes minutes.
func BenchmarkDAGBuildDominikbraunPreventCycles(b *testing.B) {
	n := graphLibSizes[0]
	deps := layeredDeps(n)
	b.Run(fmt.Sprintf("waves=%d", n), func(b *testing.B) {
		for b.Loop() {
			dominikbraunGraph(b, n, deps, true)
		}
	})
}

// BenchmarkWriteDOT draws the largest plan WriteDOT accepts (MaxDOTWaves)
// through gonum's DOT encoder.
func BenchmarkWriteDOT(b *testing.B) {
	n := megakernel.MaxDOTWaves
	waves := make([]megakernel.FrontierWave, n)
	for i := range waves {
		waves[i] = megakernel.FrontierWave{FrontierBytes: 4096, ScratchBytes: 1024, OutputBytes: 512}
	}
	deps := layeredDeps(n)
	dev, err := occupancy.Lookup("h100-sxm")
	if err != nil {
		b.Fatal(err)
	}
	p, err := megakernel.PlanWorkload("bench.json", benchWorkload(b, waves, deps), dev, "h100-sxm", nil)
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		buf.Reset()
		if err := p.WriteDOT(&buf); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(buf.Len()), "bytes")
}

// benchWorkload encodes waves and deps as a workload JSON and decodes it.
func benchWorkload(b *testing.B, waves []megakernel.FrontierWave, deps []megakernel.Dependency) *megakernel.Workload {
	ws := make([]map[string]any, len(waves))
	for i, w := range waves {
		ws[i] = map[string]any{"id": i, "name": fmt.Sprintf("wave-%d", i), "frontier_bytes": w.FrontierBytes,
			"scratch_bytes": w.ScratchBytes, "output_bytes": w.OutputBytes}
	}
	ds := make([]map[string]any, len(deps))
	for i, d := range deps {
		ds[i] = map[string]any{"before": d.Before, "after": d.After}
	}
	data, err := json.Marshal(map[string]any{"analysis": "dataflow", "device": "h100-sxm", "launch_overhead_ns": 4000,
		"graph":           map[string]any{"node_count": 1000, "edge_count": 4000, "bytes_per_node": 16, "bytes_per_edge": 8},
		"schedule_sample": map[string]any{"dispatch_cost_ns": 12000, "frontier_density": 0.35, "readback_bytes": 65536},
		"waves":           ws, "dependencies": ds})
	if err != nil {
		b.Fatal(err)
	}
	w, err := megakernel.DecodeWorkload("bench.json", data)
	if err != nil {
		b.Fatal(err)
	}
	return w
}
