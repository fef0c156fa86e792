package frontier

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"regexp"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	g     *CSR
	level []int32
	q     [2][]item
	qlab  [2][]uint32
	ctl   []uint32
	chunk uint32
	qcap  uint32
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

// The kernel's keep queue reservation word: vertices above keepShift,
// edges below.
const (
	keepShift = 20
	keepEMask = 1<<keepShift - 1
	// rotateMul is ROTATE_MUL: the multiplier of the step hash that
	// rotates the megakernel's warps over the global queue.
	rotateMul uint32 = 2654435761
)

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

// newEmu emulates a grid of nwarps warps, warpsPerBlock to a block, whose
// block queues hold blockCap items, with the kernel's keep budget.
func newEmu(g *CSR, chunk int, nwarps, warpsPerBlock, blockCap uint32, seed uint64) *emuDevice {
	qcap, err := QueueCapacity(g, chunk)
	if err != nil {
		panic(err)
	}
	nblocks := (nwarps + warpsPerBlock - 1) / warpsPerBlock
	d := &emuDevice{g: g, chunk: uint32(chunk), qcap: uint32(qcap), nwarps: nwarps,
		q:     [2][]item{make([]item, qcap), make([]item, qcap)},
		qlab:  [2][]uint32{make([]uint32, qcap), make([]uint32, qcap)},
		ctl:   make([]uint32, CtlWords),
		level: make([]int32, g.NumVertices()), rng: rand.New(rand.NewPCG(seed, 1)),
		warpsPerBlock: warpsPerBlock, blockCap: blockCap,
		blocks: make([]emuBlockQueue, nblocks)}
	for i := range d.blocks {
		d.blocks[i] = emuBlockQueue{items: make([]item, blockCap), labs: make([]uint32, blockCap)}
	}
	d.setKeep(64, 256, 16, 64)
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
func (d *emuDevice) init(root int32) {
	for i := range d.level {
		d.level[i] = -1
	}
	d.level[root] = 0
	clear(d.ctl)
	b, e := d.g.Offsets[root], d.g.Offsets[root+1]
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
	b, e := d.g.Offsets[w], d.g.Offsets[w+1]
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
				d.ctl[CtlResultOverflow] = 1
			}
		}
	}
}

// flush mirrors flush_staged for every block, in a random order.
func (d *emuDevice) flush(qout []item, outCount *uint32) {
	for _, b := range d.rng.Perm(len(d.blocks)) {
		bq := &d.blocks[b]
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
				d.ctl[CtlResultOverflow] = 1
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
					kq.tgt[epos+i], kq.elab[epos+i] = uint32(d.g.Targets[f[l].b+i]), f[l].lab
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
			f[l] = d.claim(uint32(d.g.Targets[it[j].b+e-excl[j]]), lab[j]+1)
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
	for _, p := range d.rng.Perm(int(d.nwarps)) {
		block := uint32(p) / d.warpsPerBlock
		gwarp := uint32(p)
		s := &emuSink{bq: &d.blocks[block], qout: qout, out: outCount}
		if mega {
			gwarp = uint32(p)%d.warpsPerBlock*nblocks + block
			gwarp = (gwarp + step*rotateMul%d.nwarps) % d.nwarps
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
			return &emuSink{kq: &d.keep[b][(d.blockLevel[b]+1)%3], bq: &d.blocks[b], qout: qout, qlab: qlab, out: &pushed}
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
						d.ctl[CtlResultOverflow] = 1
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
	d.ctl[CtlResultLevels], d.ctl[CtlResultChanged], d.ctl[CtlResultBarriers] = levels, changed, step
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
		d.ctl[CtlResultLevels] = depth + 1
	}
	d.expand(d.q[depth&1], nil, depth, count, d.q[(depth+1)&1], &d.ctl[CtlCountWord(int(depth+1))], nil, depth)
	return d.ctl[CtlCountWord(int(depth+1))]
}

func emuGraphs(t *testing.T) []*CSR {
	t.Helper()
	var gs []*CSR
	k, err := Kronecker(11, 16, 3)
	require.NoError(t, err)
	gr, err := Grid(23)
	require.NoError(t, err)
	rd, err := Road(20, 4)
	require.NoError(t, err)
	star, err := BuildUndirected("star", 3000, make([]int32, 2999), func() []int32 {
		d := make([]int32, 2999)
		for i := range d {
			d[i] = int32(i + 1)
		}
		return d
	}())
	require.NoError(t, err)
	return append(gs, k, gr, rd, star)
}

// TestKernelEmulation runs the kernels' queue logic (megakernel and per-level
// arms, several grid shapes, chunk sizes, megakernel keep budgets and run-
// ahead depths) and checks the levels against the reference BFS, the result
// words and that no queue overflowed.
func TestKernelEmulation(t *testing.T) {
	// The kernel's keep budget, and a tiny one that makes blocks turn
	// candidates away and shed on most levels.
	budgets := [][4]uint32{{64, 256, 16, 64}, {4, 16, 1, 4}}
	for _, g := range emuGraphs(t) {
		roots, err := Roots(g, 3, 1)
		require.NoError(t, err)
		for _, chunk := range []int{1, 7, DefaultChunk} {
			for _, shape := range [][3]uint32{{1, 1, 4}, {6, 2, 3}, {132 * 16, 16, 1024}, {792 * 8, 8, 1024}} {
				nwarps, wpb, bcap := shape[0], shape[1], shape[2]
				for _, root := range roots {
					want, err := BFS(g, root)
					require.NoError(t, err)
					st := Stats(g, want)
					for _, kb := range budgets {
						for _, ahead := range []uint32{1, 3, 8} {
							name := fmt.Sprintf("%s/chunk%d/warps%d/root%d/keep%v/ahead%d", g.Name, chunk, nwarps, root, kb, ahead)
							d := newEmu(g, chunk, nwarps, wpb, bcap, uint64(root)+uint64(ahead))
							d.setKeep(kb[0], kb[1], kb[2], kb[3])
							d.init(root)
							levels, changed, barriers := d.megakernel(uint32(g.NumVertices()), ahead)
							require.Equal(t, want, d.level, name)
							assert.EqualValues(t, st.Levels, levels, name)
							assert.Zero(t, changed, name)
							assert.LessOrEqual(t, barriers, levels, name)
							if ahead == 1 {
								// Level-synchronous: one barrier per level,
								// and no label is ever lowered.
								assert.Equal(t, levels, barriers, name)
								assert.Zero(t, d.relabels, name)
							}
							assert.Zero(t, d.ctl[CtlResultOverflow], name)
							assert.LessOrEqual(t, d.maxCount, d.qcap)
						}
					}

					// Per-level launches, enqueued in batches of 4 without
					// reading anything back in between (the device loop).
					name := fmt.Sprintf("%s/chunk%d/warps%d/root%d/levels", g.Name, chunk, nwarps, root)
					d := newEmu(g, chunk, nwarps, wpb, bcap, uint64(root))
					d.init(root)
					depth := uint32(0)
					for {
						var next uint32
						for i := 0; i < 4; i++ {
							next = d.queueLevel(depth)
							depth++
						}
						if next == 0 {
							break
						}
					}
					require.Equal(t, want, d.level, name)
					assert.EqualValues(t, st.Levels, d.ctl[CtlResultLevels], name)
					assert.Zero(t, d.relabels, name)
				}
			}
		}
	}
}

// TestKernelEmulationKeep checks that the megakernel's keep queues carry a
// high-diameter graph's levels: with the kernel's budget a grid of 200 x 200
// from a corner needs the global queue on few steps, and running ahead 8
// levels crosses far fewer grid barriers than levels, with some labels
// lowered when blocks race ahead and the same levels in the end; with a
// tiny budget blocks shed and the global queue carries most steps.
func TestKernelEmulationKeep(t *testing.T) {
	g, err := Grid(200)
	require.NoError(t, err)
	want, err := BFS(g, 0)
	require.NoError(t, err)
	st := Stats(g, want)
	d := newEmu(g, DefaultChunk, 132*16, 16, 1024, 5)
	d.init(0)
	levels, _, barriers := d.megakernel(uint32(g.NumVertices()), 1)
	require.Equal(t, want, d.level)
	require.EqualValues(t, st.Levels, levels)
	require.Equal(t, levels, barriers)
	t.Logf("kernel budget, level-synchronous: %d levels, %d steps with global items, %d with a shed", levels, d.globalSteps, d.shedSteps)
	assert.Less(t, d.globalSteps, levels/4, "most levels run from the blocks' keep queues alone")

	d = newEmu(g, DefaultChunk, 132*16, 16, 1024, 5)
	d.init(0)
	levels, _, barriers = d.megakernel(uint32(g.NumVertices()), 8)
	require.Equal(t, want, d.level)
	require.EqualValues(t, st.Levels, levels)
	t.Logf("kernel budget, 8 ahead: %d levels in %d steps, %d labels lowered", levels, barriers, d.relabels)
	assert.Less(t, barriers, levels/3, "running ahead saves most grid barriers")

	d = newEmu(g, DefaultChunk, 132*16, 16, 1024, 5)
	d.setKeep(4, 16, 1, 4)
	d.init(0)
	levels, _, barriers = d.megakernel(uint32(g.NumVertices()), 1)
	require.Equal(t, want, d.level)
	require.EqualValues(t, st.Levels, levels)
	t.Logf("tiny budget: %d levels, %d steps with global items, %d with a shed", levels, d.globalSteps, d.shedSteps)
	assert.Greater(t, d.shedSteps, barriers/2, "a tiny budget sheds on most steps")
	assert.Greater(t, d.globalSteps, barriers/2)
}

// TestKernelEmulationRelabel builds a case where running ahead must lower
// labels: on a cycle whose one side starts a step late, the other side's
// block races past the meeting point and its labels there are too large
// until the late side lowers them.
func TestKernelEmulationRelabel(t *testing.T) {
	// A cycle of 64 vertices, and 6 leaves on vertex 63: its degree 8 is
	// past the tiny keep budget's 4 edges per vertex, so 63 goes through
	// the global queue and its side of the cycle starts a step late.
	const n, leaves = 64, 6
	var src, dst []int32
	for i := int32(0); i < n; i++ {
		src, dst = append(src, i), append(dst, (i+1)%n)
	}
	for i := int32(0); i < leaves; i++ {
		src, dst = append(src, n-1), append(dst, n+i)
	}
	g, err := BuildUndirected("cycle", n+leaves, src, dst)
	require.NoError(t, err)
	want, err := BFS(g, 0)
	require.NoError(t, err)
	st := Stats(g, want)
	relabels := uint32(0)
	for seed := uint64(0); seed < 20; seed++ {
		d := newEmu(g, DefaultChunk, 4, 1, 16, seed)
		d.setKeep(4, 16, 1, 4)
		d.init(0)
		levels, changed, barriers := d.megakernel(n, 8)
		require.Equal(t, want, d.level, "seed %d", seed)
		assert.EqualValues(t, st.Levels, levels, "seed %d", seed)
		assert.Zero(t, changed)
		assert.Less(t, barriers, levels)
		relabels += d.relabels
	}
	assert.Positive(t, relabels, "the late side lowered labels")
}

// TestKernelEmulationBudget checks the megakernel's step budget: stopping
// early leaves the changed flag set.
func TestKernelEmulationBudget(t *testing.T) {
	g, err := Grid(8)
	require.NoError(t, err)
	d := newEmu(g, DefaultChunk, 4, 2, 16, 1)
	d.init(0)
	levels, changed, barriers := d.megakernel(5, 1)
	// Five steps labelled levels 1..5.
	assert.EqualValues(t, 6, levels)
	assert.EqualValues(t, 5, barriers)
	assert.EqualValues(t, 1, changed)
}

func TestEmbeddedPTX(t *testing.T) {
	ptx := BFSKernelPTX()
	require.NotEmpty(t, ptx)
	assert.True(t, bytes.Contains(ptx, []byte(".target sm_80")))
	for _, name := range BFSKernelNames() {
		re := regexp.MustCompile(`\.visible \.entry ` + name + `\(([^)]*)\)`)
		m := re.FindSubmatch(ptx)
		require.NotNil(t, m, name)
		// Every parameter is 8 bytes wide (.u64): the driver binding copies
		// each kernel argument as 8 bytes.
		params := regexp.MustCompile(`\.param \.(\w+)`).FindAllSubmatch(m[1], -1)
		require.NotEmpty(t, params, name)
		for _, p := range params {
			assert.Equal(t, "u64", string(p[1]), name)
		}
	}
	ptx[0] = 'X'
	assert.NotEqual(t, ptx[0], BFSKernelPTX()[0], "callers get a copy")
}

func TestDeviceBytes(t *testing.T) {
	g, err := Grid(4)
	require.NoError(t, err)
	qcap, err := QueueCapacity(g, 4)
	require.NoError(t, err)
	assert.EqualValues(t, 16+48/4+1, qcap)
	need, err := DeviceBytes(g, 4)
	require.NoError(t, err)
	assert.EqualValues(t, g.Bytes()+4*16+2*12*qcap+4*CtlWords, need)
	require.NoError(t, CheckDeviceBudget(g, 4, need))
	var tl *TooLargeError
	require.ErrorAs(t, CheckDeviceBudget(g, 4, need-1), &tl)
	assert.Equal(t, "device bytes", tl.Field)
	_, err = QueueCapacity(g, 0)
	require.Error(t, err)
	assert.True(t, LowDegree(g))
	k, err := Kronecker(10, 16, 1)
	require.NoError(t, err)
	assert.False(t, LowDegree(k))
	assert.Equal(t, 4, DefaultRunAhead(LowDegree(g)))
	assert.Equal(t, 1, DefaultRunAhead(LowDegree(k)))
}
