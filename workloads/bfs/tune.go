package bfs

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/gpuplan/gpuplan/internal/stats"
)

// MegakernelSetting is how megakernel launches run: whether a direction-
// optimizing session's megakernel runs top-down instead, whether it runs
// without grid barriers, how deep a block runs ahead of the grid and how
// much of its own frontier it keeps.
type MegakernelSetting struct {
	// TopDown runs every level top-down, running ahead, in a direction-
	// optimizing session (Config.MegakernelTopDown).
	TopDown bool `json:"top_down,omitempty"`
	// Async runs the top-down levels without grid barriers, within a
	// window of Ahead - 1 labels (Config.MegakernelAsync).
	Async bool `json:"async,omitempty"`
	// Ahead is the deepest run-ahead (1: one grid barrier per level).
	Ahead int `json:"ahead"`
	// Fixed keeps the depth at Ahead instead of adapting it below Ahead
	// from each step's lowered labels.
	Fixed bool `json:"fixed,omitempty"`
	// Keep is a block's keep budget in edges.
	Keep int `json:"keep"`
}

// String describes the setting, for example "adaptive up to 32, keep
// 256", "top-down, fixed 2, keep 512" or "asynchronous, window 8, keep 512".
func (m MegakernelSetting) String() string {
	depth := fmt.Sprintf("adaptive up to %d", m.Ahead)
	switch {
	case m.Async:
		depth = fmt.Sprintf("asynchronous, window %d", max(m.Ahead, 2)-1)
	case m.Fixed || m.Ahead == 1:
		depth = fmt.Sprintf("fixed %d", m.Ahead)
	}
	if m.TopDown {
		depth = "top-down, " + depth
	}
	return fmt.Sprintf("%s, keep %d", depth, m.Keep)
}

// Tuning constants.
const (
	// TuneMaxRelabels is the most labels lowered per reached vertex that a
	// tuned setting may cost: running ahead must stay well below the one
	// redundant expansion per vertex that would double the work.
	TuneMaxRelabels = 0.5
	// DefaultTuneRuns is how many traversals measure each candidate.
	DefaultTuneRuns = 3
	// TuneMargin is how much faster than the configured setting another
	// must measure to replace it: a tie within the noise of a few
	// traversals keeps what was configured.
	TuneMargin = 0.03
)

// TuneCandidates returns the settings a tuning measures, base first: the
// keep budgets DefaultMegakernelKeep and MaxMegakernelKeep (and base's),
// each with base's depth and, where the megakernel runs ahead, the fixed
// depths 2, 3, 4, 6, 8, 12 and 16 below base's. In a direction-optimizing
// session (optimizing) the megakernel is level-synchronous unless
// TopDown, so the candidates are both: the keep budgets level-
// synchronous (the depth is then always 1), and every top-down one. Where
// the session can run the megakernel without grid barriers (async), the
// top-down candidates end with the asynchronous ones: the windows of
// TuneAsyncWindows with the large keep budget.
func TuneCandidates(base MegakernelSetting, optimizing, async bool) []MegakernelSetting {
	var out []MegakernelSetting
	if base.Async {
		out = append(out, base)
		base.Async = false
	}
	keeps := []int{base.Keep}
	for _, k := range []int{DefaultMegakernelKeep, MaxMegakernelKeep} {
		if !slices.Contains(keeps, k) {
			keeps = append(keeps, k)
		}
	}
	modes := []bool{base.TopDown}
	if optimizing {
		modes = append(modes, !base.TopDown)
	}
	for _, td := range modes {
		depths := []MegakernelSetting{{Ahead: base.Ahead, Fixed: base.Fixed}}
		if td || !optimizing {
			for _, d := range []int{2, 3, 4, 6, 8, 12, 16} {
				if d < base.Ahead {
					depths = append(depths, MegakernelSetting{Ahead: d, Fixed: true})
				}
			}
		}
		for _, k := range keeps {
			for _, d := range depths {
				out = append(out, MegakernelSetting{TopDown: td, Ahead: d.Ahead, Fixed: d.Fixed, Keep: k})
			}
		}
		if async && (td || !optimizing) {
			for _, w := range TuneAsyncWindows() {
				c := MegakernelSetting{TopDown: td, Async: true, Ahead: w + 1, Fixed: true, Keep: MaxMegakernelKeep}
				if !slices.Contains(out, c) {
					out = append(out, c)
				}
			}
		}
	}
	return out
}

// TuneAsyncWindows returns the windows a tuning measures the asynchronous
// megakernel with, 4 and 8 labels: past 8 a random geometric graph's time
// per level stops falling while the labels lowered keep rising. Each call
// returns a new slice, so a caller may change it.
func TuneAsyncWindows() []int { return []int{4, 8} }

// TuneTrial is one candidate setting measured from the tuning's root.
type TuneTrial struct {
	Setting MegakernelSetting `json:"setting"`
	// WallNs is the median wall time of the candidate's traversals.
	WallNs uint64 `json:"wall_ns"`
	// Levels and Barriers are the levels and grid barriers of the median
	// traversal.
	Levels   int `json:"levels"`
	Barriers int `json:"barriers"`
	// RelabelsPerVertex is the most labels lowered per reached vertex in
	// any of the traversals.
	RelabelsPerVertex float64 `json:"relabels_per_vertex"`
}

// PickSetting returns the fastest trial's setting among those that lower
// at most TuneMaxRelabels labels per vertex (the earliest of equal times),
// unless the configured setting base qualifies too and the fastest is not
// TuneMargin faster than it; when no trial qualifies, the setting that
// lowers the fewest labels.
func PickSetting(base MegakernelSetting, trials []TuneTrial) (MegakernelSetting, error) {
	if len(trials) == 0 {
		return MegakernelSetting{}, fmt.Errorf("megakernel tuning has no trials. Fix: measure at least one candidate setting")
	}
	best, kept := -1, -1
	for i, t := range trials {
		if t.RelabelsPerVertex > TuneMaxRelabels {
			continue
		}
		if best < 0 || t.WallNs < trials[best].WallNs {
			best = i
		}
		if t.Setting == base && kept < 0 {
			kept = i
		}
	}
	if kept >= 0 && float64(trials[best].WallNs)*(1+TuneMargin) > float64(trials[kept].WallNs) {
		return base, nil
	}
	if best >= 0 {
		return trials[best].Setting, nil
	}
	best = 0
	for i, t := range trials {
		if t.RelabelsPerVertex < trials[best].RelabelsPerVertex {
			best = i
		}
	}
	return trials[best].Setting, nil
}

// MegakernelTuning is a measured choice of the megakernel's setting: every
// candidate's trial from one root, and the setting chosen (PickSetting).
type MegakernelTuning struct {
	Root   int32             `json:"root"`
	Trials []TuneTrial       `json:"trials"`
	Chosen MegakernelSetting `json:"chosen"`
}

// Table formats the trials, one line each, the chosen one marked.
func (t MegakernelTuning) Table() string {
	var b strings.Builder
	for _, tr := range t.Trials {
		mark := " "
		if tr.Setting == t.Chosen {
			mark = "*"
		}
		fmt.Fprintf(&b, "%s %-28s %10s %6.2f levels per barrier %6.3f lowered per vertex\n", mark, tr.Setting,
			stats.FormatNs(float64(tr.WallNs)), float64(tr.Levels)/float64(max(tr.Barriers, 1)), tr.RelabelsPerVertex)
	}
	return b.String()
}

// MegakernelSetting returns the setting the session's megakernel runs with.
func (s *Session) MegakernelSetting() MegakernelSetting {
	return MegakernelSetting{TopDown: s.cfg.MegakernelTopDown, Async: s.cfg.MegakernelAsync, Ahead: s.cfg.MegakernelAhead,
		Fixed: s.cfg.MegakernelFixedAhead, Keep: s.cfg.MegakernelKeep}
}

// SetMegakernelSetting makes the session's megakernel run with m, checked
// as Config checks its fields.
func (s *Session) SetMegakernelSetting(m MegakernelSetting) error {
	c := s.cfg
	c.MegakernelTopDown, c.MegakernelAsync, c.MegakernelAhead, c.MegakernelFixedAhead, c.MegakernelKeep = m.TopDown, m.Async, m.Ahead, m.Fixed, m.Keep
	if err := c.validate(); err != nil {
		return err
	}
	if err := c.checkAsyncDirection(s.optimizing); err != nil {
		return err
	}
	if m.Async && !s.asyncFits {
		return fmt.Errorf("BFS megakernel setting %s: the asynchronous megakernel does not fit the megakernel's grid. Fix: leave Async off", m)
	}
	s.cfg = c
	return nil
}

// TuneMegakernel measures the megakernel's candidate settings
// (TuneCandidates of the session's own) from root, runs traversals each
// (reached is the root's reached vertex count, for the lowered labels per
// vertex), and makes the session run with the one PickSetting chooses. The
// best run-ahead depth and keep budget depend on the graph's shape (a
// grid's straight wave wants deep run-ahead over small budgets spread on
// every SM; a road network's winding one a few levels kept whole), and so
// does whether a direction-optimizing session's megakernel should stay
// level-synchronous (a Kronecker graph's few wide levels) or run ahead top-
// down (a random geometric graph's thousands of narrow ones), so they are
// measured on the resident graph itself rather than set per graph.
func (s *Session) TuneMegakernel(root int32, reached, runs int) (MegakernelTuning, error) {
	if err := s.ArmFits(ArmMegakernel); err != nil {
		return MegakernelTuning{}, err
	}
	if runs < 1 {
		return MegakernelTuning{}, fmt.Errorf("megakernel tuning with %d runs per candidate. Fix: run each candidate at least once (%d is the default)", runs, DefaultTuneRuns)
	}
	if reached < 1 {
		return MegakernelTuning{}, fmt.Errorf("megakernel tuning from root %d with %d reached vertices. Fix: pass the root's reached count (at least the root)", root, reached)
	}
	base := s.MegakernelSetting()
	t := MegakernelTuning{Root: root}
	for _, c := range TuneCandidates(base, s.optimizing, s.canAsync()) {
		tr, err := s.tuneTrial(c, root, reached, runs)
		if err != nil {
			_ = s.SetMegakernelSetting(base)
			return t, err
		}
		t.Trials = append(t.Trials, tr)
	}
	chosen, err := PickSetting(base, t.Trials)
	if err == nil {
		err = s.SetMegakernelSetting(chosen)
	}
	if err != nil {
		_ = s.SetMegakernelSetting(base)
		return t, err
	}
	t.Chosen = chosen
	return t, nil
}

// tuneTrial runs the megakernel with setting c from root, runs times.
func (s *Session) tuneTrial(c MegakernelSetting, root int32, reached, runs int) (TuneTrial, error) {
	if err := s.SetMegakernelSetting(c); err != nil {
		return TuneTrial{}, err
	}
	rs := make([]Run, 0, runs)
	worst := 0.0
	for range runs {
		r, err := s.Run(ArmMegakernel, root)
		if err != nil {
			return TuneTrial{}, fmt.Errorf("megakernel tuning, setting %s: %w", c, err)
		}
		rs = append(rs, r)
		worst = max(worst, float64(r.Relabels)/float64(reached))
	}
	slices.SortFunc(rs, func(a, b Run) int { return cmp.Compare(a.WallNs, b.WallNs) })
	m := rs[len(rs)/2]
	return TuneTrial{Setting: c, WallNs: m.WallNs, Levels: m.Levels, Barriers: m.Barriers, RelabelsPerVertex: worst}, nil
}
