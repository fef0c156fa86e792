package bfs

import (
	"fmt"
	"unsafe"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/internal/checked"
	"github.com/gpuplan/gpuplan/internal/kernelabi"
	"github.com/gpuplan/gpuplan/workloads/harness"
)

// A query wants the levels of a few target vertices and how many vertices
// each level holds, not the whole level array: the answer kernels read both
// on the device (KernelGather, KernelLevelCounts, and their multi-source
// forms), so that 4 bytes per target and 8 per level cross the bus instead
// of 4 per vertex.

// answerThreads is the block size of the answer kernels: whole warps, as
// their warp-wide votes need.
const answerThreads = 256

// answerBuffers are the answer kernels' device buffers, grown on demand
// and kept until Close: in holds the vertex ids (or a multi-source pass's
// pairs), out their levels, counts the level counts.
type answerBuffers struct {
	in, out, counts executor.Buffer
}

// grow makes *b hold at least n bytes: it stays when it does, else it is
// freed and replaced by one of twice its size or n bytes, whichever is
// more (exactly n when twice its size does not fit the budget), so that a
// run of growing requests reallocates only a few times.
func grow(x *executor.Executor, b *executor.Buffer, n uint64) error {
	if b.ID != 0 && b.Len >= n {
		return nil
	}
	size := max(n, 4, checked.SaturatingAdd(b.Len, b.Len))
	if b.ID != 0 {
		if err := x.Free(*b); err != nil {
			return err
		}
		*b = executor.Buffer{}
	}
	nb, err := x.Alloc(size)
	if err != nil && size > n {
		nb, err = x.Alloc(max(n, 4))
	}
	if err != nil {
		return err
	}
	*b = nb
	return nil
}

// answerLaunch is the launch of an answer kernel over items items, at
// least perThread of them a thread: blocks of answerThreads, at most 8 an
// SM.
func answerLaunch(x *executor.Executor, items, perThread uint64) executor.LaunchConfig {
	blocks, _ := checked.CeilDiv(items, answerThreads*perThread)
	blocks = min(max(blocks, 1), uint64(max(x.Device().SMCount, 1))*8)
	return executor.Linear(uint32(blocks), answerThreads)
}

// Positions of the count kernels' counts, which the executor zeroes before
// each launch (executor.Out).
var (
	levelCountsArg   = kernelabi.MustIndex(LevelCountsParams[executor.Buffer]{}, "Counts")
	msLevelCountsArg = kernelabi.MustIndex(MSLevelCountsParams[executor.Buffer]{}, "Counts")
)

// checkVertices refuses a vertex list (named field) with an id that is not
// a vertex of g.
func checkVertices(g *frontier.CSR, field string, vertices []int32) error {
	n := g.NumVertices()
	for i, v := range vertices {
		if v < 0 || int(v) >= n {
			return fmt.Errorf("%s[%d] = %d is not a vertex of %s (%d vertices). Fix: pass vertex ids from 0 to %d", field, i, v, g.Name, n, n-1)
		}
	}
	return nil
}

// checkRan refuses an answer before any traversal has set the levels.
func (s *Session) checkRan(op string) error {
	if !s.ran {
		return fmt.Errorf("BFS %s over %s before any traversal: the session holds no levels yet. Fix: call Run (or Batch) first", op, s.g.Name)
	}
	return nil
}

// LevelsOf returns the level of each of vertices from the session's last
// traversal (the same as Levels()[v] for each v, Unreached (-1) where the
// root does not reach it), read on the device: only the ids and their
// levels cross the bus. Every id is checked against the graph before
// anything is allocated or launched; an empty list returns an empty slice
// without a launch. The ids' and levels' device buffers grow on demand and
// stay with the session until Close.
func (s *Session) LevelsOf(vertices []int32) ([]int32, error) {
	if err := s.checkRan("LevelsOf"); err != nil {
		return nil, err
	}
	if err := checkVertices(s.g, "LevelsOf vertices", vertices); err != nil {
		return nil, err
	}
	if len(vertices) == 0 {
		return []int32{}, nil
	}
	count := uint64(len(vertices))
	size, err := checked.Mul(count, 4, "LevelsOf vertex ids (4 bytes each)")
	if err != nil {
		return nil, err
	}
	if err := s.growAnswers(size, size, 0); err != nil {
		return nil, err
	}
	if err := s.x.UploadAt(s.ans.in, 0, bytesOf(vertices)); err != nil {
		return nil, err
	}
	p := GatherParams[executor.Buffer]{Level: s.buf.level, Idx: s.ans.in, Out: s.ans.out, N: uint64(s.g.NumVertices()), Count: count}
	if _, err := s.x.Launch(s.k.gather, answerLaunch(s.x, count, 1), kernelabi.MustArgs(p)...); err != nil {
		return nil, err
	}
	return download[int32](s.x, s.ans.out, count)
}

// LevelCounts returns counts[l], the number of vertices at level l from
// the session's last traversal, for every l below levels (pass Run.Levels,
// the largest level + 1, for all of them; a smaller bound counts the
// levels below it). They are counted on the device: only the counts cross
// the bus. levels must be between 1 and the vertex count (no BFS has more
// levels), checked before anything is allocated or launched. The counts'
// device buffer grows on demand and stays with the session until Close.
func (s *Session) LevelCounts(levels int) ([]uint64, error) {
	if err := s.checkRan("LevelCounts"); err != nil {
		return nil, err
	}
	n := s.g.NumVertices()
	if levels <= 0 || levels > n {
		return nil, fmt.Errorf("BFS LevelCounts levels = %d over %s (%d vertices): a BFS has from 1 to as many levels as vertices. Fix: pass Run.Levels, between 1 and %d", levels, s.g.Name, n, n)
	}
	size, err := checked.Mul(uint64(levels), 8, "LevelCounts counts (8 bytes per level)")
	if err != nil {
		return nil, err
	}
	if err := s.growAnswers(0, 0, size); err != nil {
		return nil, err
	}
	args := kernelabi.MustArgs(LevelCountsParams[executor.Buffer]{Level: s.buf.level, Counts: s.ans.counts, N: uint64(n), NLevels: uint64(levels)})
	args[levelCountsArg] = executor.Out(s.ans.counts)
	if _, err := s.x.Launch(s.k.counts, answerLaunch(s.x, uint64(n), 4), args...); err != nil {
		return nil, err
	}
	return download[uint64](s.x, s.ans.counts, uint64(levels))
}

// ReserveAnswers sizes the answer buffers now for LevelsOf of up to
// targets vertices and LevelCounts of up to levels levels (0: none of
// that kind), so that later calls within those sizes allocate no device
// memory: a server reserves once at setup instead of allocating during its
// first queries. The buffers still grow on demand past the reservation;
// Close frees them. Negative sizes are refused before anything is
// allocated.
func (s *Session) ReserveAnswers(targets, levels int) error {
	in, counts, err := answerBytes("BFS ReserveAnswers", targets, 1, levels)
	if err != nil {
		return err
	}
	return s.growAnswers(in, in, counts)
}

// answerBytes is the bytes of an answer reservation (op names it) of
// targets targets and perLevel x levels 8-byte counts: 4 bytes per target
// (as ids and as levels; a multi-source pass's pairs take twice as many).
func answerBytes(op string, targets int, perLevel uint64, levels int) (in, counts uint64, err error) {
	if targets < 0 || levels < 0 {
		return 0, 0, fmt.Errorf("%s targets = %d, levels = %d: a reservation is not negative. Fix: pass 0 or more of each (0: none)", op, targets, levels)
	}
	if in, err = checked.Mul(uint64(targets), 4, op+" targets (4 bytes each)"); err != nil {
		return 0, 0, err
	}
	bins, err := checked.Mul(perLevel, uint64(levels), op+" level counts (roots x levels)")
	if err != nil {
		return 0, 0, err
	}
	counts, err = checked.Mul(bins, 8, op+" level counts (8 bytes each)")
	return in, counts, err
}

// growAnswers grows the session's answer buffers to at least the given
// bytes each (0: as they are).
func (s *Session) growAnswers(in, out, counts uint64) error {
	return s.ans.grow(s.x, in, out, counts)
}

// grow grows each buffer to at least the given bytes (0: as it is).
func (b *answerBuffers) grow(x *executor.Executor, in, out, counts uint64) error {
	bufs := harness.Buffers(b)
	for i, n := range []uint64{in, out, counts} {
		if n == 0 {
			continue
		}
		if err := grow(x, bufs[i], n); err != nil {
			return err
		}
	}
	return nil
}

// download reads the first count little-endian T values of b (whose bytes
// the caller sized with checked arithmetic): the levels (int32) or the
// level counts (uint64) of an answer.
func download[T int32 | uint64](x *executor.Executor, b executor.Buffer, count uint64) ([]T, error) {
	raw, err := x.DownloadRange(b, 0, uint64(unsafe.Sizeof(T(0)))*count)
	if err != nil {
		return nil, err
	}
	return fromBytes[T](raw, count), nil
}
