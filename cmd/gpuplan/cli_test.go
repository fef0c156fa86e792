package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// runCLI runs gpuplan with args and returns stdout, stderr and the exit code.
func runCLI(t testing.TB, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := runWithInput(&out, &errb, strings.NewReader(stdin), args)
	return out.String(), errb.String(), code
}

func TestCLIBasics(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"no args", nil, exitUsage, "", "usage: gpuplan"},
		{"help", []string{"help"}, exitOK, "commands:", ""},
		{"unknown", []string{"frobnicate"}, exitUsage, "", "unknown command \"frobnicate\""},
		{"version", []string{"version"}, exitOK, "gpuplan ", ""},
		{"version json", []string{"version", "--json"}, exitOK, "\"commit\"", ""},
		{"version help", []string{"version", "--help"}, exitOK, "usage: gpuplan version", ""},
		{"bad flag", []string{"version", "--nope"}, exitUsage, "", "flag provided but not defined"},
		{"extra arg", []string{"version", "x"}, exitUsage, "", "unexpected argument"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, errs, code := runCLI(t, "", tc.args...)
			assert.Equal(t, tc.code, code, "stderr: %s", errs)
			assert.Contains(t, out, tc.stdout)
			assert.Contains(t, errs, tc.stderr)
		})
	}
}

func TestEveryCommandHasHelpAndJSON(t *testing.T) {
	for _, c := range commands() {
		t.Run(c.name, func(t *testing.T) {
			out, errs, code := runCLI(t, "", c.name, "--help")
			assert.Equal(t, exitOK, code, errs)
			assert.Contains(t, out, "usage: gpuplan "+c.name)
			assert.Contains(t, out, "-json")
		})
	}
}

func TestHelpPrintedOnce(t *testing.T) {
	out, _, code := runCLI(t, "", "version", "--help")
	assert.Equal(t, exitOK, code)
	assert.Equal(t, 1, strings.Count(out, "usage: gpuplan version"))
	_, errs, code := runCLI(t, "", "version", "--bogus")
	assert.Equal(t, exitUsage, code)
	assert.NotContains(t, errs, "usage: gpuplan version\n\n")
}

// TestErrorsCarryOneFix feeds bad invocations and nasty inputs to the
// commands and checks the exit status, that nothing panics, and that each
// message ends in exactly one remediation sentence.
func TestErrorsCarryOneFix(t *testing.T) {
	tests := []struct {
		name  string
		stdin string
		args  []string
		code  int
	}{
		{"unknown command", "", []string{"frobnicate"}, exitUsage},
		{"bad flag", "", []string{"version", "--nope"}, exitUsage},
		{"extra arg", "", []string{"version", "x"}, exitUsage},
		{"regs not a number", "", []string{"occupancy", "--device", "h200", "--regs", "NaN", "--block", "128"}, exitUsage},
		{"regs huge", "", []string{"occupancy", "--device", "h200", "--regs", "99999999999999999999", "--block", "128"}, exitUsage},
		{"regs negative", "", []string{"occupancy", "--device", "h200", "--regs", "-5", "--block", "128"}, exitUsage},
		{"missing regs", "", []string{"occupancy", "--device", "h200", "--block", "128"}, exitUsage},
		{"block and sweep", "", []string{"occupancy", "--device", "h200", "--regs", "32", "--block", "128", "--sweep"}, exitUsage},
		{"no device", "", []string{"occupancy", "--regs", "32", "--block", "128"}, exitUsage},
		{"both devices", "{}", []string{"occupancy", "--device", "h200", "--device-file", "-", "--regs", "32", "--block", "128"}, exitUsage},
		{"unknown device", "", []string{"occupancy", "--device", "nope", "--regs", "32", "--block", "128"}, exitUsage},
		{"device file null", "null", []string{"occupancy", "--device-file", "-", "--regs", "32", "--block", "128"}, exitFailure},
		{"device file array", "[]", []string{"devices", "--device-file", "-"}, exitFailure},
		{"device file empty", "", []string{"devices", "--device-file", "-"}, exitFailure},
		{"probe and device", "", []string{"devices", "--probe", "--device", "h200"}, exitUsage},
		{"grid missing", "", []string{"diagnose", "--device", "h200", "--block", "128"}, exitUsage},
		{"grid negative", "", []string{"diagnose", "--device", "h200", "--grid", "-1", "--block", "128"}, exitUsage},
		{"grid four dims", "", []string{"diagnose", "--device", "h200", "--grid", "1,1,1,1", "--block", "128"}, exitUsage},
		{"grid overflow", "", []string{"diagnose", "--device", "h200", "--grid", "4294967295,4294967295,4294967295", "--block", "1024", "--cooperative", "--regs", "32"}, exitUsage},
		{"dyn negative", "", []string{"diagnose", "--device", "h200", "--grid", "1", "--block", "128", "--dyn", "-4"}, exitUsage},
		{"min-sm bad", "", []string{"diagnose", "--device", "h200", "--grid", "1", "--block", "128", "--min-sm", "x"}, exitUsage},
		{"kernel name with a separator", "", []string{"diagnose", "--device", "h200", "--grid", "1", "--block", "128", "--kernel", "a|status=ok"}, exitUsage},
		{"kernel name with a newline", "", []string{"diagnose", "--device", "h200", "--grid", "1", "--block", "128", "--kernel", "a\nb"}, exitUsage},
		{"plan json and dot", "", []string{"plan", "--json", "--dot"}, exitUsage},
		{"plan two files", "", []string{"plan", "a", "b"}, exitUsage},
		{"plan null", "null", []string{"plan", "-"}, exitFailure},
		{"plan array", "[]", []string{"plan", "-"}, exitFailure},
		{"planner no file", "", []string{"batch"}, exitUsage},
		{"planner empty", "", []string{"batch", "-"}, exitFailure},
		{"planner NaN string", `{"budget_bytes": "NaN", "queries": []}`, []string{"batch", "-"}, exitFailure},
		{"planner huge", `{"budget_bytes": 1e400, "queries": []}`, []string{"batch", "-"}, exitFailure},
		{"tokenfact array", "[]", []string{"tokenfact", "-"}, exitFailure},
		{"egraph null", "null", []string{"egraph", "-"}, exitFailure},
		{"report metric", "", []string{"report", "--metric", "x"}, exitUsage},
		{"report chart", "", []string{"report", "--chart", "c.gif"}, exitUsage},
		{"gate modes", "", []string{"gate", "--vyre", "a.csv", "--vyre-header"}, exitUsage},
		{"gate min-speedup", "", []string{"gate", "--min-speedup", "2"}, exitUsage},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, errs, code := runCLI(t, tc.stdin, tc.args...)
			assert.Equal(t, tc.code, code, "stderr: %s", errs)
			assert.Empty(t, out)
			assert.Equal(t, 1, strings.Count(errs, "Fix:"), errs)
			assert.NotContains(t, errs, "main.", "messages name JSON forms, not Go types")
		})
	}
}

func TestHelpListsCommandsByTheme(t *testing.T) {
	want := []string{"devices", "occupancy", "diagnose", "plan", "fuse", "compact", "batch", "diagnostics", "passes", "queue",
		"tokenfact", "egraph", "bench", "gate", "report", "version"}
	out, _, code := runCLI(t, "", "help")
	assert.Equal(t, exitOK, code)
	last := -1
	for _, name := range want {
		at := strings.Index(out, "\n  "+name+" ")
		if assert.GreaterOrEqual(t, at, 0, "help does not list %q:\n%s", name, out) {
			assert.Greater(t, at, last, "%q is out of theme order:\n%s", name, out)
			last = at
		}
	}
}

func TestFlagsAfterPositionalArguments(t *testing.T) {
	in := `{"max_compact_record_bytes": 32, "slots": [{"slot": 1, "meaningful_bytes": 12, "capacity_bytes": 128}]}`
	before, errs, code := runCLI(t, in, "compact", "--json", "-")
	assert.Equal(t, exitOK, code, errs)
	after, errs, code := runCLI(t, in, "compact", "-", "--json")
	assert.Equal(t, exitOK, code, errs)
	assert.Equal(t, before, after)
	assert.True(t, strings.HasPrefix(after, "{"), after)

	out, _, code := runCLI(t, "", "compact", "-", "--help")
	assert.Equal(t, exitOK, code)
	assert.Contains(t, out, "usage: gpuplan compact")

	// After "--" everything is positional.
	_, errs, code = runCLI(t, "", "compact", "--", "--json")
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, errs, "--json: no such file")
	_, errs, code = runCLI(t, "", "compact", "a.json", "--bogus")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errs, "flag provided but not defined: -bogus")
	_, errs, code = runCLI(t, "", "version", "x", "--json")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errs, `unexpected argument "x"`)
}
