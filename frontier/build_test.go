package frontier

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// referenceCSR builds the undirected CSR of an edge list the simplest way:
// a set of neighbours per vertex.
func referenceCSR(n int, src, dst []int32) *CSR {
	rows := make([]map[int32]bool, n)
	for i := range src {
		u, v := src[i], dst[i]
		if u == v {
			continue
		}
		for _, e := range [][2]int32{{u, v}, {v, u}} {
			if rows[e[0]] == nil {
				rows[e[0]] = map[int32]bool{}
			}
			rows[e[0]][e[1]] = true
		}
	}
	g := &CSR{Offsets: make([]uint64, n+1), Targets: []int32{}}
	for v := 0; v < n; v++ {
		var row []int32
		for w := range rows[v] {
			row = append(row, w)
		}
		slices.Sort(row)
		g.Targets = append(g.Targets, row...)
		g.Offsets[v+1] = uint64(len(g.Targets))
	}
	return g
}

// TestBuildCSRSchedules checks that the bucketed build gives the reference
// CSR whatever the worker count, the bucket width and whether it reuses
// the input's memory.
func TestBuildCSRSchedules(t *testing.T) {
	for seed := uint64(1); seed <= 25; seed++ {
		r := rand.New(rand.NewPCG(seed, 11))
		n := 1 + r.IntN(3000)
		m := 1 + r.IntN(8000)
		edges := make([]int32, 2*m)
		for i := range edges {
			// Skewed ids make hubs, duplicates and empty buckets.
			edges[i] = int32(r.IntN(n) * r.IntN(n) / n)
		}
		src, dst := edges[:m], edges[m:]
		want := referenceCSR(n, src, dst)
		if len(want.Targets) == 0 {
			continue
		}
		for _, workers := range []int{1, 2, 5, 16} {
			for _, shift := range []uint{0, 3, 6, 14} {
				name := fmt.Sprintf("seed %d workers %d shift %d", seed, workers, shift)
				g, err := buildCSR("p", n, src, dst, workers, shift, nil)
				require.NoError(t, err, name)
				require.Equal(t, want.Offsets, g.Offsets, name)
				require.Equal(t, want.Targets, g.Targets, name)
			}
		}
		// Buckets past 2^32-1 entries count with 64-bit counters: forced
		// here on every bucket.
		wide := newCSRBuild(n, 3, 4)
		wide.wideFrom = 0
		g, err := wide.build("p", src, dst, nil)
		require.NoError(t, err)
		require.Equal(t, want.Offsets, g.Offsets, "64-bit counters, seed %d", seed)
		require.Equal(t, want.Targets, g.Targets, "64-bit counters, seed %d", seed)
		g, err = buildOwned("p", n, src, dst, slices.Clone(edges))
		require.NoError(t, err)
		require.Equal(t, want.Targets, g.Targets, "reused memory, seed %d", seed)
		require.LessOrEqual(t, cap(g.Targets)-len(g.Targets), len(g.Targets)/4, "no large waste")
	}
}

// TestFirstOutOfRange checks that every schedule reports the first bad
// edge in input order.
func TestFirstOutOfRange(t *testing.T) {
	src := make([]int32, 100000)
	dst := make([]int32, 100000)
	for _, bad := range []int{-1, 0, 5, 33333, 50000, 99999} {
		clear(src)
		clear(dst)
		if bad >= 0 {
			dst[bad] = 10
			src[min(bad+40000, 99999)] = -1
		}
		for _, workers := range []int{1, 2, 3, 16} {
			assert.Equal(t, bad, firstOutOfRange(10, src, dst, workers), "bad %d workers %d", bad, workers)
		}
	}
	assert.Equal(t, -1, firstOutOfRange(10, nil, nil, 4))
}

func TestBucketShift(t *testing.T) {
	assert.EqualValues(t, 6, bucketShift(1, 16))
	assert.EqualValues(t, 14, bucketShift(1<<26, 16))
	assert.EqualValues(t, 12, bucketShift(1<<18, 16))
}

func BenchmarkBuildUndirected(b *testing.B) {
	for _, scale := range []int{20, 22} {
		b.Run(fmt.Sprintf("kron-%d", scale), func(b *testing.B) {
			edges := kroneckerEdges(scale, DefaultEdgeFactor, 1)
			n, m := 1<<scale, len(edges)/2
			src, dst := edges[:m], edges[m:]
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := BuildUndirected("b", n, src, dst); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestSortRow compares the row sort (comparison or radix) with
// slices.Sort over lengths around the radix threshold and id widths.
func TestSortRow(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	var scratch radixScratch
	for _, idBits := range []int{1, 7, 8, 9, 16, 22, 26, 31} {
		for _, length := range []int{0, 1, 2, radixRowMin - 1, radixRowMin, radixRowMin + 1, 5000} {
			row := make([]int32, length)
			for i := range row {
				row[i] = int32(r.Uint64N(1 << idBits))
			}
			want := slices.Clone(row)
			slices.Sort(want)
			sortRow(row, &scratch, idBits)
			require.Equal(t, want, row, "bits %d length %d", idBits, length)
		}
	}
}
