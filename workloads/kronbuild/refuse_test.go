package kronbuild

import (
	"testing"

	"github.com/gpuplan/gpuplan/frontier"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBuildRefusesBadInput checks that the parameters frontier.Kronecker
// refuses are refused with its errors, naming the field, and a graph past
// 32-bit offsets that the device's memory does not hold with a
// *BudgetError, each with a fix and before anything is allocated.
func TestBuildRefusesBadInput(t *testing.T) {
	x, fake := newFakeExecutor(t, 1<<30, 4)
	allocs := fake.Calls()["cuMemAlloc"]
	const (
		generator = iota
		tooLarge
		overBudget
	)
	cases := []struct {
		scale, edgeFactor int
		field             string
		kind              int
		entries           uint64
	}{
		{0, 16, "scale", generator, 0},
		{31, 16, "scale", generator, 0},
		{-3, 16, "scale", generator, 0},
		{10, 0, "edgefactor", generator, 0},
		{10, 2000, "edgefactor", generator, 0},
		{30, 16, "edge entries", tooLarge, 0},
		{28, 128, "edge entries", tooLarge, 0},
		{27, 16, "", overBudget, 1 << 32},
		{26, 32, "", overBudget, 1 << 32},
		{frontier.MaxKroneckerScale, 16, "", overBudget, frontier.MaxGraphEdgeEntries},
	}
	for _, c := range cases {
		_, err := Build(x, c.scale, c.edgeFactor, 1, Config{})
		require.Error(t, err, "%+v", c)
		switch c.kind {
		case tooLarge:
			var e *frontier.TooLargeError
			require.ErrorAs(t, err, &e, "%+v", c)
			assert.Equal(t, c.field, e.Field)
			assert.Equal(t, frontier.CheckKronecker(c.scale, c.edgeFactor), err, "%+v", c)
		case overBudget:
			require.NoError(t, Check(c.scale, c.edgeFactor), "%+v: 64-bit offsets take it", c)
			var e *BudgetError
			require.ErrorAs(t, err, &e, "%+v", c)
			assert.Equal(t, c.scale, e.Scale)
			assert.Greater(t, e.NeededBytes, e.BudgetBytes, "%+v", c)
		default:
			assert.Equal(t, Check(c.scale, c.edgeFactor), err, "%+v", c)
			var e *frontier.GeneratorError
			require.ErrorAs(t, err, &e, "%+v", c)
			assert.Equal(t, c.field, e.Field)
			assert.Equal(t, frontier.CheckKronecker(c.scale, c.edgeFactor), err, "%+v", c)
		}
		assert.Contains(t, err.Error(), "Fix:")
	}
	require.NoError(t, Check(frontier.MaxKroneckerScale, 16), "the largest Graph500 scale the device builds")
	assert.Equal(t, allocs, fake.Calls()["cuMemAlloc"], "nothing is allocated for a refused input")
	_, err := Build(nil, 10, 16, 1, Config{})
	assert.ErrorContains(t, err, "Fix:")
}

// TestBuildRefusesOverBudget checks the budget refusals: the buffers every
// build holds, the device permutation's scratch (the host's needs none),
// and a part of one bucket; each names the scale, the bytes and the
// budget and ends in a fix, and leaves nothing allocated.
func TestBuildRefusesOverBudget(t *testing.T) {
	x, _ := newFakeExecutor(t, 1<<30, 5)
	plan, err := newPlan(12, 16, 1<<30, false)
	require.NoError(t, err)
	cases := []struct {
		name   string
		cfg    Config
		what   string
		needed uint64
	}{
		{"fixed", Config{MaxDeviceBytes: 1000}, "the labels, offsets and counters", plan.FixedBytes},
		{"fixed, host labels", Config{MaxDeviceBytes: plan.FixedBytes - 1, HostPermutation: true}, "the labels, offsets and counters", plan.FixedBytes},
		{"permutation", Config{MaxDeviceBytes: plan.PeakBytes - 1}, "drawing the labels on the device", plan.PeakBytes},
		{"one part", Config{MaxDeviceBytes: plan.FixedBytes + 2*1024, HostPermutation: true}, "the part of bucket", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Build(x, 12, 16, 9, c.cfg)
			var e *BudgetError
			require.ErrorAs(t, err, &e)
			assert.Equal(t, 12, e.Scale)
			assert.Contains(t, e.What, c.what)
			if c.needed != 0 {
				assert.Equal(t, c.needed, e.NeededBytes)
			}
			assert.Equal(t, c.cfg.MaxDeviceBytes, e.BudgetBytes)
			assert.Greater(t, e.NeededBytes, e.BudgetBytes)
			assert.Regexp(t, `^kronbuild kron-12 \(scale 12\): .* needs \d+ bytes of device memory but the budget is \d+ bytes\. Fix: .*MaxDeviceBytes`, err.Error())
			assert.Zero(t, x.ResidentBytes())
		})
	}
	// The permutation's scratch is what the host labels save: at one edge
	// a vertex the graph fits beside the labels in parts of less.
	_, err = Build(x, 12, 1, 9, Config{MaxDeviceBytes: plan.PeakBytes - 1})
	var e *BudgetError
	require.ErrorAs(t, err, &e)
	r := checkBuild(t, x, func() (*Result, error) {
		return Build(x, 12, 1, 9, Config{MaxDeviceBytes: plan.PeakBytes - 1, HostPermutation: true})
	}, 12, 1, 9)
	assert.Greater(t, len(r.Plan.Parts), 1)
}

// CheckBudget refuses, without an executor, what Build refuses before it
// allocates: the fixed buffers over the budget, the device permutation's
// scratch (not with the host's labels), and Check's parameters; it passes
// what fits.
func TestCheckBudget(t *testing.T) {
	plan, err := newPlan(12, 16, 1<<30, false)
	require.NoError(t, err)
	cases := []struct {
		name        string
		scale       int
		budget      uint64
		hostLabels  bool
		what        string
		needed      uint64
		wantNothing bool
	}{
		// Scale 27: 2^27 labels of 4 bytes, 2^27+1 offsets of 8, 1024
		// bucket counts and 4 control words of 8.
		{"scale 27 in 64 MiB", 27, 64 << 20, false, "the labels, offsets and counters", 1<<27*4 + (1<<27+1)*8 + 1024*8 + 4*8, false},
		{"permutation", 12, plan.PeakBytes - 1, false, "drawing the labels on the device", plan.PeakBytes, false},
		{"host labels fit", 12, plan.PeakBytes - 1, true, "", 0, true},
		{"everything fits", 12, plan.PeakBytes, false, "", 0, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := CheckBudget(c.scale, 16, c.budget, c.hostLabels)
			if c.wantNothing {
				require.NoError(t, err)
				return
			}
			var e *BudgetError
			require.ErrorAs(t, err, &e)
			assert.Equal(t, c.scale, e.Scale)
			assert.Equal(t, c.what, e.What)
			assert.Equal(t, c.needed, e.NeededBytes)
			assert.Equal(t, c.budget, e.BudgetBytes)
			assert.Contains(t, err.Error(), "Fix:")
		})
	}
	assert.Equal(t, Check(40, 16), CheckBudget(40, 16, 1<<40, false), "Check's refusal first")
}
