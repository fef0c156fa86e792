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
// every root's level of every vertex. targets holds one list per root (nil
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
		pass := answers[first : first+nroots]
		if err := m.gatherPass(pass, targets[first:first+nroots], depth); err != nil {
			return err
		}
		return m.countPass(pass, depth)
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

// gatherPass reads the levels of a pass's targets (targets[i] for the
// pass's root i) into its answers: one upload of (root, vertex) pairs, one
// launch, one download of their levels; no launch when the pass has no
// targets.
func (m *MultiSource) gatherPass(answers []RootAnswer, targets [][]int32, depth uint64) error {
	var count uint64
	for _, ts := range targets {
		count += uint64(len(ts))
	}
	if count == 0 {
		for i := range answers {
			answers[i].Levels = []int32{}
		}
		return nil
	}
	in, err := checked.Mul(count, 8, "multi-source answer pairs (8 bytes each)")
	if err != nil {
		return err
	}
	out, err := checked.Mul(count, 4, "multi-source answer levels (4 bytes each)")
	if err != nil {
		return err
	}
	s := m.s
	if err := m.ans.grow(s.x, in, out, 0); err != nil {
		return err
	}
	if err := s.x.UploadAt(m.ans.in, 0, msPairs(targets, in)); err != nil {
		return err
	}
	p := MSGatherParams[executor.Buffer]{Seen: m.buf.seen, Planes: m.buf.planes, Pairs: m.ans.in, Out: m.ans.out,
		N: uint64(s.g.NumVertices()), NRoots: uint64(len(targets)), Width: m.plan.Width, Bits: uint64(bits.Len64(depth)), Count: count}
	if _, err := s.x.Launch(s.k.msGather, answerLaunch(s.x, count, 1), kernelabi.MustArgs(p)...); err != nil {
		return err
	}
	levels, err := download[int32](s.x, m.ans.out, count)
	if err != nil {
		return err
	}
	for i, ts := range targets {
		answers[i].Levels, levels = levels[:len(ts):len(ts)], levels[len(ts):]
	}
	return nil
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

// countPass counts the vertices of every level from every root of a pass
// of the given depth (its labels lie below it) into its answers, each
// root's counts cut after its largest level.
func (m *MultiSource) countPass(answers []RootAnswer, depth uint64) error {
	nroots := uint64(len(answers))
	bins, err := checked.Mul(nroots, depth, "multi-source level counts (roots x levels)")
	if err != nil {
		return err
	}
	size, err := checked.Mul(bins, 8, "multi-source level counts (8 bytes each)")
	if err != nil {
		return err
	}
	s := m.s
	if err := m.ans.grow(s.x, 0, 0, size); err != nil {
		return err
	}
	n := uint64(s.g.NumVertices())
	args := kernelabi.MustArgs(MSLevelCountsParams[executor.Buffer]{Seen: m.buf.seen, Planes: m.buf.planes, Counts: m.ans.counts,
		N: n, NRoots: nroots, Width: m.plan.Width, Bits: uint64(bits.Len64(depth)), NLevels: depth})
	args[msLevelCountsArg] = executor.Out(m.ans.counts)
	if _, err := s.x.Launch(s.k.msCounts, answerLaunch(s.x, n, 1), args...); err != nil {
		return err
	}
	counts, err := download[uint64](s.x, m.ans.counts, bins)
	if err != nil {
		return err
	}
	for i := range answers {
		answers[i].Counts = trimCounts(counts[uint64(i)*depth : uint64(i+1)*depth])
	}
	return nil
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
