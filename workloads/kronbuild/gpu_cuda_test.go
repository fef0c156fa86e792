//go:build cuda

package kronbuild

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/internal/gputest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// largeEnv names the variable that adds scale 26 to TestGPUBuildMatchesFrontier
// (its CPU reference takes half a minute on 16 cores and 20 GiB).
const largeEnv = "GPUPLAN_KRON_LARGE"

// logTimes logs a build's plan and times.
func logTimes(t testing.TB, r *Result) {
	tm := r.Times
	t.Logf("%s: %d entries, %d distinct, %d parts, peak %d MiB: labels %v, count %v, generate %v, sort %v, CSR %v, readback %v, total %v",
		r.Plan.Graph, r.Plan.Entries, len(r.Graph.Targets), len(r.Plan.Parts), r.Plan.PeakBytes>>20,
		tm.Permutation, tm.Count, tm.Generate, tm.Sort, tm.CSR, tm.Readback, tm.Total)
}

// TestGPUBuildMatchesFrontier builds scales 10, 16, 20 and 22 (and 26 with
// GPUPLAN_KRON_LARGE set) on the GPU and compares every CSR with
// frontier.Kronecker byte for byte: the labels drawn on the device and on
// the host, and under a budget that splits the graph into parts.
func TestGPUBuildMatchesFrontier(t *testing.T) {
	x := gputest.Open(t)
	scales := []int{10, 16, 20}
	if !raceEnabled {
		scales = append(scales, 22)
		if os.Getenv(largeEnv) != "" {
			scales = append(scales, 26)
		}
	}
	for _, scale := range scales {
		want, err := frontier.Kronecker(scale, frontier.DefaultEdgeFactor, 1)
		require.NoError(t, err)
		// 160 bytes a vertex: the labels' 32 and sort scratch for about a
		// quarter of the graph's 32 entries a vertex (16 bytes each).
		for _, cfg := range []Config{{}, {HostPermutation: true}, {MaxDeviceBytes: 160 << scale}} {
			r, err := Build(x, scale, frontier.DefaultEdgeFactor, 1, cfg)
			require.NoError(t, err, "scale %d %+v", scale, cfg)
			require.Equal(t, want.Offsets, r.Graph.Offsets, "scale %d %+v", scale, cfg)
			require.Equal(t, want.Targets, r.Graph.Targets, "scale %d %+v", scale, cfg)
			checkPlan(t, r)
			if cfg.MaxDeviceBytes != 0 {
				assert.Greater(t, len(r.Plan.Parts), 1, "scale %d: the budget splits the graph", scale)
			}
			assert.Zero(t, x.ResidentBytes())
			logTimes(t, r)
		}
	}
}

// TestGPUBuildSmall builds every scale from 1 to 12 at a few edge factors
// and seeds on the GPU (the tails of tiles and segments, one-vertex
// buckets, empty graphs) against frontier.Kronecker.
func TestGPUBuildSmall(t *testing.T) {
	x := gputest.Open(t)
	for scale := 1; scale <= 12; scale++ {
		for _, ef := range []int{1, 5, 16} {
			for _, seed := range []uint64{3, 77} {
				checkBuild(t, x, func() (*Result, error) { return Build(x, scale, ef, seed, Config{}) }, scale, ef, seed)
				checkBuild(t, x, func() (*Result, error) { return Build(x, scale, ef, seed, Config{MaxDeviceBytes: 600 << 10}) }, scale, ef, seed)
			}
		}
	}
}

// TestGPULabels draws the labels on the GPU at scales 20 and 24 against
// frontier.KroneckerPermutation, and forces a rejected draw at scales 12
// and 20 to check the redraw against math/rand/v2.
func TestGPULabels(t *testing.T) {
	x := gputest.Open(t)
	for _, scale := range []int{20, 24} {
		s1, s2 := frontier.KroneckerPermutationPCG(5)
		got, redraws := deviceLabels(t, x, scale, u128{s1, s2})
		require.Equal(t, frontier.KroneckerPermutation(scale, 5), got, "scale %d", scale)
		assert.Zero(t, redraws)
	}
	checkRedraws(t, x, []int{12, 20})
}

// TestGPURefusesOverBudget checks that a build over the budget is refused
// before its buffers are allocated, on the GPU as on the fake.
func TestGPURefusesOverBudget(t *testing.T) {
	x := gputest.Open(t)
	_, err := Build(x, 20, 16, 1, Config{MaxDeviceBytes: 1 << 20})
	var e *BudgetError
	require.ErrorAs(t, err, &e)
	assert.Zero(t, x.ResidentBytes())
}

// BenchmarkGPUBuild builds scales 22 and 26 at Graph500's edge factor and
// reports each phase's mean time per build in milliseconds: the labels,
// the count and generation passes over the edges, the sort, the CSR, the
// readback and the whole build, and the generated edges per second.
//
//	go test -c -tags cuda -o kronbuild.test ./workloads/kronbuild
//	./kronbuild.test -test.run '^$' -test.bench GPUBuild -test.benchtime 3x
func BenchmarkGPUBuild(b *testing.B) {
	x, err := executor.Open(0, executor.Options{})
	if err != nil {
		if os.Getenv(gputest.RequireEnv) != "" {
			b.Fatalf("%s is set but no GPU is usable: %v", gputest.RequireEnv, err)
		}
		b.Skip(err.Error())
	}
	defer x.Close()
	for _, scale := range []int{22, 26} {
		b.Run(fmt.Sprintf("scale-%d", scale), func(b *testing.B) {
			var sum Times
			for range b.N {
				r, err := Build(x, scale, frontier.DefaultEdgeFactor, 1, Config{})
				require.NoError(b, err)
				sum = addTimes(sum, r.Times)
			}
			ms := func(d time.Duration) float64 { return float64(d) / 1e6 / float64(b.N) }
			b.ReportMetric(ms(sum.Permutation), "labels-ms")
			b.ReportMetric(ms(sum.Count), "count-ms")
			b.ReportMetric(ms(sum.Generate), "gen-ms")
			b.ReportMetric(ms(sum.Sort), "sort-ms")
			b.ReportMetric(ms(sum.CSR), "csr-ms")
			b.ReportMetric(ms(sum.Readback), "readback-ms")
			b.ReportMetric(ms(sum.Total), "total-ms")
			b.ReportMetric(float64(uint64(frontier.DefaultEdgeFactor)<<scale)/(ms(sum.Total)/1e3), "edges/s")
		})
	}
}

// addTimes adds two builds' times.
func addTimes(a, b Times) Times {
	return Times{Permutation: a.Permutation + b.Permutation, Count: a.Count + b.Count, Generate: a.Generate + b.Generate,
		Sort: a.Sort + b.Sort, CSR: a.CSR + b.CSR, Readback: a.Readback + b.Readback, Total: a.Total + b.Total}
}
