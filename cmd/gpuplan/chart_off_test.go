//go:build !chart

package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A build without charts refuses --chart before it reads an input or
// starts a load, names the flag and says how to get a build with charts;
// it writes no file. (A wrong extension is a usage error in every build:
// TestChartExtension.)
func TestChartNeedsABuildWithCharts(t *testing.T) {
	dir := t.TempDir()
	svg := filepath.Join(dir, "c.svg")
	for _, args := range [][]string{
		{"report", "--chart", svg},
		{"report", "--results", reportFixture, "--chart", svg, "--output", filepath.Join(dir, "r.md")},
		{"report", "--chart", svg, filepath.Join(dir, "missing.csv")},
		{"load", "--graph", "kron:9", "--cpu", "--clients", "1", "--duration", "20s", "--warmup", "0s", "--chart", svg},
	} {
		start := time.Now()
		out, errs, code := runCLI(t, "", args...)
		assert.Equal(t, exitFailure, code, errs)
		assert.Empty(t, out)
		assert.Equal(t, "gpuplan "+args[0]+": --chart needs a build with charts, and this gpuplan was built without them. Fix: make build-chart (go build -tags chart ./cmd/gpuplan)\n", errs)
		assert.Less(t, time.Since(start), 10*time.Second, "%v ran before refusing --chart", args)
		written, err := os.ReadDir(dir)
		require.NoError(t, err)
		assert.Empty(t, written, "%v wrote a file", args)
	}
	for _, cmd := range []string{"report", "load"} {
		out, errs, code := runCLI(t, "", cmd, "--help")
		require.Equal(t, exitOK, code, errs)
		assert.Contains(t, out, "needs a build with charts (make build-chart)", cmd)
	}
}
