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

// RegisterTuning is the benchmark's choice of the persistent arms'
// register cap: every trial, and the cap kept.
type RegisterTuning struct {
	Trials []RegisterTrial `json:"trials"`
	Chosen int             `json:"chosen_cap"`
}

// persistentArms returns the persistent arms among arms.
func persistentArms(arms []Arm) []Arm {
	return slices.DeleteFunc(slices.Clone(arms), func(a Arm) bool { return a != ArmBarriers && a != ArmWaits })
}

// tune tries each register cap of cfg.RegisterCaps on the persistent arms
// (every run checked) and keeps the fastest; a cap at or above the
// uncapped image's registers is skipped. With fewer than two caps, or no
// persistent arm, it keeps the session's.
func (b *bench) tune() error {
	arms := persistentArms(b.cfg.Arms)
	if len(b.cfg.RegisterCaps) < 2 || len(arms) == 0 {
		return nil
	}
	t := &RegisterTuning{}
	best, uncapped := -1, 0
	for _, c := range b.cfg.RegisterCaps {
		if c != 0 && uncapped > 0 && c >= uncapped {
			continue // the image already fits under c: the same as no cap
		}
		trial, err := b.trial(c, arms)
		if err != nil {
			return err
		}
		t.Trials = append(t.Trials, trial)
		if c == 0 {
			uncapped = trial.Registers
		}
		b.cfg.Log("register cap %s: %d registers, grid %d blocks, %s %s", capText(c), trial.Registers, trial.GridBlocks, trial.Arm, stats.FormatNs(trial.WallNs))
		if best < 0 || trial.WallNs < t.Trials[best].WallNs*(1-tieShare) {
			best = len(t.Trials) - 1
		}
	}
	t.Chosen = t.Trials[best].Cap
	if err := b.s.SetMaxRegisters(t.Chosen); err != nil {
		return err
	}
	b.res.Registers = t
	b.res.Grid = b.s.Grid()
	b.cfg.Log("register cap: %s kept for the persistent arms", capText(t.Chosen))
	return nil
}

// trial relinks the schedulers under cap c and scores it by the faster
// persistent arm's median wall time.
func (b *bench) trial(c int, arms []Arm) (RegisterTrial, error) {
	if err := b.s.SetMaxRegisters(c); err != nil {
		return RegisterTrial{}, err
	}
	tr := RegisterTrial{Cap: c, Registers: b.s.Registers(), GridBlocks: b.s.Grid().GridBlocks}
	for _, arm := range arms {
		walls := make([]float64, 0, tuneRuns-1)
		for i := range tuneRuns {
			r, err := b.runChecked(arm)
			if err != nil {
				return tr, fmt.Errorf("register cap %s: %w", capText(c), err)
			}
			if i > 0 {
				walls = append(walls, float64(r.WallNs))
			}
		}
		if m := stats.Median(walls); tr.Arm == "" || m < tr.WallNs {
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
