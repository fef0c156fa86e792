package kronbuild

import (
	"fmt"

	"github.com/gpuplan/gpuplan/frontier"
)

// ChecksumPrefix starts every CSRChecksum ("fnv64t-", a tree of FNV-1a
// 64-bit hashes), so that its checksums are not taken for those of a
// single FNV-1a pass over the same bytes ("fnv64-").
const ChecksumPrefix = "fnv64t-"

// CSRChecksum names a CSR's arrays: ChecksumPrefix and the 16 hex digits
// of their frontier.CSR.Digest, a tree hash of pieces of
// frontier.DigestPieceBytes computed on every core. Two builds of one
// graph agree on it exactly when their arrays are equal (up to hash
// collisions), whatever the number of CPUs that computed it.
//
// The offsets are hashed as 4-byte words (as a GPU holds them) when the
// graph fits 32-bit offsets (frontier.CSR.CheckOffsets32) and as 8-byte
// words when it does not, or when one of its offsets is past 32 bits all
// the same (a malformed graph), so that no offset is hashed cut short.
func CSRChecksum(g *frontier.CSR) string {
	offsetBytes := 4
	if g.CheckOffsets32() != nil {
		offsetBytes = 8
	}
	d, err := g.Digest(offsetBytes)
	if err != nil {
		// Only 4-byte offsets fail, on an offset past 32 bits; 8-byte ones
		// hold every offset.
		d, _ = g.Digest(8)
	}
	return fmt.Sprintf("%s%016x", ChecksumPrefix, d)
}
