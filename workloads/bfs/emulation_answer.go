package bfs

import (
	"fmt"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/internal/kernelabi"
	"github.com/gpuplan/gpuplan/planners"
)

// wholeWarps refuses a launch of the count kernels whose blocks are not
// whole warps: their warp-wide votes take every lane.
func wholeWarps(l *executor.FakeLaunch, kernel string) error {
	c := l.Config
	if threads := c.Block[0] * c.Block[1] * c.Block[2]; threads%32 != 0 {
		return fmt.Errorf("%s: blocks of %d threads are not whole warps", kernel, threads)
	}
	return nil
}

// runGather mirrors bfs_gather.
func (e *emulator) runGather(l *executor.FakeLaunch, p GatherParams[executor.DevPtr]) error {
	level, err := kernelabi.View[int32](l, p.Level, p.N)
	if err != nil {
		return err
	}
	idx, err := kernelabi.View[uint32](l, p.Idx, p.Count)
	if err != nil {
		return err
	}
	out, err := kernelabi.View[int32](l, p.Out, p.Count)
	if err != nil {
		return err
	}
	for i, v := range idx {
		out[i] = -1
		if uint64(v) < p.N {
			out[i] = level[v]
		}
	}
	return nil
}

// runLevelCounts mirrors bfs_level_counts: it adds to the counts (the host
// zeroes them), every level as the unsigned label the kernel compares.
func (e *emulator) runLevelCounts(l *executor.FakeLaunch, p LevelCountsParams[executor.DevPtr]) error {
	if err := wholeWarps(l, KernelLevelCounts); err != nil {
		return err
	}
	level, err := kernelabi.View[int32](l, p.Level, p.N)
	if err != nil {
		return err
	}
	counts, err := kernelabi.View[uint64](l, p.Counts, p.NLevels)
	if err != nil {
		return err
	}
	for _, lv := range level {
		if uint64(uint32(lv)) < p.NLevels {
			counts[uint32(lv)]++
		}
	}
	return nil
}

// msPass is what the multi-source answer kernels read of a pass: its seen
// words and its first bits planes over n vertices, per planes to a group.
type msPass[W msWord] struct {
	seen, planes []W
	n, per       uint64
	bits         uint32
}

// msPassView maps a pass's seen words and the plane groups of its first
// bits planes.
func msPassView[W msWord](l *executor.FakeLaunch, seen, planes executor.DevPtr, n, width, bits uint64) (msPass[W], error) {
	if bits > 32 {
		return msPass[W]{}, fmt.Errorf("multi-source answer: %d level planes, past 32", bits)
	}
	p := msPass[W]{n: n, per: planners.PlanesPerGroup(width), bits: uint32(bits)}
	var err error
	if p.seen, err = kernelabi.View[W](l, seen, n); err != nil {
		return p, err
	}
	p.planes, err = kernelabi.View[W](l, planes, planners.PlaneGroups(bits, width)*n*p.per)
	return p, err
}

// levelOf mirrors ms_level_of: root r's level of vertex u, UNREACHED (as
// uint32) where r's seen bit is clear.
func (p msPass[W]) levelOf(r uint32, u uint64) uint32 {
	if p.seen[u]>>r&1 == 0 {
		return ^uint32(0)
	}
	var l uint32
	for b := range p.bits {
		l |= uint32(p.planes[msPlaneWord(uint64(b), u, p.n, p.per)]>>r&1) << b
	}
	return l
}

func (e *emulator) runMSGather(l *executor.FakeLaunch, p MSGatherParams[executor.DevPtr]) error {
	return wide(p.Width, msGather[uint64], msGather[uint32])(l, p)
}

// msGather mirrors msbfs_gather.
func msGather[W msWord](l *executor.FakeLaunch, p MSGatherParams[executor.DevPtr]) error {
	if p.Width != 32 && p.Width != 64 || p.NRoots > p.Width {
		return fmt.Errorf("%s: width %d, %d roots", KernelMSGather, p.Width, p.NRoots)
	}
	pass, err := msPassView[W](l, p.Seen, p.Planes, p.N, p.Width, p.Bits)
	if err != nil {
		return err
	}
	pairs, err := kernelabi.View[[2]uint32](l, p.Pairs, p.Count)
	if err != nil {
		return err
	}
	out, err := kernelabi.View[int32](l, p.Out, p.Count)
	if err != nil {
		return err
	}
	for i, pr := range pairs {
		out[i] = -1
		if uint64(pr[0]) < p.NRoots && uint64(pr[1]) < p.N {
			out[i] = int32(pass.levelOf(pr[0], uint64(pr[1])))
		}
	}
	return nil
}

func (e *emulator) runMSLevelCounts(l *executor.FakeLaunch, p MSLevelCountsParams[executor.DevPtr]) error {
	return wide(p.Width, msLevelCounts[uint64], msLevelCounts[uint32])(l, p)
}

// msLevelCounts mirrors msbfs_level_counts: it adds to the counts (the
// host zeroes them).
func msLevelCounts[W msWord](l *executor.FakeLaunch, p MSLevelCountsParams[executor.DevPtr]) error {
	if p.Width != 32 && p.Width != 64 || p.NRoots > p.Width {
		return fmt.Errorf("%s: width %d, %d roots", KernelMSLevelCounts, p.Width, p.NRoots)
	}
	if err := wholeWarps(l, KernelMSLevelCounts); err != nil {
		return err
	}
	pass, err := msPassView[W](l, p.Seen, p.Planes, p.N, p.Width, p.Bits)
	if err != nil {
		return err
	}
	counts, err := kernelabi.View[uint64](l, p.Counts, p.NRoots*p.NLevels)
	if err != nil {
		return err
	}
	for u := range p.N {
		for r := range uint32(p.NRoots) {
			if lab := uint64(pass.levelOf(r, u)); lab < p.NLevels {
				counts[uint64(r)*p.NLevels+lab]++
			}
		}
	}
	return nil
}
