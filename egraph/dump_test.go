package egraph

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/internal/memcheck"
)

// tinyDump is x, y, f(x), f(y) with the union x ~ y pending.
const tinyDump = `egg-prerebuild-dump v1
# a comment
ops 3
0 0 x
1 0 y
2 1 f

classes 4
nodes 4
0 0
1 1
2 2 0
3 2 1
unions 2
0 1 1
1 0 0
end
# trailing comment
`

func TestReadDumpTiny(t *testing.T) {
	g, err := ReadDump(strings.NewReader(tinyDump))
	require.NoError(t, err)
	want := &Graph{
		Ops:        []OpDecl{{0, "x"}, {0, "y"}, {1, "f"}},
		ClassCount: 4,
		NodeClass:  []int32{0, 1, 2, 3},
		NodeOp:     []int32{0, 1, 2, 2},
		ChildStart: []int32{0, 0, 0, 1, 2},
		Children:   []int32{0, 1},
		Unions:     []int32{0, 1, 1, 0},
	}
	assert.Equal(t, want, g)
	require.NoError(t, g.Validate())
	res, err := Rebuild(g)
	require.NoError(t, err)
	assert.Equal(t, []int32{0, 0, 2, 2}, res.Labels)
}

func TestReadDumpStreams(t *testing.T) {
	// One byte at a time, CRLF line ends and tabs give the same graph.
	want, err := ReadDump(strings.NewReader(tinyDump))
	require.NoError(t, err)
	got, err := ReadDump(iotest.OneByteReader(strings.NewReader(tinyDump)))
	require.NoError(t, err)
	assert.Equal(t, want, got)
	crlf := strings.ReplaceAll(strings.ReplaceAll(tinyDump, "\n", "\r\n"), "2 2 0", "2\t2  0")
	got, err = ReadDump(strings.NewReader(crlf))
	require.NoError(t, err)
	assert.Equal(t, want, got)
	noFinalNewline := strings.TrimSuffix(strings.TrimSuffix(tinyDump, "\n"), "# trailing comment")
	got, err = ReadDump(strings.NewReader(strings.TrimSuffix(noFinalNewline, "\n")))
	require.NoError(t, err)
	assert.Equal(t, want, got)
	long := strings.Replace(tinyDump, "# a comment", "# "+strings.Repeat("c", 3*maxLineBytes), 1)
	got, err = ReadDump(strings.NewReader(long))
	require.NoError(t, err, "a comment longer than the line buffer is skipped")
	assert.Equal(t, want, got)
}

func TestReadDumpErrors(t *testing.T) {
	replace := func(old, new string) string { return strings.Replace(tinyDump, old, new, 1) }
	tests := []struct {
		name string
		in   string
		line int
		msg  string
	}{
		{"empty input", "", 0, "the input is empty"},
		{"only comments", "# nothing\n\n", 0, "the input is empty"},
		{"wrong magic", "egg-prerebuild-dump v2\n", 1, "the first line is"},
		{"missing ops", replace("ops 3", "opps 3"), 3, `expected "ops <count>"`},
		{"bad ops count", replace("ops 3", "ops -3"), 3, "not a non-negative decimal integer"},
		{"ops count text", replace("ops 3", "ops 3 4"), 3, "unexpected text after the ops count"},
		{"op code out of order", replace("1 0 y", "7 0 y"), 5, "expected op line 2 of 3 (code 1)"},
		{"op without name", replace("1 0 y", "1 0"), 5, "expected one name after the arity"},
		{"op name with space", replace("1 0 y", "1 0 y z"), 5, "expected one name after the arity"},
		{"op bad arity", replace("1 0 y", "1 x y"), 5, "op 1: the arity"},
		{"too few ops", replace("ops 3", "ops 4"), 8, "expected op line 4 of 4"},
		{"classes zero", replace("classes 4", "classes 0"), 8, "the e-graph is empty (classes 0)"},
		{"nodes zero", replace("nodes 4", "nodes 0"), 9, "the e-graph is empty (nodes 0)"},
		{"node class out of range", replace("3 2 1", "4 2 1"), 13, "class id 4 is outside 0..3"},
		{"node op unknown", replace("3 2 1", "3 9 1"), 13, "op \"9\" is not one of the 3 declared ops"},
		{"child out of range", replace("3 2 1", "3 2 4"), 13, "child 0 is class id 4, outside 0..3"},
		{"child not a number", replace("3 2 1", "3 2 z"), 13, "child 0 \"z\" is not a non-negative decimal integer"},
		{"too many children", replace("3 2 1", "3 2 1 1"), 13, "declared with arity 1 but the line has more children"},
		{"too few children", replace("3 2 1", "3 2"), 13, "declared with arity 1 but the line has 0 children"},
		{"leaf with child", replace("0 0\n", "0 0 1\n"), 10, "op 0 (x) is declared with arity 0"},
		{"fewer node lines", replace("nodes 4", "nodes 5"), 14, "found \"unions\" after only 4 e-node lines, but the header says nodes 5"},
		{"more node lines", replace("nodes 4", "nodes 3"), 13, `expected "unions <count>"`},
		{"class without e-node", replace("3 2 1", "2 2 1"), 8, "class id 3 has no e-node line, but the header says classes 4"},
		{"class id huge", replace("3 2 1", "99999999999 2 1"), 13, "larger than 2147483647"},
		{"union out of range", replace("1 0 0", "1 7 0"), 16, "union line 2: b is class id 7, outside 0..3"},
		{"union bad m", replace("1 0 0", "1 0 2"), 16, "m is 2, not 0 or 1"},
		{"union missing m", replace("1 0 0", "1 0"), 16, "union line 2: m"},
		{"union extra text", replace("1 0 0", "1 0 0 0"), 16, "unexpected text after m"},
		{"fewer union lines", replace("unions 2", "unions 3"), 17, "found \"end\" after only 2 union lines"},
		{"more union lines", replace("unions 2", "unions 1"), 16, `expected "end" after 1 union lines`},
		{"truncated", tinyDump[:strings.Index(tinyDump, "unions")], 13, "the input ends where \"unions <count>\" was expected"},
		{"no end", strings.TrimSuffix(tinyDump, "end\n# trailing comment\n"), 16, `the input ends where "end" was expected`},
		{"data after end", tinyDump + "0 0\n", 19, "unexpected data after \"end\""},
		{"long line", replace("3 2 1", "3 2 1"+strings.Repeat(" ", 2*maxLineBytes)), 13, "longer than"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadDump(strings.NewReader(tc.in))
			var le *LineError
			require.ErrorAs(t, err, &le)
			assert.Equal(t, tc.line, le.Line, "%v", err)
			assert.Contains(t, err.Error(), tc.msg)
			assert.Contains(t, err.Error(), "Fix:")
		})
	}
}

func TestReadDumpReadError(t *testing.T) {
	boom := errors.New("disk on fire")
	_, err := ReadDump(io.MultiReader(strings.NewReader(tinyDump[:60]), iotest.ErrReader(boom)))
	assert.ErrorIs(t, err, boom)
}

func TestReadDumpAllocations(t *testing.T) {
	// The reader allocates its arrays and one name per op, not one object
	// per e-node or union line: beyond the op names, the count of
	// allocations hardly grows from 1,000 to 50,000 e-nodes.
	perNode := func(n int) (float64, int) {
		g, err := Generate(GenConfig{Nodes: n, Seed: 1})
		require.NoError(t, err)
		var buf bytes.Buffer
		require.NoError(t, WriteDump(&buf, g))
		a := testing.AllocsPerRun(3, func() {
			if _, err := ReadDump(bytes.NewReader(buf.Bytes())); err != nil {
				t.Fatal(err)
			}
		})
		return a - float64(len(g.Ops)), g.NodeCount() + g.UnionCount()
	}
	a, linesA := perNode(1000)
	b, linesB := perNode(50000)
	t.Logf("allocations besides op names: %.0f for %d lines, %.0f for %d lines", a, linesA, b, linesB)
	assert.Less(t, b, 2*a+50, "allocations grow with the array doublings only, not with the lines")
}

// dataLines returns the non-comment, non-blank lines of a text.
func dataLines(t *testing.T, r io.Reader) []string {
	t.Helper()
	var out []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if s := strings.TrimSpace(sc.Text()); s != "" && !strings.HasPrefix(s, "#") {
			out = append(out, s)
		}
	}
	require.NoError(t, sc.Err())
	return out
}

func TestWriteDumpReproducesEggSample(t *testing.T) {
	// Writing the sample back gives egg's file line for line, m flags
	// included: egg's flag is "merged given the pairs before it".
	g, err := ReadDump(openSample(t, "math-1e4.pre.txt"))
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, WriteDump(&buf, g, "rewritten"))
	assert.Equal(t, dataLines(t, openSample(t, "math-1e4.pre.txt")), dataLines(t, bytes.NewReader(buf.Bytes())))
	again, err := ReadDump(&buf)
	require.NoError(t, err)
	assert.Equal(t, g, again)
}

func TestWriteDumpRefuses(t *testing.T) {
	g, err := ReadDump(strings.NewReader(tinyDump))
	require.NoError(t, err)
	g.Ops[2].Arity = VariadicArity
	var ge *GraphError
	require.ErrorAs(t, WriteDump(io.Discard, g), &ge)
	assert.Equal(t, "ops[2].arity", ge.Field)
	g.Ops[2] = OpDecl{Arity: 1, Name: "f g"}
	require.ErrorAs(t, WriteDump(io.Discard, g), &ge)
	assert.Equal(t, "ops[2].name", ge.Field)
	g.Ops[2].Name = "f"
	g.Unions[1] = 9
	require.ErrorAs(t, WriteDump(io.Discard, g), &ge)
	assert.Equal(t, "unions[0].b", ge.Field)
}

func TestIsDump(t *testing.T) {
	assert.True(t, IsDump([]byte(tinyDump)))
	assert.True(t, IsDump([]byte("\n# c\n"+DumpMagic+"\n")))
	assert.False(t, IsDump([]byte(`{"rows": []}`)))
	assert.False(t, IsDump(nil))
}

func FuzzReadDump(f *testing.F) {
	f.Add([]byte(tinyDump))
	f.Add([]byte(strings.Replace(tinyDump, "3 2 1", "3 2 3", 1)))
	f.Add([]byte("egg-prerebuild-dump v1\nops 2\n0 2 g\n1 0 a\nclasses 2\nnodes 3\n0 1\n1 0 1 0\n1 0 0 0\nunions 1\n0 1 1\nend\n"))
	f.Add([]byte("egg-prerebuild-dump v1\nops 0\nclasses 1\nnodes 1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		// No input makes memory grow faster than the input itself.
		memcheck.Check(t, memcheck.Bound{Base: 1 << 20, PerByte: 256}, len(data), func() {
			g, err := ReadDump(bytes.NewReader(data))
			if err != nil {
				var le *LineError
				require.ErrorAs(t, err, &le)
				require.Contains(t, err.Error(), "Fix:")
				return
			}
			require.NoError(t, g.Validate())
			var buf bytes.Buffer
			require.NoError(t, WriteDump(&buf, g))
			again, err := ReadDump(&buf)
			require.NoError(t, err)
			require.Equal(t, g, again)
			if g.NodeCount() <= 500 && len(g.Children) <= 2000 {
				checkAllAgree(t, g)
			}
		})
	})
}
