package bfs

import (
	"hash/fnv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/frontier"
)

// TestSessionRefusesWideGraph checks that a graph past the kernels' 32-bit
// offsets is refused with a *frontier.Offsets32Error before anything is
// loaded or allocated on the device. The graphs here have the offsets of
// such a graph and no targets: the refusal reads the last offset only.
func TestSessionRefusesWideGraph(t *testing.T) {
	cases := []struct {
		name    string
		g       *frontier.CSR
		entries uint64
	}{
		{"one past 2^32-1", &frontier.CSR{Name: "wide", Offsets: []uint64{0, 1 << 32}}, 1 << 32},
		{"scale 29", &frontier.CSR{Name: "kron-29", Offsets: []uint64{0, 1 << 33, frontier.MaxGraphEdgeEntries}}, frontier.MaxGraphEdgeEntries},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			x, fake := newFakeExecutor(t, 1<<30, 1)
			before := fake.Calls()
			_, err := NewSession(x, c.g, Config{})
			var oe *frontier.Offsets32Error
			require.ErrorAs(t, err, &oe)
			assert.Equal(t, &frontier.Offsets32Error{Source: c.g.Name, Entries: c.entries, Limit: frontier.MaxOffsets32Entries}, oe)
			assert.Contains(t, err.Error(), "Fix:")
			assert.Equal(t, before["cuMemAlloc"], fake.Calls()["cuMemAlloc"], "nothing allocated")
			assert.Equal(t, before["cuModuleLoadData"], fake.Calls()["cuModuleLoadData"], "nothing loaded")
			assert.Zero(t, x.ResidentBytes())
		})
	}
}

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
