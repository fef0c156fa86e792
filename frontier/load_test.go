package frontier

import (
	"fmt"
	"github.com/gpuplan/gpuplan/internal/memcheck"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gpuplan/gpuplan/internal/checked"
	"github.com/gpuplan/gpuplan/internal/input"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadEdgeList(t *testing.T) {
	in := "# a comment\n% another\n\n0 1\n1\t2 0.5\n2,3\n3 0\n"
	g, err := ReadEdgeList(strings.NewReader(in), "t.el", DefaultLimits())
	require.NoError(t, err)
	assert.Equal(t, 4, g.NumVertices())
	assert.Equal(t, []uint64{0, 2, 4, 6, 8}, g.Offsets)
	assert.Equal(t, []int32{1, 3, 0, 2, 1, 3, 0, 2}, g.Targets)
}

func TestReadMatrixMarket(t *testing.T) {
	in := "%%MatrixMarket matrix coordinate pattern symmetric\n% comment\n3 3 2\n1 2\n3 2\n"
	g, err := ReadMatrixMarket(strings.NewReader(in), "t.mtx", DefaultLimits())
	require.NoError(t, err)
	assert.Equal(t, []uint64{0, 1, 3, 4}, g.Offsets)
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

// checkPieces asserts that parsing in many pieces gives what parsing in
// one piece gives: the same graph or the same error.
func checkPieces(t *testing.T, parse func(parts int) (*CSR, error)) (*CSR, error) {
	g, err := parse(1)
	g2, err2 := parse(1 << 20)
	if (err == nil) != (err2 == nil) || (err != nil && err.Error() != err2.Error()) {
		t.Fatalf("one piece: %v; many pieces: %v", err, err2)
	}
	if err == nil && (!slices.Equal(g.Offsets, g2.Offsets) || !slices.Equal(g.Targets, g2.Targets)) {
		t.Fatalf("one piece and many pieces give different graphs")
	}
	return g, err
}

// checkBounded asserts that a loaded graph has no more vertices than its
// input's size allows, so memory stays proportional to the input.
func checkBounded(t *testing.T, g *CSR, in string, lim Limits) {
	if g != nil && g.NumVertices() > lim.VerticesPerByte*len(in) {
		t.Fatalf("%d vertices from %d bytes", g.NumVertices(), len(in))
	}
}

// loadBound bounds what one parse of a graph file may allocate: a fixed
// part for the parser's tables and, per input byte, at most one vertex
// (its offset and level-sized rows) and the edge arrays of the shortest
// edge line.
var loadBound = memcheck.Bound{Base: 8 << 20, PerByte: 256}

func FuzzReadEdgeList(f *testing.F) {
	for _, s := range []string{"0 1\n1 2\n", "# c\n5 3 1.0\n", "0,1\n", "1 1\n", "x y\n", "0 99999999999\n", "0 268435455", "0 1\n2\n3 4\n"} {
		f.Add(s)
	}
	lim := Limits{MaxVertices: 1 << 16, MaxEdges: 1 << 12}.WithDefaults()
	f.Fuzz(func(t *testing.T, in string) {
		g, err := checkPieces(t, func(parts int) (*CSR, error) { return parseEdgeList([]byte(in), "fuzz", lim, parts) })
		checkLoaded(t, g, err)
		checkBounded(t, g, in, lim)
		memcheck.Check(t, loadBound, len(in), func() { _, _ = parseEdgeList([]byte(in), "fuzz", lim, 1) })
	})
}

func FuzzReadMatrixMarket(f *testing.F) {
	for _, s := range []string{
		"%%MatrixMarket matrix coordinate pattern symmetric\n3 3 2\n1 2\n3 2\n",
		"%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 3.5\n",
		"%%MatrixMarket matrix coordinate integer general\n% c\n2 2 1\n2 1 7\n",
		"%%MatrixMarket matrix array real general\n",
		"%%MatrixMarket matrix coordinate pattern symmetric\n268435456 268435456 1\n1 2\n",
		"%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 2\n2 x\n",
	} {
		f.Add(s)
	}
	lim := Limits{MaxVertices: 1 << 16, MaxEdges: 1 << 12}.WithDefaults()
	f.Fuzz(func(t *testing.T, in string) {
		g, err := checkPieces(t, func(parts int) (*CSR, error) { return parseMatrixMarket([]byte(in), "fuzz", lim, parts) })
		checkLoaded(t, g, err)
		checkBounded(t, g, in, lim)
		memcheck.Check(t, loadBound, len(in), func() { _, _ = parseMatrixMarket([]byte(in), "fuzz", lim, 1) })
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
		memcheck.Check(t, memcheck.Bound{Base: 1 << 16, PerByte: 16}, len(in), func() { _, _ = ParseSpec(in) })
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

// TestParseInt64 compares parseInt64 with strconv.ParseInt.
func TestParseInt64(t *testing.T) {
	for _, s := range []string{"", "0", "-0", "+0", "7", "-7", "+7", "007", "9223372036854775807", "9223372036854775808",
		"-9223372036854775808", "-9223372036854775809", "99999999999999999999", "1_000", "0x10", "1e3", " 1", "1 ", "-", "+", "--1", "١"} {
		want, err := strconv.ParseInt(s, 10, 64)
		got, ok := parseInt64([]byte(s))
		assert.Equal(t, err == nil, ok, "%q", s)
		if ok {
			assert.Equal(t, want, got, "%q", s)
		}
	}
}

func FuzzParseInt64(f *testing.F) {
	for _, s := range []string{"0", "-12", "+9223372036854775807", "9223372036854775808", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := strconv.ParseInt(s, 10, 64)
		got, ok := parseInt64([]byte(s))
		if (err == nil) != ok || (ok && got != want) {
			t.Fatalf("%q: parseInt64 = %d, %v; strconv = %d, %v", s, got, ok, want, err)
		}
	})
}

// randomEdgeText writes an edge list (or the entries of a Matrix Market
// file, 1-based) of m random edges among n vertices, with comment and blank
// lines, and returns it with its lines.
func randomEdgeText(r *rand.Rand, n, m int, mtx bool) []string {
	var lines []string
	for len(lines) < m {
		switch r.IntN(10) {
		case 0:
			lines = append(lines, "% a comment")
		case 1:
			lines = append(lines, "")
		default:
			u, v := r.IntN(n), r.IntN(n)
			if mtx {
				u, v = u+1, v+1
			}
			sep := []string{" ", "\t", ",", "  ", " \t"}[r.IntN(5)]
			lines = append(lines, fmt.Sprintf("%d%s%d", u, sep, v))
		}
	}
	return lines
}

// TestParsePiecesMatchLineByLine checks that parsing in pieces gives the
// graph, or the error with its line, of parsing in one piece, with one bad
// line planted at a random place.
func TestParsePiecesMatchLineByLine(t *testing.T) {
	bad := []string{"x 1", "1", "1 2 3 4", "-1 2", "1 99999999999999999999"}
	for seed := uint64(1); seed <= 40; seed++ {
		r := rand.New(rand.NewPCG(seed, 5))
		mtx := seed%2 == 0
		lines := randomEdgeText(r, 50, 200+r.IntN(300), mtx)
		wantLine := 0
		if seed%4 != 1 {
			at := r.IntN(len(lines))
			lines[at] = bad[r.IntN(len(bad))]
			wantLine = at + 1
		}
		body := strings.Join(lines, "\n")
		if r.IntN(2) == 0 {
			body += "\n"
		}
		var parse func(parts int) (*CSR, error)
		if mtx {
			entries := 0
			for _, l := range lines {
				if l != "" && l[0] != '%' {
					entries++
				}
			}
			head := fmt.Sprintf("%%%%MatrixMarket matrix coordinate pattern general\n50 50 %d\n", entries-r.IntN(2))
			if wantLine > 0 {
				wantLine += 2
			}
			parse = func(parts int) (*CSR, error) {
				return parseMatrixMarket([]byte(head+body), "p", DefaultLimits(), parts)
			}
		} else {
			parse = func(parts int) (*CSR, error) {
				return parseEdgeList([]byte(body), "p", DefaultLimits(), parts)
			}
		}
		g1, err1 := parse(1)
		if wantLine > 0 {
			require.Error(t, err1, "seed %d", seed)
			assert.Contains(t, err1.Error(), fmt.Sprintf("p:%d:", wantLine), "seed %d", seed)
		}
		for _, parts := range []int{2, 3, 7, 64, 10000} {
			g, err := parse(parts)
			if err1 != nil {
				require.EqualError(t, err, err1.Error(), "seed %d parts %d", seed, parts)
				continue
			}
			require.NoError(t, err, "seed %d parts %d", seed, parts)
			assert.Equal(t, g1.Offsets, g.Offsets, "seed %d parts %d", seed, parts)
			assert.Equal(t, g1.Targets, g.Targets, "seed %d parts %d", seed, parts)
		}
	}
}

// TestLoaderRefusesSparseInput is issue-style: tiny files that declare or
// imply a huge vertex count are refused before any per-vertex allocation,
// naming the line and the numbers.
func TestLoaderRefusesSparseInput(t *testing.T) {
	mtx := "%%MatrixMarket matrix coordinate pattern symmetric\n268435456 268435456 1\n1 2\n"
	tests := []struct {
		name, in string
		mtx      bool
		line     int
		vertices int64
	}{
		{"edge list, 12 bytes", "0 268435455\n", false, 1, 1 << 28},
		{"edge list, largest id on line 3", "0 1\n# c\n5 400\n2 3\n", false, 3, 401},
		{"matrix market declaring 2^28", mtx, true, 2, 1 << 28},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			var err error
			if tc.mtx {
				_, err = ParseMatrixMarket([]byte(tc.in), "in", DefaultLimits())
			} else {
				_, err = ParseEdgeList([]byte(tc.in), "in", DefaultLimits())
			}
			runtime.ReadMemStats(&after)
			var se *SparseInputError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, tc.line, se.Line)
			assert.Equal(t, tc.vertices, se.Vertices)
			assert.EqualValues(t, len(tc.in), se.FileBytes)
			assert.Contains(t, err.Error(), fmt.Sprintf("in:%d: %d vertices for %d bytes", tc.line, tc.vertices, len(tc.in)))
			assert.Contains(t, err.Error(), "Fix:")
			assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), "refused before allocating per vertex")
		})
	}
	// The override admits what the ratio refused.
	lim := DefaultLimits()
	lim.VerticesPerByte = 1000
	g, err := ParseEdgeList([]byte("0 1\n# c\n5 400\n2 3\n"), "in", lim)
	require.NoError(t, err)
	assert.Equal(t, 401, g.NumVertices())
}

func TestLoaderBudget(t *testing.T) {
	lim := DefaultLimits()
	lim.MaxLoadBytes = 1000
	in := "%%MatrixMarket matrix coordinate pattern general\n20 20 30\n" + strings.Repeat("1 2\n", 30)
	_, err := ParseMatrixMarket([]byte(in), "in", lim)
	var be *LoadBudgetError
	require.ErrorAs(t, err, &be)
	want, _ := LoadBytes(uint64(len(in)), 20, 30)
	assert.Equal(t, want, be.Bytes)
	assert.Equal(t, 2, be.Line)
	assert.Contains(t, err.Error(), "in:2: 20 vertices and 30 edges need about")
	// A size line that claims more entries than the file can hold is
	// budgeted by what the file holds, and fails at its end.
	in = "%%MatrixMarket matrix coordinate pattern general\n20 20 1000000000\n1 2\n"
	_, err = ParseMatrixMarket([]byte(in), "in", DefaultLimits())
	var pe *ParseError
	require.ErrorAs(t, err, &pe)
	assert.Contains(t, err.Error(), "found 1 entries, the size line declares 1000000000")
	_, err = LoadBytes(1, math.MaxUint64/2, 1)
	var oe *checked.OverflowError
	require.ErrorAs(t, err, &oe)
}

func TestLoadFileBounded(t *testing.T) {
	dir := t.TempDir()
	el := filepath.Join(dir, "big.el")
	require.NoError(t, os.WriteFile(el, []byte(strings.Repeat("0 1\n", 100)), 0o600))
	lim := DefaultLimits()
	lim.MaxFileBytes = 100
	_, err := LoadFile(el, lim)
	var tl *input.TooLargeError
	require.ErrorAs(t, err, &tl)
	assert.Contains(t, err.Error(), "Fix:")
	_, err = LoadFile(dir, DefaultLimits())
	var nr *input.NotRegularError
	require.ErrorAs(t, err, &nr)
	_, err = ReadEdgeList(strings.NewReader(strings.Repeat("0 1\n", 100)), "stream", lim)
	require.ErrorAs(t, err, &tl)
	assert.Contains(t, err.Error(), "stream:")
}

func BenchmarkParseEdgeList(b *testing.B) {
	benchmarkParse(b, false)
}

func BenchmarkParseMatrixMarket(b *testing.B) {
	benchmarkParse(b, true)
}

// benchmarkParse parses the Kronecker scale-20 edges (16.8M edges) as an
// edge list or a pattern Matrix Market file held in memory: "parse" times
// the parallel parse alone (pieces parsed and joined into one edge list),
// "load" the whole ParseEdgeList or ParseMatrixMarket (with the CSR
// build). Both report edges per second.
func benchmarkParse(b *testing.B, mtx bool) {
	const scale = 20
	edges := kroneckerEdges(scale, DefaultEdgeFactor, 1)
	m := len(edges) / 2
	var buf []byte
	if mtx {
		buf = fmt.Appendf(buf, "%%%%MatrixMarket matrix coordinate pattern general\n%d %d %d\n", 1<<scale, 1<<scale, m)
	}
	for i := 0; i < m; i++ {
		u, v := int64(edges[i]), int64(edges[m+i])
		if mtx {
			u, v = u+1, v+1
		}
		buf = strconv.AppendInt(buf, u, 10)
		buf = append(buf, ' ')
		buf = strconv.AppendInt(buf, v, 10)
		buf = append(buf, '\n')
	}
	lim := DefaultLimits()
	b.Run("parse", func(b *testing.B) {
		b.SetBytes(int64(len(buf)))
		for b.Loop() {
			var res []chunkResult
			if mtx {
				h, err := parseMTXHeader(buf, "bench.mtx")
				if err != nil {
					b.Fatal(err)
				}
				res = parsePieces(h.rest, splitLines(h.rest, parseParts(len(buf))), func(p []byte) chunkResult { return parseMTXChunk(p, "bench.mtx", h) })
			} else {
				res = parsePieces(buf, splitLines(buf, parseParts(len(buf))), func(p []byte) chunkResult { return parseEdgeChunk(p, "bench.el", lim) })
			}
			total := 0
			for _, r := range res {
				if r.err != nil {
					b.Fatal(r.err)
				}
				total += len(r.src)
			}
			if len(joinEdges(res, total)) != 2*m {
				b.Fatal("edges lost")
			}
		}
		b.ReportMetric(float64(m)*float64(b.N)/b.Elapsed().Seconds(), "edges/s")
	})
	b.Run("load", func(b *testing.B) {
		b.SetBytes(int64(len(buf)))
		for b.Loop() {
			var err error
			if mtx {
				_, err = ParseMatrixMarket(buf, "bench.mtx", lim)
			} else {
				_, err = ParseEdgeList(buf, "bench.el", lim)
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(m)*float64(b.N)/b.Elapsed().Seconds(), "edges/s")
	})
}

// TestHugeFieldsAreCutInErrors reads an edge list whose vertex id is a
// megabyte long: the error repeats at most quote.MaxEcho bytes of it.
func TestHugeFieldsAreCutInErrors(t *testing.T) {
	text := "0 " + strings.Repeat("9x", 1<<19) + "\n"
	_, err := ParseEdgeList([]byte(text), "huge.txt", DefaultLimits())
	require.Error(t, err)
	assert.Less(t, len(err.Error()), 400)
	assert.Contains(t, err.Error(), `"... is not an integer`)
}

// TestParseSpecQuotingIsLinear holds the bound FuzzParseSpec checks on
// specs that quoting expands most: long runs of invalid UTF-8 and control
// characters, whose error quotes the spec cut to 200 bytes in one pass.
func TestParseSpecQuotingIsLinear(t *testing.T) {
	for _, in := range []string{
		"kron:2" + strings.Repeat("a", 4000),
		"kron:2" + strings.Repeat("\x80", 3342),
		"kron:2" + strings.Repeat("\n", 5000),
	} {
		memcheck.Check(t, memcheck.Bound{Base: 1 << 16, PerByte: 16}, len(in), func() { _, _ = ParseSpec(in) })
	}
}
