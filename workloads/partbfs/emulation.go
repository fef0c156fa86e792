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
	return kernelabi.FakeKernels(map[string]kernelabi.Fake{
		KernelInit:     {Run: kernelabi.Emulate(e.runInit), Regs: 28},
		KernelExpand:   {Run: kernelabi.Emulate(e.runExpand), Regs: 23, Smem: 260},
		KernelCount:    {Run: kernelabi.Emulate(e.runCount), Regs: 24, Smem: 260},
		KernelCompact:  {Run: kernelabi.Emulate(e.runCompact), Regs: 32, Smem: 260},
		KernelApply:    {Run: kernelabi.Emulate(e.runApply), Regs: 32},
		KernelBottomUp: {Run: kernelabi.Emulate(e.runBottomUp), Regs: 30, Smem: 260},
		KernelCopy:     {Run: kernelabi.Emulate(e.runCopy), Regs: 12},
	})
}

// NewFake returns a fake backend for dev with the kernels emulated.
func NewFake(dev occupancy.Device, seed uint64) *executor.Fake {
	return executor.NewFake(executor.FakeConfig{Device: dev, Kernels: NewEmulation(seed).Kernels()})
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
		if g.offsets, err = kernelabi.View[uint32](l, offsets, n+1); err != nil {
			return g, err
		}
	}
	if targets != 0 {
		if g.targets, err = kernelabi.View[int32](l, targets, max(1, uint64(g.offsets[n]))); err != nil {
			return g, err
		}
	}
	if bounds != 0 {
		g.bounds, err = kernelabi.View[uint32](l, bounds, parts+1)
	}
	return g, err
}

// partView is what a launch over a part sees first: the control words and
// the part's CSR and bounds.
type partView struct {
	ctl []uint64
	graphView
}

// viewPart maps a launch's control words and, when the part's shape is
// sound (badShape), its CSR of n vertices and its bounds (0 pointers: not
// needed). A nil view with a nil error is a misuse badShape flagged: the
// launch does nothing else.
func viewPart(l *executor.FakeLaunch, ctl, offsets, targets, bounds executor.DevPtr, n uint64, shape ShapeParams) (*partView, error) {
	c, err := kernelabi.View[uint64](l, ctl, CtlWords)
	if err != nil || badShape(c, n, shape.S, shape.Parts, shape.Self) {
		return nil, err
	}
	g, err := graph(l, offsets, targets, bounds, n, shape.Parts)
	if err != nil {
		return nil, err
	}
	return &partView{ctl: c, graphView: g}, nil
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

func (e *Emulation) runInit(l *executor.FakeLaunch, p InitParams[executor.DevPtr]) error {
	ctl, err := kernelabi.View[uint64](l, p.Ctl, CtlWords)
	if err != nil {
		return err
	}
	if p.Parts == 0 || p.Parts > MaxParts || p.N > 64*p.S {
		ctl[CtlMisuse] = MisuseShape
		return nil
	}
	level, err := kernelabi.View[int32](l, p.Level, p.N)
	if err != nil {
		return err
	}
	f0, err1 := kernelabi.View[uint64](l, p.Front0, p.S)
	f1, err2 := kernelabi.View[uint64](l, p.Front1, p.S)
	next, err3 := kernelabi.View[uint64](l, p.Next, p.Parts*p.S)
	counts, err4 := kernelabi.View[uint64](l, p.Counts, p.Parts*(p.Parts+1))
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

func (e *Emulation) runExpand(l *executor.FakeLaunch, p ExpandParams[executor.DevPtr]) error {
	g, err := viewPart(l, p.Ctl, p.Offsets, p.Targets, p.Bounds, p.N, p.ShapeParams)
	if g == nil {
		return err
	}
	level, err1 := kernelabi.View[int32](l, p.Level, p.N)
	front, err2 := kernelabi.View[uint64](l, p.Front, p.S)
	next, err3 := kernelabi.View[uint64](l, p.Next, p.Parts*p.S)
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

func (e *Emulation) runCount(l *executor.FakeLaunch, p CountParams[executor.DevPtr]) error {
	g, err := viewPart(l, p.Ctl, 0, 0, p.Bounds, 0, p.ShapeParams)
	if g == nil {
		return err
	}
	next, err1 := kernelabi.View[uint64](l, p.Next, p.Parts*p.S)
	counts, err2 := kernelabi.View[uint64](l, p.Counts, p.Parts)
	if err := firstErr(err1, err2); err != nil {
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

func (e *Emulation) runCompact(l *executor.FakeLaunch, p CompactParams[executor.DevPtr]) error {
	g, err := viewPart(l, p.Ctl, 0, 0, p.Bounds, 0, p.ShapeParams)
	if g == nil {
		return err
	}
	ctl := g.ctl
	next, err1 := kernelabi.View[uint64](l, p.Next, p.Parts*p.S)
	out, err2 := kernelabi.View[uint32](l, p.Outbox, 2*p.Parts*p.S)
	if err := firstErr(err1, err2); err != nil {
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
	m.level, err1 = kernelabi.View[int32](l, level, n)
	m.front, err2 = kernelabi.View[uint64](l, front, s)
	m.frontNext, err3 = kernelabi.View[uint64](l, frontNext, s)
	return m, firstErr(err1, err2, err3)
}

func (e *Emulation) runApply(l *executor.FakeLaunch, p ApplyParams[executor.DevPtr]) error {
	g, err := viewPart(l, p.Ctl, p.Offsets, 0, 0, p.N, p.ShapeParams)
	if g == nil {
		return err
	}
	ctl := g.ctl
	m, err := levelMemory(l, p.Level, p.Front, p.FrontNext, ctl, p.N, p.S)
	next, err1 := kernelabi.View[uint64](l, p.Next, p.Parts*p.S)
	xbuf, err2 := kernelabi.View[uint64](l, p.Xbuf, p.Parts*p.S)
	counts, err3 := kernelabi.View[uint64](l, p.Counts, p.Parts*(p.Parts+1))
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
			m.claim(g.graphView, uint32(w*64+uint64(bits.TrailingZeros64(b))), p.Depth)
		}
	}
	if err := e.applyQueues(p, g.graphView, m, xbuf, counts); err != nil {
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

func (e *Emulation) runBottomUp(l *executor.FakeLaunch, p BottomUpParams[executor.DevPtr]) error {
	g, err := viewPart(l, p.Ctl, p.Offsets, p.Targets, p.Bounds, p.N, p.ShapeParams)
	if g == nil {
		return err
	}
	m, err := levelMemory(l, p.Level, p.Front, p.FrontNext, g.ctl, p.N, p.S)
	xbuf, err1 := kernelabi.View[uint64](l, p.Xbuf, p.Parts*p.S)
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
				m.claim(g.graphView, i, p.Depth)
				break
			}
		}
	}
	clear(m.front)
	m.finish(p.Depth)
	return nil
}

func (e *Emulation) runCopy(l *executor.FakeLaunch, p CopyParams[executor.DevPtr]) error {
	return kernelabi.CopyBytes(l, p.Src, p.Dst, 4*p.Words)
}
