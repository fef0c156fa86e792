package kronbuild

import (
	"math/rand/v2"
	"testing"

	"github.com/gpuplan/gpuplan/frontier"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// checkBuild builds (scale, edgeFactor, seed) with cfg on x and checks it
// against frontier.Kronecker: the same CSR, or the same error. It returns
// the build's result (nil on an error).
func checkBuild(t *testing.T, x interface{ ResidentBytes() uint64 }, build func() (*Result, error), scale, edgeFactor int, seed uint64) *Result {
	t.Helper()
	want, wantErr := frontier.Kronecker(scale, edgeFactor, seed)
	got, err := build()
	assert.Zero(t, x.ResidentBytes(), "a build frees its buffers")
	if wantErr != nil {
		require.Equal(t, wantErr, err, "scale %d edge factor %d seed %d", scale, edgeFactor, seed)
		return nil
	}
	require.NoError(t, err, "scale %d edge factor %d seed %d", scale, edgeFactor, seed)
	require.Equal(t, want.Name, got.Graph.Name)
	require.Equal(t, want.Offsets, got.Graph.Offsets, "scale %d edge factor %d seed %d", scale, edgeFactor, seed)
	require.Equal(t, want.Targets, got.Graph.Targets, "scale %d edge factor %d seed %d", scale, edgeFactor, seed)
	checkPlan(t, got)
	return got
}

// checkPlan checks a build's plan: parts cover the vertices in order, hold
// every entry, fit the budget, and their distinct entries are the graph's.
func checkPlan(t *testing.T, r *Result) {
	t.Helper()
	p := r.Plan
	next, entries, distinct := uint64(0), uint64(0), uint64(0)
	for _, q := range p.Parts {
		assert.Equal(t, next, q.FirstVertex)
		assert.LessOrEqual(t, p.FixedBytes+q.Bytes, p.BudgetBytes)
		assert.LessOrEqual(t, q.Distinct, q.Entries)
		next += q.Vertices
		entries += q.Entries
		distinct += q.Distinct
	}
	assert.Equal(t, p.Vertices, next)
	assert.Equal(t, p.Entries, entries)
	assert.Equal(t, uint64(len(r.Graph.Targets)), distinct)
	assert.LessOrEqual(t, p.PeakBytes, p.BudgetBytes)
	assert.NoError(t, r.Graph.Check())
}

// TestBuildMatchesFrontier builds every scale from 1 to 14 at several edge
// factors and seeds, with the labels drawn on the device and on the host,
// and with budgets that force several parts, and checks each CSR against
// frontier.Kronecker byte for byte (or its error: a graph of self loops
// only is empty).
func TestBuildMatchesFrontier(t *testing.T) {
	x, _ := newFakeExecutor(t, 1<<30, 1)
	cases := []struct {
		name   string
		cfg    Config
		scales []int
		parts  bool
	}{
		{"device labels", Config{}, []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14}, false},
		{"host labels", Config{HostPermutation: true}, []int{1, 3, 9, 14}, false},
		{"parts of 512 KiB", Config{MaxDeviceBytes: 512 << 10}, []int{11, 12, 13}, true},
		{"parts of 2 MiB, host labels", Config{MaxDeviceBytes: 2 << 20, HostPermutation: true}, []int{14}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, scale := range c.scales {
				for _, ef := range []int{1, 3, 16} {
					for _, seed := range []uint64{1, 42} {
						r := checkBuild(t, x, func() (*Result, error) { return Build(x, scale, ef, seed, c.cfg) }, scale, ef, seed)
						if r != nil && c.parts && ef == 16 {
							assert.Greater(t, len(r.Plan.Parts), 1, "scale %d is built in parts", scale)
						}
					}
				}
			}
		})
	}
}

// TestBuildEmptyGraph checks that a graph whose edges are all self loops
// is refused as frontier.Kronecker refuses it.
func TestBuildEmptyGraph(t *testing.T) {
	x, _ := newFakeExecutor(t, 1<<30, 2)
	empty := 0
	for seed := uint64(0); seed < 40; seed++ {
		_, want := frontier.Kronecker(1, 1, seed)
		_, err := Build(x, 1, 1, seed, Config{})
		assert.Equal(t, want, err, "seed %d", seed)
		var e *frontier.EmptyGraphError
		if want != nil && assert.ErrorAs(t, err, &e) {
			empty++
		}
	}
	assert.Positive(t, empty, "some scale-1 graphs of one edge a vertex are self loops only")
	assert.Zero(t, x.ResidentBytes())
}

// TestBuildProperty builds random (scale, edge factor, seed, budget,
// labels) and holds each against frontier.Kronecker and its plan's
// invariants.
func TestBuildProperty(t *testing.T) {
	x, _ := newFakeExecutor(t, 1<<30, 3)
	r := rand.New(rand.NewPCG(7, 0x6b726f6e))
	refused, parted := 0, 0
	for range 60 {
		scale, ef, seed := 1+r.IntN(13), 1+r.IntN(24), r.Uint64()
		cfg := Config{HostPermutation: r.IntN(2) == 0}
		if r.IntN(2) == 0 {
			// Between the labels' needs and a little over the whole
			// graph's: one part or several.
			n := uint64(1) << scale
			cfg.MaxDeviceBytes = 64*n + 4096 + r.Uint64N(40*uint64(ef)*n)
		}
		res := func() (*Result, error) { return Build(x, scale, ef, seed, cfg) }
		_, want := frontier.Kronecker(scale, ef, seed)
		if _, err := res(); want == nil && err != nil {
			var be *BudgetError
			require.ErrorAs(t, err, &be, "scale %d ef %d budget %d", scale, ef, cfg.MaxDeviceBytes)
			assert.Greater(t, be.NeededBytes, be.BudgetBytes)
			refused++
			continue
		}
		if got := checkBuild(t, x, res, scale, ef, seed); got != nil && len(got.Plan.Parts) > 1 {
			parted++
		}
	}
	t.Logf("%d builds refused over budget, %d built in parts", refused, parted)
	assert.Positive(t, parted, "some budgets split the graph")
}
