package rebuild

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/gpuplan/gpuplan/egraph"
	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/internal/kernelabi"
)

// MaxStructuralPairs bounds the candidate pairs of the structural-
// equivalence reference path: it compares every pair of rows inside a
// signature bucket, which is for small buckets.
const MaxStructuralPairs = 1 << 26

// StructuralCheck is the structural-equivalence reference path run on the
// GPU next to its CPU reference: vyre's pairwise check inside the
// signature buckets of the resident image (PlanSignatureBuckets), before
// any union.
type StructuralCheck struct {
	// Buckets, CandidatePairs and Waves size the bucket plan.
	Buckets        int    `json:"buckets"`
	CandidatePairs uint64 `json:"candidate_pairs"`
	Waves          int    `json:"waves"`
	// SlabBytes is the scratch slab (PlanScratchSlab) the kernel ran in.
	SlabBytes uint64 `json:"slab_bytes"`
	// GPU is what the kernel found, read back in vyre's readback format;
	// CPU is egraph.CollectStructuralEquivalences on the same image.
	GPU egraph.StructuralEquivalences `json:"gpu"`
	CPU egraph.StructuralEquivalences `json:"cpu"`
}

// Same reports whether the GPU and the CPU found the same equivalences
// and counts.
func (c StructuralCheck) Same() bool {
	g, r := c.GPU, c.CPU
	return slices.Equal(g.Equivalences, r.Equivalences) && g.ExactPairCount == r.ExactPairCount &&
		g.RedundantPairCount == r.RedundantPairCount && g.RejectedCandidatePairCount == r.RejectedCandidatePairCount
}

// StructuralEquivalences runs the structural-equivalence reference path:
// the bucket plan of the resident image, a scratch slab laid out by
// PlanScratchSlab and sized by PlanStructuralEquivalenceOutput (refused,
// before it is allocated, when it does not fit the budget left or when the
// buckets hold more than MaxStructuralPairs pairs), one launch per pair
// wave, and the readback of the exact pairs and the counters. The slab is
// freed before it returns. It resets the rebuild state.
func (s *Session) StructuralEquivalences() (StructuralCheck, error) {
	lc := egraph.LaunchConfig{ThreadsPerBlock: uint32(s.cfg.Threads), MaxBlocksPerLaunch: egraph.DefaultMaxBlocksPerLaunch}
	plan, err := egraph.PlanSignatureBuckets(s.img, s.view, lc)
	if err != nil {
		return StructuralCheck{}, err
	}
	c := StructuralCheck{Buckets: len(plan.Buckets), CandidatePairs: plan.CandidatePairCount, Waves: len(plan.PairWaves)}
	if c.CPU, err = egraph.CollectStructuralEquivalences(s.img, &plan); err != nil {
		return c, err
	}
	if plan.CandidatePairCount > MaxStructuralPairs {
		return c, fmt.Errorf("structural equivalence of %s: its signature buckets hold %d candidate pairs, more than the %d the pairwise reference path compares. Fix: run it on a smaller e-graph", s.name, plan.CandidatePairCount, MaxStructuralPairs)
	}
	outPlan, err := egraph.PlanStructuralEquivalenceOutput(&plan)
	if err != nil {
		return c, err
	}
	slab, err := egraph.PlanScratchSlab(&plan, outPlan)
	if err != nil {
		return c, err
	}
	c.SlabBytes = slab.ByteLen
	budget, err := s.x.Budget()
	if err != nil {
		return c, err
	}
	if left := budget - min(budget, s.x.ResidentBytes()); slab.ByteLen > left {
		return c, fmt.Errorf("structural equivalence of %s needs a %d-byte scratch slab but %d bytes of the budget are left. Fix: run it on a smaller e-graph", s.name, slab.ByteLen, left)
	}
	c.GPU, err = s.runBuckets(&plan, slab)
	return c, err
}

// runBuckets uploads the slab, runs every pair wave and reads the result.
func (s *Session) runBuckets(plan *egraph.SignatureBucketPlan, slab egraph.ScratchSlab) (egraph.StructuralEquivalences, error) {
	var out egraph.StructuralEquivalences
	if err := s.reset(); err != nil {
		return out, err
	}
	buf, err := s.x.Alloc(slab.ByteLen)
	if err != nil {
		return out, err
	}
	defer s.x.Free(buf)
	data := make([]byte, slab.ByteLen)
	for i, w := range plan.BucketRecords() {
		binary.LittleEndian.PutUint32(data[slab.BucketWords.Offset+4*uint64(i):], w)
	}
	for i, r := range plan.BucketRows {
		binary.LittleEndian.PutUint32(data[slab.BucketRows.Offset+4*uint64(i):], r)
	}
	if err := s.x.Upload(buf, data); err != nil {
		return out, err
	}
	for _, w := range plan.PairWaves {
		p := s.bucketParams(buf, slab, w)
		if _, err := s.x.Launch(s.k.buckets, executor.Linear(uint32(w.Blocks), w.ThreadsPerBlock), kernelabi.MustArgs(p)...); err != nil {
			return out, err
		}
	}
	return s.readBuckets(buf, slab)
}

// bucketParams are the bucket kernel's parameters for one wave.
func (s *Session) bucketParams(slab executor.Buffer, l egraph.ScratchSlab, w egraph.Wave) BucketParams[executor.Buffer] {
	return BucketParams[executor.Buffer]{Image: s.buf.image, Slab: slab, Ctl: s.buf.ctl,
		SecClass: s.section(egraph.SecRowEclassIDs), SecOp: s.section(egraph.SecRowLanguageOpIDs),
		SecOffset: s.section(egraph.SecRowChildrenOffsets), SecLen: s.section(egraph.SecRowChildrenLens),
		SecSig: s.section(egraph.SecRowSignatures), SecChildren: s.section(egraph.SecChildren), ChildSlots: s.plans.Sizes.ChildSlots,
		BucketWords: l.BucketWords.Offset, BucketRows: l.BucketRows.Offset, OutPairs: l.OutputPairs.Offset, OutCount: l.OutputCount.Offset,
		Bucket: uint64(w.Bucket), First: w.FirstItem, Count: w.ItemCount}
}

// readBuckets reads the exact pairs (count, then pairs) and the counters.
func (s *Session) readBuckets(buf executor.Buffer, slab egraph.ScratchSlab) (egraph.StructuralEquivalences, error) {
	var out egraph.StructuralEquivalences
	raw, err := s.x.DownloadRanges(buf, []executor.Range{{Offset: slab.OutputCount.Offset, Len: 8}, {Offset: slab.OutputPairs.Offset, Len: slab.OutputPairs.ByteLen}})
	if err != nil {
		return out, err
	}
	if out.Equivalences, _, err = egraph.DecodeReadbackPairsUnique(raw[0], raw[1]); err != nil {
		return out, err
	}
	ctr, err := s.x.DownloadRange(s.buf.ctl, 4*CtlBucket, 24)
	if err != nil {
		return out, err
	}
	out.ExactPairCount = binary.LittleEndian.Uint64(ctr[4*BucketExact:])
	out.RedundantPairCount = binary.LittleEndian.Uint64(ctr[4*BucketRedundant:])
	out.RejectedCandidatePairCount = binary.LittleEndian.Uint64(ctr[4*BucketRejected:])
	out.EquivalenceOutputWords = 2 * uint64(len(out.Equivalences))
	return out, nil
}
