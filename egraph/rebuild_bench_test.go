package egraph

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// benchSizes are the generated e-graph sizes of the benchmarks.
var benchSizes = []int{1_000_000, 10_000_000}

// The benchmarks use b.Loop, which runs each benchmark function once:
// the set-up before the loop (generating 10^7 e-nodes takes seconds) is
// not repeated.

func benchGraph(b *testing.B, cfg GenConfig) *Graph {
	b.Helper()
	g, err := Generate(cfg)
	if err != nil {
		b.Fatal(err)
	}
	return g
}

func benchDump(b *testing.B, cfg GenConfig) []byte {
	b.Helper()
	var buf bytes.Buffer
	if err := WriteDump(&buf, benchGraph(b, cfg)); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

// reportCPU reports the process CPU time per iteration since start (it
// includes the garbage collector's work on the other core).
func reportCPU(b *testing.B, start float64) {
	if start > 0 {
		b.ReportMetric((processCPUSeconds()-start)*1e3/float64(b.N), "cpu-ms/op")
	}
}

// benchRebuild times one rebuild method on g and reports e-nodes per
// second and rounds.
func benchRebuild(b *testing.B, g *Graph, rebuild func(*Graph) (*RebuildResult, error)) {
	b.ReportAllocs()
	var res *RebuildResult
	cpu := processCPUSeconds()
	for b.Loop() {
		var err error
		if res, err = rebuild(g); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpu)
	b.ReportMetric(float64(g.NodeCount())*float64(b.N)/b.Elapsed().Seconds(), "e-nodes/s")
	b.ReportMetric(float64(res.Rounds), "rounds")
	b.ReportMetric(float64(res.Classes), "classes")
	b.ReportMetric(b.Elapsed().Seconds()*1e9/(float64(g.NodeCount())*float64(b.N)), "ns/e-node")
	b.ReportMetric(float64(res.DataParallelRounds), "data-parallel-rounds")
}

// BenchmarkRebuild times the CPU reference (worklist), the data-parallel
// rounds and the hybrid on generated e-graphs of 10^6 and 10^7 e-nodes.
func BenchmarkRebuild(b *testing.B) {
	methods := []struct {
		name string
		f    func(*Graph) (*RebuildResult, error)
	}{{"worklist", Rebuild}, {"rounds", RebuildRounds}, {"hybrid", RebuildHybrid}}
	for _, n := range benchSizes {
		for _, m := range methods {
			b.Run(fmt.Sprintf("gen%d/%s", n, m.name), func(b *testing.B) {
				benchRebuild(b, benchGraph(b, GenConfig{Nodes: n, Seed: 1}), m.f)
			})
		}
	}
}

// BenchmarkRebuildEgg1e4 times the three methods on egg's 1e4 dump (egg-bench
// reports its own T2, unions plus rebuild(), for the same state).
func BenchmarkRebuildEgg1e4(b *testing.B) {
	g, err := ReadDump(openSample(b, "math-1e4.pre.txt"))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("worklist", func(b *testing.B) { benchRebuild(b, g, Rebuild) })
	b.Run("rounds", func(b *testing.B) { benchRebuild(b, g, RebuildRounds) })
	b.Run("hybrid", func(b *testing.B) { benchRebuild(b, g, RebuildHybrid) })
}

// BenchmarkRebuildShapes times the worklist and the hybrid on the
// adversarial shapes at 10^6 e-nodes.
func BenchmarkRebuildShapes(b *testing.B) {
	for _, shape := range []GenShape{ShapeUnionChain, ShapeGiantClass, ShapeDeepCycle, ShapeAllDistinct} {
		g := benchGraph(b, GenConfig{Nodes: 1_000_000, Seed: 1, Shape: shape})
		b.Run(shape.String()+"/worklist", func(b *testing.B) { benchRebuild(b, g, Rebuild) })
		b.Run(shape.String()+"/hybrid", func(b *testing.B) { benchRebuild(b, g, RebuildHybrid) })
	}
}

// BenchmarkRebuildChain times the methods on congruence towers of 10^3 to
// 10^6 links (congruenceTower: one union that sets off a chain of one
// congruence per link, 2 e-nodes a link), where RebuildRounds runs one
// round per link over every e-node; it is left out above 5*10^4 links.
func BenchmarkRebuildChain(b *testing.B) {
	for _, links := range []int{1_000, 10_000, 100_000, 1_000_000} {
		g := congruenceTower(links)
		b.Run(fmt.Sprintf("links%d/hybrid", links), func(b *testing.B) { benchRebuild(b, g, RebuildHybrid) })
		b.Run(fmt.Sprintf("links%d/worklist", links), func(b *testing.B) { benchRebuild(b, g, Rebuild) })
		if links <= 50_000 {
			b.Run(fmt.Sprintf("links%d/rounds", links), func(b *testing.B) { benchRebuild(b, g, RebuildRounds) })
		}
	}
}

// BenchmarkReadDump times ReadDump on in-memory dumps of generated
// e-graphs and reports MB/s, e-nodes per second and bytes per e-node.
func BenchmarkReadDump(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("gen%d", n), func(b *testing.B) {
			data := benchDump(b, GenConfig{Nodes: n, Seed: 1})
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			cpu := processCPUSeconds()
			for b.Loop() {
				if _, err := ReadDump(bytes.NewReader(data)); err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, cpu)
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "e-nodes/s")
		})
	}
}

// BenchmarkWriteDump times WriteDump of a generated 10^6 e-graph.
func BenchmarkWriteDump(b *testing.B) {
	g := benchGraph(b, GenConfig{Nodes: 1_000_000, Seed: 1})
	for b.Loop() {
		if err := WriteDump(io.Discard, g); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGenerate times the generator at 10^6 e-nodes.
func BenchmarkGenerate(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Generate(GenConfig{Nodes: 1_000_000, Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEggDumps reads and rebuilds the egg dumps listed (separated by
// the OS's path list separator) in GPUPLAN_EGG_DUMPS, such as the 1e5 and
// 1e6 dumps that egg-bench writes; it is skipped when the variable is
// unset, since those dumps are too large to keep in the repository.
func BenchmarkEggDumps(b *testing.B) {
	list := os.Getenv("GPUPLAN_EGG_DUMPS")
	if list == "" {
		b.Skip("GPUPLAN_EGG_DUMPS is not set")
	}
	for _, path := range filepath.SplitList(list) {
		data, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		name := strings.TrimSuffix(filepath.Base(path), ".pre.txt")
		b.Run(name+"/read", func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			cpu := processCPUSeconds()
			for b.Loop() {
				if _, err := ReadDump(bytes.NewReader(data)); err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, cpu)
		})
		g, err := ReadDump(bytes.NewReader(data))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name+"/worklist", func(b *testing.B) { benchRebuild(b, g, Rebuild) })
		b.Run(name+"/rounds", func(b *testing.B) { benchRebuild(b, g, RebuildRounds) })
		b.Run(name+"/hybrid", func(b *testing.B) { benchRebuild(b, g, RebuildHybrid) })
	}
}

// BenchmarkRebuildIncremental compares the data-parallel rounds, which pass
// over every e-node in every round, with the incremental rounds, which
// after the first touch only the dirty e-nodes, on generated e-graphs of
// 10^5 e-nodes: the giant class (a deep chain of rounds) and the random
// shape. It also reports the e-node touches per e-node (RebuildRounds
// touches each e-node once a round).
func BenchmarkRebuildIncremental(b *testing.B) {
	methods := []struct {
		name string
		f    func(*Graph) (*RebuildResult, error)
	}{{"rounds", RebuildRounds}, {"incremental", RebuildIncremental}}
	for _, cfg := range []GenConfig{{Nodes: 100_000, Seed: 7, Shape: ShapeGiantClass}, {Nodes: 100_000, Seed: 1, Shape: ShapeRandom}} {
		g := benchGraph(b, cfg)
		for _, m := range methods {
			b.Run(fmt.Sprintf("gen%d-%s/%s", cfg.Nodes, cfg.Shape, m.name), func(b *testing.B) {
				benchRebuild(b, g, m.f)
				res, err := m.f(g)
				if err != nil {
					b.Fatal(err)
				}
				touches := res.NodeTouches
				if touches == 0 {
					touches = res.Rounds * res.Nodes
				}
				b.ReportMetric(float64(touches)/float64(res.Nodes), "touches/e-node")
			})
		}
	}
}
