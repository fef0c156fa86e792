//go:build cuda && !cudalib_direct

package main

import (
	"debug/elf"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuplan/gpuplan/internal/cudalib"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// buildLazyBinary builds this command with -tags cuda into a temporary
// folder. The external linker runs with --no-as-needed first, as on
// distributions whose compiler does not default to --as-needed, so the
// result does not depend on this machine's default.
func buildLazyBinary(t *testing.T) string {
	t.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command on PATH: %v", err)
	}
	cc, err := exec.Command(goCmd, "env", "CC").Output()
	require.NoError(t, err)
	bin := filepath.Join(t.TempDir(), "gpuplan")
	ldflags := "-w '-extld=" + strings.TrimSpace(string(cc)) + " -Wl,--no-as-needed'"
	cmd := exec.Command(goCmd, "build", "-tags", "cuda", "-ldflags", ldflags, "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	return bin
}

// runBinary runs bin with args and the environment, without any
// GPUPLAN_LIBCUDA of the test's own, plus extra.
func runBinary(t *testing.T, bin string, extra []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, cudalib.EnvVar+"=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, extra...)
	var o, e strings.Builder
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return o.String(), e.String(), ee.ExitCode()
	}
	require.NoError(t, err)
	return o.String(), e.String(), 0
}

// The CUDA build names no dependency on libcuda: the trampolines define
// every driver function it calls. When this fails, the build calls a
// driver function the generated list lacks.
func TestLazyLinkNeedsNoLibcuda(t *testing.T) {
	bin := buildLazyBinary(t)
	f, err := elf.Open(bin)
	require.NoError(t, err)
	defer f.Close()
	libs, err := f.ImportedLibraries()
	require.NoError(t, err)
	syms, err := f.ImportedSymbols()
	require.NoError(t, err)
	var driver []string
	for _, s := range syms {
		if strings.HasPrefix(s.Name, "cu") {
			driver = append(driver, s.Name)
		}
	}
	assert.NotContains(t, libs, "libcuda.so.1", "Fix: run 'make cudalib' to regenerate internal/cudalib's trampolines; driver functions still imported: %v", driver)
	assert.Empty(t, driver, "Fix: run 'make cudalib' to regenerate internal/cudalib's trampolines")

	t.Run("without the driver library", func(t *testing.T) { checkWithoutDriver(t, bin) })
	t.Run("with the installed driver library", func(t *testing.T) { checkWithInstalledDriver(t, bin) })
}

// checkWithoutDriver runs the binary with GPUPLAN_LIBCUDA naming a missing
// file: the planning commands work, and every GPU command fails with the
// loader's sentence.
func checkWithoutDriver(t *testing.T, bin string) {
	missing := []string{cudalib.EnvVar + "=/nonexistent/libcuda.so.1"}
	ok := []struct {
		args []string
		want string
	}{
		{[]string{"version"}, "built with CUDA"},
		{[]string{"devices"}, "h200"},
		{[]string{"occupancy", "--device", "h100", "--regs", "40", "--block", "256"}, "occupancy:"},
		{[]string{"plan"}, "Megakernel plan"},
	}
	for _, tc := range ok {
		out, errs, code := runBinary(t, bin, missing, tc.args...)
		assert.Equal(t, exitOK, code, "%v: %s", tc.args, errs)
		assert.Contains(t, out, tc.want, "%v", tc.args)
	}
	gpu := [][]string{
		{"devices", "--probe"},
		{"bench", "frontier", "--graph", "grid:8", "--roots", "1", "--samples", "1"},
		{"bench", "frontier", "--graph", "grid:8", "--roots", "1", "--samples", "1", "--simulate-devices", "2"},
		{"bench", "egraph", "--egraph", "gen:100", "--samples", "1"},
		{"egraph", "rebuild", "--gpu", "gen:100"},
	}
	for _, args := range gpu {
		_, errs, code := runBinary(t, bin, missing, args...)
		assert.Equal(t, exitFailure, code, "%v: %s", args, errs)
		assert.Contains(t, errs, "the NVIDIA driver library /nonexistent/libcuda.so.1 (set by GPUPLAN_LIBCUDA) could not be loaded (/nonexistent/libcuda.so.1: cannot open shared object file", "%v", args)
		assert.Contains(t, errs, "Fix: install the NVIDIA driver, or set GPUPLAN_LIBCUDA to the path of libcuda.so.1", "%v", args)
		assert.Equal(t, 1, strings.Count(errs, "Fix:"), "%v: %s", args, errs)
	}
}

// checkWithInstalledDriver probes with the machine's own driver library:
// the executor's cuInit reaches the real one, so a machine without a GPU
// gets the driver's "no device" sentence and one with GPUs a report.
func checkWithInstalledDriver(t *testing.T, bin string) {
	if err := cudalib.LoadError(); err != nil {
		t.Skipf("no NVIDIA driver library here: %v", err)
	}
	out, errs, code := runBinary(t, bin, nil, "devices", "--probe")
	if code == exitOK {
		assert.NotEmpty(t, out, "a machine with GPUs gets a report")
		return
	}
	assert.Equal(t, exitFailure, code, errs)
	assert.NotContains(t, errs, "could not be loaded")
	assert.NotContains(t, errs, "has no cuInit", "the interposed cuInit found the real one")
	assert.Contains(t, errs, "gpuplan devices: ")
}
