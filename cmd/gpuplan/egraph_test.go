package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEgraphCommand(t *testing.T) {
	example := filepath.Join("testdata", "egraph", "snapshot.json")
	runPlannerCases(t, []plannerCase{
		{name: "text", args: []string{"egraph", example}, code: exitOK, stdout: []string{
			"device image            6 rows, 6 children, 6 e-classes: 55 words, 220 bytes\n",
			"  group_offsets         offset 168, 28 bytes\n",
			"  RowScan               items [0, 6), blocks 1 x 256 threads\n",
			"signature buckets       buckets 1, candidate pairs 1, pair waves 1, blocks 1\n",
			"structural merges       unique e-class pairs 1 (exact 1, redundant 0, rejected 0)\n",
			"  e-class 3             -> 2\n",
			"ptx                     sm_90: PTX ISA 8.0, entry \"main\"\n",
		}},
		{name: "help", args: []string{"egraph", "--help"}, code: exitOK, stdout: []string{"usage: gpuplan egraph [--json] <input.json|->", "op_arities"}},
		{name: "spec layout vector", args: []string{"egraph", "-"}, code: exitOK,
			stdin: `{"rows":[{"eclass_id":0,"language_op_id":0,"children_offset":0,"children_len":0},
				{"eclass_id":1,"language_op_id":1,"children_offset":0,"children_len":1},
				{"eclass_id":1,"language_op_id":1,"children_offset":1,"children_len":1}],
				"children":[0,0],"op_arities":[0,1]}`,
			stdout: []string{"3 rows, 2 children, 2 e-classes: 25 words, 100 bytes", "group_eclass_ids      offset 68, 8 bytes", "group_rows            offset 88, 12 bytes", "redundant 1"}},
		{name: "unknown op", args: []string{"egraph", "-"}, code: exitFailure,
			stdin:  `{"rows":[{"eclass_id":0,"language_op_id":99,"children_offset":0,"children_len":0}],"children":[],"op_arities":[0]}`,
			stderr: []string{"unknown language_op_id at row 0 (value 99)"}},
		{name: "zero threads", args: []string{"egraph", "-"}, code: exitFailure,
			stdin:  `{"rows":[],"children":[],"op_arities":[],"launch":{"threads_per_block":0,"max_blocks_per_launch":1}}`,
			stderr: []string{`field "launch": ZeroThreadsPerBlock`}},
		{name: "threads per block above CUDA's maximum", args: []string{"egraph", "-"}, code: exitFailure,
			stdin:  `{"rows":[],"children":[],"op_arities":[],"launch":{"threads_per_block":4294967295,"max_blocks_per_launch":1}}`,
			stderr: []string{`field "launch.threads_per_block": is 4294967295, above 1024`, "Fix: use a block size from 1 to 1024"}},
		{name: "threads per block one above", args: []string{"egraph", "-"}, code: exitFailure,
			stdin:  `{"rows":[],"children":[],"op_arities":[],"launch":{"threads_per_block":1025,"max_blocks_per_launch":1}}`,
			stderr: []string{`field "launch.threads_per_block": is 1025, above 1024`, "Fix:"}},
		{name: "threads per block at CUDA's maximum", args: []string{"egraph", "-"}, code: exitOK,
			stdin:  `{"rows":[],"children":[],"op_arities":[],"launch":{"threads_per_block":1024,"max_blocks_per_launch":2147483647}}`,
			stdout: []string{"device image"}},
		{name: "blocks per launch above a grid's x limit", args: []string{"egraph", "-"}, code: exitFailure,
			stdin:  `{"rows":[],"children":[],"op_arities":[],"launch":{"threads_per_block":256,"max_blocks_per_launch":2147483648}}`,
			stderr: []string{`field "launch.max_blocks_per_launch": is 2147483648, above 2147483647`, "Fix:"}},
		{name: "missing launch field", args: []string{"egraph", "-"}, code: exitFailure,
			stdin:  `{"rows":[],"children":[],"op_arities":[],"launch":{"threads_per_block":32}}`,
			stderr: []string{`field "launch.max_blocks_per_launch": required field is missing`}},
		{name: "bad target", args: []string{"egraph", "-"}, code: exitFailure,
			stdin:  `{"rows":[],"children":[],"op_arities":[],"target_sm":0}`,
			stderr: []string{`field "target_sm"`, "InvalidPtxTarget"}},
		{name: "10,000 identical leaves are refused with the numbers", args: []string{"egraph", "-"}, code: exitFailure,
			stdin:  identicalLeavesJSON(10000, ""),
			stderr: []string{`field "rows": CandidatePairBudget`, "49995000 candidate pairs", "needs 399960000 bytes", "memory budget of 268435456 bytes"}},
		{name: "a raised budget plans them", args: []string{"egraph", "-"}, code: exitOK,
			stdin:  identicalLeavesJSON(300, `,"memory_budget_bytes":358800`),
			stdout: []string{"candidate pairs 44850"}},
		{name: "1x1 launch config", args: []string{"egraph", "-"}, code: exitFailure,
			stdin:  identicalLeavesJSON(400, `,"launch":{"threads_per_block":1,"max_blocks_per_launch":1}`),
			stderr: []string{"TooManyWaves", "79800 SignaturePairs items", "Fix: raise launch.threads_per_block"}},
		{name: "missing rows", args: []string{"egraph", "-"}, code: exitFailure,
			stdin:  `{"children":[],"op_arities":[]}`,
			stderr: []string{`field "rows": required field is missing`}},
	})
}

func TestEgraphCommandJSON(t *testing.T) {
	out, errs, code := runCLI(t, "", "egraph", "--json", filepath.Join("testdata", "egraph", "snapshot.json"))
	require.Equal(t, exitOK, code, errs)
	var got struct {
		Upload struct {
			ByteLen uint64 `json:"byte_len"`
		} `json:"upload"`
		Union struct {
			CanonicalRewrites []struct {
				EclassID       uint32 `json:"eclass_id"`
				Representative uint32 `json:"representative"`
			} `json:"canonical_rewrites"`
		} `json:"union_compaction"`
		PTXVersion string `json:"ptx_version"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	assert.Equal(t, uint64(220), got.Upload.ByteLen)
	require.Len(t, got.Union.CanonicalRewrites, 1)
	assert.Equal(t, uint32(3), got.Union.CanonicalRewrites[0].EclassID)
	assert.Equal(t, uint32(2), got.Union.CanonicalRewrites[0].Representative)
	assert.Equal(t, "8.0", got.PTXVersion)

	empty, errs, code := runCLI(t, `{"rows":[],"children":[],"op_arities":[]}`, "egraph", "--json", "-")
	require.Equal(t, exitOK, code, errs)
	assert.Contains(t, empty, `"canonical_rewrites": []`)
}

// identicalLeavesJSON is an egraph input of n identical leaf rows in
// distinct e-classes, with extra appended to the top-level object.
func identicalLeavesJSON(n int, extra string) string {
	var b strings.Builder
	b.WriteString(`{"rows":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"eclass_id":%d,"language_op_id":0,"children_offset":0,"children_len":0}`, i)
	}
	b.WriteString(`],"children":[],"op_arities":[0]` + extra + `}`)
	return b.String()
}

func FuzzEgraphInput(f *testing.F) {
	f.Add([]byte(`{"rows":[{"eclass_id":0,"language_op_id":0,"children_offset":0,"children_len":0},{"eclass_id":1,"language_op_id":0,"children_offset":0,"children_len":0}],"children":[],"op_arities":[0],"launch":{"threads_per_block":1,"max_blocks_per_launch":1}}`))
	fuzzPlannerCommand(f, "egraph", `{"rows":[],"children":[],"op_arities":[],"target_sm":120}`)
}
