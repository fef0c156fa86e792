package egraph

import (
	"encoding/binary"
	"fmt"

	"github.com/gpuplan/gpuplan/internal/checked"
)

// ScratchSlab is the byte layout of the one resident buffer used by a fused
// structural-equivalence launch: bucket records (4-byte aligned, at least 4
// bytes), bucket rows (4-byte aligned, at least 4 bytes), output pairs
// (8-byte aligned, at least 8 bytes) and the output count (8-byte aligned,
// 8 bytes). The buffer is zero-filled before use.
type ScratchSlab struct {
	BucketWords ByteSpan `json:"bucket_words"`
	BucketRows  ByteSpan `json:"bucket_rows"`
	OutputPairs ByteSpan `json:"output_pairs"`
	OutputCount ByteSpan `json:"output_count"`
	ByteLen     uint64   `json:"byte_len"`
}

func alignUp(v, a uint64, field string) (uint64, error) {
	s, err := checked.Add(v, a-1, field)
	if err != nil {
		return 0, err
	}
	return s &^ (a - 1), nil
}

// PlanScratchSlab lays out the scratch slab for p and its output plan.
// Overflow is a *checked.OverflowError naming the section.
func PlanScratchSlab(p *SignatureBucketPlan, out EquivalenceOutputPlan) (ScratchSlab, error) {
	var s ScratchSlab
	var at uint64
	place := func(span *ByteSpan, bytes, align, least uint64, field string) error {
		var err error
		if at, err = alignUp(at, align, field); err != nil {
			return err
		}
		*span = ByteSpan{Offset: at, ByteLen: max(bytes, least)}
		at, err = checked.Add(at, span.ByteLen, field)
		return err
	}
	bw, err := checked.Mul(uint64(len(p.Buckets)), SignatureBucketRecordWords*4, "scratch bucket words")
	if err != nil {
		return ScratchSlab{}, err
	}
	if err := place(&s.BucketWords, bw, 4, 4, "scratch bucket words"); err != nil {
		return ScratchSlab{}, err
	}
	if err := place(&s.BucketRows, 4*uint64(len(p.BucketRows)), 4, 4, "scratch bucket rows"); err != nil {
		return ScratchSlab{}, err
	}
	if err := place(&s.OutputPairs, out.PairBytes, 8, 8, "scratch output pairs"); err != nil {
		return ScratchSlab{}, err
	}
	if err := place(&s.OutputCount, out.CounterBytes, 8, 8, "scratch output count"); err != nil {
		return ScratchSlab{}, err
	}
	s.ByteLen = at
	return s, nil
}

// ShortReadbackError reports a readback buffer too short for its contents.
type ShortReadbackError struct {
	Field string
	Need  uint64
	Have  uint64
}

// Error implements the error interface; the message ends with a Fix.
func (e *ShortReadbackError) Error() string {
	return fmt.Sprintf("short readback: %s needs %d bytes but %d were read. Fix: read back the full count and pair ranges of the scratch slab", e.Field, e.Need, e.Have)
}

// DecodeReadbackPairs decodes the slab readback: count is the 8-byte
// little-endian emitted count, pairs holds at least count 8-byte records
// (left u32 LE, right u32 LE). It returns the pairs in emission order and
// the count. Errors: *ShortReadbackError.
func DecodeReadbackPairs(count, pairs []byte) ([]EclassPair, uint64, error) {
	if len(count) < 8 {
		return nil, 0, &ShortReadbackError{Field: "output count", Need: 8, Have: uint64(len(count))}
	}
	n := binary.LittleEndian.Uint64(count)
	need, err := checked.Mul(n, 8, "output pair bytes")
	if err != nil || need > uint64(len(pairs)) {
		return nil, n, &ShortReadbackError{Field: "output pairs", Need: need, Have: uint64(len(pairs))}
	}
	out := make([]EclassPair, n)
	for i := range out {
		out[i] = EclassPair{A: binary.LittleEndian.Uint32(pairs[8*i:]), B: binary.LittleEndian.Uint32(pairs[8*i+4:])}
	}
	return out, n, nil
}

// DecodeReadbackPairsUnique is DecodeReadbackPairs followed by a sort by
// (left, right) and dedup; it also returns the emitted count.
func DecodeReadbackPairsUnique(count, pairs []byte) ([]EclassPair, uint64, error) {
	out, n, err := DecodeReadbackPairs(count, pairs)
	if err != nil {
		return nil, n, err
	}
	return sortUniquePairs(out), n, nil
}
