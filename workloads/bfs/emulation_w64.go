package bfs

import (
	"fmt"
	"math"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/internal/kernelabi"
)

// The 64-bit entry points are emulated by the 32-bit emulation over a
// narrowed copy of their memory, written back after the launch: the
// offsets narrowed to uint32, the 16-byte queue items to 8-byte ones, the
// 32-byte log entries to 16-byte ones and each count line's CtlEdgesW64
// word folded into the low half of its CtlCounts word. The emulation holds
// graphs that fit 32-bit offsets (a fake device holds no larger one), so
// the narrowing is exact, and it checks that: what does not narrow is an
// error. What it tests is the 64-bit layout the host reads and writes.

// wideItem is a 64-bit kernel's queue item: an edge range [b, e).
type wideItem struct{ b, e uint64 }

// wideMemory is a 64-bit launch's device memory and the narrowed copy the
// 32-bit emulation runs on.
type wideMemory struct {
	m    emuMemory
	q    [2][]wideItem
	log  []uint64
	name string
}

// mapWide maps a 64-bit launch's buffers as memoryDO maps a 32-bit one's,
// into narrowed copies where the layouts differ (zero pointers are
// skipped).
func mapWide(l *executor.FakeLaunch, name string, offsets, targets, level, q0, q1, vis0, vis1, ctl, log executor.DevPtr, n, qcap, logCap uint64) (*wideMemory, error) {
	w := &wideMemory{name: name}
	var err error
	if w.m.level, err = kernelabi.View[int32](l, level, n); err != nil {
		return nil, err
	}
	if w.m.ctl, err = kernelabi.View[uint32](l, ctl, CtlWords); err != nil {
		return nil, err
	}
	for i, v := range []executor.DevPtr{vis0, vis1} {
		if v == 0 {
			continue
		}
		if w.m.vis[i], err = kernelabi.View[uint32](l, v, (n+31)/32); err != nil {
			return nil, err
		}
	}
	if err := w.mapGraph(l, offsets, targets, n); err != nil {
		return nil, err
	}
	for i, q := range []executor.DevPtr{q0, q1} {
		if q == 0 {
			continue
		}
		if w.q[i], err = kernelabi.View[wideItem](l, q, qcap); err != nil {
			return nil, err
		}
		if w.m.qlab[i], err = kernelabi.View[uint32](l, q+executor.DevPtr(16*qcap), qcap); err != nil {
			return nil, err
		}
		w.m.q[i] = narrowItems(w.q[i])
	}
	if log != 0 {
		if w.log, err = kernelabi.View[uint64](l, log, 4*logCap); err != nil {
			return nil, err
		}
		w.m.log = narrowLog(w.log)
	}
	return w, w.foldCounts()
}

// mapGraph maps the targets and copies the offsets, narrowed.
func (w *wideMemory) mapGraph(l *executor.FakeLaunch, offsets, targets executor.DevPtr, n uint64) error {
	wide, err := kernelabi.View[uint64](l, offsets, n+1)
	if err != nil {
		return err
	}
	w.m.offsets = make([]uint32, len(wide))
	for i, o := range wide {
		if o > math.MaxUint32 {
			return fmt.Errorf("%s: offset %d of %d entries past what the emulation narrows", w.name, i, o)
		}
		w.m.offsets[i] = uint32(o)
	}
	if targets != 0 {
		w.m.targets, err = kernelabi.View[int32](l, targets, max(1, uint64(w.m.offsets[n])))
	}
	return err
}

// narrowItems copies 64-bit queue items into 32-bit ones (an item of the
// emulation lies within its graph's narrowed offsets).
func narrowItems(wide []wideItem) []item {
	out := make([]item, len(wide))
	for i, it := range wide {
		out[i] = item{b: uint32(it.b), e: uint32(it.e)}
	}
	return out
}

// narrowLog copies 32-byte log entries (the first word with the vertices
// above it, the edges, the unexplored edges, 0) into 16-byte ones.
func narrowLog(wide []uint64) []uint32 {
	out := make([]uint32, len(wide))
	for i := 0; i+4 <= len(wide); i += 4 {
		out[i], out[i+1] = uint32(wide[i]), uint32(wide[i]>>32)
		out[i+2], out[i+3] = uint32(wide[i+1]), uint32(wide[i+2])
	}
	return out
}

// foldCounts folds each count line's 64-bit edges into the low half of its
// frontier count, as the 32-bit kernels keep them.
func (w *wideMemory) foldCounts() error {
	for slot := range 3 {
		line := CtlCountWord(slot)
		edges := uint64(w.m.ctl[line+CtlEdgesW64]) | uint64(w.m.ctl[line+CtlEdgesW64+1])<<32
		if edges > math.MaxUint32 || w.m.ctl[line+CtlCounts] != 0 {
			return fmt.Errorf("%s: count line %d holds %d edges and low word %d, past what the emulation narrows", w.name, line, edges, w.m.ctl[line+CtlCounts])
		}
		w.m.ctl[line+CtlCounts] = uint32(edges)
		w.m.ctl[line+CtlEdgesW64], w.m.ctl[line+CtlEdgesW64+1] = 0, 0
	}
	return nil
}

// writeBack writes the narrowed copy's queues, log and counts back in the
// 64-bit layout.
func (w *wideMemory) writeBack() {
	for i := range w.q {
		for j, it := range w.m.q[i] {
			w.q[i][j] = wideItem{b: uint64(it.b), e: uint64(it.e)}
		}
	}
	for i := 0; i+4 <= len(w.log); i += 4 {
		n := w.m.log[i:]
		w.log[i], w.log[i+1], w.log[i+2], w.log[i+3] = uint64(n[0])|uint64(n[1])<<32, uint64(n[2]), uint64(n[3]), 0
	}
	for slot := range 3 {
		line := CtlCountWord(slot)
		w.m.ctl[line+CtlEdgesW64], w.m.ctl[line+CtlEdgesW64+1] = w.m.ctl[line+CtlCounts], 0
		w.m.ctl[line+CtlCounts] = 0
	}
}

func (e *emulator) runInitW64(l *executor.FakeLaunch, pw InitW64Params[executor.DevPtr]) error {
	p := pw.narrow()
	if p.Root >= p.N {
		return fmt.Errorf("%s: root %d of %d vertices", KernelInitW64, p.Root, p.N)
	}
	w, err := mapWide(l, KernelInitW64, p.Offsets, 0, p.Level, p.Q0, 0, p.Vis, 0, p.Ctl, 0, p.N, p.QCap, 0)
	if err != nil {
		return err
	}
	newEmuDevice(w.m, uint32(p.Chunk), uint32(p.QCap), 1, 1, 1, 0).init(uint32(p.Root))
	w.writeBack()
	return nil
}

func (e *emulator) runQueueLevelW64(l *executor.FakeLaunch, pw QueueLevelW64Params[executor.DevPtr]) error {
	p := pw.narrow()
	if ok, err := oneLevel(l, p.Ctl, p.PhaseBegin, p.PhaseEnd); !ok {
		return err
	}
	n, err := vertices(l, p.Level, p.Offsets)
	if err != nil {
		return err
	}
	w, err := mapWide(l, KernelQueueLevelW64, p.Offsets, p.Targets, p.Level, p.Q0, p.Q1, 0, 0, p.Ctl, 0, n, p.QCap, 0)
	if err != nil {
		return err
	}
	e.device(l, w.m, p.Chunk, p.QCap, levelBlockQueueItems).queueLevel(uint32(p.DepthBase + p.PhaseBegin))
	w.writeBack()
	return nil
}

func (e *emulator) runDoLevelW64(l *executor.FakeLaunch, pw DoLevelW64Params[executor.DevPtr]) error {
	p := pw.narrow()
	if ok, err := oneLevel(l, p.Ctl, p.PhaseBegin, p.PhaseEnd); !ok {
		return err
	}
	if p.LogCap < 2 || p.Direction > DirBottomUp {
		return fmt.Errorf("%s: log of %d entries, direction %d", KernelDoLevelW64, p.LogCap, p.Direction)
	}
	t := p.TraversalParams
	w, err := mapWide(l, KernelDoLevelW64, t.Offsets, t.Targets, t.Level, t.Q0, t.Q1, t.Vis0, t.Vis1, t.Ctl, t.Log, t.N, t.QCap, p.LogCap)
	if err != nil {
		return err
	}
	e.device(l, w.m, p.Chunk, p.QCap, levelBlockQueueItems).doLevel(uint32(p.DepthBase+p.PhaseBegin), uint32(p.Direction))
	w.writeBack()
	return nil
}
