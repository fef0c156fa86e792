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

// wideMapper returns the mapper of the 64-bit kernel named name: mapWide,
// whose narrowed copy is written back after the run.
func wideMapper(name string) mapper {
	return func(l *executor.FakeLaunch, offsets, targets, level, q0, q1, vis0, vis1, ctl, log executor.DevPtr, n, qcap, logCap uint64) (emuMemory, func(), error) {
		w, err := mapWide(l, name, offsets, targets, level, q0, q1, vis0, vis1, ctl, log, n, qcap, logCap)
		if err != nil {
			return emuMemory{}, nil, err
		}
		return w.m, w.writeBack, nil
	}
}

// mapWide maps a 64-bit launch's buffers: the levels, the visited bitmaps
// and the control words as memoryDO maps a 32-bit one's, the rest into
// narrowed copies (zero pointers are skipped).
func mapWide(l *executor.FakeLaunch, name string, offsets, targets, level, q0, q1, vis0, vis1, ctl, log executor.DevPtr, n, qcap, logCap uint64) (*wideMemory, error) {
	w := &wideMemory{name: name}
	var err error
	if w.m, err = memoryDO(l, 0, 0, level, 0, 0, vis0, vis1, ctl, 0, n, qcap, 0); err != nil {
		return nil, err
	}
	if err := w.mapGraph(l, offsets, targets, n); err != nil {
		return nil, err
	}
	if w.q, w.m.qlab, err = mapQueues[wideItem](l, q0, q1, qcap); err != nil {
		return nil, err
	}
	for i, q := range w.q {
		if q != nil {
			w.m.q[i] = narrowItems(q)
		}
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

func (e *emulator) runInitW64(l *executor.FakeLaunch, p InitW64Params[executor.DevPtr]) error {
	return e.initWith(l, KernelInitW64, wideMapper(KernelInitW64), p.narrow())
}

func (e *emulator) runQueueLevelW64(l *executor.FakeLaunch, p QueueLevelW64Params[executor.DevPtr]) error {
	return e.queueLevelWith(l, wideMapper(KernelQueueLevelW64), p.narrow())
}

func (e *emulator) runDoLevelW64(l *executor.FakeLaunch, p DoLevelW64Params[executor.DevPtr]) error {
	return e.doLevelWith(l, KernelDoLevelW64, wideMapper(KernelDoLevelW64), p.narrow())
}
