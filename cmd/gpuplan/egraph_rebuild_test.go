package main

import (
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuplan/gpuplan/egraph"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rebuildDump is x, y, f(x), f(y), g(f(x)), g(f(y)) with x ~ y pending.
const rebuildDump = `egg-prerebuild-dump v1
ops 4
0 0 x
1 0 y
2 1 f
3 1 g
classes 6
nodes 6
0 0
1 1
2 2 0
3 2 1
4 3 2
5 3 3
unions 1
1 0 1
end
`

// unpackSample writes the gzipped egg sample NAME from egraph/testdata
// into dir and returns its path.
func unpackSample(t *testing.T, dir, name string) string {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "egraph", "testdata", name+".gz"))
	require.NoError(t, err)
	defer f.Close()
	z, err := gzip.NewReader(f)
	require.NoError(t, err)
	data, err := io.ReadAll(z)
	require.NoError(t, err)
	path := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(path, data, 0o644))
	return path
}

func TestEgraphRebuildCommand(t *testing.T) {
	dir := t.TempDir()
	snapshot := filepath.Join("testdata", "egraph", "snapshot.json")
	bigIDs := filepath.Join(dir, "big.json")
	require.NoError(t, os.WriteFile(bigIDs, []byte(`{"rows":[{"eclass_id":4000000000,"language_op_id":0,"children_offset":0,"children_len":0}],"children":[],"op_arities":[0]}`), 0o644))
	runPlannerCases(t, []plannerCase{
		{name: "dump on stdin", args: []string{"egraph", "rebuild", "-"}, stdin: rebuildDump, code: exitOK, stdout: []string{
			"input    - (egg-prerebuild-dump v1)\n",
			"6 e-nodes, 6 class ids, 1 pending union pairs, 4 ops",
			"classes  6 before, 5 after the pending unions, 3 after the rebuild\n",
			"unions   1 pending pairs applied (1 merged), 2 congruence merges\n",
			"e-nodes  6 in, 4 distinct after the rebuild\n",
			"rounds   2 (worklist: the first pass over every e-node plus one per generation of repairs)\n",
			"ms rebuild on the CPU (worklist)",
		}},
		{name: "rounds", args: []string{"egraph", "rebuild", "--method", "rounds", "-"}, stdin: rebuildDump, code: exitOK, stdout: []string{
			"rounds   3 (3 data-parallel, the last finding nothing new; the worklist was not needed)\n", "3 after the rebuild", "(rounds)"}},
		{name: "exact rounds", args: []string{"egraph", "rebuild", "--method", "exact-rounds", "-"}, stdin: rebuildDump, code: exitOK, stdout: []string{
			"rounds   3 (data-parallel rounds, the last finding nothing new)\n", "3 after the rebuild", "(exact-rounds)"}},
		{name: "rounds handed to the worklist", args: []string{"egraph", "rebuild", "--method", "rounds", "gen:1000:4:cycle"}, code: exitOK, stdout: []string{
			"rounds   64 (1 data-parallel, the last uniting fewer than 16 classes, then 63 worklist generations of repairs)\n"}},
		{name: "exact rounds on cycles", args: []string{"egraph", "rebuild", "--method", "exact-rounds", "gen:1000:4:cycle"}, code: exitOK, stdout: []string{
			"rounds   64 (data-parallel rounds, the last finding nothing new)\n"}},
		{name: "snapshot", args: []string{"egraph", "rebuild", snapshot}, code: exitOK, stdout: []string{
			"(json snapshot)", "6 before, 6 after the pending unions, 4 after the rebuild"}},
		{name: "generated", args: []string{"egraph", "rebuild", "gen:3000:2:giant"}, code: exitOK, stdout: []string{
			"gen:3000:2:giant (generated, shape giant, seed 2)", "after the rebuild", " 1 after the rebuild"}},
		{name: "flags after", args: []string{"egraph", "rebuild", "gen:500", "--method=rounds"}, code: exitOK, stdout: []string{"(rounds)"}},
		{name: "help", args: []string{"egraph", "rebuild", "--help"}, code: exitOK, stdout: []string{"usage: gpuplan egraph rebuild", "gen:N[:SEED[:SHAPE]]", "-max-input-bytes"}},
		{name: "no input", args: []string{"egraph", "rebuild"}, code: exitUsage, stderr: []string{"want one input"}},
		{name: "two inputs", args: []string{"egraph", "rebuild", "a", "b"}, code: exitUsage, stderr: []string{"got 2 arguments"}},
		{name: "bad method", args: []string{"egraph", "rebuild", "--method", "magic", "gen:10"}, code: exitUsage, stderr: []string{`--method "magic" is unknown`, "use worklist, rounds or exact-rounds"}},
		{name: "help names the methods", args: []string{"egraph", "rebuild", "--help"}, code: exitOK, stdout: []string{"exact-rounds (the exact specification of the GPU's rounds", "worklist|rounds|exact-rounds"}},
		{name: "bad flag", args: []string{"egraph", "rebuild", "--nope", "gen:10"}, code: exitUsage, stderr: []string{"flag provided but not defined"}},
		{name: "bad limit", args: []string{"egraph", "rebuild", "--max-input-bytes", "0", "gen:10"}, code: exitUsage, stderr: []string{"is not a positive number of bytes"}},
		{name: "bad gen", args: []string{"egraph", "rebuild", "gen:0"}, code: exitUsage, stderr: []string{"0 e-nodes is outside"}},
		{name: "bad gen shape", args: []string{"egraph", "rebuild", "gen:10:1:star"}, code: exitUsage, stderr: []string{`unknown shape "star"`}},
		{name: "malformed dump", args: []string{"egraph", "rebuild", "-"}, stdin: strings.Replace(rebuildDump, "3 2 1", "3 2 1 1", 1), code: exitFailure,
			stderr: []string{"-: line 12: e-node line 4: op 2 (f) is declared with arity 1 but the line has more children"}},
		{name: "child out of range", args: []string{"egraph", "rebuild", "-"}, stdin: strings.Replace(rebuildDump, "5 3 3", "5 3 6", 1), code: exitFailure,
			stderr: []string{"line 14: e-node line 6: child 0 is class id 6, outside 0..5"}},
		{name: "union out of range", args: []string{"egraph", "rebuild", "-"}, stdin: strings.Replace(rebuildDump, "1 0 1", "1 9 1", 1), code: exitFailure,
			stderr: []string{"line 16: union line 1: b is class id 9"}},
		{name: "empty e-graph", args: []string{"egraph", "rebuild", "-"}, stdin: strings.Replace(rebuildDump, "nodes 6", "nodes 0", 1), code: exitFailure,
			stderr: []string{"line 8: the e-graph is empty (nodes 0)"}},
		{name: "counts disagree", args: []string{"egraph", "rebuild", "-"}, stdin: strings.Replace(rebuildDump, "nodes 6", "nodes 7", 1), code: exitFailure,
			stderr: []string{"found \"unions\" after only 6 e-node lines, but the header says nodes 7"}},
		{name: "not a dump", args: []string{"egraph", "rebuild", "-"}, stdin: "hello\n", code: exitFailure, stderr: []string{"-: neither an egg dump"}},
		{name: "dump after comments", args: []string{"egraph", "rebuild", "-"}, stdin: "# made by hand\n\n" + rebuildDump, code: exitOK, stdout: []string{"3 after the rebuild"}},
		{name: "empty input", args: []string{"egraph", "rebuild", "-"}, stdin: "", code: exitFailure, stderr: []string{"the input is empty"}},
		{name: "snapshot bad child", args: []string{"egraph", "rebuild", "-"}, code: exitFailure,
			stdin:  `{"rows":[{"eclass_id":0,"language_op_id":0,"children_offset":0,"children_len":1}],"children":[5],"op_arities":[1]}`,
			stderr: []string{"unknown child eclass_id at row 0 (value 5)"}},
		{name: "snapshot empty", args: []string{"egraph", "rebuild", "-"}, stdin: `{"rows":[],"children":[],"op_arities":[]}`, code: exitFailure,
			stderr: []string{"e-graph rows: the e-graph is empty"}},
		{name: "snapshot strict", args: []string{"egraph", "rebuild", "-"}, stdin: `{"rows":[],"children":[],"op_arities":[],"extra":1}`, code: exitFailure,
			stderr: []string{`"extra"`}},
		{name: "too large", args: []string{"egraph", "rebuild", "--max-input-bytes", "10", snapshot}, code: exitFailure, stderr: []string{"above the limit of 10 bytes"}},
		{name: "directory", args: []string{"egraph", "rebuild", dir}, code: exitFailure, stderr: []string{"is a directory, not a regular file"}},
		{name: "missing file", args: []string{"egraph", "rebuild", filepath.Join(dir, "nope.txt")}, code: exitFailure, stderr: []string{"no such file"}},
		{name: "missing check file", args: []string{"egraph", "rebuild", "gen:10", "--check", filepath.Join(dir, "nope.txt")}, code: exitFailure, stderr: []string{"no such file"}},
		{name: "ids too large for -o", args: []string{"egraph", "rebuild", bigIDs, "-o", filepath.Join(dir, "big.post.txt")}, code: exitFailure, stderr: []string{"above 2147483647"}},
		{name: "bad -o folder", args: []string{"egraph", "rebuild", "gen:10", "-o", filepath.Join(dir, "no", "such", "x.txt")}, code: exitFailure, stderr: []string{"-o: "}},
	})
}

func TestEgraphRebuildPartitionFiles(t *testing.T) {
	dir := t.TempDir()
	pre := unpackSample(t, dir, "math-1e4.pre.txt")
	post := unpackSample(t, dir, "math-1e4.post.txt")
	mine := filepath.Join(dir, "mine.post.txt")
	for _, method := range []string{"worklist", "rounds", "exact-rounds"} {
		out, errs, code := runCLI(t, "", "egraph", "rebuild", "--method", method, pre, "-o", mine, "--check", post)
		require.Equal(t, exitOK, code, errs)
		assert.Contains(t, out, "8157 before, 3728 after the pending unions, 3575 after the rebuild")
		assert.Contains(t, out, "9953 pending pairs applied (4429 merged), 153 congruence merges")
		assert.Contains(t, out, "8728 in, 7835 distinct after the rebuild")
		assert.Contains(t, out, "check      same partition as "+post+" up to renaming (3575 classes)")
		f, err := os.Open(mine)
		require.NoError(t, err)
		p, err := egraph.ReadPartition(f)
		f.Close()
		require.NoError(t, err)
		assert.Equal(t, 3575, p.ClassCount)
		assert.Equal(t, 7835, p.DistinctNodes)
	}
	// Our own partition checks against itself, and a broken one fails at
	// its line.
	_, errs, code := runCLI(t, "", "egraph", "rebuild", pre, "--check", mine)
	require.Equal(t, exitOK, code, errs)
	data, err := os.ReadFile(mine)
	require.NoError(t, err)
	lines := strings.Split(string(data), "\n")
	for i, l := range lines {
		if l == "nodes 8728" {
			lines[i+2] = "1" // e-node line 0 moves from class 0 to class 1
			break
		}
	}
	broken := filepath.Join(dir, "broken.post.txt")
	require.NoError(t, os.WriteFile(broken, []byte(strings.Join(lines, "\n")), 0o644))
	_, errs, code = runCLI(t, "", "egraph", "rebuild", pre, "--check", broken)
	require.Equal(t, exitFailure, code)
	assert.Contains(t, errs, "partitions differ at e-node line")
	assert.Contains(t, errs, "Fix:")
}

func TestEgraphRebuildSnapshotPartition(t *testing.T) {
	// A snapshot's partition names classes by the snapshot's own ids.
	dir := t.TempDir()
	in := filepath.Join(dir, "s.json")
	require.NoError(t, os.WriteFile(in, []byte(`{"rows":[
		{"eclass_id":70,"language_op_id":0,"children_offset":0,"children_len":0},
		{"eclass_id":30,"language_op_id":1,"children_offset":0,"children_len":1},
		{"eclass_id":50,"language_op_id":1,"children_offset":1,"children_len":1}],
		"children":[70,70],"op_arities":[0,1]}`), 0o644))
	out := filepath.Join(dir, "s.post.txt")
	_, errs, code := runCLI(t, "", "egraph", "rebuild", in, "-o", out)
	require.Equal(t, exitOK, code, errs)
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Contains(t, string(data), "nodes 3\nclasses 2\n70\n30\n30\nend\n")
}

func TestEgraphRebuildJSON(t *testing.T) {
	for _, method := range []string{"worklist", "rounds", "exact-rounds"} {
		out, errs, code := runCLI(t, rebuildDump, "egraph", "rebuild", "--json", "--method", method, "-")
		require.Equal(t, exitOK, code, errs)
		var got map[string]any
		require.NoError(t, json.Unmarshal([]byte(out), &got))
		assert.Equal(t, egraph.DumpMagic, got["format"])
		assert.Equal(t, method, got["method"])
		for key, want := range map[string]float64{"class_ids": 6, "classes_after_unions": 5, "classes": 3, "union_pairs": 1,
			"union_merges": 1, "congruence_merges": 2, "nodes": 6, "distinct_nodes": 4, "ops": 4} {
			assert.Equal(t, want, got[key], key)
		}
		assert.Contains(t, got, "rebuild_ms")
		assert.Contains(t, got, "rounds")
		assert.NotContains(t, got, "Labels")
	}
	out, errs, code := runCLI(t, "", "egraph", "rebuild", "--json", "gen:1000:4:cycle")
	require.Equal(t, exitOK, code, errs)
	var got rebuildOutput
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	require.NotNil(t, got.Generator)
	assert.Equal(t, egraph.GenConfig{Nodes: 1000, Seed: 4, Shape: egraph.ShapeDeepCycle}, *got.Generator)
	assert.Equal(t, 1000, got.Nodes)
}

func TestEgraphRebuildJSONRounds(t *testing.T) {
	tests := []struct {
		name, method, input string
		rounds, parallel    float64
		finished            bool
		minMerges           any
	}{
		{"worklist", "worklist", "-", 2, 0, true, nil},
		{"rounds to the end", "rounds", "-", 3, 3, false, 1.0},
		{"exact rounds", "exact-rounds", "-", 3, 3, false, nil},
		{"rounds handed over", "rounds", "gen:1000:4:cycle", 64, 1, true, 16.0},
		{"exact rounds on cycles", "exact-rounds", "gen:1000:4:cycle", 64, 64, false, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, errs, code := runCLI(t, rebuildDump, "egraph", "rebuild", "--json", "--method", tc.method, tc.input)
			require.Equal(t, exitOK, code, errs)
			var got map[string]any
			require.NoError(t, json.Unmarshal([]byte(out), &got))
			assert.Equal(t, []any{tc.rounds, tc.parallel, tc.finished}, []any{got["rounds"], got["data_parallel_rounds"], got["worklist_finished"]})
			assert.Equal(t, tc.minMerges, got["min_merges"], "the threshold appears with the rounds method only")
		})
	}
}

func FuzzEgraphRebuildInput(f *testing.F) {
	f.Add([]byte(rebuildDump))
	f.Add([]byte(`{"rows":[{"eclass_id":3,"language_op_id":0,"children_offset":0,"children_len":1}],"children":[3],"op_arities":[1]}`))
	f.Add([]byte(strings.Replace(rebuildDump, "unions 1", "unions 2", 1)))
	fuzzCommand(f, []string{"egraph", "rebuild", "-"}, []string{"egraph", "rebuild", "--json", "--method", "rounds", "-"})
}
