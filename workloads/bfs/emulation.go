package bfs

import (
	"fmt"
	"math/rand/v2"
)

// item is a frontier-queue entry: an edge range [b, e).
type item struct{ b, e uint32 }

// found mirrors Found: one lane's claim.
type found struct{ v, nitems, b, e, lab uint32 }

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
	// The megakernel's keep budget (the launch's: KEEP_EDGES_SMALL or
	// KEEP_EDGES and a KEEP_EDGES_PER_ITEM-th as many vertices; KEEP_LOW
	// and KEEP_ITEM_EDGES in bfs.cu), each block's ring of three keep queues,
	// its level counter and what it kept for the next step.
	keepItems, keepEdges, keepLow, keepItemEdges uint32
	keep                                         [][3]emuKeepQueue
	blockLevel                                   []uint32
	keptN, keptEdges                             []uint32
	// Statistics: steps with global items, steps with a shed, claims that
	// lowered a label a block running ahead had set, and the largest label.
	globalSteps, shedSteps, relabels, maxlab uint32
	// The two visited bitmaps, the bitmap top-down claims mark (nil: none),
	// and the decision log (4 words an entry, logCap entries).
	vis    [2][]uint32
	mark   []uint32
	log    []uint32
	logCap uint32
	// The level's (the megakernel step's) first claims, their degrees and
	// its lowered labels, as the kernels tally them.
	first, fedges, srelabels uint32
}

// keepEMask selects the edges of a keep queue's reservation word.
const keepEMask = 1<<keepShift - 1

// emuKeepQueue mirrors KeepQueue.
type emuKeepQueue struct {
	resv, done, full uint32
	items            []item
	ilab, pos, vid   []uint32
	tgt              []uint32
	eslot            []uint8
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
// two queues (qcap items, then qcap labels, each), the visited bitmaps, the
// control words and the decision log.
type emuMemory struct {
	offsets []uint32
	targets []int32
	level   []int32
	q       [2][]item
	qlab    [2][]uint32
	vis     [2][]uint32
	ctl     []uint32
	log     []uint32
}

// newEmuDevice emulates a grid of nwarps warps, warpsPerBlock to a block,
// whose block queues hold blockCap items, with the kernel's keep budget,
// over memory m with queues of qcap items.
func newEmuDevice(m emuMemory, chunk, qcap, nwarps, warpsPerBlock, blockCap uint32, seed uint64) *emuDevice {
	nblocks := (nwarps + warpsPerBlock - 1) / warpsPerBlock
	d := &emuDevice{offsets: m.offsets, targets: m.targets, level: m.level, q: m.q, qlab: m.qlab, ctl: m.ctl,
		vis: m.vis, log: m.log, logCap: uint32(len(m.log) / 4),
		chunk: chunk, qcap: qcap, nwarps: nwarps, rng: rand.New(rand.NewPCG(seed, 1)),
		warpsPerBlock: warpsPerBlock, blockCap: blockCap, blocks: make([]emuBlockQueue, nblocks),
		keepItems: keepItems, keepEdges: keepEdges, keepLow: keepLow, keepItemEdges: keepItemEdges}
	return d
}

// keepBudget is the keep budget in edges that a megakernel launch asked
// for keep takes, as bfs_megakernel chooses it: MaxMegakernelKeep when
// keep is at least that, else DefaultMegakernelKeep.
func keepBudget(keep uint64) uint32 {
	if keep >= MaxMegakernelKeep {
		return MaxMegakernelKeep
	}
	return DefaultMegakernelKeep
}

// setKeep sets the megakernel's keep budget and empties the keep queues.
func (d *emuDevice) setKeep(items, edges, low, itemEdges uint32) {
	d.keepItems, d.keepEdges, d.keepLow, d.keepItemEdges = items, edges, low, itemEdges
	d.keep = make([][3]emuKeepQueue, len(d.blocks))
	for b := range d.keep {
		for i := range d.keep[b] {
			d.keep[b][i] = emuKeepQueue{items: make([]item, items), ilab: make([]uint32, items), pos: make([]uint32, items),
				vid: make([]uint32, items), tgt: make([]uint32, edges), eslot: make([]uint8, edges)}
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
	if d.vis[0] != nil {
		clear(d.vis[0])
		d.vis[0][root/32] = 1 << (root % 32)
	}
	clear(d.ctl)
	b, e := d.offsets[root], d.offsets[root+1]
	n := (e - b + d.chunk - 1) / d.chunk
	for i := uint32(0); i < n; i++ {
		ib := b + i*d.chunk
		d.q[0][i], d.qlab[0][i] = item{ib, min(ib+d.chunk, e)}, 0
	}
	d.ctl[CtlCountWord(0)] = n
	d.setCtl64(CtlCountsWord(0), 1<<32|uint64(e-b))
}

// ctl64 reads the 64-bit control value at word i (low half first).
func (d *emuDevice) ctl64(i int) uint64 { return uint64(d.ctl[i]) | uint64(d.ctl[i+1])<<32 }

// setCtl64 writes the 64-bit control value at word i.
func (d *emuDevice) setCtl64(i int, v uint64) { d.ctl[i], d.ctl[i+1] = uint32(v), uint32(v>>32) }

// addCtl64 adds v to the 64-bit control value at word i and returns the
// old value (an atomicAdd).
func (d *emuDevice) addCtl64(i int, v uint64) uint64 {
	old := d.ctl64(i)
	d.setCtl64(i, old+v)
	return old
}

// takeCounts adds the level's tallied first claims and their degrees to
// the 64-bit count at word i, and clears the tallies (add_counts).
func (d *emuDevice) takeCounts(i int) {
	d.addCtl64(i, uint64(d.first)<<32|uint64(d.fedges))
	d.first, d.fedges, d.srelabels = 0, 0, 0
}

// claim mirrors claim: an atomicMin of label nl on w's level (-1 is the
// largest label), tallied, and marked in the visited bitmap d.mark when
// it is a first claim.
func (d *emuDevice) claim(w, nl uint32) found {
	if uint32(d.level[w]) <= nl {
		return found{v: w, lab: nl}
	}
	b, e := d.offsets[w], d.offsets[w+1]
	if d.level[w] != -1 {
		d.relabels++
		d.srelabels++
	} else {
		d.first++
		d.fedges += e - b
		if d.mark != nil {
			d.mark[w/32] |= 1 << (w % 32)
		}
	}
	d.level[w] = int32(nl)
	d.maxlab = max(d.maxlab, nl)
	return found{v: w, nitems: (e - b + d.chunk - 1) / d.chunk, b: b, e: e, lab: nl}
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
// item of at most keepItemEdges edges) reserve slots and edges on the
// packed reservation word, each with its own add (here in lane order, one
// of the orders the device's atomics may take), and are kept, resolved to
// their targets, if both fit; the rest go on to push. It panics if a field of the
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
				kq.items[slot], kq.ilab[slot], kq.pos[slot], kq.vid[slot] = item{f[l].b, f[l].e}, f[l].lab, epos, f[l].v
				for i := uint32(0); i < n; i++ {
					kq.tgt[epos+i], kq.eslot[epos+i] = uint32(d.targets[f[l].b+i]), uint8(slot)
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
// edges one each, in rounds of the block's size. With fresh (blocks running
// ahead) each thread reads its source's level before the claim and, where
// another block lowered it since it was kept, claims the target again with
// that level + 1 and hands on what that claim found instead.
func (d *emuDevice) expandKept(cur *emuKeepQueue, edges uint32, s *emuSink, fresh bool) {
	threads := 32 * d.warpsPerBlock
	for e0 := uint32(0); e0 < edges; e0 += threads {
		for _, w := range d.rng.Perm(int(d.warpsPerBlock)) {
			var f [32]found
			for l := uint32(0); l < 32; l++ {
				if e := e0 + uint32(w)*32 + l; e < edges {
					slot := cur.eslot[e]
					lab, now := cur.ilab[slot], uint32(d.level[cur.vid[slot]])
					f[l] = d.claim(cur.tgt[e], lab+1)
					if fresh && now < lab {
						f[l] = d.claim(cur.tgt[e], now+1)
					}
				}
			}
			d.keepOrPush(s, &f)
		}
	}
}

// expand mirrors expand_level over every warp, in a random warp order:
// items of qin with labels qinlab (nil: every item has label baseLab). In
// the per-level kernel (place nil) warps are numbered block-major and their
// blocks' queues are flushed after the level; in the megakernel place gives
// each warp its block's sink.
func (d *emuDevice) expand(qin []item, qinlab []uint32, baseLab, count uint32, qout []item, outCount *uint32,
	place func(gwarp uint32) *emuSink) {
	if count == 0 {
		return
	}
	mega := place != nil
	if !mega {
		defer d.flush(qout, outCount)
	}
	d.maxCount = max(d.maxCount, count)
	// An overflowed count is clamped to what the queue holds.
	count = min(count, d.qcap)
	k := min((count+d.nwarps-1)/d.nwarps, 32)
	stride := d.nwarps * k
	// Only the warps numbered below ceil(count/k) find items; they run in
	// a random order.
	active := min((count+k-1)/k, d.nwarps)
	for _, a := range d.rng.Perm(int(active)) {
		gwarp := uint32(a)
		// Per-level warps are numbered block-major; the megakernel places
		// its own.
		var s *emuSink
		if mega {
			s = place(gwarp)
		} else {
			s = &emuSink{bq: d.blockQueue(gwarp / d.warpsPerBlock), qout: qout, out: outCount}
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
	d.expand(d.q[depth&1], nil, depth, count, d.q[(depth+1)&1], &d.ctl[CtlCountWord(int(depth+1))], nil)
	return d.ctl[CtlCountWord(int(depth+1))]
}
