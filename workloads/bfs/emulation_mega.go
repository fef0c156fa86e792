package bfs

import (
	"unsafe"

	"github.com/gpuplan/gpuplan/planners"
)

// megaRun is one megakernel launch as the emulation takes it: the step
// budget, the deepest run-ahead, whether the depth adapts, and the
// direction mode (auto: the device rule, level-synchronous on graphs past
// the degree gate).
type megaRun struct {
	maxSteps, ahead uint32
	adapt, auto     bool
}

// emuMega mirrors MegaConfig and MegaState: the launch's settings and the
// traversal's state between steps, as thread 0 of every block keeps them.
type emuMega struct {
	run                 megaRun
	syncDO              bool
	n, total            uint32
	count               uint32
	kept                bool
	nf, mf              uint32
	ds                  emuDirState
	dir, reason, mu     uint32
	depth               uint32
	cumFound, cumRel    uint64
	maxDepth, bottomUps uint32
}

// decide mirrors mega_decide.
func (m *emuMega) decide() {
	m.mu = m.ds.mu - m.mf
	m.reason, m.dir = 0, uint32(DirTopDown)
	if m.run.auto {
		m.reason = uint32(planners.ReasonLowAverageDegree)
	}
	if m.syncDO {
		m.dir, m.reason, m.mu = m.ds.decide(m.nf, m.mf, m.n, m.total)
	}
}

// more mirrors mega_more.
func (m *emuMega) more() bool {
	if m.syncDO {
		return m.nf > 0
	}
	return m.count > 0 || m.kept
}

// adaptDepth mirrors adapt_depth.
func adaptDepth(depth, cap, found, rel uint32, cumFound, cumRel *uint64) uint32 {
	*cumFound += uint64(found)
	*cumRel += uint64(rel)
	switch {
	case uint64(rel) > uint64(found) || 4**cumRel > *cumFound:
		return max(1, depth/2)
	case 8*uint64(rel) <= uint64(found):
		return min(cap, depth+1)
	}
	return depth
}

// megakernel runs a top-down megakernel with a fixed run-ahead depth, as
// the kernel does with adapt 0 and direction MEGA_TOP_DOWN.
func (d *emuDevice) megakernel(maxSteps, ahead uint32) (levels, changed, barriers uint32) {
	return d.mega(megaRun{maxSteps: maxSteps, ahead: ahead})
}

// mega mirrors bfs_megakernel's steps: in the level-synchronous direction-
// optimizing mode, each step's decision by the device rule and its bottom-
// up levels; otherwise, and for the top-down steps, each block's kept edges
// and the global queue, then each block's run-ahead levels (up to the
// step's depth in all, while its keep queue took every candidate), then
// each block's end of step (the staged items and the kept vertices it sheds
// go to the global queue with one reservation), with the ring of 64-bit
// barrier words (bits 32..63: global items pushed; 16..31: blocks that kept
// work; 0..15: arrivals) and the step's counts beside them. Blocks run
// ahead either level by level in turn or one block after another (chosen
// at random each step), so that some blocks race ahead of others as on the
// GPU. It returns the result words (levels, changed, barriers).
func (d *emuDevice) mega(p megaRun) (levels, changed, barriers uint32) {
	if d.nwarps%d.warpsPerBlock != 0 {
		panic("a megakernel grid has whole blocks")
	}
	for b := range d.blocks {
		d.blocks[b].n = 0
	}
	d.setKeep(d.keepItems, d.keepEdges, d.keepLow, d.keepItemEdges)
	d.maxlab, d.relabels, d.first, d.fedges, d.srelabels = 0, 0, 0, 0, 0
	m := d.megaStart(p)
	step := uint32(0)
	for m.more() && step < p.maxSteps {
		d.megaStep(m, step)
		step++
	}
	if m.more() {
		changed = 1
	}
	d.ctl[CtlResult+ResultLevels], d.ctl[CtlResult+ResultChanged], d.ctl[CtlResult+ResultBarriers] = d.megaLevels(), changed, step
	return d.megaLevels(), changed, step
}

// megaStart mirrors mega_start: the launch's settings and the state
// before the first step.
func (d *emuDevice) megaStart(p megaRun) *emuMega {
	n := uint32(len(d.level))
	total := d.offsets[n]
	fc := d.ctl64(CtlCountsWord(0))
	m := &emuMega{run: p, n: n, total: total, count: d.ctl[CtlCountWord(0)], nf: uint32(fc >> 32), mf: uint32(fc),
		ds: emuDirState{mu: total}}
	m.run.ahead = min(max(p.ahead, 1), arriveMask)
	m.syncDO = p.auto && !(planners.DefaultBottomUpMinDegree*uint64(n) > uint64(total))
	switch {
	case m.syncDO:
		m.depth = 1
	case p.adapt:
		m.depth = min(m.run.ahead, runAheadStart)
	default:
		m.depth = m.run.ahead
	}
	m.decide()
	return m
}

// megaLevels mirrors mega_levels: the largest label claimed + 1, or, if a
// label was lowered, the largest level left in the level array + 1.
func (d *emuDevice) megaLevels() uint32 {
	if d.relabels == 0 {
		return d.maxlab + 1
	}
	levels := uint32(0)
	for _, l := range d.level {
		if l != -1 {
			levels = max(levels, uint32(l)+1)
		}
	}
	return levels
}

// megaWord returns the barrier word of ring slot step%3.
func (d *emuDevice) megaWord(step uint32) *uint64 {
	return (*uint64)(unsafe.Pointer(&d.ctl[CtlMegaWord(int(step))]))
}

// megaStep mirrors one step of mega_steps and its barrier.
func (d *emuDevice) megaStep(m *emuMega, step uint32) {
	line := CtlMegaWord(int(step + 1))
	clr := CtlMegaWord(int(step + 2))
	*d.megaWord(step + 2) = 0
	d.setCtl64(clr+CtlCounts, 0)
	d.ctl[clr+CtlStepRelabels] = 0
	d.writeLog(step, m.dir, m.reason, m.ds.parity, m.depth, m.nf, m.mf, m.mu)
	m.maxDepth = max(m.maxDepth, m.depth)
	qout, qlab := d.q[(step+1)&1], d.qlab[(step+1)&1]
	var pushed uint32
	full := make([]bool, len(d.blocks))
	if m.syncDO && m.dir == uint32(DirBottomUp) {
		m.bottomUps++
		for b := range d.blocks {
			d.keptN[b], d.keptEdges[b] = 0, 0
		}
		vin, vout := d.vis[m.ds.parity], d.vis[m.ds.parity^1]
		d.buLevel(vin, vout, m.n, step+1, line+CtlCounts, func(b uint32) *emuSink {
			return &emuSink{bq: d.blockQueue(b), qout: qout, qlab: qlab, out: &pushed}
		})
	} else {
		if m.syncDO {
			d.mark = d.vis[m.ds.parity]
		}
		d.megaTopDown(m, step, full, &pushed)
		d.mark = nil
	}
	keptBlocks := d.megaPublish(full, qout, qlab, &pushed)
	if m.syncDO || m.run.adapt {
		d.addCtl64(line+CtlCounts, uint64(d.first)<<32|uint64(d.fedges))
		d.ctl[line+CtlStepRelabels] += d.srelabels
	}
	d.first, d.fedges, d.srelabels = 0, 0, 0
	out := d.megaWord(step + 1)
	*out += uint64(pushed) << 32
	// Every block arrives; the barrier opens when the arrivals reach the
	// grid size and hands out the global count, the kept flag and the
	// step's counts.
	nblocks := uint64(len(d.blocks))
	*out += nblocks | keptBlocks<<16
	if uint32(*out)&0xffff != uint32(nblocks) {
		panic("barrier word was not fresh")
	}
	d.megaAdvance(m, *out, line)
}

// megaAdvance mirrors mega_advance.
func (d *emuDevice) megaAdvance(m *emuMega, v uint64, line int) {
	cnt := d.ctl64(line + CtlCounts)
	m.count, m.kept = uint32(v>>32), (v>>16)&0xffff != 0
	m.ds = m.ds.after(m.dir, m.nf, m.mu)
	m.nf, m.mf = uint32(cnt>>32), uint32(cnt)
	if !m.syncDO && m.run.adapt {
		m.depth = adaptDepth(m.depth, m.run.ahead, m.nf, d.ctl[line+CtlStepRelabels], &m.cumFound, &m.cumRel)
	}
	m.decide()
}

// megaTopDown mirrors a top-down step: each block's kept edges and the
// global queue, then the blocks' run-ahead levels.
func (d *emuDevice) megaTopDown(m *emuMega, step uint32, full []bool, pushed *uint32) {
	qin, qinlab := d.q[step&1], d.qlab[step&1]
	qout, qlab := d.q[(step+1)&1], d.qlab[(step+1)&1]
	sink := func(b uint32) *emuSink {
		return &emuSink{kq: &d.keep[b][(d.blockLevel[b]+1)%3], bq: d.blockQueue(b), qout: qout, qlab: qlab, out: pushed}
	}
	// level ends a block's level: the next keep queue's counters.
	level := func(b uint32) { full[b] = d.nextLevel(b).full != 0 }
	// runAhead runs block b's next level if it may.
	runAhead := func(b uint32) bool {
		if d.keptN[b] == 0 || full[b] {
			return false
		}
		d.keep[b][(d.blockLevel[b]+2)%3].reset()
		d.expandKept(&d.keep[b][d.blockLevel[b]%3], d.keptEdges[b], sink(b), !m.syncDO && megaFresh != 0)
		level(b)
		return true
	}
	if m.count > 0 {
		d.globalSteps++
	}
	for b := range d.blocks {
		d.keep[b][(d.blockLevel[b]+2)%3].reset()
	}
	for _, b := range d.rng.Perm(len(d.blocks)) {
		d.expandKept(&d.keep[b][d.blockLevel[b]%3], d.keptEdges[b], sink(uint32(b)), !m.syncDO && megaFresh != 0)
	}
	d.expand(qin, qinlab, 0, m.count, nil, nil, func(gwarp uint32) *emuSink {
		return sink(d.megaBlock(gwarp, step, m.syncDO || d.keepEdges == keepEdges))
	})
	for b := range d.blocks {
		level(uint32(b))
	}
	ahead := m.depth
	if d.rng.IntN(2) == 0 {
		for j := uint32(1); j < ahead; j++ {
			for _, b := range d.rng.Perm(len(d.blocks)) {
				runAhead(uint32(b))
			}
		}
	} else {
		for _, b := range d.rng.Perm(len(d.blocks)) {
			for j := uint32(1); j < ahead && runAhead(uint32(b)); j++ {
			}
		}
	}
}

// megaPublish mirrors mega_publish for every block in a random order and
// returns how many blocks kept work.
func (d *emuDevice) megaPublish(full []bool, qout []item, qlab []uint32, pushed *uint32) (keptBlocks uint64) {
	shed := false
	for _, b := range d.rng.Perm(len(d.blocks)) {
		bq, kq := &d.blocks[b], &d.keep[b][d.blockLevel[b]%3]
		ns := min(bq.n, d.blockCap)
		var shedn uint32
		if full[b] && d.keptN[b] > d.keepLow {
			shedn = d.keptN[b] - d.keepLow
			shed = true
		}
		if nout := ns + shedn; nout > 0 {
			base := *pushed
			*pushed += nout
			for i := uint32(0); i < nout; i++ {
				var it item
				var lab uint32
				if i < ns {
					it, lab = bq.items[i], bq.labs[i]
				} else {
					it, lab = kq.items[d.keepLow+i-ns], kq.ilab[d.keepLow+i-ns]
				}
				if base+i < d.qcap {
					qout[base+i], qlab[base+i] = it, lab
				} else {
					d.ctl[CtlResult+ResultOverflow] = 1
				}
			}
		}
		if shedn > 0 {
			d.keptN[b], d.keptEdges[b] = d.keepLow, kq.pos[d.keepLow]
		}
		bq.n = 0
		if d.keptN[b] > 0 {
			keptBlocks++
		}
	}
	if shed {
		d.shedSteps++
	}
	return keptBlocks
}

// megaBlock mirrors the megakernel's placement of global warp gwarp on the
// global queue at step: warps are numbered across blocks first and rotated
// by a hash of the step; a level-synchronous step, or one with the large
// keep budget (byBlock), rotates only the blocks, so that a warp keeps its
// rank within its block.
func (d *emuDevice) megaBlock(gwarp, step uint32, byBlock bool) uint32 {
	nblocks := uint32(len(d.blocks))
	if byBlock {
		return (gwarp%nblocks + nblocks - step*rotateMul%nblocks) % nblocks
	}
	return (gwarp + d.nwarps - step*rotateMul%d.nwarps) % d.nwarps % nblocks
}

// nextLevel ends one of block b's levels, as mega_next_level does: the
// keep queue its expansion filled becomes the block's kept vertices, which
// it returns.
func (d *emuDevice) nextLevel(b uint32) *emuKeepQueue {
	d.blockLevel[b]++
	kq := &d.keep[b][d.blockLevel[b]%3]
	d.keptN[b], d.keptEdges[b] = kq.done>>keepShift, kq.done&keepEMask
	return kq
}
