package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestHostileGraphFilesReachPartition: partition loads graphs in every
// build; the corpus's graph files are refused with their line and a fix,
// before their vertex counts are allocated.
func TestHostileGraphFilesReachPartition(t *testing.T) {
	for _, name := range []string{"graph-huge-vertex.el", "graph-huge-n.mtx"} {
		path := filepath.Join("testdata", "hostile", name)
		_, errs, code := runCLI(t, "", "partition", "--graph", "file:"+path, "--device", "h200")
		assert.Equal(t, exitFailure, code, errs)
		assert.Contains(t, errs, name+":")
		assert.Contains(t, errs, "Fix:")
	}
}
