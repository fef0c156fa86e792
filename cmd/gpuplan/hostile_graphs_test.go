//go:build !cuda

package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The corpus's graph files go to bench, the only command that loads
// graphs. Without CUDA bench parses its flags and stops before loading, so
// here they only check that the graph flag is parsed without a panic; the
// CUDA build loads them.
func TestHostileGraphFilesReachBench(t *testing.T) {
	for _, name := range []string{"graph-huge-vertex.el", "graph-huge-n.mtx"} {
		path := filepath.Join("testdata", "hostile", name)
		_, errs, code := runCLI(t, "", "bench", "frontier", "--graph", "file:"+path)
		assert.Equal(t, exitFailure, code, errs)
		assert.Contains(t, errs, "built without CUDA")
	}
}
