package megakernel

import (
	"fmt"
	"hash/fnv"
	"slices"

	"github.com/gpuplan/gpuplan/internal/checked"
	"github.com/gpuplan/gpuplan/planners"
)

// TileWave is one wave of a tile plan: its tile count, block size, dynamic
// shared memory, whether it has a prologue, and the bytes the launch
// fusion plan weighs.
type TileWave struct {
	Tiles         uint64 `json:"tiles"`
	Threads       uint64 `json:"threads"`
	SharedBytes   uint64 `json:"shared_bytes"`
	Prologue      bool   `json:"prologue,omitempty"`
	FrontierBytes uint64 `json:"frontier_bytes,omitempty"`
	ScratchBytes  uint64 `json:"scratch_bytes,omitempty"`
	OutputBytes   uint64 `json:"output_bytes,omitempty"`
}

// TileDependency is a dependency with the producer tiles each consumer
// tile reads.
type TileDependency struct {
	Before int     `json:"before"`
	After  int     `json:"after"`
	Map    TileMap `json:"tiles"`
}

// TileRequest is the input of PlanTiles.
type TileRequest struct {
	Waves        []TileWave       `json:"waves"`
	Dependencies []TileDependency `json:"dependencies"`
	// BudgetBytes bounds a fused unit's bytes in the launch fusion plan.
	BudgetBytes uint64 `json:"budget_bytes"`
}

// TileWait is one wait of a wave in the tile plan: on Producer's tiles
// through Map.
type TileWait struct {
	Producer int32   `json:"producer"`
	Map      TileMap `json:"tiles"`
}

// TileUnit is one task kind of the persistent waits arm: waves
// Order[First:First+Count], fused by the launch fusion plan, each tile of
// which runs all of them in order in one block.
type TileUnit struct {
	First int32  `json:"first"`
	Count int32  `json:"count"`
	Tiles uint64 `json:"tiles"`
}

// TilePlan is how a persistent kernel runs a wave DAG tile by tile: a
// topological task order, the launch fusion plan's units, each wave's
// waits after the reductions, and what the kernel will count.
type TilePlan struct {
	// Order lists every wave, producers first, with each fusible chain
	// contiguous.
	Order []int32 `json:"order"`
	// Units are the fused task kinds in Order; Fusion is the plan behind
	// them.
	Units  []TileUnit                `json:"units"`
	Fusion planners.LaunchFusionPlan `json:"fusion"`
	// WaitStart has one entry per wave plus one, into Waits.
	WaitStart []int32    `json:"wait_start"`
	Waits     []TileWait `json:"waits"`
	// Flags marks the waves whose tiles publish per-tile done flags: those
	// a unit's first wave reads through "same" or "block:K" (a wave fused
	// after its producer reads the tile its own block just ran).
	Flags []bool `json:"flags"`
	// Tasks is the queue's entries: every unit's tiles.
	Tasks uint64 `json:"tasks"`
	// CounterWaits is the counter and flag checks the waits arm makes: one
	// per tile for a wait on all or the same tile, one per producer tile
	// for a block.
	CounterWaits uint64 `json:"counter_waits"`
	// WaveWaits is the wave-level producer wait plan of the dependencies
	// that read every producer tile, whose triangle rule the tile plan
	// applies.
	WaveWaits WaitStats `json:"wave_wait_stats"`
	// Dropped counts the finer waits dropped because a wait on all of the
	// same producer covers them.
	Dropped int `json:"finer_waits_dropped"`
}

// WaitsOf returns wave v's waits; the slice aliases the plan.
func (p *TilePlan) WaitsOf(v int) []TileWait { return p.Waits[p.WaitStart[v]:p.WaitStart[v+1]] }

// UnitWaves returns the waves of unit u; the slice aliases the plan.
func (p *TilePlan) UnitWaves(u int) []int32 {
	return p.Order[p.Units[u].First : p.Units[u].First+p.Units[u].Count]
}

// PlanTiles plans a wave DAG for a persistent kernel that starts each
// tile as soon as the producer tiles it reads are done. The dependencies
// are validated as PlanBarriers validates them (the same errors, a cycle's
// witness included). Waits on every tile of a producer follow the producer
// wait plan (duplicates and triangle-redundant waits dropped); a finer wait
// is kept unless a wait on all of the same producer covers it. The order
// is Kahn's, except that a wave whose only producer is the wave just
// placed, read tile for tile with the same shape, follows it at once: such
// runs are the stages PlanLaunchFusion fuses (a stage that cannot join its
// predecessor requires host materialisation in the fusion plan's terms, and
// stages of another tile shape carry another layout hash).
func PlanTiles(req TileRequest) (TilePlan, error) {
	n := len(req.Waves)
	deps := make([]Dependency, len(req.Dependencies))
	for i, d := range req.Dependencies {
		deps[i] = Dependency{Before: d.Before, After: d.After}
	}
	if _, err := PlanBarriers(n, deps); err != nil {
		return TilePlan{}, err
	}
	for i, w := range req.Waves {
		if w.Tiles == 0 || w.Tiles > MaxWaveTiles || w.Threads == 0 || w.Threads > MaxBlockThreads {
			return TilePlan{}, fmt.Errorf("waves[%d] has %d tiles of %d threads. Fix: give 1 to %d tiles of 1 to %d threads", i, w.Tiles, w.Threads, MaxWaveTiles, MaxBlockThreads)
		}
	}
	var all []Dependency
	for _, d := range req.Dependencies {
		if d.Map.Kind == TileAll {
			all = append(all, Dependency{Before: d.Before, After: d.After})
		}
	}
	wave, err := PlanProducerWaits(n, all)
	if err != nil {
		return TilePlan{}, err
	}
	p := TilePlan{WaveWaits: wave.Stats, Flags: make([]bool, n)}
	p.WaitStart, p.Waits, p.Dropped = tileWaits(n, wave, req.Dependencies, all)
	p.Order = p.fusibleOrder(req)
	if err := p.fuse(req); err != nil {
		return TilePlan{}, err
	}
	return p, p.count(req)
}

// tileWaits merges the reduced waits on all tiles with the finer ones,
// dropping a finer wait that a dependency on all of the same producer
// covers (kept or implied) and repeated finer waits.
func tileWaits(n int, wave ProducerWaitPlan, deps []TileDependency, all []Dependency) ([]int32, []TileWait, int) {
	covered := make(map[[2]int]bool, len(all))
	for _, d := range all {
		covered[[2]int{d.Before, d.After}] = true
	}
	finer := make([][]TileWait, n)
	dropped := 0
	for _, d := range deps {
		if d.Map.Kind == TileAll {
			continue
		}
		w := TileWait{Producer: int32(d.Before), Map: d.Map}
		if covered[[2]int{d.Before, d.After}] || slices.Contains(finer[d.After], w) {
			dropped++
			continue
		}
		finer[d.After] = append(finer[d.After], w)
	}
	start := make([]int32, n+1)
	var waits []TileWait
	for v := range n {
		for _, q := range wave.Waits(v) {
			waits = append(waits, TileWait{Producer: q})
		}
		waits = append(waits, finer[v]...)
		start[v+1] = int32(len(waits))
	}
	return start, waits, dropped
}

// fusibleAfter returns the wave that may follow v in one task, or -1: a
// wave whose only wait is on all of v or v's same tile, with v's shape.
func (p *TilePlan) fusibleAfter(req TileRequest, v int, consumers [][]int32) int {
	if len(consumers[v]) == 0 {
		return -1
	}
	for _, c := range consumers[v] {
		ws := p.WaitsOf(int(c))
		a, b := req.Waves[v], req.Waves[c]
		if len(ws) != 1 || a.Tiles != b.Tiles || a.Threads != b.Threads {
			continue
		}
		if m := ws[0].Map.Kind; m == TileSame || (m == TileAll && a.Tiles == 1) {
			return int(c)
		}
	}
	return -1
}

// fusibleOrder is Kahn's order over the waits, with a fusible successor
// placed right after its producer.
func (p *TilePlan) fusibleOrder(req TileRequest) []int32 {
	n := len(req.Waves)
	consumers := make([][]int32, n)
	indeg := make([]int32, n)
	for v := range n {
		for _, w := range p.WaitsOf(v) {
			consumers[w.Producer] = append(consumers[w.Producer], int32(v))
			indeg[v]++
		}
	}
	order := make([]int32, 0, n)
	var ready []int32
	for v := range n {
		if indeg[v] == 0 {
			ready = append(ready, int32(v))
		}
	}
	placed := make([]bool, n)
	emit := func(v int32) {
		placed[v] = true
		order = append(order, v)
		for _, c := range consumers[v] {
			if indeg[c]--; indeg[c] == 0 {
				ready = append(ready, c)
			}
		}
	}
	for head := 0; head < len(ready); head++ {
		v := ready[head]
		if placed[v] {
			continue
		}
		emit(v)
		for next := p.fusibleAfter(req, int(v), consumers); next >= 0 && !placed[next]; next = p.fusibleAfter(req, next, consumers) {
			emit(int32(next))
		}
	}
	return order
}

// fuse runs the launch fusion plan over Order and turns its groups into
// units.
func (p *TilePlan) fuse(req TileRequest) error {
	n := len(req.Waves)
	stages := make([]planners.LaunchFusionStage, n)
	consumers := make([][]int32, n)
	for v := range n {
		for _, w := range p.WaitsOf(v) {
			consumers[w.Producer] = append(consumers[w.Producer], int32(v))
		}
	}
	for i, v := range p.Order {
		w := req.Waves[v]
		h := fnv.New64a()
		fmt.Fprintf(h, "%d/%d", w.Tiles, w.Threads)
		joins := i > 0 && p.joins(req, int(p.Order[i-1]), int(v))
		stages[i] = planners.LaunchFusionStage{ID: uint32(v), LayoutHash: h.Sum64(), InputBytes: w.FrontierBytes,
			OutputBytes: w.OutputBytes, ScratchBytes: w.ScratchBytes, RequiresHostMaterialization: !joins}
	}
	budget := max(req.BudgetBytes, 1)
	fp, err := planners.PlanLaunchFusion(stages, budget)
	if err != nil {
		return err
	}
	p.Fusion = fp
	first := int32(0)
	for _, g := range fp.Groups {
		w := req.Waves[p.Order[first]]
		p.Units = append(p.Units, TileUnit{First: first, Count: int32(len(g.StageIDs)), Tiles: w.Tiles})
		first += int32(len(g.StageIDs))
	}
	return nil
}

// joins reports whether wave v may share prev's task: v's only wait is on
// prev's same tile (or all of a one-tile prev), with prev's shape.
func (p *TilePlan) joins(req TileRequest, prev, v int) bool {
	ws := p.WaitsOf(v)
	a, b := req.Waves[prev], req.Waves[v]
	if len(ws) != 1 || int(ws[0].Producer) != prev || a.Tiles != b.Tiles || a.Threads != b.Threads {
		return false
	}
	return ws[0].Map.Kind == TileSame || (ws[0].Map.Kind == TileAll && a.Tiles == 1)
}

// count sums the tasks and the checks the waits arm makes: only a unit's
// first wave waits, the others follow it in the same block.
func (p *TilePlan) count(req TileRequest) error {
	for _, u := range p.Units {
		var err error
		if p.Tasks, err = checked.Add(p.Tasks, u.Tiles, "persistent tasks"); err != nil {
			return err
		}
		v := int(p.Order[u.First])
		for _, w := range p.WaitsOf(v) {
			if w.Map.Kind != TileAll {
				p.Flags[w.Producer] = true
			}
			c := u.Tiles
			if w.Map.Kind == TileBlock {
				c = blockChecks(w.Map, u.Tiles, req.Waves[w.Producer].Tiles)
			}
			if p.CounterWaits, err = checked.Add(p.CounterWaits, c, "counter waits"); err != nil {
				return err
			}
		}
	}
	if p.Tasks > MaxRunTiles {
		return fmt.Errorf("the plan has %d tasks. Fix: give the waves at most %d tiles together", p.Tasks, MaxRunTiles)
	}
	return nil
}

// blockChecks sums, over c consumer tiles, the producer tiles each reads
// through a block map from a producer of pt tiles.
func blockChecks(m TileMap, c, pt uint64) uint64 {
	full := pt / m.Block // tiles [0, full) read a whole block each
	if full >= c {
		return c * m.Block
	}
	return full*m.Block + pt%m.Block
}
