package megakernel_test

import (
	"math/rand/v2"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gpuplan/gpuplan/megakernel"
)

// benchDAG is a random layered DAG: 1000 layers of 1000 waves, 4,000,000
// dependencies. Every wave past layer 0 has one producer in the previous
// layer; the other dependencies come from the previous four layers.
type benchDAG struct {
	waves []megakernel.FrontierWave
	deps  []megakernel.Dependency
}

const (
	benchLayers = 1000
	benchWidth  = 1000
	benchDeps   = 4_000_000
)

var benchOnce = sync.OnceValue(func() benchDAG {
	r := rand.New(rand.NewPCG(1, 2))
	n := benchLayers * benchWidth
	ds := make([]megakernel.Dependency, 0, benchDeps)
	for v := benchWidth; v < n; v++ {
		k := v / benchWidth
		ds = append(ds, megakernel.Dependency{Before: (k-1)*benchWidth + r.IntN(benchWidth), After: v})
	}
	for len(ds) < benchDeps {
		v := benchWidth + r.IntN(n-benchWidth)
		k := v / benchWidth
		pk := k - 1 - r.IntN(min(k, 4))
		ds = append(ds, megakernel.Dependency{Before: pk*benchWidth + r.IntN(benchWidth), After: v})
	}
	r.Shuffle(len(ds), func(i, j int) { ds[i], ds[j] = ds[j], ds[i] })
	waves := make([]megakernel.FrontierWave, n)
	for i := range waves {
		waves[i] = megakernel.FrontierWave{FrontierBytes: r.Uint64N(4096), ScratchBytes: r.Uint64N(1024), OutputBytes: r.Uint64N(512)}
	}
	return benchDAG{waves: waves, deps: ds}
})

// cpuTime returns the process's user+system CPU time. The benchmarks report
// it per op next to ns/op because the shared 2-core machine is often
// oversubscribed, which inflates wall time but not CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkBarriersAndMemorySplit is the target: barrier planning
// plus the frontier memory split of the 1M-wave, 4M-dependency DAG (target:
// at most 1 s and 200 MB per op on a 2-core machine).
func BenchmarkBarriersAndMemorySplit(b *testing.B) {
	d := benchOnce()
	req := megakernel.FrontierMemoryRequest{Waves: d.waves, Dependencies: d.deps, ResidentGraphBytes: 1 << 30,
		BudgetBytes: 1<<30 + 2<<20, ReadbackBytes: 4096}
	b.ReportAllocs()
	b.ResetTimer()
	var p megakernel.FrontierMemoryPlan
	n, cpu0 := 0, cpuTime()
	for b.Loop() {
		var err error
		if p, err = megakernel.PlanFrontierMemory(req); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(n)/1e6, "cpu-ms/op")
	b.ReportMetric(float64(p.Layers), "layers")
	b.ReportMetric(float64(p.Barriers.GlobalBarriers), "barriers")
}

// BenchmarkPlanBarriers is the layered plan alone.
func BenchmarkPlanBarriers(b *testing.B) {
	d := benchOnce()
	b.ReportAllocs()
	b.ResetTimer()
	var p megakernel.BarrierPlan
	for b.Loop() {
		var err error
		if p, err = megakernel.PlanBarriers(len(d.waves), d.deps); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(p.GlobalBarriers), "grid-barriers")
}

// BenchmarkProducerWaits is the per-producer wait form of the same DAG. It
// reports the grid-wide barriers of the layered plan next to the counter
// waits that remain.
func BenchmarkProducerWaits(b *testing.B) {
	d := benchOnce()
	layered, err := megakernel.PlanBarriers(len(d.waves), d.deps)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	var w megakernel.ProducerWaitPlan
	n, cpu0 := 0, cpuTime()
	for b.Loop() {
		if w, err = megakernel.PlanProducerWaits(len(d.waves), d.deps); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(n)/1e6, "cpu-ms/op")
	b.ReportMetric(float64(layered.GlobalBarriers), "grid-barriers")
	b.ReportMetric(float64(w.Stats.Waits), "waits")
	b.ReportMetric(float64(w.Stats.DuplicatesDropped), "dup-dropped")
	b.ReportMetric(float64(w.Stats.RedundantDropped), "redundant-dropped")
	if !w.Stats.ReductionComplete {
		b.Log("triangle reduction hit its work cap")
	}
}

// BenchmarkPlanCacheLookup is a cache hit through GetOrSelectTopology
// (target: at most 1 us).
func BenchmarkPlanCacheLookup(b *testing.B) {
	c := megakernel.NewPlanCache(megakernel.DefaultMaxPlans)
	for h := uint64(0); h < megakernel.DefaultMaxPlans; h++ {
		c.GetOrSelectTopology(identity(h), sample(0.5, 1<<20), degree4, mem1000, 250, 0.9)
	}
	id := identity(77)
	s := sample(0.5, 1<<20)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		c.GetOrSelectTopology(id, s, degree4, mem1000, 250, 0.9)
	}
}

// BenchmarkPlanFrontierExecution is the frontier execution planner on
// vyre's diamond.
func BenchmarkPlanFrontierExecution(b *testing.B) {
	c := megakernel.NewPlanCache(megakernel.DefaultMaxPlans)
	req := diamondRequest()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := megakernel.PlanFrontierExecution(c, req); err != nil {
			b.Fatal(err)
		}
	}
}
