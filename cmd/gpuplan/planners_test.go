package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/internal/memcheck"
)

// plannerCase runs one planner command and checks its exit code and output.
type plannerCase struct {
	name   string
	args   []string
	stdin  string
	code   int
	stdout []string
	stderr []string
}

func runPlannerCases(t *testing.T, cases []plannerCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, errs, code := runCLI(t, tc.stdin, tc.args...)
			require.Equal(t, tc.code, code, "stdout: %s\nstderr: %s", out, errs)
			for _, s := range tc.stdout {
				assert.Contains(t, out, s)
			}
			for _, s := range tc.stderr {
				assert.Contains(t, errs, s)
			}
			if code == exitFailure {
				assert.Contains(t, errs, "Fix:")
			}
		})
	}
}

// testdataPlanner returns the path of an example input.
func testdataPlanner(name string) string {
	return filepath.Join("testdata", "planners", name)
}

// runPlannerJSON runs a planner command with --json on an example input and
// decodes its output into v.
func runPlannerJSON(t *testing.T, v any, command, input string) {
	t.Helper()
	out, errs, code := runCLI(t, "", command, "--json", testdataPlanner(input))
	require.Equal(t, exitOK, code, errs)
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(v))
}

// fuzzCommandBound bounds what one fuzzed input (a text and a --json run)
// may allocate. Measured on fuse: about 17 KB of fixed cost, and 14 (text)
// plus 24 (--json) bytes per input byte from 10^3 to 10^5 stages.
var fuzzCommandBound = memcheck.Bound{Base: 4 << 20, PerByte: 128}

// fuzzPlannerCommand feeds arbitrary bytes to a planner command on standard
// input: it must never panic, and must either plan or fail with a message
// that carries a fix.
func fuzzPlannerCommand(f *testing.F, command string, seeds ...string) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Add([]byte(`{}`))
	f.Add([]byte(`null`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{"x": 1}`))
	fuzzCommand(f, []string{command, "-"}, []string{command, "--json", "-"})
}

// fuzzCommand feeds each fuzzed input on standard input to the command of
// every argument list: no run panics, one that succeeds with --json writes
// valid JSON, one that fails exits 1 with a message that carries a fix,
// and no input makes memory grow faster than the input itself.
func fuzzCommand(f *testing.F, argLists ...[]string) {
	f.Fuzz(func(t *testing.T, data []byte) {
		memcheck.Check(t, fuzzCommandBound, len(data), func() {
			for _, args := range argLists {
				out, errs, code := runCLI(t, string(data), args...)
				switch code {
				case exitOK:
					if slices.Contains(args, "--json") && !json.Valid([]byte(out)) {
						t.Fatalf("invalid JSON output: %s", out)
					}
				case exitFailure:
					if !strings.Contains(errs, "Fix:") {
						t.Fatalf("error without a fix: %s", errs)
					}
				default:
					t.Fatalf("exit %d: %s", code, errs)
				}
			}
		})
	})
}

// readTestdata returns a planner example input as a string.
func readTestdata(t testing.TB, name string) string {
	t.Helper()
	return readTestdataFile(t, "planners", name)
}

// readTestdataFile returns the file testdata/<parts...> as a string.
func readTestdataFile(t testing.TB, parts ...string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(append([]string{"testdata"}, parts...)...))
	require.NoError(t, err)
	return string(data)
}

func TestPlannerInputConventions(t *testing.T) {
	runPlannerCases(t, []plannerCase{
		{name: "no input", args: []string{"queue"}, code: exitUsage, stderr: []string{"want one input file", "--help"}},
		{name: "two inputs", args: []string{"queue", "a", "b"}, code: exitUsage, stderr: []string{"got 2 arguments"}},
		{name: "missing file", args: []string{"queue", "testdata/planners/nope.json"}, code: exitFailure, stderr: []string{"nope.json"}},
		{name: "empty", args: []string{"queue", "-"}, code: exitFailure, stderr: []string{"input is empty"}},
		{name: "not an object", args: []string{"queue", "-"}, stdin: `[1]`, code: exitFailure, stderr: []string{"cannot use JSON array"}},
		{name: "null", args: []string{"queue", "-"}, stdin: `null`, code: exitFailure, stderr: []string{"not a JSON object"}},
		{name: "unknown field", args: []string{"queue", "-"}, stdin: `{"initial_itemz": 1}`, code: exitFailure, stderr: []string{`field "initial_itemz": unknown field`}},
		{name: "trailing", args: []string{"queue", "-"}, stdin: `{} {}`, code: exitFailure, stderr: []string{"trailing data"}},
		{name: "null required", args: []string{"queue", "-"}, stdin: `{"initial_items": null}`, code: exitFailure, stderr: []string{`field "initial_items": required field is missing`}},
		{name: "negative", args: []string{"queue", "-"}, stdin: `{"initial_items": -1}`, code: exitFailure, stderr: []string{`field "initial_items"`, "want an integer in 0..18446744073709551615"}},
	})
}

func TestCheckRequiredNested(t *testing.T) {
	type item struct {
		A uint64  `json:"a"`
		B *uint64 `json:"b,omitempty"`
	}
	type doc struct {
		Items []item `json:"items"`
	}
	var d doc
	err := decodeJSONInput("in.json", []byte(`{"items": [{"a": 1}, {"b": 2}]}`), &d)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `field "items[1].a": required field is missing`)
	err = decodeJSONInput("in.json", []byte(`{"items": [{"a": 1}, null]}`), &d)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `field "items[1]": element is null`)
	require.NoError(t, decodeJSONInput("in.json", []byte(`{"items": [{"a": 1}, {"a": 2, "b": 3}]}`), &d))
	assert.Equal(t, uint64(3), *d.Items[1].B)
}
