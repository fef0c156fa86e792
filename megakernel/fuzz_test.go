package megakernel_test

import (
	"bytes"
	"errors"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/internal/checked"
	"github.com/gpuplan/gpuplan/megakernel"

	"github.com/gpuplan/gpuplan/internal/memcheck"
)

// depsFromBytes turns fuzz bytes into a wave count and dependencies.
func depsFromBytes(n uint8, raw []byte) (int, []megakernel.Dependency) {
	waves := int(n % 64)
	var ds []megakernel.Dependency
	for i := 0; i+1 < len(raw) && len(ds) < 512; i += 2 {
		// Mostly in range, sometimes out of range or negative.
		a, b := int(int8(raw[i]))%70, int(int8(raw[i+1]))%70
		ds = append(ds, megakernel.Dependency{Before: a, After: b})
	}
	return waves, ds
}

func requireFix(t *testing.T, err error) {
	t.Helper()
	require.True(t, strings.Contains(err.Error(), "Fix:"), "error without a Fix: %v", err)
}

// FuzzPlanBarriers: the barrier, per-producer wait and frontier memory
// planners never panic; results satisfy the invariants, errors are typed and
// carry "Fix:", and the three planners agree on validation errors.
func FuzzPlanBarriers(f *testing.F) {
	f.Add(uint8(4), []byte{0, 1, 0, 2, 1, 3, 2, 3}, uint32(1000))
	f.Add(uint8(2), []byte{0, 1, 1, 0}, uint32(1000))
	f.Add(uint8(3), []byte{1, 1}, uint32(10))
	f.Add(uint8(0), []byte{5, 7}, uint32(0))
	f.Add(uint8(5), []byte{0, 1, 1, 2, 2, 3, 3, 1, 3, 4}, uint32(77))
	f.Fuzz(func(t *testing.T, n uint8, raw []byte, budget uint32) {
		// No input makes memory grow faster than the input itself.
		memcheck.Check(t, memcheck.Bound{Base: 1 << 20, PerByte: 256}, len(raw)+16, func() {
			waves, ds := depsFromBytes(n, raw)
			p, err := megakernel.PlanBarriers(waves, ds)
			w, werr := megakernel.PlanProducerWaits(waves, ds)
			if err != nil {
				requireFix(t, err)
				require.Equal(t, err, werr)
				var iw *megakernel.InvalidWaveError
				var sd *megakernel.SelfDependencyError
				var cy *megakernel.CycleError
				switch {
				case errors.As(err, &iw), errors.As(err, &sd):
				case errors.As(err, &cy):
					require.Positive(t, cy.UnscheduledWaves)
					checkWitness(t, ds, cy.Witness)
				default:
					t.Fatalf("unexpected error %T: %v", err, err)
				}
				return
			}
			require.NoError(t, werr)
			checkBarrierInvariants(t, waves, ds, p)
			checkWaitInvariants(t, waves, ds, w)
			fw := make([]megakernel.FrontierWave, waves)
			for i := range fw {
				fw[i] = megakernel.FrontierWave{FrontierBytes: uint64(i*37) % 101, ScratchBytes: uint64(i*11) % 29, OutputBytes: uint64(i) % 13}
			}
			req := megakernel.FrontierMemoryRequest{Waves: fw, Dependencies: ds, ResidentGraphBytes: uint64(budget % 50), BudgetBytes: uint64(budget % 1000), ReadbackBytes: uint64(budget)}
			m, err := megakernel.PlanFrontierMemory(req)
			if err != nil {
				requireFix(t, err)
				var g *megakernel.GroupOverBudgetError
				require.ErrorAs(t, err, &g)
				require.Greater(t, g.RequiredBytes, g.BudgetBytes)
				return
			}
			checkMemoryInvariants(t, req, p, m)
		})
	})
}

// FuzzPlanExecution: topology selection, memory plans, the homotopy
// scheduler and the plan cache never panic on any float or size, and their
// results respect the budget and the documented ranges.
func FuzzPlanExecution(f *testing.F) {
	f.Add(1000.0, 0.5, uint64(1<<20), 250.0, 0.9, uint64(1000), uint64(4000), uint64(4096), uint64(2048), uint64(512), uint64(128<<10), false)
	f.Add(math.NaN(), math.Inf(1), uint64(0), math.Inf(-1), math.NaN(), uint64(math.MaxUint64), uint64(1), uint64(0), uint64(math.MaxUint64), uint64(0), uint64(0), true)
	f.Fuzz(func(t *testing.T, cost, density float64, readback uint64, launch, fusion float64, nodes, edges, frontier, scratch, output, budget uint64, noSync bool) {
		// No input makes memory grow faster than the input itself.
		memcheck.Check(t, memcheck.Bound{Base: 1 << 20, PerByte: 256}, 96, func() {
			s := megakernel.ScheduleSample{DispatchCostNS: cost, FrontierDensity: density, ReadbackBytes: readback}
			req := megakernel.MemoryRequest{Graph: megakernel.GraphShape{NodeCount: nodes, EdgeCount: edges}, BytesPerNode: 16, BytesPerEdge: 8,
				FrontierBytes: frontier, ScratchBytes: scratch, OutputBytes: output, BudgetBytes: budget}
			d := megakernel.SelectTopology(s, req.Graph, megakernel.MemoryBudget{RequiredBytes: frontier, BudgetBytes: budget}, launch, fusion)
			require.LessOrEqual(t, d.MemoryPressureBPS, uint32(10000))
			require.True(t, strings.HasPrefix(d.StableExplanation(), "megakernel-topology-v1|topology="+d.Topology.String()+"|"))
			for prev := megakernel.WarpSparseFrontier; prev <= megakernel.FusedWave; prev++ {
				sd := megakernel.SelectTopologyStable(s, req.Graph, megakernel.MemoryBudget{RequiredBytes: frontier, BudgetBytes: budget}, launch, fusion, prev)
				if d.MemoryPressureBPS >= megakernel.MemoryRedZoneBPS {
					require.Equal(t, d.Topology, sd.Topology)
				}
			}
			check := func(p megakernel.ExecutionPlan, err error) {
				if err != nil {
					requireFix(t, err)
					var ob *megakernel.OverBudgetError
					var of *checked.OverflowError
					if errors.As(err, &ob) {
						require.Greater(t, ob.RequiredBytes, ob.BudgetBytes)
					} else {
						require.ErrorAs(t, err, &of)
					}
					return
				}
				require.LessOrEqual(t, p.Memory.RequiredBytes, budget)
				require.Equal(t, p.DowngradedToSparse, p.Topology != p.Decision.Topology)
			}
			check(megakernel.PlanExecution(s, req, launch, fusion))
			id := megakernel.PlanIdentity{Device: megakernel.DeviceKey{SMMajor: 9, WarpSize: 32, SupportsGridSync: !noSync}}
			c := megakernel.NewPlanCache(2)
			p, err := c.GetOrPlanExecution(id, s, req, launch, fusion)
			check(p, err)
			if err == nil && noSync {
				require.NotEqual(t, megakernel.FusedWave, p.Decision.Topology)
			}
			out, err := megakernel.ScheduleFusionPressure([]megakernel.ScheduleSample{s, {DispatchCostNS: 1, FrontierDensity: 0.5}}, launch, int(readback%100), fusion)
			if err != nil {
				requireFix(t, err)
				return
			}
			for _, x := range out {
				require.True(t, x >= 0 && x <= 1, "pressure %v", x)
			}
		})
	})
}

// FuzzDecodeWorkload: the strict workload decoder and the workload planner
// never panic; every error names its cause with a "Fix:"; a successful plan
// satisfies the barrier and wait invariants.
func FuzzDecodeWorkload(f *testing.F) {
	f.Add([]byte(minimalWorkload))
	if data, err := os.ReadFile("../cmd/gpuplan/plan_default.json"); err == nil {
		f.Add(data)
	}
	for _, ex := range []string{"../examples/quickstart/quickstart.json", "../examples/taint/taint.json"} {
		if data, err := os.ReadFile(ex); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(moduleWorkload))
	f.Add([]byte(`{"analysis":"ifds"}`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{"waves":[{"id":0}]} x`))
	dev := h100(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		// No input makes memory grow faster than the input itself.
		memcheck.Check(t, memcheck.Bound{Base: 1 << 20, PerByte: 256}, len(data), func() {
			w, err := megakernel.DecodeWorkload("fuzz.json", data)
			if err != nil {
				requireFix(t, err)
				return
			}
			p, err := megakernel.PlanWorkload("fuzz.json", w, dev, "h100-sxm", nil)
			if err != nil {
				requireFix(t, err)
				return
			}
			if p.Tiles != nil {
				checkTilePlan(t, p.Tiles, len(w.FrontierWaves()))
			}
			// Groups partition the waves; every dependency runs forward across
			// groups; every wait is a real dependency.
			n := len(w.FrontierWaves())
			groupOf := make([]int, n)
			for i := range groupOf {
				groupOf[i] = -1
			}
			for g, members := range p.Groups {
				for _, id := range members {
					require.Equal(t, -1, groupOf[id])
					groupOf[id] = g
				}
			}
			direct := map[[2]int]bool{}
			for _, d := range w.WaveDependencies() {
				require.Less(t, groupOf[d.Before], groupOf[d.After])
				direct[[2]int{d.Before, d.After}] = true
			}
			for v, ws := range p.Waits {
				for _, q := range ws {
					require.True(t, direct[[2]int{q, v}])
				}
			}
			require.Equal(t, max(len(p.Groups)-1, 0), p.GlobalBarriers)
			require.LessOrEqual(t, p.Execution.Memory.RequiredBytes, p.BudgetBytes)
			var buf bytes.Buffer
			require.NoError(t, p.WriteText(&buf))
		})
	})
}

// moduleWorkload is a small workload whose waves run kernels, with every
// tile map.
const moduleWorkload = `{"device": "h200", "module": "m.ptx",
 "buffers": [{"name": "a", "bytes": 64}, {"name": "b", "bytes": 64, "init": {"fill": "random", "seed": 1, "type": "f32"}}],
 "outputs": [{"buffer": "a", "type": "f32", "tolerance": 0.001}],
 "waves": [
  {"id": 0, "kernel": {"function": "f", "tiles": 4, "block": 32, "args": [{"buffer": "a", "offset": 8, "bytes": 8}, {"u32": 3}]}},
  {"id": 1, "kernel": {"function": "g", "tiles": 4, "block": 32, "prologue": true, "shared_bytes": 64, "args": [{"f32": 1.5}]}},
  {"id": 2, "kernel": {"function": "g", "tiles": 2, "block": 64, "args": []}}],
 "dependencies": [{"before": 0, "after": 1, "tiles": "same"}, {"before": 0, "after": 2, "tiles": "block:2"}, {"before": 1, "after": 2}]}`

// checkTilePlan holds a tile plan's invariants: the order is a topological
// permutation of the waves, the units partition it, and a unit's later
// waves wait only on the wave before them.
func checkTilePlan(t *testing.T, p *megakernel.TilePlan, n int) {
	pos := make([]int, n)
	for i := range pos {
		pos[i] = -1
	}
	for i, v := range p.Order {
		require.Equal(t, -1, pos[v])
		pos[v] = i
	}
	for v := range n {
		require.GreaterOrEqual(t, pos[v], 0)
		for _, w := range p.WaitsOf(v) {
			require.Less(t, pos[w.Producer], pos[v])
		}
	}
	next := int32(0)
	var tasks uint64
	for u := range p.Units {
		require.Equal(t, next, p.Units[u].First)
		next += p.Units[u].Count
		tasks += p.Units[u].Tiles
		ws := p.UnitWaves(u)
		for j := 1; j < len(ws); j++ {
			waits := p.WaitsOf(int(ws[j]))
			require.Len(t, waits, 1)
			require.Equal(t, ws[j-1], waits[0].Producer)
		}
	}
	require.Equal(t, int32(n), next)
	require.Equal(t, tasks, p.Tasks)
}
