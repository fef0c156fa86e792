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

// emuDevice emulates the BFS kernels' queue logic on the CPU, step for step:
// the ring of counts, items of at most chunk edges, the warp's items-per-
// round k, the lanes' owner search over the exclusive scan, and warp-
// aggregated pushes. Warps run in a random order to stand in for the GPU's
// concurrency (the compare-and-swap makes every order give the same levels).
type emuDevice struct {
	g      *CSR
	level  []int32
	q      [2][]item
	ctl    []uint32
	chunk  uint32
	qcap   uint32
	lowDeg bool
	nwarps uint32
	// Warps per block and the block queue's capacity in items.
	warpsPerBlock uint32
	blockCap      uint32
	blocks        []emuBlockQueue
	rng           *rand.Rand
	maxCount      uint32
	// The megakernel's keep budget (KEEP_ITEMS, KEEP_EDGES, KEEP_LOW and
	// KEEP_ITEM_EDGES in bfs.cu), each block's two keep queues, what each
	// block kept for the next level, and how many levels shed or spilled.
	keepItems, keepEdges, keepLow, keepItemEdges uint32
	keep                                         [][2]emuKeepQueue
	keptN, keptEdges                             []uint32
	shedLevels, globalLevels                     uint32
}

// The kernel's keep queue reservation word: items above keepShift, edges
// below.
const (
	keepShift = 20
	keepEMask = 1<<keepShift - 1
	// rotateMul is ROTATE_MUL: the multiplier of the level hash that
	// rotates the megakernel's warps over the global queue.
	rotateMul uint32 = 2654435761
)

// emuKeepQueue mirrors KeepQueue.
type emuKeepQueue struct {
	resv, done, full uint32
	items            []item
	pos              []uint32
}

// emuBlockQueue mirrors BlockQueue: slots reserved (n, may pass the
// capacity) and the staged items.
type emuBlockQueue struct {
	n     uint32
	items []item
}

// newEmu emulates a grid of nwarps warps, warpsPerBlock to a block, whose
// block queues hold blockCap items, with the kernel's keep budget.
func newEmu(g *CSR, chunk int, nwarps, warpsPerBlock, blockCap uint32, seed uint64) *emuDevice {
	qcap, err := QueueCapacity(g, chunk)
	if err != nil {
		panic(err)
	}
	nblocks := (nwarps + warpsPerBlock - 1) / warpsPerBlock
	d := &emuDevice{g: g, chunk: uint32(chunk), qcap: uint32(qcap), lowDeg: LowDegree(g), nwarps: nwarps,
		q: [2][]item{make([]item, qcap), make([]item, qcap)}, ctl: make([]uint32, CtlWords),
		level: make([]int32, g.NumVertices()), rng: rand.New(rand.NewPCG(seed, 1)),
		warpsPerBlock: warpsPerBlock, blockCap: blockCap,
		blocks: make([]emuBlockQueue, nblocks)}
	d.setKeep(64, 256, 16, 64)
	return d
}

// setKeep sets the megakernel's keep budget and empties the keep queues.
func (d *emuDevice) setKeep(items, edges, low, itemEdges uint32) {
	d.keepItems, d.keepEdges, d.keepLow, d.keepItemEdges = items, edges, low, itemEdges
	d.keep = make([][2]emuKeepQueue, len(d.blocks))
	for b := range d.keep {
		for i := range d.keep[b] {
			d.keep[b][i] = emuKeepQueue{items: make([]item, items), pos: make([]uint32, items)}
		}
	}
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
		d.q[0][i] = item{ib, min(ib+d.chunk, e)}
	}
	d.ctl[CtlCountWord(0)] = n
}

// push mirrors push_items for one warp: lanes' item counts are scanned,
// one shared-memory add reserves the warp's slots in its block queue, and
// slots past the capacity spill to the global queue with one global add.
func (d *emuDevice) push(bq *emuBlockQueue, qout []item, outCount *uint32, nitems, nb, ne []uint32) {
	var incl [32]uint32
	var run uint32
	for l := 0; l < 32; l++ {
		run += nitems[l]
		incl[l] = run
	}
	if run == 0 {
		return
	}
	base := bq.n
	bq.n += run
	firstSpill := max(base, d.blockCap)
	var spilled, gbase uint32
	if base+run > d.blockCap {
		spilled = base + run - firstSpill
		gbase = *outCount
		*outCount += spilled
	}
	for l := 0; l < 32; l++ {
		pos := base + incl[l] - nitems[l]
		for i := uint32(0); i < nitems[l]; i++ {
			ib := nb[l] + i*d.chunk
			it := item{ib, min(ib+d.chunk, ne[l])}
			slot := pos + i
			switch {
			case slot < d.blockCap:
				bq.items[slot] = it
			case gbase+slot-firstSpill < d.qcap:
				qout[gbase+slot-firstSpill] = it
			default:
				d.ctl[CtlResultOverflow] = 1
			}
		}
	}
}

// flush mirrors flush_block_queue for every block, in a random order.
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

// expandItems mirrors expand_items for one warp whose lanes hold it: the
// lanes' edges are spread over the lanes in rounds of 32, and each round's
// discoveries go to push.
func (d *emuDevice) expandItems(it [32]item, next int32, push func(nitems, nb, ne []uint32)) {
	var excl [32]uint32
	var total uint32
	for l := range it {
		excl[l] = total
		total += it[l].e - it[l].b
	}
	for e0 := uint32(0); e0 < total; e0 += 32 {
		nitems, nb, ne := make([]uint32, 32), make([]uint32, 32), make([]uint32, 32)
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
			nitems[l], nb[l], ne[l] = d.discover(it[j].b+e-excl[j], next)
		}
		push(nitems, nb, ne)
	}
}

// discover mirrors discover: a target reached for the first time gets
// level next and returns its adjacency as items.
func (d *emuDevice) discover(eidx uint32, next int32) (nitems, nb, ne uint32) {
	w := d.g.Targets[eidx]
	if d.level[w] != -1 {
		return 0, 0, 0
	}
	d.level[w] = next
	nb, ne = d.g.Offsets[w], d.g.Offsets[w+1]
	return (ne - nb + d.chunk - 1) / d.chunk, nb, ne
}

// expand mirrors expand_level over every warp, in a random warp order. In
// the per-level kernel warps are numbered block-major and their blocks'
// queues are flushed after the level; in the megakernel (mega) warps are
// numbered across blocks first and rotated by a hash of the level, pushes
// offer single-item vertices to the block's keep queue nxt, and the caller
// ends the level.
func (d *emuDevice) expand(qin, qout []item, outCount *uint32, count uint32, next int32, mega bool, nxt int) {
	if count == 0 {
		return
	}
	for i := range d.blocks {
		if d.blocks[i].items == nil {
			d.blocks[i].items = make([]item, d.blockCap)
		}
	}
	if !mega {
		defer d.flush(qout, outCount)
	}
	d.maxCount = max(d.maxCount, count)
	nblocks := uint32(len(d.blocks))
	k := min((count+d.nwarps-1)/d.nwarps, 32)
	stride := d.nwarps * k
	for _, p := range d.rng.Perm(int(d.nwarps)) {
		block := uint32(p) / d.warpsPerBlock
		gwarp := uint32(p)
		if mega {
			gwarp = uint32(p)%d.warpsPerBlock*nblocks + block
			gwarp = (gwarp + uint32(next)*rotateMul%d.nwarps) % d.nwarps
		}
		push := func(nitems, nb, ne []uint32) {
			if mega {
				d.keepOrPush(&d.keep[block][nxt], nitems, nb, ne)
			}
			d.push(&d.blocks[block], qout, outCount, nitems, nb, ne)
		}
		for base := gwarp * k; base < count; base += stride {
			var it [32]item
			for l := uint32(0); l < 32; l++ {
				if l < k && base+l < count {
					it[l] = qin[base+l]
				}
			}
			d.expandItems(it, next, push)
		}
	}
}

// keepOrPush mirrors keep_or_push's keep step for one warp: candidates
// (vertices of one item of at most keepItemEdges edges) reserve slots and
// edges with one add on the packed reservation word and are kept if both
// fit; kept lanes' nitems become 0, the rest go on to push. It panics if a
// field of the reservation word would overflow, which the kernel's budget
// rules out.
func (d *emuDevice) keepOrPush(kq *emuKeepQueue, nitems, nb, ne []uint32) {
	if kq.full != 0 {
		return
	}
	var incl [32]uint32
	var run uint32
	cand := func(l int) bool { return nitems[l] == 1 && ne[l]-nb[l] <= d.keepItemEdges }
	for l := 0; l < 32; l++ {
		if cand(l) {
			run += 1<<16 | (ne[l] - nb[l])
		}
		incl[l] = run
	}
	if run == 0 {
		return
	}
	old := kq.resv
	if old&keepEMask+run&0xffff > keepEMask || old>>keepShift+run>>16 >= 1<<(32-keepShift) {
		panic(fmt.Sprintf("keep reservation word overflows: %#x + %#x", old, run))
	}
	kq.resv += (run>>16)<<keepShift | run&0xffff
	for l := 0; l < 32; l++ {
		if !cand(l) {
			continue
		}
		n := ne[l] - nb[l]
		slot := old>>keepShift + incl[l]>>16 - 1
		epos := old&keepEMask + incl[l]&0xffff - n
		if slot >= d.keepItems || epos+n > d.keepEdges {
			kq.full = 1
			continue
		}
		kq.items[slot], kq.pos[slot] = item{nb[l], ne[l]}, epos
		kq.done = max(kq.done, (slot+1)<<keepShift|(epos+n))
		nitems[l] = 0
	}
}

// expandKept mirrors expand_kept for block b: the block's threads take its
// kept edges one each, in rounds of the block's size; each warp finds its
// lanes' items by binary search over the kept items' edge offsets.
func (d *emuDevice) expandKept(b int, kq, nxt *emuKeepQueue, qout []item, outCount *uint32, next int32) {
	n, edges := d.keptN[b], d.keptEdges[b]
	threads := 32 * d.warpsPerBlock
	for e0 := uint32(0); e0 < edges; e0 += threads {
		for _, w := range d.rng.Perm(int(d.warpsPerBlock)) {
			nitems, nb, ne := make([]uint32, 32), make([]uint32, 32), make([]uint32, 32)
			for l := uint32(0); l < 32; l++ {
				e := e0 + uint32(w)*32 + l
				if e >= edges {
					continue
				}
				lo, hi := uint32(0), n
				for hi-lo > 1 {
					if mid := (lo + hi) / 2; kq.pos[mid] <= e {
						lo = mid
					} else {
						hi = mid
					}
				}
				if e-kq.pos[lo] >= kq.items[lo].e-kq.items[lo].b {
					panic(fmt.Sprintf("kept edge %d maps past item %d", e, lo))
				}
				nitems[l], nb[l], ne[l] = d.discover(kq.items[lo].b+e-kq.pos[lo], next)
			}
			d.keepOrPush(nxt, nitems, nb, ne)
			d.push(&d.blocks[b], qout, outCount, nitems, nb, ne)
		}
	}
}

// megakernel mirrors bfs_megakernel's loop over levels: each block's kept
// items, then the global queue, then each block's end of level (the staged
// items and the kept items it sheds go to the global queue with one
// reservation), with its ring of 64-bit level words (bits 32..63: global
// items pushed; 16..31: blocks that kept items; 0..15: arrivals). It returns
// the result words (levels, changed).
func (d *emuDevice) megakernel(maxLevels uint32) (uint32, uint32) {
	if d.nwarps%d.warpsPerBlock != 0 {
		panic("a megakernel grid has whole blocks")
	}
	word := func(depth uint32) *uint64 {
		i := CtlMegaWord(int(depth))
		return (*uint64)(unsafe.Pointer(&d.ctl[i]))
	}
	blocks := uint64(len(d.blocks))
	for b := range d.blocks {
		d.blocks[b].items = make([]item, d.blockCap)
		d.blocks[b].n = 0
	}
	d.setKeep(d.keepItems, d.keepEdges, d.keepLow, d.keepItemEdges)
	dd := uint32(0)
	count := d.ctl[CtlCountWord(0)]
	kept := false
	for (count > 0 || kept) && dd < maxLevels {
		*word(dd + 2) = 0
		out := word(dd + 1)
		cur, nxt := int(dd&1), int((dd+1)&1)
		qin, qout := d.q[dd&1], d.q[(dd+1)&1]
		next := int32(dd) + 1
		var pushed uint32
		if count > 0 {
			d.globalLevels++
		}
		for _, b := range d.rng.Perm(len(d.blocks)) {
			d.expandKept(b, &d.keep[b][cur], &d.keep[b][nxt], qout, &pushed, next)
		}
		d.expand(qin, qout, &pushed, count, next, true, nxt)
		var keptBlocks uint64
		shed := false
		for _, b := range d.rng.Perm(len(d.blocks)) {
			bq, kq := &d.blocks[b], &d.keep[b][nxt]
			ns := min(bq.n, d.blockCap)
			kn, kedges := kq.done>>keepShift, kq.done&keepEMask
			var shedn uint32
			if kq.full != 0 && kn > d.keepLow {
				shedn = kn - d.keepLow
				shed = true
			}
			if nout := ns + shedn; nout > 0 {
				base := pushed
				pushed += nout
				for i := uint32(0); i < nout; i++ {
					var it item
					if i < ns {
						it = bq.items[i]
					} else {
						it = kq.items[d.keepLow+i-ns]
					}
					if base+i < d.qcap {
						qout[base+i] = it
					} else {
						d.ctl[CtlResultOverflow] = 1
					}
				}
			}
			if shedn > 0 {
				kn, kedges = d.keepLow, kq.pos[d.keepLow]
			}
			d.keep[b][cur] = emuKeepQueue{items: d.keep[b][cur].items, pos: d.keep[b][cur].pos}
			bq.n = 0
			d.keptN[b], d.keptEdges[b] = kn, kedges
			if kn > 0 {
				keptBlocks++
			}
		}
		if shed {
			d.shedLevels++
		}
		*out += uint64(pushed) << 32
		dd++
		// Every block arrives; the barrier opens when the arrivals reach
		// the grid size and hands out the global count and the kept flag.
		*out += blocks | keptBlocks<<16
		if uint32(*out)&0xffff != uint32(blocks) {
			panic("level word was not fresh")
		}
		count = uint32(*out >> 32)
		kept = (*out>>16)&0xffff != 0
	}
	changed := uint32(0)
	if count > 0 || kept {
		changed = 1
	}
	d.ctl[CtlResultLevels], d.ctl[CtlResultChanged] = dd, changed
	return dd, changed
}

// queueLevel mirrors one bfs_queue_level launch and returns the next count
// (the host loop's 4-byte readback).
func (d *emuDevice) queueLevel(depth uint32) uint32 {
	count := d.ctl[CtlCountWord(int(depth))]
	d.ctl[CtlCountWord(int(depth+2))] = 0
	if count > 0 {
		d.ctl[CtlResultLevels] = depth + 1
	}
	d.expand(d.q[depth&1], d.q[(depth+1)&1], &d.ctl[CtlCountWord(int(depth+1))], count, int32(depth)+1, false, 0)
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
// arms, several grid shapes, chunk sizes and megakernel keep budgets) and
// checks the levels against the reference BFS, the result words and that no
// queue overflowed.
func TestKernelEmulation(t *testing.T) {
	// The kernel's keep budget, and a tiny one that makes blocks turn
	// candidates away and shed on most levels.
	budgets := [][4]uint32{{64, 256, 16, 64}, {4, 16, 1, 4}}
	for _, g := range emuGraphs(t) {
		roots, err := Roots(g, 3, 1)
		require.NoError(t, err)
		for _, chunk := range []int{1, 7, DefaultChunk} {
			for _, shape := range [][3]uint32{{1, 1, 4}, {6, 2, 3}, {132 * 16, 16, 2048}, {792 * 8, 8, 1024}} {
				nwarps, wpb, bcap := shape[0], shape[1], shape[2]
				for _, root := range roots {
					want, err := BFS(g, root)
					require.NoError(t, err)
					st := Stats(g, want)
					for _, kb := range budgets {
						name := fmt.Sprintf("%s/chunk%d/warps%d/root%d/keep%v", g.Name, chunk, nwarps, root, kb)
						d := newEmu(g, chunk, nwarps, wpb, bcap, uint64(root))
						d.setKeep(kb[0], kb[1], kb[2], kb[3])
						d.init(root)
						levels, changed := d.megakernel(uint32(g.NumVertices()))
						require.Equal(t, want, d.level, name)
						assert.EqualValues(t, st.Levels, levels, name)
						assert.Zero(t, changed, name)
						assert.Zero(t, d.ctl[CtlResultOverflow], name)
						assert.LessOrEqual(t, d.maxCount, d.qcap)
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
				}
			}
		}
	}
}

// TestKernelEmulationKeep checks that the megakernel's keep queues carry a
// high-diameter graph's levels: with the kernel's budget a grid of 200 x 200
// from a corner needs the global queue only while the frontier grows past
// a block's budget, and with a tiny budget blocks shed and the global queue
// carries most levels, with the same levels either way.
func TestKernelEmulationKeep(t *testing.T) {
	g, err := Grid(200)
	require.NoError(t, err)
	want, err := BFS(g, 0)
	require.NoError(t, err)
	st := Stats(g, want)
	d := newEmu(g, DefaultChunk, 132*16, 16, 2048, 5)
	d.init(0)
	levels, _ := d.megakernel(uint32(g.NumVertices()))
	require.Equal(t, want, d.level)
	require.EqualValues(t, st.Levels, levels)
	t.Logf("kernel budget: %d levels, %d with global items, %d with a shed", levels, d.globalLevels, d.shedLevels)
	assert.Less(t, d.globalLevels, levels/4, "most levels run from the blocks' keep queues alone")

	d = newEmu(g, DefaultChunk, 132*16, 16, 2048, 5)
	d.setKeep(4, 16, 1, 4)
	d.init(0)
	levels, _ = d.megakernel(uint32(g.NumVertices()))
	require.Equal(t, want, d.level)
	require.EqualValues(t, st.Levels, levels)
	t.Logf("tiny budget: %d levels, %d with global items, %d with a shed", levels, d.globalLevels, d.shedLevels)
	assert.Greater(t, d.shedLevels, levels/2, "a tiny budget sheds on most levels")
	assert.Greater(t, d.globalLevels, levels/2)
}

// TestKernelEmulationBudget checks the megakernel's level budget: stopping
// early leaves the changed flag set.
func TestKernelEmulationBudget(t *testing.T) {
	g, err := Grid(8)
	require.NoError(t, err)
	d := newEmu(g, DefaultChunk, 4, 2, 16, 1)
	d.init(0)
	levels, changed := d.megakernel(5)
	assert.EqualValues(t, 5, levels)
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
	assert.EqualValues(t, g.Bytes()+4*16+2*8*qcap+4*CtlWords, need)
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
}
