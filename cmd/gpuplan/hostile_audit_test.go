package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// auditReproCases are reproducers of refusals that repeated an input in
// full, named a flag the command does not have, or let a flag the mode
// ignores pass.
func auditReproCases(t *testing.T) []reproCase {
	long := strings.Repeat("x", 5000)
	workload, err := os.ReadFile("plan_default.json")
	require.NoError(t, err)
	require.Contains(t, string(workload), `"device": "h100-sxm"`)
	withDevice := func(name string) string {
		return strings.Replace(string(workload), `"device": "h100-sxm"`, `"device": "`+name+`"`, 1)
	}
	const bound = 600
	wraps := func(cmd ...string) []string { return cmd }
	return []reproCase{
		// A device name of 5000 bytes is repeated cut, as every input is.
		{name: "diagnose: a 5000-byte device name", args: wraps("diagnose", "--device", long, "--grid", "1", "--block", "128"), code: exitUsage,
			stderr: []string{`--device: unknown device "xxxx`, `xxx"...; known devices: v100,`, "load a custom profile with --device-file"}, maxStderr: bound},
		{name: "occupancy: a 5000-byte device name", args: wraps("occupancy", "--device", long, "--regs", "32", "--block", "128"), code: exitUsage,
			stderr: []string{`xxx"...; known devices:`}, maxStderr: bound},
		{name: "devices: a 5000-byte device name", args: wraps("devices", "--device", long), code: exitUsage,
			stderr: []string{`xxx"...; known devices:`}, maxStderr: bound},
		{name: "partition: a 5000-byte second device name", args: wraps("partition", "--devices", "2", "--device", "h200,"+long, "--graph", "grid:4"), code: exitUsage,
			stderr: []string{`gpuplan partition: --device: unknown device "xxx`, `xxx"...; known devices:`}, maxStderr: bound},
		{name: "plan: a 5000-byte device name", args: wraps("plan", "-"), stdin: withDevice(long), code: exitFailure,
			stderr: []string{`<stdin>: field "device": unknown device "xxx`, `xxx"...; known devices:`}, maxStderr: bound},
		{name: "partition: an escape in a device name", args: wraps("partition", "--device", "h2\x1b[2J00", "--graph", "grid:4"), code: exitUsage,
			stderr: []string{`unknown device "h2\x1b[2J00"`}},

		// The Fix names what the command takes instead of a built-in name.
		{name: "partition: an unknown device: the fix is --device-memory", args: wraps("partition", "--device", "h900", "--graph", "grid:4"), code: exitUsage,
			stderr: []string{`unknown device "h900"`, "Fix: use one of the known names, or --device-memory BYTES"}, noStderr: []string{"--device-file"}},
		{name: "plan: an unknown device: the fix is device_file", args: wraps("plan", "-"), stdin: withDevice("h900"), code: exitFailure,
			stderr: []string{`field "device": unknown device "h900"`, "as device_file instead"}, noStderr: []string{"--device-file"}},

		// bench frontier refuses the flags a mode ignores.
		{name: "bench: --partition without --devices", args: wraps("bench", "frontier", "--graph", "grid:4", "--partition", "blocked"), code: exitUsage,
			stderr: []string{"--partition applies only to the partitioned BFS", "Fix: add --devices N or --simulate-devices P, or drop --partition"}, noStderr: []string{"CUDA"}},
		{name: "bench: --peer-timeout without a peer", args: wraps("bench", "frontier", "--graph", "grid:4", "--peer-timeout", "5s"), code: exitUsage,
			stderr: []string{"--peer-timeout needs a peer"}, noStderr: []string{"CUDA"}},
	}
}

func TestAuditReproducers(t *testing.T) {
	for _, tc := range auditReproCases(t) {
		t.Run(tc.name, func(t *testing.T) { runRepro(t, tc) })
	}
	// The flags stay accepted where they apply.
	for name, args := range map[string][]string{
		"--partition with --devices 2":          {"bench", "frontier", "--graph", "grid:4", "--devices", "2", "--partition", "blocked"},
		"--partition with --simulate-devices 2": {"bench", "frontier", "--graph", "grid:4", "--simulate-devices", "2", "--partition", "edges"},
		"--peer-timeout with a peer":            {"bench", "frontier", "--graph", "grid:4", "--peer", "gapbs=/nonexistent/bfs_roots", "--peer-timeout", "5s"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := parseBenchArgs(&env{stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}}, args[1:])
			assert.NoError(t, err)
		})
	}
}

// escapedEdgeList writes a three-vertex edge list under a name holding an
// escape sequence and a newline, and returns its path.
func escapedEdgeList(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "e\x1b[2J\nx.el")
	require.NoError(t, os.WriteFile(path, []byte("0 1\n1 2\n"), 0o644))
	return path
}

// A graph named after its file (directed:PATH keeps the file's base name)
// is printed quoted: its name cannot write an escape to the terminal.
func TestGraphNamesFromPathsArePrintedQuoted(t *testing.T) {
	path := escapedEdgeList(t)
	for name, spec := range map[string]string{
		"directed": "directed:" + path,
		"file":     "file:" + path,
	} {
		t.Run(name, func(t *testing.T) {
			out, errs, code := runCLI(t, "", "bfs", "--cpu", "--graph", spec, "--root-ids", "0")
			require.Equal(t, exitOK, code, errs)
			assert.Contains(t, out, "0,2,2\n")
			assert.Contains(t, errs, "bfs: graph ")
			assert.NotContains(t, errs, "\x1b")
			assert.Equal(t, 2, strings.Count(errs, "\n"), "the graph line and the answered line: %q", errs)
		})
	}
}

// gpuplan load --url repeats its --graph and --name quoted and cut when
// the server does not serve them.
func TestLoadMismatchQuotesItsInputs(t *testing.T) {
	url, _, _ := startServe(t, "--graph", "g=grid:4", "--cpu", "--listen", "127.0.0.1:0")
	path := escapedEdgeList(t)
	tests := []struct {
		name   string
		args   []string
		stderr []string
	}{
		{"an escape in --graph", []string{"--graph", "file:" + path, "--name", "g"},
			[]string{`--graph "file:`, `e\x1b[2J\nx.el" has 3 vertices but the server's graph "g" has 16`}},
		{"a 5000-byte --name", []string{"--graph", "grid:4", "--name", strings.Repeat("q", 5000)},
			[]string{`serves no graph "qqq`, `qqq".... Fix: give --name one of its graphs`}},
		{"an escape in --name", []string{"--graph", "grid:4", "--name", "g\x1b[2J"},
			[]string{`serves no graph "g\x1b[2J". Fix:`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"load", "--url", url, "--clients", "1", "--duration", "100ms"}, tc.args...)
			_, errs, code := runCLI(t, "", args...)
			require.Equal(t, exitFailure, code, errs)
			for _, s := range tc.stderr {
				assert.Contains(t, errs, s)
			}
			assert.Less(t, len(errs), 600, errs)
			assert.Equal(t, 1, strings.Count(errs, "\n"), "%q", errs)
			assertNoForgedLine(t, errs)
		})
	}
}
