package bfs

import (
	"encoding/binary"
	"fmt"
	"math/bits"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/internal/checked"
	"github.com/gpuplan/gpuplan/internal/kernelabi"
)

// RootAnswer is what MultiSource.RunAnswers reads for one root.
type RootAnswer struct {
	Root int32 `json:"root"`
	// Levels[j] is the level of the root's j-th target, Unreached (-1)
	// where the root does not reach it.
	Levels []int32 `json:"levels"`
	// Counts[l] is the number of vertices at level l from the root, for l
	// from 0 (the root alone) to the root's largest level: len(Counts) - 1
	// is that level and the sum of Counts the vertices the root reaches.
	Counts []uint64 `json:"counts"`
}

// RunAnswers traverses from every root in the plan's passes, as Run does,
// and after each pass, before the next overwrites its level planes, reads
// on the device the levels of targets[i] from roots[i] and the number of
// vertices at each level from every root of the pass: only the targets'
// levels and one 64-bit count per root and level cross the bus, instead of
// every root's level of every vertex. A pass's answer takes one upload (of
// its targets) and one dispatch that launches both answer kernels and reads
// back both results with one host wait. targets holds one list per root (nil
// or empty for none). The roots and every target are checked before
// anything is allocated or launched. The answer kernels' device buffers grow
// on demand and stay with m until Close. The measurement covers the
// traversals alone, as Run's does.
func (m *MultiSource) RunAnswers(roots []int32, targets [][]int32) (MultiSourceRun, []RootAnswer, error) {
	if err := m.checkRoots(roots); err != nil {
		return MultiSourceRun{}, nil, err
	}
	if err := m.checkTargets(targets, len(roots)); err != nil {
		return MultiSourceRun{}, nil, err
	}
	answers := make([]RootAnswer, len(roots))
	for i, r := range roots {
		answers[i].Root = r
	}
	run, err := m.passes(roots, func(first, nroots int, depth uint64) error {
		return m.answerPass(answers[first:first+nroots], targets[first:first+nroots], depth)
	})
	if err != nil {
		return run, nil, err
	}
	return run, answers, nil
}

// ReserveAnswers sizes m's answer buffers now for RunAnswers passes of up
// to targets targets (all the pass's roots' together) and levels levels,
// so that later runs within those sizes allocate no device memory, as
// Session.ReserveAnswers does for single roots. The buffers still grow on
// demand past the reservation; Close frees them.
func (m *MultiSource) ReserveAnswers(targets, levels int) error {
	out, counts, err := answerBytes("multi-source ReserveAnswers", targets, m.plan.Width, levels)
	if err != nil {
		return err
	}
	in, err := checked.Mul(out, 2, "multi-source ReserveAnswers pairs (8 bytes each)")
	if err != nil {
		return err
	}
	return m.ans.grow(m.s.x, in, out, counts)
}

// checkTargets refuses target lists that are not one per root, or that
// hold an id that is not a vertex of the graph.
func (m *MultiSource) checkTargets(targets [][]int32, roots int) error {
	if len(targets) != roots {
		return fmt.Errorf("multi-source RunAnswers targets: %d lists for %d roots. Fix: pass one list of targets per root (nil for none)", len(targets), roots)
	}
	for i, ts := range targets {
		if err := checkVertices(m.s.g, fmt.Sprintf("RunAnswers targets[%d]", i), ts); err != nil {
			return err
		}
	}
	return nil
}

// answerPass reads a pass's answers: the levels of its targets
// (targets[i] for the pass's root i) and the counts of every level from
// every root, each root's counts cut after its largest level. The targets'
// (root, vertex) pairs are uploaded (when there are any), then one
// sequence launches the gather and the count kernels and reads back both.
func (m *MultiSource) answerPass(answers []RootAnswer, targets [][]int32, depth uint64) error {
	var count uint64
	for _, ts := range targets {
		count += uint64(len(ts))
	}
	sz, err := msAnswerSizes(count, uint64(len(answers)), depth)
	if err != nil {
		return err
	}
	s := m.s
	if err := m.ans.grow(s.x, sz.pairs, sz.levels, sz.counts); err != nil {
		return err
	}
	if count > 0 {
		if err := s.x.UploadAt(m.ans.in, 0, msPairs(targets, sz.pairs)); err != nil {
			return err
		}
	}
	seq, rawLevels, rawCounts := m.answerSequence(count, uint64(len(answers)), depth, sz)
	slots := [][]byte{rawCounts}
	if count > 0 {
		slots = [][]byte{rawLevels, rawCounts}
	}
	if _, err := s.x.RunSequence(seq, slots); err != nil {
		return err
	}
	levels := fromBytes[int32](rawLevels, count)
	counts := fromBytes[uint64](rawCounts, sz.counts/8)
	for i, ts := range targets {
		answers[i].Levels, levels = levels[:len(ts):len(ts)], levels[len(ts):]
		answers[i].Counts = trimCounts(counts[uint64(i)*depth : uint64(i+1)*depth])
	}
	return nil
}

// msSizes are the bytes of a pass's answer buffers: the targets' pairs and
// levels, and the level counts.
type msSizes struct{ pairs, levels, counts uint64 }

// msAnswerSizes sizes the answer of a pass of nroots roots and depth
// levels with count targets, in checked arithmetic.
func msAnswerSizes(count, nroots, depth uint64) (msSizes, error) {
	var sz msSizes
	var err error
	if sz.pairs, err = checked.Mul(count, 8, "multi-source answer pairs (8 bytes each)"); err != nil {
		return sz, err
	}
	if sz.levels, err = checked.Mul(count, 4, "multi-source answer levels (4 bytes each)"); err != nil {
		return sz, err
	}
	bins, err := checked.Mul(nroots, depth, "multi-source level counts (roots x levels)")
	if err != nil {
		return sz, err
	}
	sz.counts, err = checked.Mul(bins, 8, "multi-source level counts (8 bytes each)")
	return sz, err
}

// answerSequence is a pass's answer dispatch: the gather of its count
// targets (none without targets) and the level counts of its nroots roots
// of depth levels, then the reads of both, into the slots it returns (the
// levels' slot is empty, and not read, without targets).
func (m *MultiSource) answerSequence(count, nroots, depth uint64, sz msSizes) (seq executor.Sequence, levels, counts []byte) {
	s := m.s
	n := uint64(s.g.NumVertices())
	bitsOf := uint64(bits.Len64(depth))
	if count > 0 {
		p := MSGatherParams[executor.Buffer]{Seen: m.buf.seen, Planes: m.buf.planes, Pairs: m.ans.in, Out: m.ans.out,
			N: n, NRoots: nroots, Width: m.plan.Width, Bits: bitsOf, Count: count}
		seq.Prefix = append(seq.Prefix, executor.Step{Kernel: s.k.msGather, Config: answerLaunch(s.x, count, 1), Args: kernelabi.MustArgs(p)})
		seq.Reads = append(seq.Reads, executor.ReadRequest{Buffer: m.ans.out, Len: sz.levels})
		levels = make([]byte, sz.levels)
	}
	args := kernelabi.MustArgs(MSLevelCountsParams[executor.Buffer]{Seen: m.buf.seen, Planes: m.buf.planes, Counts: m.ans.counts,
		N: n, NRoots: nroots, Width: m.plan.Width, Bits: bitsOf, NLevels: depth})
	args[msLevelCountsArg] = executor.Out(m.ans.counts)
	seq.Prefix = append(seq.Prefix, executor.Step{Kernel: s.k.msCounts, Config: answerLaunch(s.x, n, 1), Args: args})
	seq.Reads = append(seq.Reads, executor.ReadRequest{Buffer: m.ans.counts, Len: sz.counts})
	return seq, levels, make([]byte, sz.counts)
}

// msPairs lays out a pass's targets as the gather kernel reads them: for
// each of size/8 targets, its root's index in the pass and the vertex, two
// little-endian uint32.
func msPairs(targets [][]int32, size uint64) []byte {
	raw := make([]byte, 0, size)
	for i, ts := range targets {
		for _, v := range ts {
			raw = binary.LittleEndian.AppendUint32(raw, uint32(i))
			raw = binary.LittleEndian.AppendUint32(raw, uint32(v))
		}
	}
	return raw
}

// trimCounts returns a copy of a root's counts up to its last non-zero
// level (BFS levels are contiguous: the first empty level ends them).
func trimCounts(c []uint64) []uint64 {
	last := len(c) - 1
	for last > 0 && c[last] == 0 {
		last--
	}
	return append([]uint64(nil), c[:last+1]...)
}
