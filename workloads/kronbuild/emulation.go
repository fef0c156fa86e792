package kronbuild

import (
	"fmt"
	"math/rand/v2"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/internal/kernelabi"
	"github.com/gpuplan/gpuplan/occupancy"
)

// Emulation emulates the kronbuild kernels (kernelabi.Emulation): the same
// buffers, parameters and results as the CUDA kernels, with the blocks of
// the generation kernel appending their keys in a random order (seeded),
// as their atomics do on a GPU. Launches whose grid does not cover what
// their parameters ask are refused, so a host-side slip shows in the
// tests.
type Emulation = kernelabi.Emulation

// NewEmulation returns the emulation of every kronbuild entry point, with
// a seed for its orders.
func NewEmulation(seed uint64) *Emulation { return kernelabi.NewEmulation(seed, fakes) }

// NewFake returns a fake backend for dev with the kronbuild kernels
// emulated.
func NewFake(dev occupancy.Device, seed uint64) *executor.Fake {
	return NewEmulation(seed).NewFake(dev)
}

// emulator is what the kronbuild kernels' emulations share: the
// emulation's launch seeds.
type emulator struct {
	seeds *kernelabi.LaunchSeeds
}

// fakes returns the fake kernels of every kronbuild entry point, with the
// registers and shared memory ptxas reports for the real ones on sm_90
// (kronbuild.resources).
func fakes(seeds *kernelabi.LaunchSeeds) map[string]kernelabi.Fake {
	e := &emulator{seeds: seeds}
	return map[string]kernelabi.Fake{
		KernelPermDraw:    {Run: kernelabi.Emulate(e.runPermDraw), Regs: 34, MaxThreads: Threads},
		KernelPermLinks:   {Run: kernelabi.Emulate(e.runPermLinks), Regs: 18, MaxThreads: Threads},
		KernelPermLabels:  {Run: kernelabi.Emulate(e.runPermLabels), Regs: 12, MaxThreads: Threads},
		KernelCount:       {Run: kernelabi.Emulate(e.runCount), Regs: 30, Smem: 4096, MaxThreads: Threads},
		KernelGenerate:    {Run: kernelabi.Emulate(e.runGenerate), Regs: 40, Smem: 1192, MaxThreads: Threads},
		KernelSortHist:    {Run: kernelabi.Emulate(e.runSortHist), Regs: 30, Smem: 8192, MaxThreads: Threads},
		KernelScan:        {Run: kernelabi.Emulate(e.runScan), Regs: 64, Smem: 4384, MaxThreads: ScanThreads},
		KernelSortScatter: {Run: kernelabi.Emulate(e.runSortScatter), Regs: 121, Smem: 35844, MaxThreads: Threads},
		KernelUniqueCount: {Run: kernelabi.Emulate(e.runUniqueCount), Regs: 26, Smem: 80, MaxThreads: Threads},
		KernelCompact:     {Run: kernelabi.Emulate(e.runCompact), Regs: 37, Smem: 1184, MaxThreads: Threads},
		KernelFill:        {Run: kernelabi.Emulate(e.runFill), Regs: 14, MaxThreads: Threads},
	}
}

// gridBlocks and gridThreads are a launch's blocks and threads.
func gridBlocks(l *executor.FakeLaunch) uint64 {
	return uint64(l.Config.Grid[0]) * uint64(l.Config.Grid[1]) * uint64(l.Config.Grid[2])
}

func gridThreads(l *executor.FakeLaunch) uint64 {
	return gridBlocks(l) * uint64(l.Config.Block[0]) * uint64(l.Config.Block[1]) * uint64(l.Config.Block[2])
}

func (e *emulator) runPermDraw(l *executor.FakeLaunch, p PermDrawParams[executor.DevPtr]) error {
	keys, err := kernelabi.View[uint64](l, p.Keys, p.StepHi)
	if err != nil {
		return err
	}
	ctl, err := kernelabi.View[uint64](l, p.Ctl, CtlWords)
	if err != nil {
		return err
	}
	if gridThreads(l)*PermSteps < p.StepHi {
		return fmt.Errorf("%s: %d threads do not draw %d steps", KernelPermDraw, gridThreads(l), p.StepHi)
	}
	for first := uint64(0); first < p.StepHi; first += PermSteps {
		state := pcgJump(u128{p.Seed1, p.Seed2}, p.Draw+first)
		for d := first; d < min(first+PermSteps, p.StepHi); d++ {
			i := p.StepHi - d
			j, rejected := shuffleDraw(&state, i)
			if rejected != 0 {
				ctl[CtlReject] = max(ctl[CtlReject], i<<32|rejected)
			}
			keys[i-1] = j<<p.Scale | i
		}
	}
	return nil
}

func (e *emulator) runPermLinks(l *executor.FakeLaunch, p PermLinksParams[executor.DevPtr]) error {
	keys, err := kernelabi.View[uint64](l, p.Keys, p.Count)
	if err != nil {
		return err
	}
	perm, err := kernelabi.View[uint32](l, p.Perm, p.Count+1)
	if err != nil {
		return err
	}
	last, err := kernelabi.View[uint32](l, p.Last, p.Count+1)
	if err != nil {
		return err
	}
	mask := uint64(1)<<p.Scale - 1
	for x, key := range keys {
		j, s := uint32(key>>p.Scale), uint32(key&mask)
		next := uint32(0)
		if x+1 < len(keys) && uint32(keys[x+1]>>p.Scale) == j {
			next = uint32(keys[x+1] & mask)
		}
		perm[s] = j | LinkFlag
		if next != 0 {
			perm[s] = next
		}
		if (x == 0 || uint32(keys[x-1]>>p.Scale) != j) && uint64(j) <= p.Count {
			last[j] = next
			if s != j {
				last[j] = s
			}
		}
	}
	return nil
}

func (e *emulator) runPermLabels(l *executor.FakeLaunch, p PermLabelsParams[executor.DevPtr]) error {
	perm, err := kernelabi.View[uint32](l, p.Perm, p.N)
	if err != nil {
		return err
	}
	last, err := kernelabi.View[uint32](l, p.Last, p.N)
	if err != nil {
		return err
	}
	for s := range perm {
		v := uint32(0)
		if s != 0 {
			v = perm[s]
		}
		if v&LinkFlag != 0 {
			perm[s] = v &^ LinkFlag
			continue
		}
		for w := last[v]; w > v; w = last[v] {
			v = w
		}
		perm[s] = v
	}
	return nil
}

// edgeGen is an edge kernel's generator as Go slices.
type edgeGen struct {
	perm        []uint32
	p           EdgeParams[executor.DevPtr]
	tab, ta, tc uint32
}

// newEdgeGen maps an edge kernel's labels.
func newEdgeGen(l *executor.FakeLaunch, p EdgeParams[executor.DevPtr]) (*edgeGen, error) {
	perm, err := kernelabi.View[uint32](l, p.Perm, uint64(1)<<p.Scale)
	if err != nil {
		return nil, err
	}
	return &edgeGen{perm: perm, p: p, tab: uint32(p.TAB), ta: uint32(p.TA), tc: uint32(p.TC)}, nil
}

// edge returns edge e's labelled endpoints and whether it is a self loop.
func (g *edgeGen) edge(e uint64) (u, v uint32, loop bool) {
	i, j := kronEdge(g.p.Seed, int(g.p.Scale), g.tab, g.ta, g.tc, e)
	return g.perm[i], g.perm[j], i == j
}

func (e *emulator) runCount(l *executor.FakeLaunch, p CountParams[executor.DevPtr]) error {
	g, err := newEdgeGen(l, p.EdgeParams)
	if err != nil {
		return err
	}
	counts, err := kernelabi.View[uint64](l, p.Counts, p.Buckets)
	if err != nil {
		return err
	}
	if p.Buckets > MaxBuckets || (uint64(1)<<p.Scale)>>p.BucketShift > p.Buckets {
		return fmt.Errorf("%s: %d buckets of 2^%d vertices do not cover 2^%d", KernelCount, p.Buckets, p.BucketShift, p.Scale)
	}
	for x := range p.Edges {
		if u, v, loop := g.edge(x); !loop {
			counts[u>>p.BucketShift]++
			counts[v>>p.BucketShift]++
		}
	}
	return nil
}

func (e *emulator) runGenerate(l *executor.FakeLaunch, p GenerateParams[executor.DevPtr]) error {
	g, err := newEdgeGen(l, p.EdgeParams)
	if err != nil {
		return err
	}
	keys, err := kernelabi.View[uint64](l, p.Keys, p.Capacity)
	if err != nil {
		return err
	}
	ctl, err := kernelabi.View[uint64](l, p.Ctl, CtlWords)
	if err != nil {
		return err
	}
	const tile = Threads * GenEdges
	rng := rand.New(rand.NewPCG(e.seeds.Next(), 1))
	for _, t := range rng.Perm(int((p.Edges + tile - 1) / tile)) {
		for th := range uint64(Threads) {
			for k := range uint64(GenEdges) {
				x := uint64(t)*tile + k*Threads + th
				if x >= p.Edges {
					continue
				}
				u, v, loop := g.edge(x)
				if loop {
					continue
				}
				p.appendKey(keys, ctl, u, v)
				p.appendKey(keys, ctl, v, u)
			}
		}
	}
	return nil
}

// appendKey appends the entry (u, v) at the cursor when u is one of the
// part's rows, dropping it past the capacity.
func (p GenerateParams[P]) appendKey(keys, ctl []uint64, u, v uint32) {
	r := uint64(u) - p.RowFirst
	if r >= p.Rows {
		return
	}
	if w := ctl[CtlCursor]; w < p.Capacity {
		keys[w] = r<<p.Scale | uint64(v)
	}
	ctl[CtlCursor]++
}
