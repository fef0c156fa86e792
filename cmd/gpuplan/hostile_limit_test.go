//go:build !cuda

package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestUnderAddressSpaceLimit runs the commands in a child process under
// ulimit -v 3000000, where an allocation past the limit is a fatal error
// of the Go runtime: each refuses, naming the limit, before it builds.
func TestUnderAddressSpaceLimit(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if runtime.GOOS != "linux" || err != nil {
		t.Skip("needs Linux's RLIMIT_AS and a shell to set it")
	}
	for _, args := range [][]string{
		{"egraph", "rebuild", "gen:100000000"},
		{"bfs", "--cpu", "--graph", "rgg:200000000:8"},
		{"bench", "frontier", "--graph", "kron:26", "--build-on", "cpu"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			child := append([]string{"-c", `ulimit -v 3000000 && exec "$@"`, "sh", os.Args[0], "-test.run=^TestRunFindFaultChild$", "-test.count=1", "--"}, args...)
			cmd := exec.Command(sh, child...)
			cmd.Env = append(os.Environ(), testChildEnv+"=gpuplan")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			var exit *exec.ExitError
			require.True(t, errors.As(err, &exit), "%v: %s", err, stderr.String())
			errs := stderr.String()
			assert.Equal(t, exitFailure, exit.ExitCode(), errs)
			assert.Contains(t, errs, "are available within the address-space limit of 3072000000 bytes (ulimit -v). Fix:")
			assert.NotContains(t, errs, "out of memory")
		})
	}
}

// TestBenchFrontierReadsFileFirst checks that bench frontier reads a
// graph file before it opens a device: in the build without CUDA, a
// malformed or missing file is named, not the missing CUDA build, while a
// generated graph still gets the CUDA error before its build.
func TestBenchFrontierReadsFileFirst(t *testing.T) {
	dir := t.TempDir()
	bad := dir + "/bad.el"
	require.NoError(t, os.WriteFile(bad, []byte("0 1\n1 x\n"), 0o644))
	cases := []struct {
		name, graph, want, not string
	}{
		{"malformed file", "file:" + bad, `bad.el:2: vertex id "x" is not an integer. Fix:`, "CUDA"},
		{"missing file", "file:" + dir + "/none.el", "no such file. Fix: check the path", "CUDA"},
		{"generated graph", "grid:8", "built without CUDA support", "reading graph"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, stderr, code := runCLI(t, "", "bench", "frontier", "--graph", c.graph)
			assert.Equal(t, exitFailure, code)
			assert.Contains(t, stderr, c.want)
			assert.NotContains(t, stderr, c.not)
		})
	}
}
