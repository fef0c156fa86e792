package megakernel_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/megakernel"
)

func tileWaves(tiles ...uint64) []megakernel.TileWave {
	out := make([]megakernel.TileWave, len(tiles))
	for i, t := range tiles {
		out[i] = megakernel.TileWave{Tiles: t, Threads: 128}
	}
	return out
}

func tdep(b, a int, m megakernel.TileMap) megakernel.TileDependency {
	return megakernel.TileDependency{Before: b, After: a, Map: m}
}

var (
	all  = megakernel.TileMap{}
	same = megakernel.TileMap{Kind: megakernel.TileSame}
)

func block(k uint64) megakernel.TileMap {
	return megakernel.TileMap{Kind: megakernel.TileBlock, Block: k}
}

func TestPlanTiles(t *testing.T) {
	cases := []struct {
		name     string
		waves    []megakernel.TileWave
		deps     []megakernel.TileDependency
		order    []int32
		units    [][]int32
		waits    uint64
		tasks    uint64
		flags    []bool
		dropped  int
		implied  int
		fusedAll bool
	}{
		{name: "same-tile chain fuses into one task", waves: tileWaves(4, 4, 4),
			deps:  []megakernel.TileDependency{tdep(0, 1, same), tdep(1, 2, same)},
			order: []int32{0, 1, 2}, units: [][]int32{{0, 1, 2}}, waits: 0, tasks: 4, flags: []bool{false, false, false}},
		{name: "one-tile chain on all fuses too", waves: tileWaves(1, 1, 1),
			deps:  []megakernel.TileDependency{tdep(0, 1, all), tdep(1, 2, all)},
			order: []int32{0, 1, 2}, units: [][]int32{{0, 1, 2}}, waits: 0, tasks: 1, flags: []bool{false, false, false}},
		{name: "all over many tiles waits on the counter", waves: tileWaves(4, 4),
			deps:  []megakernel.TileDependency{tdep(0, 1, all)},
			order: []int32{0, 1}, units: [][]int32{{0}, {1}}, waits: 4, tasks: 8, flags: []bool{false, false}},
		{name: "block reads flags", waves: tileWaves(8, 3),
			deps:  []megakernel.TileDependency{tdep(0, 1, block(3))},
			order: []int32{0, 1}, units: [][]int32{{0}, {1}}, waits: 3 + 3 + 2, tasks: 11, flags: []bool{true, false}},
		{name: "triangle drops the implied wait on all", waves: tileWaves(2, 2, 2),
			deps:  []megakernel.TileDependency{tdep(0, 1, all), tdep(1, 2, all), tdep(0, 2, all)},
			order: []int32{0, 1, 2}, units: [][]int32{{0}, {1}, {2}}, waits: 4, tasks: 6, flags: []bool{false, false, false}, implied: 1},
		{name: "a finer wait under a wait on all is dropped", waves: tileWaves(2, 2),
			deps:  []megakernel.TileDependency{tdep(0, 1, all), tdep(0, 1, same)},
			order: []int32{0, 1}, units: [][]int32{{0}, {1}}, waits: 2, tasks: 4, flags: []bool{false, false}, dropped: 1},
		{name: "a finer wait is not implied through another producer", waves: tileWaves(2, 2, 2),
			deps:  []megakernel.TileDependency{tdep(0, 1, same), tdep(1, 2, all), tdep(0, 2, same)},
			order: []int32{0, 1, 2}, units: [][]int32{{0, 1}, {2}}, waits: 2 + 2, tasks: 4, flags: []bool{true, false, false}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := megakernel.PlanTiles(megakernel.TileRequest{Waves: c.waves, Dependencies: c.deps, BudgetBytes: 1 << 30})
			require.NoError(t, err)
			require.Equal(t, c.order, p.Order)
			var units [][]int32
			for u := range p.Units {
				units = append(units, append([]int32(nil), p.UnitWaves(u)...))
			}
			require.Equal(t, c.units, units)
			require.Equal(t, c.waits, p.CounterWaits, "counter waits")
			require.Equal(t, c.tasks, p.Tasks, "tasks")
			require.Equal(t, c.flags, p.Flags, "flags")
			require.Equal(t, c.dropped, p.Dropped, "finer waits dropped")
			require.Equal(t, c.implied, p.WaveWaits.RedundantDropped, "implied waits dropped")
			require.Equal(t, uint32(len(p.Units)), p.Fusion.LaunchCount)
		})
	}
}

func TestPlanTilesRefuses(t *testing.T) {
	_, err := megakernel.PlanTiles(megakernel.TileRequest{Waves: tileWaves(2, 2), Dependencies: []megakernel.TileDependency{tdep(0, 1, all), tdep(1, 0, all)}})
	var cy *megakernel.CycleError
	require.ErrorAs(t, err, &cy)
	_, err = megakernel.PlanTiles(megakernel.TileRequest{Waves: tileWaves(0)})
	require.ErrorContains(t, err, "Fix:")
	// A wave above the fusion budget on its own is refused with its bytes.
	w := tileWaves(1)
	w[0].OutputBytes = 100
	_, err = megakernel.PlanTiles(megakernel.TileRequest{Waves: w, BudgetBytes: 10})
	require.ErrorContains(t, err, "alone needs 100 bytes")
}

// randomTileDAG draws a DAG whose dependencies carry every tile map.
func randomTileDAG(r *rand.Rand) megakernel.TileRequest {
	n := 1 + r.IntN(24)
	req := megakernel.TileRequest{BudgetBytes: 1 << 40}
	for range n {
		req.Waves = append(req.Waves, megakernel.TileWave{Tiles: uint64(1 + r.IntN(5)), Threads: 32 * uint64(1+r.IntN(2)), Prologue: r.IntN(3) == 0})
	}
	for a := 1; a < n; a++ {
		for range r.IntN(4) {
			b := r.IntN(a)
			m := all
			switch r.IntN(4) {
			case 1:
				if req.Waves[b].Tiles == req.Waves[a].Tiles {
					m = same
				}
			case 2:
				k := uint64(1 + r.IntN(3))
				if (req.Waves[a].Tiles-1)*k < req.Waves[b].Tiles {
					m = block(k)
				}
			}
			req.Dependencies = append(req.Dependencies, tdep(b, a, m))
		}
	}
	return req
}

// Property: run the tile plan as the persistent waits arm does, tasks
// claimed in order by a few blocks in a random interleaving, a unit's first
// wave starting once its planned waits hold: it never deadlocks, and every
// tile runs after every producer tile its declared dependencies read.
func TestPlanTilesRunsEveryDependency(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for trial := range 400 {
		req := randomTileDAG(r)
		p, err := megakernel.PlanTiles(req)
		require.NoError(t, err)
		done := make([][]bool, len(req.Waves))
		count := make([]uint64, len(req.Waves))
		for v, w := range req.Waves {
			done[v] = make([]bool, w.Tiles)
		}
		ready := func(v int, tile uint64) bool {
			for _, w := range p.WaitsOf(v) {
				lo, hi := w.Map.Producers(tile, req.Waves[w.Producer].Tiles)
				if w.Map.Kind == megakernel.TileAll && count[w.Producer] < req.Waves[w.Producer].Tiles {
					return false
				}
				for q := lo; q < hi; q++ {
					if !done[w.Producer][q] {
						return false
					}
				}
			}
			return true
		}
		type task struct{ unit, tile uint64 }
		var queue []task
		for u, unit := range p.Units {
			for tile := range unit.Tiles {
				queue = append(queue, task{uint64(u), tile})
			}
		}
		blocks := make([]*task, 1+r.IntN(4))
		head := 0
		idle := func() bool {
			for _, b := range blocks {
				if b != nil {
					return false
				}
			}
			return head == len(queue)
		}
		for steps := 0; !idle(); steps++ {
			require.Less(t, steps, 1<<20)
			moved := false
			for _, k := range r.Perm(len(blocks)) {
				if blocks[k] == nil {
					if head < len(queue) {
						blocks[k] = &queue[head]
						head++
						moved = true
					}
					continue
				}
				tk := blocks[k]
				waves := p.UnitWaves(int(tk.unit))
				if !ready(int(waves[0]), tk.tile) {
					continue
				}
				for _, v := range waves {
					// Every declared dependency's producer tiles are done.
					for _, d := range req.Dependencies {
						if d.After != int(v) {
							continue
						}
						lo, hi := d.Map.Producers(tk.tile, req.Waves[d.Before].Tiles)
						for q := lo; q < hi; q++ {
							require.True(t, done[d.Before][q], "trial %d: wave %d tile %d ran before wave %d tile %d (%s)", trial, v, tk.tile, d.Before, q, fmt.Sprint(d.Map))
						}
					}
					done[v][tk.tile] = true
					count[v]++
				}
				blocks[k] = nil
				moved = true
				break
			}
			require.True(t, moved, "trial %d: the plan deadlocks", trial)
		}
		for v := range done {
			require.Equal(t, req.Waves[v].Tiles, count[v], "trial %d: wave %d", trial, v)
		}
	}
}
