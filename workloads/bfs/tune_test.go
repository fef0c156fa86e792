package bfs

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gpuplan/gpuplan/frontier"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTuneCandidates checks the candidate settings: the configured one
// first, both keep budgets, the fixed depths below the configured depth
// where the megakernel runs ahead and, in a direction-optimizing session,
// the level-synchronous budgets and every top-down setting.
func TestTuneCandidates(t *testing.T) {
	adaptive := MegakernelSetting{Ahead: 32, Keep: 256}
	fixed := func(td bool, d, keep int) MegakernelSetting {
		return MegakernelSetting{TopDown: td, Ahead: d, Fixed: true, Keep: keep}
	}
	cases := []struct {
		name       string
		base       MegakernelSetting
		optimizing bool
		want       []MegakernelSetting
	}{
		{"fixed 4 with the large budget", fixed(false, 4, 512), false,
			[]MegakernelSetting{fixed(false, 4, 512), fixed(false, 2, 512), fixed(false, 3, 512),
				fixed(false, 4, 256), fixed(false, 2, 256), fixed(false, 3, 256)}},
		{"one barrier per level", MegakernelSetting{Ahead: 1, Keep: 256}, false,
			[]MegakernelSetting{{Ahead: 1, Keep: 256}, {Ahead: 1, Keep: 512}}},
		{"optimizing: level-synchronous budgets, then top-down", fixed(false, 3, 512), true,
			[]MegakernelSetting{fixed(false, 3, 512), fixed(false, 3, 256),
				fixed(true, 3, 512), fixed(true, 2, 512), fixed(true, 3, 256), fixed(true, 2, 256)}},
		{"optimizing, configured top-down: top-down first", fixed(true, 3, 256), true,
			[]MegakernelSetting{fixed(true, 3, 256), fixed(true, 2, 256), fixed(true, 3, 512), fixed(true, 2, 512),
				fixed(false, 3, 256), fixed(false, 3, 512)}},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, TuneCandidates(c.base, c.optimizing, false), c.name)
	}
	for _, optimizing := range []bool{false, true} {
		all := TuneCandidates(adaptive, optimizing, false)
		want := 16
		if optimizing {
			want = 18
		}
		require.Len(t, all, want, "the adaptive depth and 7 fixed ones for each budget, and the level-synchronous budgets when optimizing")
		assert.Equal(t, adaptive, all[0])
		for _, m := range all {
			assert.Contains(t, []int{DefaultMegakernelKeep, MaxMegakernelKeep}, m.Keep)
			assert.True(t, m.Ahead == 32 || (m.Fixed && m.Ahead < 32), m.String())
			assert.True(t, optimizing || !m.TopDown, m.String())
			assert.True(t, m.TopDown || !optimizing || m.Ahead == 32, "level-synchronous candidates keep the configured depth: %s", m)
		}
	}
}

// TestPickSetting checks the choice: the fastest trial within the
// lowered-label bound, the configured setting unless beaten by the
// margin, and the fewest lowered labels when no trial is within it.
func TestPickSetting(t *testing.T) {
	base := MegakernelSetting{Ahead: 32, Keep: 256}
	fixed := func(d, keep int) MegakernelSetting { return MegakernelSetting{Ahead: d, Fixed: true, Keep: keep} }
	trial := func(m MegakernelSetting, ns uint64, rel float64) TuneTrial {
		return TuneTrial{Setting: m, WallNs: ns, RelabelsPerVertex: rel}
	}
	cases := []struct {
		name   string
		trials []TuneTrial
		want   MegakernelSetting
	}{
		{"the fastest", []TuneTrial{trial(base, 100, 0.1), trial(fixed(4, 512), 60, 0.2), trial(fixed(2, 512), 80, 0)}, fixed(4, 512)},
		{"too many lowered labels", []TuneTrial{trial(base, 100, 0.1), trial(fixed(4, 512), 60, 0.6), trial(fixed(2, 512), 80, 0)}, fixed(2, 512)},
		{"within the margin the configured stays", []TuneTrial{trial(base, 100, 0.1), trial(fixed(16, 256), 98, 0)}, base},
		{"just past the margin", []TuneTrial{trial(base, 100, 0.1), trial(fixed(16, 256), 96, 0)}, fixed(16, 256)},
		{"the configured over the bound", []TuneTrial{trial(base, 50, 0.9), trial(fixed(3, 256), 99, 0.4)}, fixed(3, 256)},
		{"none within the bound", []TuneTrial{trial(base, 50, 0.9), trial(fixed(3, 256), 99, 0.7), trial(fixed(2, 256), 120, 0.6)}, fixed(2, 256)},
		{"equal times: the earliest", []TuneTrial{trial(fixed(2, 256), 70, 0), trial(fixed(3, 256), 70, 0), trial(base, 100, 0)}, fixed(2, 256)},
	}
	for _, c := range cases {
		got, err := PickSetting(base, c.trials)
		require.NoError(t, err, c.name)
		assert.Equal(t, c.want, got, c.name)
	}
	_, err := PickSetting(base, nil)
	require.ErrorContains(t, err, "no trials")
}

// TestPickSettingProperties checks on random trials that the choice is
// always a trial's setting, within the lowered-label bound when any trial
// is, and never slower than the configured setting when that one is.
func TestPickSettingProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 9))
	base := MegakernelSetting{Ahead: 32, Keep: 256}
	cands := TuneCandidates(base, false, false)
	for i := range 500 {
		trials := make([]TuneTrial, len(cands))
		for j, m := range cands {
			trials[j] = TuneTrial{Setting: m, WallNs: 1 + rng.Uint64N(1000), RelabelsPerVertex: rng.Float64()}
		}
		got, err := PickSetting(base, trials)
		require.NoError(t, err)
		at := slices.IndexFunc(trials, func(tr TuneTrial) bool { return tr.Setting == got })
		require.GreaterOrEqual(t, at, 0, "case %d", i)
		within := slices.ContainsFunc(trials, func(tr TuneTrial) bool { return tr.RelabelsPerVertex <= TuneMaxRelabels })
		if within {
			assert.LessOrEqual(t, trials[at].RelabelsPerVertex, TuneMaxRelabels, "case %d", i)
		}
		if trials[0].RelabelsPerVertex <= TuneMaxRelabels {
			assert.LessOrEqual(t, trials[at].WallNs, trials[0].WallNs, "case %d", i)
		}
	}
}

// TestTuneMegakernelOnFake tunes the emulated megakernel on a road-like
// graph: every candidate is measured, the session then runs the chosen
// setting, and the levels stay the reference's from every root. Bad
// arguments are refused with the fix, the session's setting untouched.
func TestTuneMegakernelOnFake(t *testing.T) {
	g := mustGraph(t)(frontier.Road(40, 2))
	_, s := fakeSession(t, 1<<30, 3, g, Config{Direction: DirectionTopDown})
	base := s.MegakernelSetting()
	assert.Equal(t, MegakernelSetting{Ahead: DefaultMaxRunAhead, Keep: DefaultMegakernelKeep}, base)
	roots, err := frontier.Roots(g, 3, 1)
	require.NoError(t, err)
	st := frontier.Stats(g, frontierBFS(t, g, roots[0]))

	_, err = s.TuneMegakernel(roots[0], st.Reached, 0)
	require.ErrorContains(t, err, "Fix: run each candidate at least once")
	_, err = s.TuneMegakernel(roots[0], 0, 1)
	require.ErrorContains(t, err, "reached vertices")
	assert.Equal(t, base, s.MegakernelSetting())

	tu, err := s.TuneMegakernel(roots[0], st.Reached, 2)
	require.NoError(t, err)
	assert.Equal(t, roots[0], tu.Root)
	cands := TuneCandidates(base, false, s.canAsync())
	require.Len(t, tu.Trials, len(cands))
	for i, tr := range tu.Trials {
		assert.Equal(t, cands[i], tr.Setting)
		assert.Positive(t, tr.WallNs)
		assert.Equal(t, st.Levels, tr.Levels, tr.Setting.String())
		assert.Positive(t, tr.Barriers)
	}
	assert.Equal(t, tu.Chosen, s.MegakernelSetting())
	assert.Contains(t, tu.Table(), "* "+tu.Chosen.String())
	for _, root := range roots {
		r, err := s.Run(ArmMegakernel, root)
		require.NoError(t, err)
		got, err := s.Levels()
		require.NoError(t, err)
		require.Equal(t, frontierBFS(t, g, root), got, fmt.Sprint(root))
		if tu.Chosen.Fixed {
			assert.LessOrEqual(t, r.MaxAhead, tu.Chosen.Ahead)
		}
	}
}

// TestSetMegakernelSetting checks that a setting is validated as the
// Config fields are, and that a refused one leaves the session's as it was.
func TestSetMegakernelSetting(t *testing.T) {
	g := mustGraph(t)(frontier.Grid(20))
	_, s := fakeSession(t, 1<<30, 3, g, Config{})
	base := s.MegakernelSetting()
	for _, bad := range []MegakernelSetting{{Ahead: 0, Keep: 256}, {Ahead: 4, Keep: 384}, {Ahead: MaxRunAhead + 1, Keep: 512}} {
		require.Error(t, s.SetMegakernelSetting(bad), bad.String())
		assert.Equal(t, base, s.MegakernelSetting())
	}
	m := MegakernelSetting{Ahead: 3, Fixed: true, Keep: MaxMegakernelKeep}
	require.NoError(t, s.SetMegakernelSetting(m))
	assert.Equal(t, m, s.MegakernelSetting())
	assert.Equal(t, "fixed 3, keep 512", m.String())
	assert.Equal(t, "adaptive up to 32, keep 256", base.String())
	m.TopDown = true
	require.NoError(t, s.SetMegakernelSetting(m))
	assert.Equal(t, m, s.MegakernelSetting())
	assert.Equal(t, "top-down, fixed 3, keep 512", m.String())
}

// TestMegakernelTopDownOnFake runs the emulated megakernel of a direction-
// optimizing session (a Kronecker graph) both ways: level-synchronous, it
// logs the planner's decisions, one barrier per level; set top-down, it
// runs ahead, logs no decisions, and still gives the reference's levels
// from every root while the other arms stay direction-optimizing.
func TestMegakernelTopDownOnFake(t *testing.T) {
	g := mustGraph(t)(frontier.Kronecker(10, 16, 3))
	_, s := fakeSession(t, 1<<30, 5, g, Config{})
	require.True(t, s.Optimizing())
	roots, err := frontier.Roots(g, 3, 4)
	require.NoError(t, err)
	for _, td := range []bool{false, true} {
		m := s.MegakernelSetting()
		m.TopDown = td
		require.NoError(t, s.SetMegakernelSetting(m))
		assert.Equal(t, !td, s.ArmOptimizing(ArmMegakernel))
		assert.True(t, s.ArmOptimizing(ArmDeviceLoop))
		for _, root := range roots {
			r, err := s.Run(ArmMegakernel, root)
			require.NoError(t, err)
			got, err := s.Levels()
			require.NoError(t, err)
			require.Equal(t, frontierBFS(t, g, root), got, "top-down %v, root %d", td, root)
			if td {
				assert.Empty(t, r.Decisions, "root %d", root)
			} else {
				assert.Len(t, r.Decisions, r.Levels, "root %d", root)
				assert.Equal(t, r.Levels, r.Barriers, "root %d", root)
			}
		}
	}
}

// TestKeepBudget checks the budget a launch's keep parameter selects.
func TestKeepBudget(t *testing.T) {
	for keep, want := range map[uint64]uint32{0: 256, 255: 256, 256: 256, 511: 256, 512: 512, 1 << 40: 512} {
		assert.Equal(t, want, keepBudget(keep), keep)
	}
}

// frontierBFS is the CPU reference levels of g from root.
func frontierBFS(t *testing.T, g *frontier.CSR, root int32) []int32 {
	t.Helper()
	lv, err := frontier.BFS(g, root)
	require.NoError(t, err)
	return lv
}

// TestTuneCandidatesAsync checks the asynchronous candidates: one per
// window with the large budget, top-down only, after the others; a
// configured asynchronous setting first, its synchronous forms after it.
func TestTuneCandidatesAsync(t *testing.T) {
	async := func(td bool, w int) MegakernelSetting {
		return MegakernelSetting{TopDown: td, Async: true, Ahead: w + 1, Fixed: true, Keep: MaxMegakernelKeep}
	}
	cases := []struct {
		name       string
		base       MegakernelSetting
		optimizing bool
		want       []MegakernelSetting
	}{
		{"top-down session", MegakernelSetting{Ahead: 2, Fixed: true, Keep: 512}, false,
			[]MegakernelSetting{{Ahead: 2, Fixed: true, Keep: 512}, {Ahead: 2, Fixed: true, Keep: 256}, async(false, 4), async(false, 8)}},
		{"optimizing: asynchronous only top-down", MegakernelSetting{Ahead: 1, Keep: 256}, true,
			[]MegakernelSetting{{Ahead: 1, Keep: 256}, {Ahead: 1, Keep: 512},
				{TopDown: true, Ahead: 1, Keep: 256}, {TopDown: true, Ahead: 1, Keep: 512}, async(true, 4), async(true, 8)}},
		{"configured asynchronous: first, and not twice", async(false, 8), false,
			[]MegakernelSetting{async(false, 8), {Ahead: 9, Fixed: true, Keep: 512}, {Ahead: 2, Fixed: true, Keep: 512},
				{Ahead: 3, Fixed: true, Keep: 512}, {Ahead: 4, Fixed: true, Keep: 512}, {Ahead: 6, Fixed: true, Keep: 512},
				{Ahead: 8, Fixed: true, Keep: 512}, {Ahead: 9, Fixed: true, Keep: 256}, {Ahead: 2, Fixed: true, Keep: 256},
				{Ahead: 3, Fixed: true, Keep: 256}, {Ahead: 4, Fixed: true, Keep: 256}, {Ahead: 6, Fixed: true, Keep: 256},
				{Ahead: 8, Fixed: true, Keep: 256}, async(false, 4)}},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, TuneCandidates(c.base, c.optimizing, true), c.name)
	}
	assert.Equal(t, "asynchronous, window 8, keep 512", async(false, 8).String())
	assert.Equal(t, "top-down, asynchronous, window 4, keep 512", async(true, 4).String())
}

// TestTuneAsyncWindows checks that the windows are 4 and 8 and that every
// call returns its own slice: changing one changes neither a later call
// nor the candidates.
func TestTuneAsyncWindows(t *testing.T) {
	w := TuneAsyncWindows()
	require.Equal(t, []int{4, 8}, w)
	w[0] = 100
	assert.Equal(t, []int{4, 8}, TuneAsyncWindows(), "a fresh slice")
	cands := TuneCandidates(MegakernelSetting{Ahead: 1, Keep: 256}, false, true)
	assert.NotContains(t, cands, MegakernelSetting{Async: true, Ahead: 101, Fixed: true, Keep: MaxMegakernelKeep})
}
