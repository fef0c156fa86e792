package kronbuild

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/frontier"
)

// The checksum is pinned: a change of its definition shows here, and in
// the recorded evidence it would no longer match.
func TestCSRChecksumPinned(t *testing.T) {
	g := &frontier.CSR{Offsets: []uint64{0, 1, 2}, Targets: []int32{1, 0}}
	assert.Equal(t, "fnv64t-f0e4d0c54d219030", CSRChecksum(g))
	assert.Regexp(t, `^fnv64t-[0-9a-f]{16}$`, CSRChecksum(g))
	assert.Regexp(t, `^fnv64t-[0-9a-f]{16}$`, CSRChecksum(&frontier.CSR{}), "an empty graph")
}

// The checksum is ChecksumPrefix and the graph's frontier digest, its
// offsets as 4-byte words when the graph fits 32-bit offsets (up to
// frontier.MaxOffsets32Entries entries) and as 8-byte words when it does
// not, so offsets past 32 bits are hashed whole: 2^32 is not 0. A
// malformed graph that fits by its last offset but holds an offset past
// 32 bits inside is hashed at 8 bytes too.
func TestCSRChecksumOffsetWords(t *testing.T) {
	const limit = frontier.MaxOffsets32Entries
	cases := []struct {
		name        string
		g           *frontier.CSR
		offsetBytes int
	}{
		{"empty", &frontier.CSR{}, 4},
		{"small", &frontier.CSR{Offsets: []uint64{0, 1, 2}, Targets: []int32{1, 0}}, 4},
		{"at the 32-bit limit", &frontier.CSR{Offsets: []uint64{0, limit}}, 4},
		{"past the 32-bit limit (2^32)", &frontier.CSR{Offsets: []uint64{0, limit + 1}}, 8},
		{"2^33", &frontier.CSR{Offsets: []uint64{0, 1 << 33}}, 8},
		{"an offset inside past 32 bits", &frontier.CSR{Offsets: []uint64{0, 1 << 32, 2}, Targets: []int32{1, 0}}, 8},
	}
	seen := map[string]string{}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, err := c.g.Digest(c.offsetBytes)
			require.NoError(t, err)
			got := CSRChecksum(c.g)
			assert.Equal(t, fmt.Sprintf("%s%016x", ChecksumPrefix, d), got)
			assert.NotContains(t, seen, got, "the same as %s", seen[got])
			seen[got] = c.name
		})
	}
	assert.NotEqual(t, CSRChecksum(&frontier.CSR{Offsets: []uint64{0, 0}}), CSRChecksum(&frontier.CSR{Offsets: []uint64{0, 1 << 32}}))
}
