//go:build !cuda

package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The corpus's graph files go to bench, the only command that loads
// graphs. bench reads a graph file before it opens a device, so even
// without CUDA each is refused for what it is, naming its line, with a
// fix, and without a word of the missing CUDA build.
func TestHostileGraphFilesReachBench(t *testing.T) {
	for name, line := range map[string]string{"graph-huge-vertex.el": ":1: ", "graph-huge-n.mtx": ":2: "} {
		path := filepath.Join("testdata", "hostile", name)
		_, errs, code := runCLI(t, "", "bench", "frontier", "--graph", "file:"+path)
		assert.Equal(t, exitFailure, code, errs)
		assert.Contains(t, errs, name+line+"268435456 vertices for ")
		assert.Contains(t, errs, "Fix: number the vertices from 0")
		assert.NotContains(t, errs, "CUDA")
	}
}
