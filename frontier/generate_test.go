package frontier

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGrid(t *testing.T) {
	for _, n := range []int{2, 3, 5, 16} {
		g, err := Grid(n)
		require.NoError(t, err)
		require.NoError(t, g.Check())
		assert.Equal(t, n*n, g.NumVertices())
		assert.Equal(t, 4*n*(n-1), g.NumEdgeEntries())
		assert.Equal(t, fmt.Sprintf("grid-%d", n), g.Name)
		// Same graph as building it from its edge list.
		var src, dst []int32
		for r := 0; r < n; r++ {
			for c := 0; c < n; c++ {
				v := int32(r*n + c)
				if c+1 < n {
					src, dst = append(src, v), append(dst, v+1)
				}
				if r+1 < n {
					src, dst = append(src, v), append(dst, v+int32(n))
				}
			}
		}
		ref, err := BuildUndirected(g.Name, n*n, src, dst)
		require.NoError(t, err)
		assert.Equal(t, ref.Offsets, g.Offsets)
		assert.Equal(t, ref.Targets, g.Targets)
		levels, err := BFS(g, 0)
		require.NoError(t, err)
		assert.Equal(t, 2*n-1, Stats(g, levels).Levels, "corner-to-corner diameter")
	}
	var ge *GeneratorError
	_, err := Grid(1)
	require.ErrorAs(t, err, &ge)
	assert.Contains(t, err.Error(), "Fix:")
	var tl *TooLargeError
	_, err = Grid(1 << 16)
	require.ErrorAs(t, err, &tl)
}

func TestKronecker(t *testing.T) {
	g, err := Kronecker(10, 16, 1)
	require.NoError(t, err)
	require.NoError(t, g.Check())
	assert.Equal(t, 1024, g.NumVertices())
	assert.Equal(t, "kron-10", g.Name)
	assert.LessOrEqual(t, g.NumEdgeEntries(), 2*16*1024)
	assert.Greater(t, g.NumEdgeEntries(), 16*1024/2, "dedup keeps most edges")
	// Deterministic from the seed, different across seeds.
	g2, err := Kronecker(10, 16, 1)
	require.NoError(t, err)
	assert.Equal(t, g.Targets, g2.Targets)
	g3, err := Kronecker(10, 16, 2)
	require.NoError(t, err)
	assert.NotEqual(t, g.Targets, g3.Targets)
	// Skewed degrees: the largest degree is far above the average.
	maxDeg := 0
	for v := int32(0); int(v) < g.NumVertices(); v++ {
		maxDeg = max(maxDeg, g.Degree(v))
	}
	assert.Greater(t, maxDeg, 8*g.NumEdgeEntries()/g.NumVertices())
	// Permuted labels: vertex 0 is not the hub it would be unpermuted.
	assert.Less(t, g.Degree(0), maxDeg)

	for _, bad := range [][2]int{{0, 16}, {31, 16}, {10, 0}, {10, 2000}} {
		_, err := Kronecker(bad[0], bad[1], 1)
		var ge *GeneratorError
		require.ErrorAs(t, err, &ge, "%v", bad)
		assert.Contains(t, err.Error(), "Fix:")
	}
	// Refused before anything is allocated: 2 x 16 x 2^30 entries pass
	// MaxGraphEdgeEntries; the fix names the largest valid scale and edge
	// factor.
	var tl *TooLargeError
	_, err = Kronecker(30, 16, 1)
	require.ErrorAs(t, err, &tl)
	assert.Equal(t, &TooLargeError{Source: "kron-30", Field: "edge entries", Value: 1 << 35, Limit: MaxGraphEdgeEntries,
		Fix: "pass a scale of at most 29 at edge factor 16, or an edge factor of at most 8 at scale 30: the 2 x edge factor x 2^scale adjacency entries must be at most 17179869184"}, tl)
}

// CheckKronecker's errors say exactly which scales are valid: a scale
// outside 1..30 is told the largest at its edge factor (30 at an edge
// factor of at most 8, which the old fix's 29 left out), and a graph past
// the entries limit the largest scale at its edge factor and the largest
// edge factor at its scale.
func TestCheckKroneckerLimits(t *testing.T) {
	cases := []struct {
		name              string
		scale, edgeFactor int
		field             string // the refused field; "" for none
		wants             []string
	}{
		{"the largest scale", 30, 8, "", nil},
		{"the largest Graph500 scale", MaxKroneckerScale, DefaultEdgeFactor, "", nil},
		{"the largest edge factor", 23, 1024, "", nil},
		{"scale past 30 at edge factor 16", 31, 16, "scale",
			[]string{"scale=31 is outside 1..30. Fix: pass a scale between 1 and 29, the largest at edge factor 16", "2^30 vertices", "17179869184 adjacency entries"}},
		{"scale past 30 at edge factor 4", 31, 4, "scale", []string{"Fix: pass a scale between 1 and 30, the largest at edge factor 4"}},
		{"scale 0 at edge factor 1024", 0, 1024, "scale", []string{"scale=0 is outside 1..30. Fix: pass a scale between 1 and 23, the largest at edge factor 1024"}},
		{"scale and edge factor both out", -1, 2000, "scale",
			[]string{"Fix: pass a scale between 1 and 30, at most 29 at Graph500's edge factor 16 and 30 at an edge factor of at most 8"}},
		{"edge factor out", 10, 0, "edgefactor", []string{"edgefactor=0 is outside 1..1024. Fix:"}},
		{"scale 30 at edge factor 16", 30, 16, "edge entries",
			[]string{`graph "kron-30": edge entries 34359738368 exceeds the limit 17179869184. Fix: pass a scale of at most 29 at edge factor 16, or an edge factor of at most 8 at scale 30`}},
		{"scale 29 at edge factor 17", 29, 17, "edge entries", []string{"Fix: pass a scale of at most 28 at edge factor 17, or an edge factor of at most 16 at scale 29"}},
		{"scale 24 at edge factor 1024", 24, 1024, "edge entries", []string{"Fix: pass a scale of at most 23 at edge factor 1024, or an edge factor of at most 512 at scale 24"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := CheckKronecker(c.scale, c.edgeFactor)
			if c.field == "" {
				require.NoError(t, err)
				return
			}
			var ge *GeneratorError
			var tl *TooLargeError
			switch {
			case errors.As(err, &ge):
				assert.Equal(t, c.field, ge.Field)
			case errors.As(err, &tl):
				assert.Equal(t, c.field, tl.Field)
			default:
				require.Failf(t, "not a generator or too-large error", "%v", err)
			}
			for _, want := range c.wants {
				assert.Contains(t, err.Error(), want)
			}
		})
	}
}

// MaxKroneckerScaleFor is the largest scale CheckKronecker takes at every
// edge factor: it takes that scale and refuses the next. The vertices'
// bound, 2^30, is the largest power of two within MaxGraphVertices.
func TestMaxKroneckerScaleFor(t *testing.T) {
	require.LessOrEqual(t, 1<<maxKroneckerScaleAny, MaxGraphVertices)
	require.Greater(t, 1<<(maxKroneckerScaleAny+1), MaxGraphVertices)
	assert.Equal(t, MaxKroneckerScale, MaxKroneckerScaleFor(DefaultEdgeFactor))
	for _, e := range []int{-1, 0, 1025} {
		assert.Zero(t, MaxKroneckerScaleFor(e), "edge factor %d", e)
	}
	for e := 1; e <= maxKroneckerEdgeFactor; e++ {
		most := MaxKroneckerScaleFor(e)
		require.NoError(t, CheckKronecker(most, e), "edge factor %d", e)
		require.Error(t, CheckKronecker(most+1, e), "edge factor %d", e)
		assert.LessOrEqual(t, e, maxKroneckerEdgeFactorFor(most), "edge factor %d", e)
	}
	for s := 1; s <= maxKroneckerScaleAny; s++ {
		most := maxKroneckerEdgeFactorFor(s)
		require.NoError(t, CheckKronecker(s, most), "scale %d", s)
		if most < maxKroneckerEdgeFactor {
			require.Error(t, CheckKronecker(s, most+1), "scale %d", s)
		}
	}
}

func TestRoad(t *testing.T) {
	g, err := Road(64, 3)
	require.NoError(t, err)
	require.NoError(t, g.Check())
	assert.Equal(t, 64*64, g.NumVertices())
	avg := float64(g.NumEdgeEntries()) / float64(g.NumVertices())
	assert.InDelta(t, 2.6, avg, 0.3)
	levels, err := BFS(g, 0)
	require.NoError(t, err)
	st := Stats(g, levels)
	assert.Equal(t, g.NumVertices(), st.Reached, "spanning tree keeps it connected")
	grid, _ := Grid(64)
	gl, _ := BFS(grid, 0)
	assert.Greater(t, st.Levels, Stats(grid, gl).Levels/2)
	g2, err := Road(64, 3)
	require.NoError(t, err)
	assert.Equal(t, g.Targets, g2.Targets)
	_, err = Road(1, 3)
	require.Error(t, err)
	// Planar: at most 3V-6 edges.
	assert.LessOrEqual(t, g.NumEdgeEntries()/2, 3*g.NumVertices()-6)
}

func BenchmarkKronecker16(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Kronecker(16, 16, 1); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkKroneckerLarge builds Kronecker graphs of scale 22, 24 and 26
// (the build targets: scale 24 within 10 s and 26 within 60 s on 16 cores).
// Scale 26 needs about 21 GiB, so the benchmark runs only when
// GPUPLAN_BENCH_LARGE=1 is set: go test ./frontier/ -run '^$' -bench
// KroneckerLarge -benchtime 1x.
func BenchmarkKroneckerLarge(b *testing.B) {
	if os.Getenv("GPUPLAN_BENCH_LARGE") != "1" {
		b.Skip("set GPUPLAN_BENCH_LARGE=1 to build Kronecker graphs of scale 22 to 26")
	}
	for _, scale := range []int{22, 24, 26} {
		b.Run(fmt.Sprintf("scale=%d", scale), func(b *testing.B) {
			for b.Loop() {
				if _, err := Kronecker(scale, DefaultEdgeFactor, 1); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkGrid1024(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Grid(1024); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRoad512(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Road(512, 1); err != nil {
			b.Fatal(err)
		}
	}
}

func ExampleGrid() {
	g, _ := Grid(2048)
	fmt.Println(g.Name, g.NumVertices(), g.NumEdgeEntries()/2)
	// Output: grid-2048 4194304 8384512
}

func ExampleKronecker() {
	g, _ := Kronecker(10, DefaultEdgeFactor, 1)
	fmt.Println(g.Name, g.NumVertices(), g.NumEdgeEntries() <= 2*16*1024)
	// Output: kron-10 1024 true
}

// graphDigest is an FNV-1a hash of a CSR's offsets and targets as
// little-endian 4-byte words (the pinned graphs' offsets all fit 32 bits,
// so the digests are those of the 32-bit offsets they were recorded with).
func graphDigest(g *CSR) string {
	h := fnv.New64a()
	var b [4]byte
	for _, o := range g.Offsets {
		binary.LittleEndian.PutUint32(b[:], uint32(o))
		h.Write(b[:])
	}
	for _, t := range g.Targets {
		binary.LittleEndian.PutUint32(b[:], uint32(t))
		h.Write(b[:])
	}
	return fmt.Sprintf("%s %d %d %x", g.Name, g.NumVertices(), g.NumEdgeEntries(), h.Sum64())
}

// TestGeneratorsUnchanged pins the generators' output to the graphs they
// made when evidence was recorded with them: a change here invalidates
// that evidence.
func TestGeneratorsUnchanged(t *testing.T) {
	want := []string{
		"kron-5 32 306 be423fea688102a7",
		"kron-12 4096 96646 9596195ae0d0d4ef",
		"kron-16 65536 1819652 46664f20c5064ab2",
		"kron-18 262144 7609400 e347cc56da64106a",
		"road-7 49 128 5a349a288467592d",
		"road-512 262144 707026 8c6359bac3efc196",
		"grid-7 49 168 129dde85acd10fd9",
		"grid-100 10000 39600 cfc7c056d04b4e82",
	}
	var got []string
	for _, k := range []struct {
		scale int
		seed  uint64
	}{{5, 1}, {12, 7}, {16, 1}, {18, 7}} {
		g, err := Kronecker(k.scale, DefaultEdgeFactor, k.seed)
		require.NoError(t, err)
		got = append(got, graphDigest(g))
	}
	for _, n := range []int{7, 512} {
		g, err := Road(n, 1)
		require.NoError(t, err)
		got = append(got, graphDigest(g))
	}
	for _, n := range []int{7, 100} {
		g, err := Grid(n)
		require.NoError(t, err)
		got = append(got, graphDigest(g))
	}
	assert.Equal(t, want, got)
}

func TestGrid3D(t *testing.T) {
	for _, n := range []int{2, 3, 6, 17} {
		g, err := Grid3D(n)
		require.NoError(t, err)
		require.NoError(t, g.Check())
		assert.Equal(t, n*n*n, g.NumVertices())
		assert.Equal(t, 6*n*n*(n-1), g.NumEdgeEntries())
		assert.Equal(t, fmt.Sprintf("grid3d-%d", n), g.Name)
		// Same graph as building it from its edge list.
		var src, dst []int32
		for z := range n {
			for r := range n {
				for c := range n {
					v := int32((z*n+r)*n + c)
					for _, d := range []struct {
						ok   bool
						step int
					}{{c+1 < n, 1}, {r+1 < n, n}, {z+1 < n, n * n}} {
						if d.ok {
							src, dst = append(src, v), append(dst, v+int32(d.step))
						}
					}
				}
			}
		}
		ref, err := BuildUndirected(g.Name, n*n*n, src, dst)
		require.NoError(t, err)
		assert.Equal(t, ref.Offsets, g.Offsets)
		assert.Equal(t, ref.Targets, g.Targets)
		// From a corner, a vertex's level is its Manhattan distance.
		levels, err := BFS(g, 0)
		require.NoError(t, err)
		for v, l := range levels {
			z, r, c := v/(n*n), v/n%n, v%n
			require.Equal(t, int32(z+r+c), l, "vertex %d", v)
		}
	}
	for _, n := range []int{-1, 0, 1} {
		_, err := Grid3D(n)
		var ge *GeneratorError
		require.ErrorAs(t, err, &ge, "n=%d", n)
		assert.Contains(t, err.Error(), "Fix:")
	}
	_, err := Grid3D(1 << 12)
	var tl *TooLargeError
	require.ErrorAs(t, err, &tl, "refused before anything is allocated")
	sp, err := ParseSpec("grid3d:5")
	require.NoError(t, err)
	g, err := sp.Build(0, DefaultLimits())
	require.NoError(t, err)
	assert.Equal(t, "grid3d-5", g.Name)
	assert.Equal(t, "grid3d-5", sp.Name())
}

// TestKroneckerParts checks the exported pieces of Kronecker against
// Kronecker itself: its checks, its name and its labels, drawn again from
// the PCG seeds KroneckerPermutationPCG gives.
func TestKroneckerParts(t *testing.T) {
	for _, c := range [][2]int{{0, 16}, {31, 16}, {10, 0}, {10, 2000}, {30, 16}, {29, 32}, {27, 128}} {
		_, want := Kronecker(c[0], c[1], 1)
		require.Error(t, want, "%v", c)
		assert.Equal(t, want, CheckKronecker(c[0], c[1]), "%v", c)
	}
	// Past 2^32-1 entries, up to MaxGraphEdgeEntries (checked only: a
	// scale 27 graph takes tens of GiB to build).
	for _, c := range [][2]int{{26, 16}, {27, 16}, {MaxKroneckerScale, 16}, {28, 32}} {
		assert.NoError(t, CheckKronecker(c[0], c[1]), "%v", c)
	}
	assert.Equal(t, "kron-12", KroneckerName(12))
	perm := KroneckerPermutation(10, 5)
	s1, s2 := KroneckerPermutationPCG(5)
	want := make([]int32, 1<<10)
	for i := range want {
		want[i] = int32(i)
	}
	r := rand.New(rand.NewPCG(s1, s2))
	r.Shuffle(len(want), func(i, j int) { want[i], want[j] = want[j], want[i] })
	assert.Equal(t, want, perm)
	tAB, tA, tC := KroneckerThresholds()
	// The thresholds the pinned graphs of TestGeneratorsUnchanged were
	// drawn with (float64 A/(A+B) falls just below 3/4).
	assert.Equal(t, [3]uint32{3264175144, 3221225471, 3400182442}, [3]uint32{tAB, tA, tC})
}
