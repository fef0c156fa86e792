package bfs

import (
	"fmt"
	"unsafe"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/frontier"
)

// OffsetWidth is the size in bytes of the CSR offsets a session's kernels
// take: Offsets32 for graphs of at most frontier.MaxOffsets32Entries
// adjacency entries, Offsets64 (the *_w64 entry points) for larger ones.
// It also sizes a frontier-queue item and a decision log entry.
type OffsetWidth int

// The offset widths.
const (
	// Offsets32 is the 32-bit kernels' width: 4-byte offsets, 12-byte
	// queue items (QueueItemBytes), 16-byte log entries (LogEntryBytes).
	Offsets32 OffsetWidth = 4
	// Offsets64 is the 64-bit kernels' width: 8-byte offsets, 20-byte
	// queue items (QueueItemBytesW64), 32-byte log entries
	// (LogEntryBytesW64), the frontier's edges in CtlEdgesW64.
	Offsets64 OffsetWidth = 8
)

// PlanOffsetWidth returns the offset width of a session over g: Offsets64
// when g has more adjacency entries than 32-bit offsets hold, or when wide
// asks for it (Config.WideOffsets), else Offsets32, whose kernels move
// less data.
func PlanOffsetWidth(g *frontier.CSR, wide bool) OffsetWidth {
	if wide || g.CheckOffsets32() != nil {
		return Offsets64
	}
	return Offsets32
}

// String names the width.
func (w OffsetWidth) String() string { return fmt.Sprintf("%d-bit", 8*int(w)) }

// Wide reports whether w is Offsets64.
func (w OffsetWidth) Wide() bool { return w == Offsets64 }

// QueueItemBytes is the device size of one frontier-queue item and its
// label at this width.
func (w OffsetWidth) QueueItemBytes() uint64 {
	if w.Wide() {
		return QueueItemBytesW64
	}
	return QueueItemBytes
}

// LogEntryBytes is the size of one decision log entry at this width.
func (w OffsetWidth) LogEntryBytes() uint64 {
	if w.Wide() {
		return LogEntryBytesW64
	}
	return LogEntryBytes
}

// ArmFits reports, as an error naming the arm and the graph and ending in a
// fix, whether the session runs arm: a session of 64-bit offsets runs the
// host loop and the device loop, whose kernels have 64-bit entry points,
// and refuses the megakernel, the scan wave and multi-source passes.
func (s *Session) ArmFits(arm Arm) error {
	if !s.width.Wide() || arm == ArmHostLoop || arm == ArmDeviceLoop {
		return nil
	}
	return s.narrowOnly(string(arm))
}

// narrowOnly is the error of what only the 32-bit kernels run.
func (s *Session) narrowOnly(what string) error {
	return fmt.Errorf("BFS over %s: %s runs only with 32-bit offsets, and this session's are 64-bit (%d adjacency entries, at most %d for 32-bit offsets, or Config.WideOffsets). Fix: use the %s or %s arm",
		s.g.Name, what, s.g.NumEdgeEntries(), uint64(frontier.MaxOffsets32Entries), ArmHostLoop, ArmDeviceLoop)
}

// checkLevelThreads refuses per-level blocks larger than the 64-bit
// direction-optimizing level launches (its launch bounds,
// LevelW64MaxThreads) in a session of 64-bit offsets.
func (s *Session) checkLevelThreads() error {
	if !s.width.Wide() || s.cfg.LevelThreads <= LevelW64MaxThreads {
		return nil
	}
	return fmt.Errorf("BFS config LevelThreads = %d over %s: the 64-bit level kernels (%d adjacency entries, or Config.WideOffsets) launch blocks of at most %d threads. Fix: set LevelThreads to %d or less",
		s.cfg.LevelThreads, s.g.Name, s.g.NumEdgeEntries(), LevelW64MaxThreads, LevelW64MaxThreads)
}

// OffsetWidth returns the width of the session's offsets.
func (s *Session) OffsetWidth() OffsetWidth { return s.width }

// w64 returns p's parameters for KernelInitW64: the same fields, whose C
// types alone (the struct tags) differ.
func (p InitParams[P]) w64() InitW64Params[P] { return InitW64Params[P](p) }

// w64 returns p's parameters for KernelQueueLevelW64 (the same fields).
func (p QueueLevelParams[P]) w64() QueueLevelW64Params[P] { return QueueLevelW64Params[P](p) }

// w64 returns p's parameters for KernelDoLevelW64.
func (p DoLevelParams[P]) w64() DoLevelW64Params[P] {
	t := p.TraversalParams
	return DoLevelW64Params[P]{Offsets: t.Offsets, Targets: t.Targets, Level: t.Level, Q0: t.Q0, Q1: t.Q1, Vis0: t.Vis0,
		Vis1: t.Vis1, Ctl: t.Ctl, Log: t.Log, N: t.N, Chunk: t.Chunk, QCap: t.QCap, LowDegree: t.LowDegree, LogCap: p.LogCap,
		Direction: p.Direction, DepthBase: p.DepthBase, PhaseBegin: p.PhaseBegin, PhaseEnd: p.PhaseEnd}
}

// narrow is w64's inverse, for the emulation.
func (p InitW64Params[P]) narrow() InitParams[P] { return InitParams[P](p) }

// narrow is w64's inverse, for the emulation.
func (p QueueLevelW64Params[P]) narrow() QueueLevelParams[P] { return QueueLevelParams[P](p) }

// narrow is w64's inverse, for the emulation.
func (p DoLevelW64Params[P]) narrow() DoLevelParams[P] {
	return DoLevelParams[P]{TraversalParams: TraversalParams[P]{Offsets: p.Offsets, Targets: p.Targets, Level: p.Level,
		Q0: p.Q0, Q1: p.Q1, Vis0: p.Vis0, Vis1: p.Vis1, Ctl: p.Ctl, Log: p.Log, N: p.N, Chunk: p.Chunk, QCap: p.QCap,
		LowDegree: p.LowDegree}, LogCap: p.LogCap, Direction: p.Direction, DepthBase: p.DepthBase, PhaseBegin: p.PhaseBegin,
		PhaseEnd: p.PhaseEnd}
}

// initArgs, levelArgs and doLevelArgs are the kernels' arguments at the
// session's width.
func (s *Session) initArgs(p InitParams[executor.Buffer]) any {
	if s.width.Wide() {
		return p.w64()
	}
	return p
}

func (s *Session) levelArgs(p QueueLevelParams[executor.Buffer]) any {
	if s.width.Wide() {
		return p.w64()
	}
	return p
}

func (s *Session) doLevelArgs(p DoLevelParams[executor.Buffer]) any {
	if s.width.Wide() {
		return p.w64()
	}
	return p
}

// bytesOf64 views 8-byte values as bytes, for an upload: the slice's own
// memory, not a copy.
func bytesOf64(s []uint64) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), 8*len(s))
}
