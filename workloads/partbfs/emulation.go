package partbfs

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"unsafe"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/internal/kernelabi"
	"github.com/gpuplan/gpuplan/occupancy"
)

// Emulation runs the partitioned BFS kernels in Go on the executor's CPU
// fake backend, with the CUDA kernels' memory layout, control words and
// results. The compaction takes the words of a slice in a random order
// (seeded), as the GPU's warps do, so the queues' order varies.
type Emulation struct {
	rng *rand.Rand
}

// NewEmulation returns the emulation with a seed for its orders.
func NewEmulation(seed uint64) *Emulation { return &Emulation{rng: rand.New(rand.NewPCG(seed, 16))} }

// Kernels returns the fake kernels of every entry point, with the
// registers and shared memory ptxas reports for the real ones.
func (e *Emulation) Kernels() map[string]executor.FakeKernel {
	k := func(run func(*executor.FakeLaunch) error, regs, smem int) executor.FakeKernel {
		return executor.FakeKernel{Run: run, Attrs: executor.FuncAttributes{NumRegs: regs, StaticSharedBytes: smem, MaxThreadsPerBlock: 1024}}
	}
	return map[string]executor.FakeKernel{
		KernelInit:     k(e.runInit, 28, 0),
		KernelExpand:   k(e.runExpand, 23, 260),
		KernelCount:    k(e.runCount, 24, 260),
		KernelCompact:  k(e.runCompact, 32, 260),
		KernelApply:    k(e.runApply, 32, 0),
		KernelBottomUp: k(e.runBottomUp, 30, 260),
		KernelCopy:     k(e.runCopy, 12, 0),
	}
}

// NewFake returns a fake backend for dev with the kernels emulated.
func NewFake(dev occupancy.Device, seed uint64) *executor.Fake {
	return executor.NewFake(executor.FakeConfig{Device: dev, Kernels: NewEmulation(seed).Kernels()})
}

// view returns n values of T at ptr in fake device memory.
func view[T any](l *executor.FakeLaunch, ptr executor.DevPtr, n uint64) ([]T, error) {
	var z T
	b, err := l.Bytes(ptr, n*uint64(unsafe.Sizeof(z)))
	if err != nil || n == 0 {
		return nil, err
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), n), nil
}

// badShape mirrors bad_shape: it records MisuseShape and reports true.
func badShape(ctl []uint64, n, s, parts, self uint64) bool {
	if parts == 0 || parts > MaxParts || self >= parts || n > 64*s {
		ctl[CtlMisuse] = MisuseShape
		return true
	}
	return false
}

// graphView is a part's CSR and bounds as the kernels see them.
type graphView struct {
	offsets []uint32
	targets []int32
	bounds  []uint32
}

// graph maps a part's CSR of n vertices (targets may be 0: not needed) and
// its bounds (0: not needed).
func graph(l *executor.FakeLaunch, offsets, targets, bounds executor.DevPtr, n, parts uint64) (graphView, error) {
	var g graphView
	var err error
	if offsets != 0 {
		if g.offsets, err = view[uint32](l, offsets, n+1); err != nil {
			return g, err
		}
	}
	if targets != 0 {
		if g.targets, err = view[int32](l, targets, max(1, uint64(g.offsets[n]))); err != nil {
			return g, err
		}
	}
	if bounds != 0 {
		g.bounds, err = view[uint32](l, bounds, parts+1)
	}
	return g, err
}

// owner mirrors owner: the part holding global vertex v.
func (g graphView) owner(v uint32) uint32 {
	lo, hi := uint32(1), uint32(len(g.bounds)-1)
	for lo < hi {
		mid := (lo + hi) / 2
		if g.bounds[mid] > v {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo - 1
}

// words is the slice words of part e.
func (g graphView) words(e uint32) uint64 { return (uint64(g.bounds[e+1]-g.bounds[e]) + 63) / 64 }

func (e *Emulation) runInit(l *executor.FakeLaunch) error {
	var p InitParams[executor.DevPtr]
	if err := kernelabi.Decode(l.Args, &p); err != nil {
		return err
	}
	ctl, err := view[uint64](l, p.Ctl, CtlWords)
	if err != nil {
		return err
	}
	if p.Parts == 0 || p.Parts > MaxParts || p.N > 64*p.S {
		ctl[CtlMisuse] = MisuseShape
		return nil
	}
	level, err := view[int32](l, p.Level, p.N)
	if err != nil {
		return err
	}
	f0, err1 := view[uint64](l, p.Front0, p.S)
	f1, err2 := view[uint64](l, p.Front1, p.S)
	next, err3 := view[uint64](l, p.Next, p.Parts*p.S)
	counts, err4 := view[uint64](l, p.Counts, p.Parts*(p.Parts+1))
	if err := firstErr(err1, err2, err3, err4); err != nil {
		return err
	}
	for i := range level {
		level[i] = -1
	}
	clear(f0)
	clear(f1)
	clear(next)
	clear(counts)
	clear(ctl)
	if p.Root < p.N {
		level[p.Root] = 0
		f0[p.Root/64] = 1 << (p.Root % 64)
	}
	return nil
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func (e *Emulation) runExpand(l *executor.FakeLaunch) error {
	var p ExpandParams[executor.DevPtr]
	if err := kernelabi.Decode(l.Args, &p); err != nil {
		return err
	}
	ctl, err := view[uint64](l, p.Ctl, CtlWords)
	if err != nil || badShape(ctl, p.N, p.S, p.Parts, p.Self) {
		return err
	}
	g, err := graph(l, p.Offsets, p.Targets, p.Bounds, p.N, p.Parts)
	if err != nil {
		return err
	}
	level, err1 := view[int32](l, p.Level, p.N)
	front, err2 := view[uint64](l, p.Front, p.S)
	next, err3 := view[uint64](l, p.Next, p.Parts*p.S)
	if err := firstErr(err1, err2, err3); err != nil {
		return err
	}
	for w := range (p.N + 63) / 64 {
		for b := front[w]; b != 0; b &= b - 1 {
			u := w*64 + uint64(bits.TrailingZeros64(b))
			for _, v := range g.targets[g.offsets[u]:g.offsets[u+1]] {
				o := g.owner(uint32(v))
				j := uint32(v) - g.bounds[o]
				if uint64(o) == p.Self && level[j] != -1 {
					continue
				}
				next[uint64(o)*p.S+uint64(j/64)] |= 1 << (j % 64)
			}
		}
	}
	return nil
}

func (e *Emulation) runCount(l *executor.FakeLaunch) error {
	var p CountParams[executor.DevPtr]
	if err := kernelabi.Decode(l.Args, &p); err != nil {
		return err
	}
	ctl, err := view[uint64](l, p.Ctl, CtlWords)
	if err != nil || badShape(ctl, 0, p.S, p.Parts, p.Self) {
		return err
	}
	g, err1 := graph(l, 0, 0, p.Bounds, 0, p.Parts)
	next, err2 := view[uint64](l, p.Next, p.Parts*p.S)
	counts, err3 := view[uint64](l, p.Counts, p.Parts)
	if err := firstErr(err1, err2, err3); err != nil {
		return err
	}
	for o := range uint32(p.Parts) {
		if uint64(o) == p.Self {
			continue
		}
		for w := range g.words(o) {
			counts[o] += uint64(bits.OnesCount64(next[uint64(o)*p.S+w]))
		}
	}
	return nil
}

func (e *Emulation) runCompact(l *executor.FakeLaunch) error {
	var p CompactParams[executor.DevPtr]
	if err := kernelabi.Decode(l.Args, &p); err != nil {
		return err
	}
	ctl, err := view[uint64](l, p.Ctl, CtlWords)
	if err != nil || badShape(ctl, 0, p.S, p.Parts, p.Self) {
		return err
	}
	g, err1 := graph(l, 0, 0, p.Bounds, 0, p.Parts)
	next, err2 := view[uint64](l, p.Next, p.Parts*p.S)
	out, err3 := view[uint32](l, p.Outbox, 2*p.Parts*p.S)
	if err := firstErr(err1, err2, err3); err != nil {
		return err
	}
	for o := range uint32(p.Parts) {
		if uint64(o) == p.Self || p.QueueMask>>o&1 == 0 {
			continue
		}
		for _, w := range e.rng.Perm(int(g.words(o))) {
			b := next[uint64(o)*p.S+uint64(w)]
			c := uint64(bits.OnesCount64(b))
			if c == 0 {
				continue
			}
			pos := ctl[CtlQueuePos+o]
			ctl[CtlQueuePos+o] += c
			if pos+c > 2*p.S {
				ctl[CtlOverflow] = 1
				continue
			}
			for ; b != 0; b &= b - 1 {
				out[uint64(o)*2*p.S+pos] = uint32(w*64 + bits.TrailingZeros64(b))
				pos++
			}
		}
	}
	return nil
}

// applyMemory is what pbfs_apply and pbfs_bottom_up write.
type applyMemory struct {
	level            []int32
	front, frontNext []uint64
	ctl              []uint64
	found, edges     uint64
}

// claim mirrors claim.
func (m *applyMemory) claim(g graphView, j uint32, depth uint64) {
	if m.level[j] != -1 {
		return
	}
	m.level[j] = int32(depth + 1)
	m.frontNext[j/64] |= 1 << (j % 64)
	m.found++
	m.edges += uint64(g.offsets[j+1] - g.offsets[j])
}

// finish mirrors add_found.
func (m *applyMemory) finish(depth uint64) {
	m.ctl[CtlFound+depth%2] += m.found
	m.ctl[CtlEdges+depth%2] += m.edges
	m.ctl[CtlFound+(depth+1)%2] = 0
	m.ctl[CtlEdges+(depth+1)%2] = 0
}

// levelMemory maps the level, both frontiers and the control words.
func levelMemory(l *executor.FakeLaunch, level, front, frontNext executor.DevPtr, ctl []uint64, n, s uint64) (*applyMemory, error) {
	m := &applyMemory{ctl: ctl}
	var err1, err2, err3 error
	m.level, err1 = view[int32](l, level, n)
	m.front, err2 = view[uint64](l, front, s)
	m.frontNext, err3 = view[uint64](l, frontNext, s)
	return m, firstErr(err1, err2, err3)
}

func (e *Emulation) runApply(l *executor.FakeLaunch) error {
	var p ApplyParams[executor.DevPtr]
	if err := kernelabi.Decode(l.Args, &p); err != nil {
		return err
	}
	ctl, err := view[uint64](l, p.Ctl, CtlWords)
	if err != nil || badShape(ctl, p.N, p.S, p.Parts, p.Self) {
		return err
	}
	g, err := graph(l, p.Offsets, 0, 0, p.N, p.Parts)
	if err != nil {
		return err
	}
	m, err := levelMemory(l, p.Level, p.Front, p.FrontNext, ctl, p.N, p.S)
	next, err1 := view[uint64](l, p.Next, p.Parts*p.S)
	xbuf, err2 := view[uint64](l, p.Xbuf, p.Parts*p.S)
	counts, err3 := view[uint64](l, p.Counts, p.Parts*(p.Parts+1))
	if err := firstErr(err, err1, err2, err3); err != nil {
		return err
	}
	for w := range (p.N + 63) / 64 {
		b := next[p.Self*p.S+w]
		for src := range p.Parts {
			if p.BitmapMask>>src&1 == 1 {
				b |= xbuf[src*p.S+w]
			}
		}
		for ; b != 0; b &= b - 1 {
			m.claim(g, uint32(w*64+uint64(bits.TrailingZeros64(b))), p.Depth)
		}
	}
	if err := e.applyQueues(p, g, m, xbuf, counts); err != nil {
		return err
	}
	clear(next)
	clear(m.front)
	clear(counts[:p.Parts])
	clear(ctl[CtlQueuePos : CtlQueuePos+p.Parts])
	m.finish(p.Depth)
	return nil
}

// applyQueues claims the queued indices of the queue-form senders.
func (e *Emulation) applyQueues(p ApplyParams[executor.DevPtr], g graphView, m *applyMemory, xbuf, counts []uint64) error {
	q := unsafe.Slice((*uint32)(unsafe.Pointer(&xbuf[0])), 2*len(xbuf))
	for src := range p.Parts {
		if src == p.Self || p.QueueMask>>src&1 == 0 {
			continue
		}
		count := counts[p.Parts+src*p.Parts+p.Self]
		if count > 2*p.S {
			return fmt.Errorf("%s: part %d's queue from %d holds %d indices, more than its %d slots", KernelApply, p.Self, src, count, 2*p.S)
		}
		for _, j := range q[2*src*p.S : 2*src*p.S+count] {
			if uint64(j) >= p.N {
				m.ctl[CtlMisuse] = MisuseVertex
				continue
			}
			m.claim(g, j, p.Depth)
		}
	}
	return nil
}

func (e *Emulation) runBottomUp(l *executor.FakeLaunch) error {
	var p BottomUpParams[executor.DevPtr]
	if err := kernelabi.Decode(l.Args, &p); err != nil {
		return err
	}
	ctl, err := view[uint64](l, p.Ctl, CtlWords)
	if err != nil || badShape(ctl, p.N, p.S, p.Parts, p.Self) {
		return err
	}
	g, err := graph(l, p.Offsets, p.Targets, p.Bounds, p.N, p.Parts)
	if err != nil {
		return err
	}
	m, err := levelMemory(l, p.Level, p.Front, p.FrontNext, ctl, p.N, p.S)
	xbuf, err1 := view[uint64](l, p.Xbuf, p.Parts*p.S)
	if err := firstErr(err, err1); err != nil {
		return err
	}
	for i := range uint32(p.N) {
		if m.level[i] != -1 {
			continue
		}
		for _, v := range g.targets[g.offsets[i]:g.offsets[i+1]] {
			o := g.owner(uint32(v))
			j := uint32(v) - g.bounds[o]
			if xbuf[uint64(o)*p.S+uint64(j/64)]>>(j%64)&1 == 1 {
				m.claim(g, i, p.Depth)
				break
			}
		}
	}
	clear(m.front)
	m.finish(p.Depth)
	return nil
}

func (e *Emulation) runCopy(l *executor.FakeLaunch) error {
	var p CopyParams[executor.DevPtr]
	if err := kernelabi.Decode(l.Args, &p); err != nil {
		return err
	}
	src, err := l.Bytes(p.Src, 4*p.Words)
	if err != nil {
		return err
	}
	dst, err := l.Bytes(p.Dst, 4*p.Words)
	if err != nil {
		return err
	}
	copy(dst, src)
	return nil
}
