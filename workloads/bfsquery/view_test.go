package bfsquery

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/frontier"
)

// randomQueries draws n queries over g: random roots (some repeated),
// targets, depth limits and parents.
func randomQueries(rng *rand.Rand, g *frontier.CSR, n int) []Query {
	v := g.NumVertices()
	qs := make([]Query, n)
	for i := range qs {
		q := Query{Root: int32(rng.IntN(v)), MaxDepth: NoDepthLimit, Parents: rng.IntN(2) == 0}
		if i > 0 && rng.IntN(4) == 0 {
			q.Root = qs[rng.IntN(i)].Root
		}
		if rng.IntN(3) == 0 {
			q.MaxDepth = int32(rng.IntN(4))
		}
		q.Targets = make([]int32, 1+rng.IntN(20))
		for j := range q.Targets {
			q.Targets[j] = int32(rng.IntN(v))
		}
		qs[i] = q
	}
	return qs
}

// TestSparseViewsAnswerAsFullLevels is a property test: answers built from
// the levels of only the vertices the queries read, with the per-level
// counts, equal answers built from every vertex's levels.
func TestSparseViewsAnswerAsFullLevels(t *testing.T) {
	for _, spec := range []string{"kron:9", "grid:20", "rgg:600:6", "road:20"} {
		sp, err := frontier.ParseSpec(spec)
		require.NoError(t, err, spec)
		g, err := sp.Build(3, frontier.DefaultLimits())
		require.NoError(t, err, spec)
		cpu, err := OpenCPU(g, Options{})
		require.NoError(t, err)
		rng := rand.New(rand.NewPCG(uint64(len(spec)), 11))
		for range 5 {
			qs := randomQueries(rng, g, 1+rng.IntN(12))
			nd := needs(cpu.in, qs)
			for _, q := range qs {
				full, err := frontier.BFS(g, q.Root)
				require.NoError(t, err)
				n := nd[q.Root]
				lv := make([]int32, len(n.vertices))
				for i, v := range n.vertices {
					lv[i] = full[v]
				}
				var counts []uint64
				for _, l := range full {
					if l == Unreached {
						continue
					}
					for int(l) >= len(counts) {
						counts = append(counts, 0)
					}
					counts[l]++
				}
				want := cpu.answer(q, fullView(full))
				got := cpu.answer(q, sparseView(n.vertices, lv, counts))
				require.Equal(t, want, got, "%s root %d", spec, q.Root)
			}
		}
	}
}

// TestGPUAnswersReadOnlyWhatTheQueriesNeed checks, on the fake GPU, that
// single-root and multi-source batches of random queries answer as the
// CPU reference does while reading back far less than the level arrays.
func TestGPUAnswersReadOnlyWhatTheQueriesNeed(t *testing.T) {
	g := kron(t)
	gpu := openFake(t, g, Options{})
	cpu, err := OpenCPU(g, Options{})
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{1, 3, 70} {
		qs := randomQueries(rng, g, n)
		before := gpu.x.Telemetry()
		got, err := gpu.Batch(context.Background(), qs)
		require.NoError(t, err)
		read := gpu.x.Telemetry().Sub(before).DeviceToHostBytes
		want, err := cpu.Batch(context.Background(), qs)
		require.NoError(t, err)
		require.Equal(t, want, got, "%d queries", n)
		require.Less(t, read, uint64(4*g.NumVertices()*len(distinctRoots(qs))), "%d queries read back less than their roots' levels", n)
	}
}
