package bfs

import (
	"hash/fnv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/frontier"
)

// TestLayoutHashIsTheDeviceLayout checks that the resident graph's layout
// hash is FNV-64a of the 32-bit offsets and the targets, as uploaded, over
// more offsets than one chunk of the hash.
func TestLayoutHashIsTheDeviceLayout(t *testing.T) {
	g := mustGraph(t)(frontier.Grid(100))
	_, s := fakeSession(t, 1<<30, 1, g, Config{})
	offsets, err := g.Offsets32()
	require.NoError(t, err)
	h := fnv.New64a()
	h.Write(bytesOf(offsets))
	h.Write(bytesOf(g.Targets))
	assert.Equal(t, h.Sum64(), s.layoutHash())
	assert.Equal(t, h.Sum64(), s.SessionProfile(1).GraphLayoutHash)
}
