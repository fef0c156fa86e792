package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// requirePromtoolAccepts fails t unless `promtool check metrics` accepts
// the exposition text. It skips where promtool is not on PATH (Debian's
// prometheus package ships it), unless GPUPLAN_REQUIRE_PROMTOOL is set.
// Tests of commands that write --metrics call it on what they wrote.
func requirePromtoolAccepts(t *testing.T, text []byte) {
	t.Helper()
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("GPUPLAN_REQUIRE_PROMTOOL") != "" {
			t.Fatal("promtool is not on PATH. Fix: install it (apt-get install prometheus) or unset GPUPLAN_REQUIRE_PROMTOOL")
		}
		t.Skip("promtool is not on PATH")
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(text)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "promtool check metrics: %s", out)
}

func testSnapshot() executor.TelemetrySnapshot {
	var tel executor.Telemetry
	tel.RecordLaunch(executor.Linear(132, 256), 30000)
	tel.RecordTimed(executor.Timing{WallNs: 1500, DeviceNs: 1200, HasDeviceTime: true})
	return tel.Snapshot()
}

func TestWriteMetricsFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "gpuplan.prom")
	require.NoError(t, os.WriteFile(path, []byte("stale"), 0o600))
	e := &env{stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}}
	require.NoError(t, e.writeMetrics(path, testSnapshot()))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Contains(t, string(data), "# TYPE gpuplan_kernel_launches_total counter\ngpuplan_kernel_launches_total 1\n")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary file is left behind")
	info, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), info.Mode().Perm())
	requirePromtoolAccepts(t, data)
}

func TestWriteMetricsStdoutAndErrors(t *testing.T) {
	var out bytes.Buffer
	e := &env{stdout: &out, stderr: &bytes.Buffer{}}
	require.NoError(t, e.writeMetrics("-", testSnapshot()))
	assert.True(t, strings.HasPrefix(out.String(), "# HELP gpuplan_"))
	err := e.writeMetrics(filepath.Join(t.TempDir(), "no", "such", "dir.prom"), testSnapshot())
	require.ErrorContains(t, err, "Fix: check that the directory exists")
	dir := t.TempDir()
	err = e.writeMetrics(dir, testSnapshot())
	require.ErrorContains(t, err, "Fix:")
	entries, _ := os.ReadDir(filepath.Dir(dir))
	for _, en := range entries {
		assert.False(t, strings.HasSuffix(en.Name(), ".tmp"), en.Name())
	}
}
