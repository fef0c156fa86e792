package bfs

import (
	"fmt"
	"unsafe"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/internal/kernelabi"
	"github.com/gpuplan/gpuplan/occupancy"
)

// Emulation emulates the BFS kernels (kernelabi.Emulation): the same
// queues and control words as the CUDA kernels, with warps and blocks
// taken in a random order. A Session over a fake backend with these
// kernels runs every arm, the overflow and rerun paths included.
type Emulation = kernelabi.Emulation

// NewEmulation returns the emulation of every BFS entry point, with a seed
// for its orders.
func NewEmulation(seed uint64) *Emulation { return kernelabi.NewEmulation(seed, fakes) }

// NewFake returns a fake backend for dev with the BFS kernels emulated.
func NewFake(dev occupancy.Device, seed uint64) *executor.Fake {
	return NewEmulation(seed).NewFake(dev)
}

// fakes returns the fake kernels of every BFS entry point, with the
// register and shared-memory use the occupancy model sees (close to what
// ptxas reports for the real kernels).
func fakes(seeds *kernelabi.LaunchSeeds) map[string]kernelabi.Fake {
	e := &emulator{seeds: seeds}
	return map[string]kernelabi.Fake{
		KernelInit:             {Run: kernelabi.Emulate(e.runInit), Regs: 16},
		KernelWaveScan:         {Run: kernelabi.Emulate(e.runScan), Regs: 20},
		KernelInitW64:          {Run: kernelabi.Emulate(e.runInitW64), Regs: 26},
		KernelQueueLevelW64:    {Run: kernelabi.Emulate(e.runQueueLevelW64), Regs: 46, Smem: 16*levelBlockQueueItems + 16},
		KernelDoLevelW64:       {Run: kernelabi.Emulate(e.runDoLevelW64), Regs: 48, Smem: 16*levelBlockQueueItems + 72, MaxThreads: LevelW64MaxThreads},
		KernelQueueLevel:       {Run: kernelabi.Emulate(e.runQueueLevel), Regs: 40, Smem: 8*levelBlockQueueItems + 8},
		KernelDoLevel:          {Run: kernelabi.Emulate(e.runDoLevel), Regs: 48, Smem: 8*levelBlockQueueItems + 32},
		KernelMegakernel:       {Run: e.runMegakernel(false), Regs: 64, Smem: 34000},
		KernelMegakernelNarrow: {Run: e.runMegakernel(false), Regs: 96, Smem: 34000, MaxThreads: MegakernelNarrowThreads},
		KernelMegakernelAsync:  {Run: e.runMegakernel(true), Regs: 110, Smem: 36000, MaxThreads: MegakernelNarrowThreads},
		KernelBarrierOnly:      {Regs: 16, Smem: 8},
		KernelCopy:             {Run: kernelabi.Emulate(kernelabi.EmulateCopy), Regs: 16},
		KernelMSInit:           {Run: kernelabi.Emulate(e.runMSInit), Regs: 25},
		KernelMSLevel:          {Run: kernelabi.Emulate(e.runMSLevel), Regs: 40, Smem: 4*msListCap + 24},
		KernelMSFinish:         {Run: kernelabi.Emulate(e.runMSFinish), Regs: 25, Smem: 24},
		// The answer kernels' registers and shared memory are ptxas's
		// (bfs.resources; TestAnswerKernelsResources holds them equal).
		KernelGather:        {Run: kernelabi.Emulate(e.runGather), Regs: 12},
		KernelLevelCounts:   {Run: kernelabi.Emulate(e.runLevelCounts), Regs: 18, Smem: 4 * CountSharedBins},
		KernelMSGather:      {Run: kernelabi.Emulate(e.runMSGather), Regs: 30},
		KernelMSLevelCounts: {Run: kernelabi.Emulate(e.runMSLevelCounts), Regs: 80, Smem: 4 * CountSharedBins},
	}
}

// memory maps the kernels' buffers: n vertices (the targets' length is
// read from the offsets), queues of qcap items. Zero pointers are skipped.
func memory(l *executor.FakeLaunch, offsets, targets, level, q0, q1, ctl executor.DevPtr, n, qcap uint64) (emuMemory, error) {
	return memoryDO(l, offsets, targets, level, q0, q1, 0, 0, ctl, 0, n, qcap, 0)
}

// memoryDO is memory with the visited bitmaps and the decision log of
// logCap entries (zero offsets skip the targets too).
func memoryDO(l *executor.FakeLaunch, offsets, targets, level, q0, q1, vis0, vis1, ctl, log executor.DevPtr, n, qcap, logCap uint64) (emuMemory, error) {
	var m emuMemory
	var err error
	if offsets == 0 {
		targets = 0
	} else if m.offsets, err = kernelabi.View[uint32](l, offsets, n+1); err != nil {
		return m, err
	}
	if targets != 0 {
		if m.targets, err = kernelabi.View[int32](l, targets, max(1, uint64(m.offsets[n]))); err != nil {
			return m, err
		}
	}
	if m.level, err = kernelabi.View[int32](l, level, n); err != nil {
		return m, err
	}
	if m.q, m.qlab, err = mapQueues[item](l, q0, q1, qcap); err != nil {
		return m, err
	}
	for i, v := range []executor.DevPtr{vis0, vis1} {
		if v == 0 {
			continue
		}
		if m.vis[i], err = kernelabi.View[uint32](l, v, (n+31)/32); err != nil {
			return m, err
		}
	}
	if log != 0 {
		if m.log, err = kernelabi.View[uint32](l, log, 4*logCap); err != nil {
			return m, err
		}
	}
	m.ctl, err = kernelabi.View[uint32](l, ctl, CtlWords)
	return m, err
}

// mapQueues maps the two queues of qcap items of type T, each followed by
// its qcap 32-bit labels (a zero pointer is skipped).
func mapQueues[T any](l *executor.FakeLaunch, q0, q1 executor.DevPtr, qcap uint64) (items [2][]T, labels [2][]uint32, err error) {
	size := uint64(unsafe.Sizeof(*new(T)))
	for i, q := range []executor.DevPtr{q0, q1} {
		if q == 0 {
			continue
		}
		if items[i], err = kernelabi.View[T](l, q, qcap); err != nil {
			return items, labels, err
		}
		if labels[i], err = kernelabi.View[uint32](l, q+executor.DevPtr(size*qcap), qcap); err != nil {
			return items, labels, err
		}
	}
	return items, labels, nil
}

// grid returns a launch's warps and warps per block.
func grid(l *executor.FakeLaunch) (nwarps, perBlock uint32) {
	c := l.Config
	threads := c.Block[0] * c.Block[1] * c.Block[2]
	return c.Grid[0] * c.Grid[1] * c.Grid[2] * ((threads + 31) / 32), (threads + 31) / 32
}

// mapper maps a launch's buffers (memoryDO's arguments) into the 32-bit
// memory the emulation runs on, and returns what writes that back into
// the launch's layout after the run: memoryDO itself for the 32-bit
// kernels (nothing to write back), the narrowed copy of the 64-bit ones'
// (wideMapper).
type mapper func(l *executor.FakeLaunch, offsets, targets, level, q0, q1, vis0, vis1, ctl, log executor.DevPtr, n, qcap, logCap uint64) (emuMemory, func(), error)

// narrowMapper is the 32-bit kernels' mapper.
func narrowMapper(l *executor.FakeLaunch, offsets, targets, level, q0, q1, vis0, vis1, ctl, log executor.DevPtr, n, qcap, logCap uint64) (emuMemory, func(), error) {
	m, err := memoryDO(l, offsets, targets, level, q0, q1, vis0, vis1, ctl, log, n, qcap, logCap)
	return m, func() {}, err
}

func (e *emulator) runInit(l *executor.FakeLaunch, p InitParams[executor.DevPtr]) error {
	return e.initWith(l, KernelInit, narrowMapper, p)
}

// initWith emulates the init kernel named name over memory mapped by mem.
func (e *emulator) initWith(l *executor.FakeLaunch, name string, mem mapper, p InitParams[executor.DevPtr]) error {
	if p.Root >= p.N {
		return fmt.Errorf("%s: root %d of %d vertices", name, p.Root, p.N)
	}
	m, done, err := mem(l, p.Offsets, 0, p.Level, p.Q0, 0, p.Vis, 0, p.Ctl, 0, p.N, p.QCap, 0)
	if err != nil {
		return err
	}
	newEmuDevice(m, uint32(p.Chunk), uint32(p.QCap), 1, 1, 1, 0).init(uint32(p.Root))
	done()
	return nil
}

// oneLevel reports whether a per-level launch covers one level, its split
// phase range one phase; when not, it flags MisusePhases, as the kernels
// do, and the launch does nothing else.
func oneLevel(l *executor.FakeLaunch, ctl executor.DevPtr, begin, end uint64) (bool, error) {
	words, err := kernelabi.View[uint32](l, ctl, CtlWords)
	if err != nil || end == begin+1 {
		return err == nil, err
	}
	words[CtlResult+ResultMisuse] = MisusePhases
	return false, nil
}

// emulator is what the BFS kernels' emulations share: the emulation's
// launch seeds.
type emulator struct {
	seeds *kernelabi.LaunchSeeds
}

// device returns the emulated device of a launch over m, with blocks
// staging blockItems queue items, in the launch's own order.
func (e *emulator) device(l *executor.FakeLaunch, m emuMemory, chunk, qcap uint64, blockItems uint32) *emuDevice {
	nwarps, perBlock := grid(l)
	return newEmuDevice(m, uint32(chunk), uint32(qcap), nwarps, perBlock, blockItems, e.seeds.Next())
}

func (e *emulator) runQueueLevel(l *executor.FakeLaunch, p QueueLevelParams[executor.DevPtr]) error {
	return e.queueLevelWith(l, narrowMapper, p)
}

// queueLevelWith emulates a queue level over memory mapped by mem.
func (e *emulator) queueLevelWith(l *executor.FakeLaunch, mem mapper, p QueueLevelParams[executor.DevPtr]) error {
	if ok, err := oneLevel(l, p.Ctl, p.PhaseBegin, p.PhaseEnd); !ok {
		return err
	}
	n, err := vertices(l, p.Level, p.Offsets)
	if err != nil {
		return err
	}
	m, done, err := mem(l, p.Offsets, p.Targets, p.Level, p.Q0, p.Q1, 0, 0, p.Ctl, 0, n, p.QCap, 0)
	if err != nil {
		return err
	}
	e.device(l, m, p.Chunk, p.QCap, levelBlockQueueItems).queueLevel(uint32(p.DepthBase + p.PhaseBegin))
	done()
	return nil
}

// traversal maps the memory of a direction-optimizing level or megakernel
// launch, with a decision log of logCap entries.
func traversal(l *executor.FakeLaunch, p TraversalParams[executor.DevPtr], logCap uint64) (emuMemory, error) {
	return memoryDO(l, p.Offsets, p.Targets, p.Level, p.Q0, p.Q1, p.Vis0, p.Vis1, p.Ctl, p.Log, p.N, p.QCap, logCap)
}

func (e *emulator) runDoLevel(l *executor.FakeLaunch, p DoLevelParams[executor.DevPtr]) error {
	return e.doLevelWith(l, KernelDoLevel, narrowMapper, p)
}

// doLevelWith emulates the direction-optimizing level named name over
// memory mapped by mem.
func (e *emulator) doLevelWith(l *executor.FakeLaunch, name string, mem mapper, p DoLevelParams[executor.DevPtr]) error {
	if ok, err := oneLevel(l, p.Ctl, p.PhaseBegin, p.PhaseEnd); !ok {
		return err
	}
	if p.LogCap < 2 || p.Direction > DirBottomUp {
		return fmt.Errorf("%s: log of %d entries, direction %d", name, p.LogCap, p.Direction)
	}
	t := p.TraversalParams
	m, done, err := mem(l, t.Offsets, t.Targets, t.Level, t.Q0, t.Q1, t.Vis0, t.Vis1, t.Ctl, t.Log, t.N, t.QCap, p.LogCap)
	if err != nil {
		return err
	}
	e.device(l, m, p.Chunk, p.QCap, levelBlockQueueItems).doLevel(uint32(p.DepthBase+p.PhaseBegin), uint32(p.Direction))
	done()
	return nil
}

// runMegakernel returns a megakernel entry point's emulation: the
// asynchronous one's (async), which alone runs direction MegaAsync, or the
// others'.
func (e *emulator) runMegakernel(async bool) func(l *executor.FakeLaunch) error {
	return kernelabi.Emulate(func(l *executor.FakeLaunch, p MegakernelParams[executor.DevPtr]) error { return e.runMega(l, p, async) })
}

func (e *emulator) runMega(l *executor.FakeLaunch, p MegakernelParams[executor.DevPtr], async bool) error {
	m, err := traversal(l, p.TraversalParams, max(p.LogCap, 1))
	if err != nil {
		return err
	}
	switch {
	case uint64(l.Config.Grid[0])*uint64(l.Config.Grid[1])*uint64(l.Config.Grid[2]) > MaxMegakernelBlocks:
		m.ctl[CtlResult+ResultMisuse] = MisuseGrid
		return nil
	case p.Direction == MegaAsync && !async:
		m.ctl[CtlResult+ResultMisuse] = MisuseAsync
		return nil
	}
	d := e.device(l, m, p.Chunk, p.QCap, megaBlockQueueItems)
	edges := keepBudget(p.Keep)
	d.setKeep(edges/keepEdgesPerItem, edges, keepLow, keepItemEdges)
	if p.Direction == MegaAsync {
		d.megaAsync(uint32(min(max(p.Ahead, 2), arriveMask)) - 1)
	} else {
		d.mega(megaRun{maxSteps: uint32(min(p.MaxSteps, 1<<32-1)), ahead: uint32(min(max(p.Ahead, 1), arriveMask)),
			adapt: p.Adapt != 0, auto: p.Direction == MegaAuto})
	}
	*(*uint64)(unsafe.Pointer(&m.ctl[CtlResult+ResultRelabels])) += uint64(d.relabels)
	return nil
}

func (e *emulator) runScan(l *executor.FakeLaunch, p ScanParams[executor.DevPtr]) error {
	m, err := memory(l, p.Offsets, p.Targets, p.Level, 0, 0, p.Ctl, p.N, 0)
	if err != nil {
		return err
	}
	d := int32(p.Depth)
	m.ctl[CtlScanChangedWord(int(p.Depth+1))] = 0
	var changed uint32
	for v := range m.level {
		if m.level[v] != d {
			continue
		}
		for _, w := range m.targets[m.offsets[v]:m.offsets[v+1]] {
			if m.level[w] == -1 {
				m.level[w], changed = d+1, 1
			}
		}
	}
	if changed != 0 {
		m.ctl[CtlScanChangedWord(int(p.Depth))] = 1
	}
	return nil
}

// vertices finds the vertex count of a launch that does not pass it: the
// level array holds 4 bytes per vertex, and the offsets one more word.
func vertices(l *executor.FakeLaunch, level, offsets executor.DevPtr) (uint64, error) {
	n, err := l.Len(level)
	if err != nil {
		return 0, err
	}
	if m, err := l.Len(offsets); err != nil || m < n+4 {
		return 0, fmt.Errorf("offsets buffer of %d bytes is short for %d vertices", m, n/4)
	}
	return n / 4, nil
}
