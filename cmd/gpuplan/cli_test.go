package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// runCLI runs gpuplan with args and returns stdout, stderr and the exit code.
func runCLI(t *testing.T, stdin string, args ...string) (string, string, int) {
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
