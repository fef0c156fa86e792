package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The repro: a 64-bit hash written as a JSON number came back from
// jq as ...377000 for ...377289. Every hash in --json output is a hex
// string now, in plan, session, batch and fuse.
func TestJSONOutputWritesHashesAsHexStrings(t *testing.T) {
	const big = "18446744073709377289"
	const hex = `"0xfffffffffffd5709"`
	data, err := os.ReadFile("testdata/plan/spec-diamond.workload.json")
	require.NoError(t, err)
	var w map[string]any
	require.NoError(t, json.Unmarshal(data, &w))
	w["graph_layout_hash"] = json.Number(big)
	in, err := json.Marshal(w)
	require.NoError(t, err)
	tests := []struct {
		name, stdin string
		args        []string
		keys        []string
	}{
		{"plan", string(in), []string{"plan", "--json", "-"}, []string{`"graph_layout_hash": ` + hex}},
		{"session", strings.Replace(readTestdata(t, "session.json"), "2748", big, 1), []string{"session", "--json", "-"}, []string{`"graph_layout_hash": ` + hex}},
		{"batch", strings.ReplaceAll(readTestdata(t, "batch.json"), `"traversal_key": 16`, `"traversal_key": `+big), []string{"batch", "--json", "-"},
			[]string{`"traversal_key": ` + hex, `"graph_layout_hash": "0x0000000000000abc"`}},
		{"fuse", strings.Replace(readTestdata(t, "fuse.json"), `"layout_hash": 7`, `"layout_hash": `+big, 1), []string{"fuse", "--json", "-"}, []string{`"layout_hash": ` + hex}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, errs, code := runCLI(t, tc.stdin, tc.args...)
			require.Equal(t, exitOK, code, errs)
			for _, k := range tc.keys {
				assert.Contains(t, out, k)
			}
			assert.NotContains(t, out, big)
			assert.NotRegexp(t, `"(graph_layout_hash|layout_hash|traversal_key)": [0-9]`, out)
		})
	}
}
