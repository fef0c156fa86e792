package frontier

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadEdgeList(t *testing.T) {
	in := "# a comment\n% another\n\n0 1\n1\t2 0.5\n2,3\n3 0\n"
	g, err := ReadEdgeList(strings.NewReader(in), "t.el", DefaultLimits())
	require.NoError(t, err)
	assert.Equal(t, 4, g.NumVertices())
	assert.Equal(t, []uint32{0, 2, 4, 6, 8}, g.Offsets)
	assert.Equal(t, []int32{1, 3, 0, 2, 1, 3, 0, 2}, g.Targets)
}

func TestReadMatrixMarket(t *testing.T) {
	in := "%%MatrixMarket matrix coordinate pattern symmetric\n% comment\n3 3 2\n1 2\n3 2\n"
	g, err := ReadMatrixMarket(strings.NewReader(in), "t.mtx", DefaultLimits())
	require.NoError(t, err)
	assert.Equal(t, []uint32{0, 1, 3, 4}, g.Offsets)
	assert.Equal(t, []int32{1, 0, 2, 1}, g.Targets)
	in = "%%MatrixMarket matrix coordinate real general\n4 4 3\n1 2 1.5\n2 3 -2\n4 4 1\n"
	g, err = ReadMatrixMarket(strings.NewReader(in), "t.mtx", DefaultLimits())
	require.NoError(t, err)
	assert.Equal(t, 4, g.NumVertices())
	assert.Equal(t, 4, g.NumEdgeEntries(), "the self loop is dropped")
}

func TestLoaderErrors(t *testing.T) {
	small := Limits{MaxVertices: 100, MaxEdges: 3}
	tests := []struct {
		name, in string
		mtx      bool
		line     int
		kind     string
		contains string
	}{
		{"el one field", "0 1\n2\n", false, 2, "parse", "want 2 or 3 fields"},
		{"el four fields", "0 1 2 3\n", false, 1, "parse", "found 4"},
		{"el not int", "0 1\nx 2\n", false, 2, "parse", "not an integer"},
		{"el negative", "0 1\n-1 2\n", false, 2, "range", "out of range"},
		{"el over limit", "0 100\n", false, 1, "range", "out of range"},
		{"el too many edges", "0 1\n1 2\n2 3\n3 4\n", false, 0, "large", "at line 4"},
		{"el empty", "# nothing\n\n", false, 0, "empty", "empty"},
		{"el only loops", "1 1\n2 2\n", false, 0, "empty", "empty"},
		{"mtx no header", "3 3 1\n1 2\n", true, 1, "parse", "malformed header"},
		{"mtx empty file", "", true, 1, "parse", "empty"},
		{"mtx array", "%%MatrixMarket matrix array real general\n", true, 1, "parse", "not a coordinate"},
		{"mtx complex", "%%MatrixMarket matrix coordinate complex general\n", true, 1, "parse", "not supported"},
		{"mtx hermitian", "%%MatrixMarket matrix coordinate real hermitian\n", true, 1, "parse", "not supported"},
		{"mtx no size", "%%MatrixMarket matrix coordinate pattern general\n% c\n", true, 2, "parse", "missing"},
		{"mtx bad size", "%%MatrixMarket matrix coordinate pattern general\n3 3\n", true, 2, "parse", "2 fields"},
		{"mtx size not int", "%%MatrixMarket matrix coordinate pattern general\n3 x 1\n", true, 2, "parse", "non-negative"},
		{"mtx not square", "%%MatrixMarket matrix coordinate pattern general\n3 4 1\n1 2\n", true, 2, "parse", "not square"},
		{"mtx zero entries", "%%MatrixMarket matrix coordinate pattern general\n3 3 0\n", true, 0, "empty", "empty"},
		{"mtx too large", "%%MatrixMarket matrix coordinate pattern general\n101 101 1\n1 2\n", true, 0, "large", "vertices (line 2)"},
		{"mtx index zero", "%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 2\n0 1\n", true, 4, "range", "out of range 1..3"},
		{"mtx index high", "%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 2\n1 4\n", true, 4, "range", "4 is out of range"},
		{"mtx missing value", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 2\n", true, 3, "parse", "want 3"},
		{"mtx bad value", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 2 abc\n", true, 3, "parse", "not a number"},
		{"mtx bad index", "%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 b\n", true, 3, "parse", "not an integer"},
		{"mtx too many", "%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 2\n2 3\n", true, 4, "parse", "more entries"},
		{"mtx too few", "%%MatrixMarket matrix coordinate pattern general\n3 3 3\n1 2\n2 3\n", true, 4, "parse", "found 2 entries"},
		{"mtx only loops", "%%MatrixMarket matrix coordinate pattern general\n3 3 1\n2 2\n", true, 0, "empty", "empty"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.mtx {
				_, err = ReadMatrixMarket(strings.NewReader(tc.in), "in", small)
			} else {
				_, err = ReadEdgeList(strings.NewReader(tc.in), "in", small)
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.contains)
			assert.Contains(t, err.Error(), "Fix:")
			switch tc.kind {
			case "parse":
				var pe *ParseError
				require.ErrorAs(t, err, &pe)
				assert.Equal(t, tc.line, pe.Line)
			case "range":
				var re *VertexRangeError
				require.ErrorAs(t, err, &re)
				assert.Equal(t, tc.line, re.Line)
			case "empty":
				var ee *EmptyGraphError
				require.ErrorAs(t, err, &ee)
			case "large":
				var te *TooLargeError
				require.ErrorAs(t, err, &te)
			}
		})
	}
}

func TestLoadFileAndSpec(t *testing.T) {
	dir := t.TempDir()
	mtx := filepath.Join(dir, "tri.mtx")
	require.NoError(t, os.WriteFile(mtx, []byte("%%MatrixMarket matrix coordinate pattern symmetric\n3 3 3\n1 2\n2 3\n3 1\n"), 0o600))
	el := filepath.Join(dir, "tri.el")
	require.NoError(t, os.WriteFile(el, []byte("0 1\n1 2\n2 0\n"), 0o600))
	a, err := LoadFile(mtx, DefaultLimits())
	require.NoError(t, err)
	b, err := LoadFile(el, DefaultLimits())
	require.NoError(t, err)
	assert.Equal(t, a.Targets, b.Targets)
	assert.Equal(t, "tri", a.Name)
	_, err = LoadFile(filepath.Join(dir, "missing.el"), DefaultLimits())
	require.ErrorContains(t, err, "Fix:")

	s, err := ParseSpec("file:" + mtx)
	require.NoError(t, err)
	assert.Equal(t, "tri", s.Name())
	g, err := s.Build(1, DefaultLimits())
	require.NoError(t, err)
	assert.Equal(t, 3, g.NumVertices())

	for spec, name := range map[string]string{"grid:4": "grid-4", "kron:5": "kron-5", "road:4": "road-4", "rgg:500": "rgg-500-8", "rgg:500:3": "rgg-500-3"} {
		s, err := ParseSpec(spec)
		require.NoError(t, err)
		assert.Equal(t, name, s.Name())
		g, err := s.Build(1, DefaultLimits())
		require.NoError(t, err)
		assert.Equal(t, name, g.Name)
	}
	for _, bad := range []string{"", "grid", "grid:", "grid:x", "grid:-3", "kron:0", "cube:3", "file:", "rgg:", "rgg:x", "rgg:0", "rgg:10:", "rgg:10:0", "rgg:10:x", "rgg:10:8:1"} {
		_, err := ParseSpec(bad)
		require.Error(t, err, bad)
		assert.Contains(t, err.Error(), "Fix:")
	}
	assert.Equal(t, "my-roads", Spec{Kind: "file", Path: "/data/my roads.el"}.Name())
	assert.Equal(t, "rgg-100-8", Spec{Kind: "rgg", Size: 100}.Name(), "no degree means the default")
	g, err = Spec{Kind: "rgg", Size: 100}.Build(1, DefaultLimits())
	require.NoError(t, err)
	assert.Equal(t, "rgg-100-8", g.Name)
	_, err = Spec{Kind: "rgg", Size: 10, Degree: 9}.Build(1, DefaultLimits())
	require.ErrorContains(t, err, "degree", "the generator checks the degree")
	assert.Equal(t, ".0", Spec{Kind: "file", Path: "dir/.0"}.Name())
	_, err = Spec{Kind: "nope"}.Build(1, DefaultLimits())
	require.Error(t, err)
}

// checkLoaded asserts the invariants every successfully loaded graph has.
func checkLoaded(t *testing.T, g *CSR, err error) {
	if err != nil {
		if !strings.Contains(err.Error(), "Fix:") {
			t.Fatalf("error without a fix: %v", err)
		}
		return
	}
	if cerr := g.Check(); cerr != nil {
		t.Fatalf("loaded graph is malformed: %v", cerr)
	}
	if g.NumEdgeEntries() == 0 || g.NumEdgeEntries()%2 != 0 {
		t.Fatalf("loaded graph has %d entries", g.NumEdgeEntries())
	}
}

func FuzzReadEdgeList(f *testing.F) {
	for _, s := range []string{"0 1\n1 2\n", "# c\n5 3 1.0\n", "0,1\n", "1 1\n", "x y\n", "0 99999999999\n"} {
		f.Add(s)
	}
	lim := Limits{MaxVertices: 1 << 16, MaxEdges: 1 << 12}
	f.Fuzz(func(t *testing.T, in string) {
		g, err := ReadEdgeList(strings.NewReader(in), "fuzz", lim)
		checkLoaded(t, g, err)
	})
}

func FuzzReadMatrixMarket(f *testing.F) {
	for _, s := range []string{
		"%%MatrixMarket matrix coordinate pattern symmetric\n3 3 2\n1 2\n3 2\n",
		"%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 3.5\n",
		"%%MatrixMarket matrix coordinate integer general\n% c\n2 2 1\n2 1 7\n",
		"%%MatrixMarket matrix array real general\n",
	} {
		f.Add(s)
	}
	lim := Limits{MaxVertices: 1 << 16, MaxEdges: 1 << 12}
	f.Fuzz(func(t *testing.T, in string) {
		g, err := ReadMatrixMarket(strings.NewReader(in), "fuzz", lim)
		checkLoaded(t, g, err)
	})
}

func ExampleReadMatrixMarket() {
	in := "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 2\n1 2\n2 3\n"
	g, err := ReadMatrixMarket(strings.NewReader(in), "path.mtx", DefaultLimits())
	fmt.Println(g.NumVertices(), g.NumEdgeEntries(), err)
	_, err = ReadMatrixMarket(strings.NewReader("%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 7\n"), "bad.mtx", DefaultLimits())
	fmt.Println(err)
	// Output:
	// 3 4 <nil>
	// bad.mtx:3: vertex id 7 is out of range 1..3. Fix: renumber the vertices or correct the declared size
}

func ExampleParseSpec() {
	s, _ := ParseSpec("grid:2048")
	fmt.Println(s.Kind, s.Size, s.Name())
	// Output: grid 2048 grid-2048
}

func FuzzParseSpec(f *testing.F) {
	for _, s := range []string{"grid:2048", "kron:22", "road:10", "rgg:2000000:8", "rgg:10", "file:x.mtx", "grid:", "x:y", ":"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		s, err := ParseSpec(in)
		if err != nil {
			if !strings.Contains(err.Error(), "Fix:") {
				t.Fatalf("error without a fix: %v", err)
			}
			return
		}
		if s.Name() == "" || (s.Kind != "file" && s.Size < 1) || (s.Kind == "rgg" && s.Degree < 1) {
			t.Fatalf("accepted %q as %+v", in, s)
		}
	})
}
