package frontier

import (
	"fmt"
	"github.com/gpuplan/gpuplan/internal/memcheck"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// relaxLevels computes BFS levels by an independent method: Bellman-Ford
// relaxation over the edges until nothing changes.
func relaxLevels(g *CSR, root int32) []int32 {
	const inf = int32(1 << 30)
	d := make([]int32, g.NumVertices())
	for i := range d {
		d[i] = inf
	}
	d[root] = 0
	for changed := true; changed; {
		changed = false
		for v := int32(0); int(v) < g.NumVertices(); v++ {
			for _, w := range g.Neighbors(v) {
				if d[v] != inf && d[v]+1 < d[w] {
					d[w] = d[v] + 1
					changed = true
				}
			}
		}
	}
	for i := range d {
		if d[i] == inf {
			d[i] = Unreached
		}
	}
	return d
}

func TestBFSPath(t *testing.T) {
	g, err := BuildUndirected("p", 5, []int32{0, 1, 2}, []int32{1, 2, 3})
	require.NoError(t, err)
	levels, err := BFS(g, 1)
	require.NoError(t, err)
	assert.Equal(t, []int32{1, 0, 1, 2, Unreached}, levels)
	require.NoError(t, Validate(g, 1, levels))
	st := Stats(g, levels)
	assert.Equal(t, TraversalStats{Levels: 3, Reached: 4, Edges: 3}, st)
	var re *RootError
	_, err = BFS(g, 5)
	require.ErrorAs(t, err, &re)
	assert.Contains(t, err.Error(), "Fix:")
	_, err = BFS(g, -1)
	require.ErrorAs(t, err, &re)
}

// TestBFSAgainstRelaxation checks the reference BFS against Bellman-Ford
// relaxation on graphs of every generator.
func TestBFSAgainstRelaxation(t *testing.T) {
	graphs := []*CSR{}
	for seed := uint64(1); seed <= 4; seed++ {
		k, err := Kronecker(8, 8, seed)
		require.NoError(t, err)
		r, err := Road(12, seed)
		require.NoError(t, err)
		graphs = append(graphs, k, r)
	}
	grid, err := Grid(9)
	require.NoError(t, err)
	graphs = append(graphs, grid)
	for _, g := range graphs {
		roots, err := Roots(g, 3, 9)
		require.NoError(t, err)
		for _, root := range roots {
			levels, err := BFS(g, root)
			require.NoError(t, err)
			require.NoError(t, Validate(g, root, levels))
			require.Equal(t, relaxLevels(g, root), levels, g.Name)
		}
	}
}

func TestValidateRejects(t *testing.T) {
	g, err := Grid(3) // 0 1 2 / 3 4 5 / 6 7 8
	require.NoError(t, err)
	good, err := BFS(g, 0)
	require.NoError(t, err)
	require.NoError(t, Validate(g, 0, good))
	mutate := func(f func(l []int32)) []int32 {
		l := append([]int32(nil), good...)
		f(l)
		return l
	}
	cases := map[string]struct {
		levels []int32
		root   int32
	}{
		"root not zero":      {mutate(func(l []int32) { l[0] = 1 }), 0},
		"second zero":        {mutate(func(l []int32) { l[8] = 0 }), 0},
		"unreached neighbor": {mutate(func(l []int32) { l[8] = Unreached }), 0},
		"skips a level":      {mutate(func(l []int32) { l[4] = 4 }), 0},
		"no parent":          {mutate(func(l []int32) { l[1], l[3] = 2, 2 }), 0},
		"out of range":       {mutate(func(l []int32) { l[8] = -5 }), 0},
		"wrong root":         {good, 4},
		"short":              {good[:5], 0},
	}
	for name, tc := range cases {
		err := Validate(g, tc.root, tc.levels)
		var ve *ValidationError
		require.ErrorAs(t, err, &ve, name)
		assert.Contains(t, err.Error(), "Fix:")
	}
	var re *RootError
	require.ErrorAs(t, Validate(g, 9, good), &re)
}

func TestRoots(t *testing.T) {
	g, err := Kronecker(10, 16, 1)
	require.NoError(t, err)
	a, err := Roots(g, 16, 5)
	require.NoError(t, err)
	b, err := Roots(g, 16, 5)
	require.NoError(t, err)
	assert.Equal(t, a, b)
	seen := map[int32]bool{}
	for _, r := range a {
		assert.Positive(t, g.Degree(r))
		assert.False(t, seen[r])
		seen[r] = true
	}
	c, err := Roots(g, 16, 6)
	require.NoError(t, err)
	assert.NotEqual(t, a, c)
	// Few candidates: the one vertex pair with edges repeats.
	p, err := BuildUndirected("pair", 1000, []int32{10}, []int32{900})
	require.NoError(t, err)
	r, err := Roots(p, 5, 1)
	require.NoError(t, err)
	assert.Len(t, r, 5)
	for _, v := range r {
		assert.Contains(t, []int32{10, 900}, v)
	}
	_, err = Roots(p, 0, 1)
	require.Error(t, err)
	var nr *NoRootError
	_, err = Roots(&CSR{Name: "e"}, 1, 1)
	require.ErrorAs(t, err, &nr)
}

func TestChecksum(t *testing.T) {
	assert.Equal(t, uint64(14695981039346656037), Checksum(nil))
	assert.NotEqual(t, Checksum([]int32{0, 1}), Checksum([]int32{1, 0}))
	assert.Equal(t, Checksum([]int32{0, 1, -1}), Checksum([]int32{0, 1, -1}))
}

func BenchmarkBFSGrid1024(b *testing.B) {
	g, err := Grid(1024)
	require.NoError(b, err)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := BFS(g, 0); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(g.NumEdgeEntries()/2)*float64(b.N)/b.Elapsed().Seconds()/1e6, "MTEPS")
}

func BenchmarkBFSKron18(b *testing.B) {
	g, err := Kronecker(18, 16, 1)
	require.NoError(b, err)
	roots, err := Roots(g, 1, 1)
	require.NoError(b, err)
	levels, _ := BFS(g, roots[0])
	edges := Stats(g, levels).Edges
	b.ReportAllocs()
	for b.Loop() {
		if _, err := BFS(g, roots[0]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(edges)*float64(b.N)/b.Elapsed().Seconds()/1e6, "MTEPS")
}

func BenchmarkValidateKron18(b *testing.B) {
	g, err := Kronecker(18, 16, 1)
	require.NoError(b, err)
	levels, _ := BFS(g, 0)
	b.ReportAllocs()
	for b.Loop() {
		_ = Validate(g, 0, levels)
	}
}

func ExampleBFS() {
	g, _ := Grid(3)
	levels, _ := BFS(g, 0)
	fmt.Println(levels, Validate(g, 0, levels))
	st := Stats(g, levels)
	fmt.Println(st.Levels, st.Reached, st.Edges)
	// Output:
	// [0 1 2 1 2 3 2 3 4] <nil>
	// 5 9 12
}

func ExampleRoots() {
	g, _ := Kronecker(8, 16, 1)
	roots, _ := Roots(g, 3, 42)
	for _, r := range roots {
		fmt.Println(g.Degree(r) > 0)
	}
	// Output:
	// true
	// true
	// true
}

// FuzzValidate feeds arbitrary levels to Validate: it never panics, and it
// accepts exactly the reference BFS's levels.
func FuzzValidate(f *testing.F) {
	f.Add([]byte{0, 1, 2, 1, 2, 3, 2, 3, 4}, uint8(0))
	f.Add([]byte{1, 0, 1, 2, 1, 2, 3, 2, 3}, uint8(1))
	f.Add([]byte{255, 255}, uint8(9))
	g, err := Grid(3)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, raw []byte, root uint8) {
		levels := make([]int32, len(raw))
		for i, b := range raw {
			levels[i] = int32(int8(b))
		}
		var err error
		memcheck.Check(t, memcheck.Bound{Base: 1 << 20, PerByte: 64}, len(raw), func() { err = Validate(g, int32(root), levels) })
		want, berr := BFS(g, int32(root))
		if berr != nil {
			if err == nil {
				t.Fatalf("root %d accepted", root)
			}
			return
		}
		if (err == nil) != slices.Equal(levels, want) {
			t.Fatalf("Validate(%v, root %d) = %v, reference %v", levels, root, err, want)
		}
	})
}
