package bfs

import (
	"fmt"
	"math/rand/v2"
	"unsafe"
)

// item is a frontier-queue entry: an edge range [b, e).
type item struct{ b, e uint32 }

// found mirrors Found: one lane's claim.
type found struct{ nitems, b, e, lab uint32 }

// emuDevice emulates the BFS kernels' queue logic on the CPU, step for step:
// the ring of counts, items of at most chunk edges with their labels, the
// warp's items-per-round k, the lanes' owner search over the exclusive
// scan, warp-aggregated pushes, and the megakernel's keep queues and run-
// ahead. Warps and blocks run in random orders to stand in for the GPU's
// concurrency: claims are atomicMin of the label, so every order must give
// the BFS levels.
type emuDevice struct {
	offsets []uint32
	targets []int32
	level   []int32
	q       [2][]item
	qlab    [2][]uint32
	ctl     []uint32
	chunk   uint32
	qcap    uint32
	// Warps in the grid, warps per block and the block queue's capacity.
	nwarps        uint32
	warpsPerBlock uint32
	blockCap      uint32
	blocks        []emuBlockQueue
	rng           *rand.Rand
	maxCount      uint32
	// The megakernel's keep budget (KEEP_ITEMS, KEEP_EDGES, KEEP_LOW and
	// KEEP_ITEM_EDGES in bfs.cu), each block's ring of three keep queues,
	// its level counter and what it kept for the next step.
	keepItems, keepEdges, keepLow, keepItemEdges uint32
	keep                                         [][3]emuKeepQueue
	blockLevel                                   []uint32
	keptN, keptEdges                             []uint32
	// Statistics: steps with global items, steps with a shed, claims that
	// lowered a label a block running ahead had set, and the largest label.
	globalSteps, shedSteps, relabels, maxlab uint32
}

// keepEMask selects the edges of a keep queue's reservation word.
const keepEMask = 1<<keepShift - 1

// emuKeepQueue mirrors KeepQueue.
type emuKeepQueue struct {
	resv, done, full uint32
	items            []item
	ilab, pos        []uint32
	tgt, elab        []uint32
}

// emuBlockQueue mirrors BlockQueue with the megakernel's staged labels:
// slots reserved (n, may pass the capacity) and the staged items.
type emuBlockQueue struct {
	n     uint32
	items []item
	labs  []uint32
}

// emuSink mirrors Sink: where one block's discoveries go.
type emuSink struct {
	kq   *emuKeepQueue
	bq   *emuBlockQueue
	qout []item
	qlab []uint32
	out  *uint32
}

// emuMemory is the device memory the kernels see: the CSR, the levels, the
// two queues (qcap items, then qcap labels, each) and the control words.
type emuMemory struct {
	offsets []uint32
	targets []int32
	level   []int32
	q       [2][]item
	qlab    [2][]uint32
	ctl     []uint32
}

// newEmuDevice emulates a grid of nwarps warps, warpsPerBlock to a block,
// whose block queues hold blockCap items, with the kernel's keep budget,
// over memory m with queues of qcap items.
func newEmuDevice(m emuMemory, chunk, qcap, nwarps, warpsPerBlock, blockCap uint32, seed uint64) *emuDevice {
	nblocks := (nwarps + warpsPerBlock - 1) / warpsPerBlock
	d := &emuDevice{offsets: m.offsets, targets: m.targets, level: m.level, q: m.q, qlab: m.qlab, ctl: m.ctl,
		chunk: chunk, qcap: qcap, nwarps: nwarps, rng: rand.New(rand.NewPCG(seed, 1)),
		warpsPerBlock: warpsPerBlock, blockCap: blockCap, blocks: make([]emuBlockQueue, nblocks),
		keepItems: keepItems, keepEdges: keepEdges, keepLow: keepLow, keepItemEdges: keepItemEdges}
	return d
}

// setKeep sets the megakernel's keep budget and empties the keep queues.
func (d *emuDevice) setKeep(items, edges, low, itemEdges uint32) {
	d.keepItems, d.keepEdges, d.keepLow, d.keepItemEdges = items, edges, low, itemEdges
	d.keep = make([][3]emuKeepQueue, len(d.blocks))
	for b := range d.keep {
		for i := range d.keep[b] {
			d.keep[b][i] = emuKeepQueue{items: make([]item, items), ilab: make([]uint32, items), pos: make([]uint32, items),
				tgt: make([]uint32, edges), elab: make([]uint32, edges)}
		}
	}
	d.blockLevel = make([]uint32, len(d.blocks))
	d.keptN, d.keptEdges = make([]uint32, len(d.blocks)), make([]uint32, len(d.blocks))
}

// init mirrors bfs_init.
func (d *emuDevice) init(root uint32) {
	for i := range d.level {
		d.level[i] = -1
	}
	d.level[root] = 0
	clear(d.ctl)
	b, e := d.offsets[root], d.offsets[root+1]
	n := (e - b + d.chunk - 1) / d.chunk
	for i := uint32(0); i < n; i++ {
		ib := b + i*d.chunk
		d.q[0][i], d.qlab[0][i] = item{ib, min(ib+d.chunk, e)}, 0
	}
	d.ctl[CtlCountWord(0)] = n
}

// claim mirrors claim: an atomicMin of label nl on w's level (-1 is the
// largest label).
func (d *emuDevice) claim(w, nl uint32) found {
	if uint32(d.level[w]) <= nl {
		return found{lab: nl}
	}
	if d.level[w] != -1 {
		d.relabels++
	}
	d.level[w] = int32(nl)
	d.maxlab = max(d.maxlab, nl)
	b, e := d.offsets[w], d.offsets[w+1]
	return found{nitems: (e - b + d.chunk - 1) / d.chunk, b: b, e: e, lab: nl}
}

// push mirrors push_items for one warp: lanes' item counts are scanned,
// one shared-memory add reserves the warp's slots in its block queue, and
// slots past the capacity spill to the global queue with one global add.
func (d *emuDevice) push(s *emuSink, f *[32]found) {
	var incl [32]uint32
	var run uint32
	for l := range f {
		run += f[l].nitems
		incl[l] = run
	}
	if run == 0 {
		return
	}
	bq := s.bq
	base := bq.n
	bq.n += run
	firstSpill := max(base, d.blockCap)
	var gbase uint32
	if base+run > d.blockCap {
		gbase = *s.out
		*s.out += base + run - firstSpill
	}
	for l := range f {
		pos := base + incl[l] - f[l].nitems
		for i := uint32(0); i < f[l].nitems; i++ {
			ib := f[l].b + i*d.chunk
			it := item{ib, min(ib+d.chunk, f[l].e)}
			slot := pos + i
			switch {
			case slot < d.blockCap:
				bq.items[slot], bq.labs[slot] = it, f[l].lab
			case gbase+slot-firstSpill < d.qcap:
				s.qout[gbase+slot-firstSpill] = it
				if s.qlab != nil {
					s.qlab[gbase+slot-firstSpill] = f[l].lab
				}
			default:
				d.ctl[CtlResult+ResultOverflow] = 1
			}
		}
	}
}

// flush mirrors flush_staged for every block, in a random order.
func (d *emuDevice) flush(qout []item, outCount *uint32) {
	for _, b := range d.rng.Perm(len(d.blocks)) {
		bq := &d.blocks[b]
		if bq.n == 0 {
			continue
		}
		n := min(bq.n, d.blockCap)
		base := uint32(0)
		if n > 0 {
			base = *outCount
			*outCount += n
		}
		for i := uint32(0); i < n; i++ {
			if base+i < d.qcap {
				qout[base+i] = bq.items[i]
			} else {
				d.ctl[CtlResult+ResultOverflow] = 1
			}
		}
		bq.n = 0
	}
}

// keepOrPush mirrors keep_or_push for one warp: candidates (vertices of one
// item of at most keepItemEdges edges) reserve slots and edges with one add
// on the packed reservation word and are kept, resolved to their targets,
// if both fit; the rest go on to push. It panics if a field of the
// reservation word would overflow, which the kernel's budget rules out.
func (d *emuDevice) keepOrPush(s *emuSink, f *[32]found) {
	if kq := s.kq; kq != nil && kq.full == 0 {
		var incl [32]uint32
		var run uint32
		cand := func(l int) bool { return f[l].nitems == 1 && f[l].e-f[l].b <= d.keepItemEdges }
		for l := range f {
			if cand(l) {
				run += 1<<16 | (f[l].e - f[l].b)
			}
			incl[l] = run
		}
		if run != 0 {
			old := kq.resv
			if old&keepEMask+run&0xffff > keepEMask || old>>keepShift+run>>16 >= 1<<(32-keepShift) {
				panic(fmt.Sprintf("keep reservation word overflows: %#x + %#x", old, run))
			}
			kq.resv += (run>>16)<<keepShift | run&0xffff
			for l := range f {
				if !cand(l) {
					continue
				}
				n := f[l].e - f[l].b
				slot := old>>keepShift + incl[l]>>16 - 1
				epos := old&keepEMask + incl[l]&0xffff - n
				if slot >= d.keepItems || epos+n > d.keepEdges {
					kq.full = 1
					continue
				}
				kq.items[slot], kq.ilab[slot], kq.pos[slot] = item{f[l].b, f[l].e}, f[l].lab, epos
				for i := uint32(0); i < n; i++ {
					kq.tgt[epos+i], kq.elab[epos+i] = uint32(d.targets[f[l].b+i]), f[l].lab
				}
				kq.done = max(kq.done, (slot+1)<<keepShift|(epos+n))
				f[l].nitems = 0
			}
		}
	}
	d.push(s, f)
}

// expandItems mirrors expand_items for one warp whose lanes hold it (with
// their vertices' labels): the lanes' edges are spread over the lanes in
// rounds of 32, and each round's claims go to keepOrPush.
func (d *emuDevice) expandItems(it [32]item, lab [32]uint32, s *emuSink) {
	var excl [32]uint32
	var total uint32
	for l := range it {
		excl[l] = total
		total += it[l].e - it[l].b
	}
	for e0 := uint32(0); e0 < total; e0 += 32 {
		var f [32]found
		for l := uint32(0); l < 32; l++ {
			e := e0 + l
			j := uint32(0)
			for step := uint32(16); step >= 1; step >>= 1 {
				if j+step < 32 && excl[j+step] <= e {
					j += step
				}
			}
			if e >= total {
				continue
			}
			if e-excl[j] >= it[j].e-it[j].b {
				panic(fmt.Sprintf("owner search: edge %d maps past item %d", e, j))
			}
			f[l] = d.claim(uint32(d.targets[it[j].b+e-excl[j]]), lab[j]+1)
		}
		d.keepOrPush(s, &f)
	}
}

// expandKept mirrors expand_kept for one block: its threads take the kept
// edges one each, in rounds of the block's size.
func (d *emuDevice) expandKept(cur *emuKeepQueue, edges uint32, s *emuSink) {
	threads := 32 * d.warpsPerBlock
	for e0 := uint32(0); e0 < edges; e0 += threads {
		for _, w := range d.rng.Perm(int(d.warpsPerBlock)) {
			var f [32]found
			for l := uint32(0); l < 32; l++ {
				if e := e0 + uint32(w)*32 + l; e < edges {
					f[l] = d.claim(cur.tgt[e], cur.elab[e]+1)
				}
			}
			d.keepOrPush(s, &f)
		}
	}
}

// expand mirrors expand_level over every warp, in a random warp order:
// items of qin with labels qinlab (nil: every item has label baseLab). In
// the per-level kernel (sink nil) warps are numbered block-major and their
// blocks' queues are flushed after the level; in the megakernel warps are
// numbered across blocks first and rotated by a hash of the step, and
// sink gives each block's sink.
func (d *emuDevice) expand(qin []item, qinlab []uint32, baseLab, count uint32, qout []item, outCount *uint32,
	sink func(block uint32) *emuSink, step uint32) {
	if count == 0 {
		return
	}
	mega := sink != nil
	if !mega {
		defer d.flush(qout, outCount)
	}
	d.maxCount = max(d.maxCount, count)
	// An overflowed count is clamped to what the queue holds.
	count = min(count, d.qcap)
	nblocks := uint32(len(d.blocks))
	k := min((count+d.nwarps-1)/d.nwarps, 32)
	stride := d.nwarps * k
	rot := uint32(0)
	if mega {
		rot = step * rotateMul % d.nwarps
	}
	// Only the warps numbered below ceil(count/k) find items; they run in
	// a random order.
	active := min((count+k-1)/k, d.nwarps)
	for _, a := range d.rng.Perm(int(active)) {
		gwarp := uint32(a)
		// The warp's block: per-level warps are numbered block-major; the
		// megakernel's across blocks first, then rotated.
		block := gwarp / d.warpsPerBlock
		s := &emuSink{bq: d.blockQueue(block), qout: qout, out: outCount}
		if mega {
			block = (gwarp + d.nwarps - rot) % d.nwarps % nblocks
			s = sink(block)
		}
		for base := gwarp * k; base < count; base += stride {
			var it [32]item
			var lab [32]uint32
			for l := uint32(0); l < 32; l++ {
				lab[l] = baseLab
				if l < k && base+l < count {
					it[l] = qin[base+l]
					if qinlab != nil {
						lab[l] = qinlab[base+l]
					}
				}
			}
			d.expandItems(it, lab, s)
		}
	}
}

// blockQueue returns block b's staging queue, allocating its items on first
// use (most blocks of a large grid never stage anything on small levels).
func (d *emuDevice) blockQueue(b uint32) *emuBlockQueue {
	bq := &d.blocks[b]
	if bq.items == nil {
		bq.items, bq.labs = make([]item, d.blockCap), make([]uint32, d.blockCap)
	}
	return bq
}

// megakernel mirrors bfs_megakernel's steps: each block's kept edges and
// the global queue, then each block's run-ahead levels (up to ahead levels
// in all, while its keep queue took every candidate), then each block's
// end of step (the staged items and the kept vertices it sheds go to the
// global queue with one reservation), with the ring of 64-bit barrier words
// (bits 32..63: global items pushed; 16..31: blocks that kept work; 0..15:
// arrivals). Blocks run ahead either level by level in turn or one block
// after another (chosen at random each step), so that some blocks race
// ahead of others as on the GPU. It returns the result words (levels,
// changed, barriers).
func (d *emuDevice) megakernel(maxSteps, ahead uint32) (levels, changed, barriers uint32) {
	if d.nwarps%d.warpsPerBlock != 0 {
		panic("a megakernel grid has whole blocks")
	}
	word := func(step uint32) *uint64 {
		i := CtlMegaWord(int(step))
		return (*uint64)(unsafe.Pointer(&d.ctl[i]))
	}
	nblocks := uint64(len(d.blocks))
	for b := range d.blocks {
		d.blocks[b].n = 0
	}
	d.setKeep(d.keepItems, d.keepEdges, d.keepLow, d.keepItemEdges)
	d.maxlab, d.relabels = 0, 0
	ahead = max(ahead, 1)
	step := uint32(0)
	count := d.ctl[CtlCountWord(0)]
	kept := false
	full := make([]bool, nblocks)
	for (count > 0 || kept) && step < maxSteps {
		*word(step + 2) = 0
		out := word(step + 1)
		qin, qinlab := d.q[step&1], d.qlab[step&1]
		qout, qlab := d.q[(step+1)&1], d.qlab[(step+1)&1]
		var pushed uint32
		sink := func(b uint32) *emuSink {
			return &emuSink{kq: &d.keep[b][(d.blockLevel[b]+1)%3], bq: d.blockQueue(b), qout: qout, qlab: qlab, out: &pushed}
		}
		// level ends a block's level: the next keep queue's counters.
		level := func(b uint32) {
			d.blockLevel[b]++
			kq := &d.keep[b][d.blockLevel[b]%3]
			d.keptN[b], d.keptEdges[b], full[b] = kq.done>>keepShift, kq.done&keepEMask, kq.full != 0
		}
		// runAhead runs block b's next level if it may.
		runAhead := func(b uint32) bool {
			if d.keptN[b] == 0 || full[b] {
				return false
			}
			d.keep[b][(d.blockLevel[b]+2)%3].reset()
			d.expandKept(&d.keep[b][d.blockLevel[b]%3], d.keptEdges[b], sink(b))
			level(b)
			return true
		}
		if count > 0 {
			d.globalSteps++
		}
		for b := range d.blocks {
			d.keep[b][(d.blockLevel[b]+2)%3].reset()
		}
		for _, b := range d.rng.Perm(len(d.blocks)) {
			d.expandKept(&d.keep[b][d.blockLevel[b]%3], d.keptEdges[b], sink(uint32(b)))
		}
		d.expand(qin, qinlab, 0, count, nil, nil, sink, step)
		for b := range d.blocks {
			level(uint32(b))
		}
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
		var keptBlocks uint64
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
				base := pushed
				pushed += nout
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
		*out += uint64(pushed) << 32
		step++
		// Every block arrives; the barrier opens when the arrivals reach
		// the grid size and hands out the global count and the kept flag.
		*out += nblocks | keptBlocks<<16
		if uint32(*out)&0xffff != uint32(nblocks) {
			panic("barrier word was not fresh")
		}
		count = uint32(*out >> 32)
		kept = (*out>>16)&0xffff != 0
	}
	if count > 0 || kept {
		changed = 1
	}
	// Levels: the largest label claimed + 1, or, if a label was lowered,
	// the largest level left in the level array + 1.
	levels = d.maxlab + 1
	if d.relabels > 0 {
		levels = 0
		for _, l := range d.level {
			if l != -1 {
				levels = max(levels, uint32(l)+1)
			}
		}
	}
	d.ctl[CtlResult+ResultLevels], d.ctl[CtlResult+ResultChanged], d.ctl[CtlResult+ResultBarriers] = levels, changed, step
	return levels, changed, step
}

// reset mirrors keep_reset.
func (kq *emuKeepQueue) reset() { kq.resv, kq.done, kq.full = 0, 0, 0 }

// queueLevel mirrors one bfs_queue_level launch and returns the next count
// (the host loop's 4-byte readback).
func (d *emuDevice) queueLevel(depth uint32) uint32 {
	count := d.ctl[CtlCountWord(int(depth))]
	d.ctl[CtlCountWord(int(depth+2))] = 0
	if count > 0 {
		d.ctl[CtlResult+ResultLevels] = depth + 1
	}
	d.expand(d.q[depth&1], nil, depth, count, d.q[(depth+1)&1], &d.ctl[CtlCountWord(int(depth+1))], nil, depth)
	return d.ctl[CtlCountWord(int(depth+1))]
}
