package wavedag

import (
	"fmt"
	"slices"

	"github.com/gpuplan/gpuplan/internal/stats"
)

// DefaultRegisterCaps are the register caps the benchmark tries for the
// persistent arms when none is set (0: no cap, the heaviest wave
// function's count). A bandwidth-bound DAG gains from the co-resident
// blocks a lower cap gives; a DAG of register-heavy waves loses to spills.
var DefaultRegisterCaps = []int{0, 96, 64, 48}

// tuneRuns is the runs per persistent arm and register cap: the first is
// checked and untimed, the median of the rest scores the cap.
const tuneRuns = 4

// tieShare is how much faster a later cap must be to replace an earlier
// one: within it, the earlier (fewer spills) is kept.
const tieShare = 0.02

// RegisterTrial is one register cap the benchmark tried for the persistent
// arms: the registers the linked image got, its grid, and the median wall
// time of the faster persistent arm at that cap.
type RegisterTrial struct {
	Cap        int     `json:"cap"`
	Registers  int     `json:"registers"`
	GridBlocks uint32  `json:"grid_blocks"`
	Arm        Arm     `json:"arm"`
	WallNs     float64 `json:"wall_ns"`
}

// GridTrial is one grid the benchmark tried for the waits arm, and the
// arm's median wall time with it.
type GridTrial struct {
	GridBlocks uint32  `json:"grid_blocks"`
	WallNs     float64 `json:"wall_ns"`
}

// Tuning is the benchmark's choice of the persistent arms' launch shape:
// the register caps tried and the one kept, then the waits arm's grids
// tried and the one kept (none when the caller set the grid).
type Tuning struct {
	Registers  []RegisterTrial `json:"register_trials"`
	ChosenCap  int             `json:"chosen_cap"`
	Grids      []GridTrial     `json:"grid_trials,omitempty"`
	ChosenGrid uint32          `json:"chosen_grid_blocks,omitempty"`
}

// persistentArms returns the persistent arms among arms.
func persistentArms(arms []Arm) []Arm {
	return slices.DeleteFunc(slices.Clone(arms), func(a Arm) bool { return a != ArmBarriers && a != ArmWaits })
}

// tune tries each register cap of cfg.RegisterCaps on the persistent arms
// (every run checked) and keeps the fastest; a cap at or above the
// uncapped image's registers is skipped. Then, unless the caller set the
// grid, it tunes the waits arm's grid (tuneGrid). With fewer than two
// caps, or no persistent arm, it keeps the session's shape.
func (b *bench) tune() error {
	arms := persistentArms(b.cfg.Arms)
	if len(b.cfg.RegisterCaps) < 2 || len(arms) == 0 {
		return nil
	}
	t := &Tuning{}
	best, uncapped := -1, 0
	for _, c := range b.cfg.RegisterCaps {
		if c != 0 && uncapped > 0 && c >= uncapped {
			continue // the image already fits under c: the same as no cap
		}
		trial, err := b.trial(c, arms)
		if err != nil {
			return err
		}
		t.Registers = append(t.Registers, trial)
		if c == 0 {
			uncapped = trial.Registers
		}
		b.cfg.Log("register cap %s: %d registers, grid %d blocks, %s %s", capText(c), trial.Registers, trial.GridBlocks, trial.Arm, stats.FormatNs(trial.WallNs))
		if best < 0 || trial.WallNs < t.Registers[best].WallNs*(1-tieShare) {
			best = len(t.Registers) - 1
		}
	}
	t.ChosenCap = t.Registers[best].Cap
	if err := b.s.SetMaxRegisters(t.ChosenCap); err != nil {
		return err
	}
	b.cfg.Log("register cap: %s kept for the persistent arms", capText(t.ChosenCap))
	if slices.Contains(arms, ArmWaits) && b.cfg.Session.Grid == 0 {
		if err := b.tuneGrid(t); err != nil {
			return err
		}
	}
	b.res.Tuning = t
	b.res.Grid = b.s.Grid()
	return nil
}

// gridFactors are the waits arm's grids tried beside its default, in
// multiples of the widest layer's tiles: enough blocks to claim that many
// layers ahead, and fewer polling.
var gridFactors = []uint64{4, 1}

// tuneGrid tries the waits arm's default grid and the smaller grids of
// gridFactors, and keeps the fastest (the default within tieShare).
func (b *bench) tuneGrid(t *Tuning) error {
	def := b.s.Grid().GridBlocks
	grids := []uint32{def}
	for _, f := range gridFactors {
		if g := b.s.WidestLayerTiles() * f; g < uint64(def) && !slices.Contains(grids, uint32(g)) {
			grids = append(grids, uint32(g))
		}
	}
	if len(grids) < 2 {
		return nil
	}
	best := -1
	for _, g := range grids {
		if err := b.s.SetWaitsGrid(g); err != nil {
			return err
		}
		wall, err := b.median(ArmWaits)
		if err != nil {
			return fmt.Errorf("waits grid %d: %w", g, err)
		}
		t.Grids = append(t.Grids, GridTrial{GridBlocks: g, WallNs: wall})
		b.cfg.Log("waits grid %d blocks: %s", g, stats.FormatNs(wall))
		if best < 0 || wall < t.Grids[best].WallNs*(1-tieShare) {
			best = len(t.Grids) - 1
		}
	}
	t.ChosenGrid = t.Grids[best].GridBlocks
	b.cfg.Log("waits grid: %d blocks kept", t.ChosenGrid)
	return b.s.SetWaitsGrid(t.ChosenGrid)
}

// median runs arm tuneRuns times, every run checked, and returns the
// median wall time of all but the first.
func (b *bench) median(arm Arm) (float64, error) {
	walls := make([]float64, 0, tuneRuns-1)
	for i := range tuneRuns {
		r, err := b.runChecked(arm)
		if err != nil {
			return 0, err
		}
		if i > 0 {
			walls = append(walls, float64(r.WallNs))
		}
	}
	return stats.Median(walls), nil
}

// trial relinks the schedulers under cap c and scores it by the faster
// persistent arm's median wall time.
func (b *bench) trial(c int, arms []Arm) (RegisterTrial, error) {
	if err := b.s.SetMaxRegisters(c); err != nil {
		return RegisterTrial{}, err
	}
	tr := RegisterTrial{Cap: c, Registers: b.s.Registers(), GridBlocks: b.s.Grid().GridBlocks}
	for _, arm := range arms {
		m, err := b.median(arm)
		if err != nil {
			return tr, fmt.Errorf("register cap %s: %w", capText(c), err)
		}
		if tr.Arm == "" || m < tr.WallNs {
			tr.Arm, tr.WallNs = arm, m
		}
	}
	return tr, nil
}

// capText names a register cap.
func capText(c int) string {
	if c == 0 {
		return "none"
	}
	return fmt.Sprint(c)
}
