package bfs

import (
	"fmt"
	"unsafe"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/internal/kernelabi"
	"github.com/gpuplan/gpuplan/occupancy"
)

// Emulation runs the BFS kernels in Go on the executor's CPU fake backend,
// step for step as the CUDA kernels do: the same memory layout, queues,
// control words and results, with warps and blocks taken in a random order
// (seeded) to stand in for the GPU's concurrency. A Session over a fake
// backend with these kernels runs every arm, the overflow and rerun paths
// included, without a GPU.
type Emulation struct {
	seed     uint64
	launches uint64
}

// NewEmulation returns the emulation with a seed for its orders.
func NewEmulation(seed uint64) *Emulation { return &Emulation{seed: seed} }

// Kernels returns the fake kernels of every BFS entry point, with the
// register and shared-memory use the occupancy model sees (close to what
// ptxas reports for the real kernels).
func (e *Emulation) Kernels() map[string]executor.FakeKernel {
	k := func(run func(*executor.FakeLaunch) error, regs, smem int) executor.FakeKernel {
		return executor.FakeKernel{Run: run, Attrs: executor.FuncAttributes{NumRegs: regs, StaticSharedBytes: smem, MaxThreadsPerBlock: 1024}}
	}
	narrow := k(e.runMegakernel(false), 96, 34000)
	narrow.Attrs.MaxThreadsPerBlock = MegakernelNarrowThreads
	async := k(e.runMegakernel(true), 110, 36000)
	async.Attrs.MaxThreadsPerBlock = MegakernelNarrowThreads
	return map[string]executor.FakeKernel{
		KernelMegakernelNarrow: narrow,
		KernelMegakernelAsync:  async,
		KernelInit:             k(e.runInit, 16, 0),
		KernelWaveScan:         k(e.runScan, 20, 0),
		KernelQueueLevel:       k(e.runQueueLevel, 40, 8*levelBlockQueueItems+8),
		KernelDoLevel:          k(e.runDoLevel, 48, 8*levelBlockQueueItems+32),
		KernelMegakernel:       k(e.runMegakernel(false), 64, 34000),
		KernelBarrierOnly:      k(func(*executor.FakeLaunch) error { return nil }, 16, 8),
		KernelCopy:             k(e.runCopy, 16, 0),
		KernelMSInit:           k(e.runMSInit, 25, 0),
		KernelMSLevel:          k(e.runMSLevel, 40, 4*msListCap+24),
		KernelMSFinish:         k(e.runMSFinish, 25, 24),
	}
}

// NewFake returns a fake backend for dev with the BFS kernels emulated.
func NewFake(dev occupancy.Device, seed uint64) *executor.Fake {
	return executor.NewFake(executor.FakeConfig{Device: dev, Kernels: NewEmulation(seed).Kernels()})
}

// nextSeed gives each launch its own order.
func (e *Emulation) nextSeed() uint64 {
	e.launches++
	return e.seed*0x9e3779b97f4a7c15 + e.launches
}

// view returns n values of T at ptr in fake device memory.
func view[T any](l *executor.FakeLaunch, ptr executor.DevPtr, n uint64) ([]T, error) {
	var z T
	size := uint64(unsafe.Sizeof(z))
	b, err := l.Bytes(ptr, n*size)
	if err != nil || n == 0 {
		return nil, err
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), n), nil
}

// memory maps the kernels' buffers: n vertices (the targets' length is
// read from the offsets), queues of qcap items. Zero pointers are skipped.
func memory(l *executor.FakeLaunch, offsets, targets, level, q0, q1, ctl executor.DevPtr, n, qcap uint64) (emuMemory, error) {
	return memoryDO(l, offsets, targets, level, q0, q1, 0, 0, ctl, 0, n, qcap, 0)
}

// memoryDO is memory with the visited bitmaps and the decision log of
// logCap entries.
func memoryDO(l *executor.FakeLaunch, offsets, targets, level, q0, q1, vis0, vis1, ctl, log executor.DevPtr, n, qcap, logCap uint64) (emuMemory, error) {
	var m emuMemory
	var err error
	if m.offsets, err = view[uint32](l, offsets, n+1); err != nil {
		return m, err
	}
	if targets != 0 {
		if m.targets, err = view[int32](l, targets, max(1, uint64(m.offsets[n]))); err != nil {
			return m, err
		}
	}
	if m.level, err = view[int32](l, level, n); err != nil {
		return m, err
	}
	for i, q := range []executor.DevPtr{q0, q1} {
		if q == 0 {
			continue
		}
		if m.q[i], err = view[item](l, q, qcap); err != nil {
			return m, err
		}
		if m.qlab[i], err = view[uint32](l, q+executor.DevPtr(8*qcap), qcap); err != nil {
			return m, err
		}
	}
	for i, v := range []executor.DevPtr{vis0, vis1} {
		if v == 0 {
			continue
		}
		if m.vis[i], err = view[uint32](l, v, (n+31)/32); err != nil {
			return m, err
		}
	}
	if log != 0 {
		if m.log, err = view[uint32](l, log, 4*logCap); err != nil {
			return m, err
		}
	}
	m.ctl, err = view[uint32](l, ctl, CtlWords)
	return m, err
}

// grid returns a launch's warps and warps per block.
func grid(l *executor.FakeLaunch) (nwarps, perBlock uint32) {
	c := l.Config
	threads := c.Block[0] * c.Block[1] * c.Block[2]
	return c.Grid[0] * c.Grid[1] * c.Grid[2] * ((threads + 31) / 32), (threads + 31) / 32
}

func (e *Emulation) runInit(l *executor.FakeLaunch) error {
	var p InitParams[executor.DevPtr]
	if err := kernelabi.Decode(l.Args, &p); err != nil {
		return err
	}
	if p.Root >= p.N {
		return fmt.Errorf("%s: root %d of %d vertices", KernelInit, p.Root, p.N)
	}
	m, err := memoryDO(l, p.Offsets, 0, p.Level, p.Q0, 0, p.Vis, 0, p.Ctl, 0, p.N, p.QCap, 0)
	if err != nil {
		return err
	}
	d := newEmuDevice(m, uint32(p.Chunk), uint32(p.QCap), 1, 1, 1, 0)
	d.init(uint32(p.Root))
	return nil
}

func (e *Emulation) runQueueLevel(l *executor.FakeLaunch) error {
	var p QueueLevelParams[executor.DevPtr]
	if err := kernelabi.Decode(l.Args, &p); err != nil {
		return err
	}
	ctl, err := view[uint32](l, p.Ctl, CtlWords)
	if err != nil {
		return err
	}
	if p.PhaseEnd != p.PhaseBegin+1 {
		ctl[CtlResult+ResultMisuse] = MisusePhases
		return nil
	}
	n, err := vertices(l, p.Level, p.Offsets)
	if err != nil {
		return err
	}
	m, err := memory(l, p.Offsets, p.Targets, p.Level, p.Q0, p.Q1, p.Ctl, n, p.QCap)
	if err != nil {
		return err
	}
	nwarps, perBlock := grid(l)
	d := newEmuDevice(m, uint32(p.Chunk), uint32(p.QCap), nwarps, perBlock, levelBlockQueueItems, e.nextSeed())
	d.queueLevel(uint32(p.DepthBase + p.PhaseBegin))
	return nil
}

func (e *Emulation) runDoLevel(l *executor.FakeLaunch) error {
	var p DoLevelParams[executor.DevPtr]
	if err := kernelabi.Decode(l.Args, &p); err != nil {
		return err
	}
	ctl, err := view[uint32](l, p.Ctl, CtlWords)
	if err != nil {
		return err
	}
	if p.PhaseEnd != p.PhaseBegin+1 {
		ctl[CtlResult+ResultMisuse] = MisusePhases
		return nil
	}
	if p.LogCap < 2 || p.Direction > DirBottomUp {
		return fmt.Errorf("%s: log of %d entries, direction %d", KernelDoLevel, p.LogCap, p.Direction)
	}
	m, err := memoryDO(l, p.Offsets, p.Targets, p.Level, p.Q0, p.Q1, p.Vis0, p.Vis1, p.Ctl, p.Log, p.N, p.QCap, p.LogCap)
	if err != nil {
		return err
	}
	nwarps, perBlock := grid(l)
	d := newEmuDevice(m, uint32(p.Chunk), uint32(p.QCap), nwarps, perBlock, levelBlockQueueItems, e.nextSeed())
	d.doLevel(uint32(p.DepthBase+p.PhaseBegin), uint32(p.Direction))
	return nil
}

// runMegakernel returns a megakernel entry point's emulation: the
// asynchronous one's (async), which alone runs direction MegaAsync, or the
// others'.
func (e *Emulation) runMegakernel(async bool) func(l *executor.FakeLaunch) error {
	return func(l *executor.FakeLaunch) error { return e.runMega(l, async) }
}

func (e *Emulation) runMega(l *executor.FakeLaunch, async bool) error {
	var p MegakernelParams[executor.DevPtr]
	if err := kernelabi.Decode(l.Args, &p); err != nil {
		return err
	}
	m, err := memoryDO(l, p.Offsets, p.Targets, p.Level, p.Q0, p.Q1, p.Vis0, p.Vis1, p.Ctl, p.Log, p.N, p.QCap, max(p.LogCap, 1))
	if err != nil {
		return err
	}
	if uint64(l.Config.Grid[0])*uint64(l.Config.Grid[1])*uint64(l.Config.Grid[2]) > MaxMegakernelBlocks {
		m.ctl[CtlResult+ResultMisuse] = MisuseGrid
		return nil
	}
	if p.Direction == MegaAsync && !async {
		m.ctl[CtlResult+ResultMisuse] = MisuseAsync
		return nil
	}
	nwarps, perBlock := grid(l)
	d := newEmuDevice(m, uint32(p.Chunk), uint32(p.QCap), nwarps, perBlock, megaBlockQueueItems, e.nextSeed())
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

func (e *Emulation) runScan(l *executor.FakeLaunch) error {
	var p ScanParams[executor.DevPtr]
	if err := kernelabi.Decode(l.Args, &p); err != nil {
		return err
	}
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

func (e *Emulation) runCopy(l *executor.FakeLaunch) error {
	var p CopyParams[executor.DevPtr]
	if err := kernelabi.Decode(l.Args, &p); err != nil {
		return err
	}
	src, err := l.Bytes(p.Src, 16*p.N16)
	if err != nil {
		return err
	}
	dst, err := l.Bytes(p.Dst, 16*p.N16)
	if err != nil {
		return err
	}
	copy(dst, src)
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
