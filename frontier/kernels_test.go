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
}

// emuBlockQueue mirrors BlockQueue: slots reserved (n, may pass the
// capacity) and the staged items.
type emuBlockQueue struct {
	n     uint32
	items []item
}

func newEmu(g *CSR, chunk int, nwarps, warpsPerBlock, blockCap uint32, seed uint64) *emuDevice {
	qcap, err := QueueCapacity(g, chunk)
	if err != nil {
		panic(err)
	}
	return &emuDevice{g: g, chunk: uint32(chunk), qcap: uint32(qcap), lowDeg: LowDegree(g), nwarps: nwarps,
		q: [2][]item{make([]item, qcap), make([]item, qcap)}, ctl: make([]uint32, CtlWords),
		level: make([]int32, g.NumVertices()), rng: rand.New(rand.NewPCG(seed, 1)),
		warpsPerBlock: warpsPerBlock, blockCap: blockCap,
		blocks: make([]emuBlockQueue, (nwarps+warpsPerBlock-1)/warpsPerBlock)}
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

// expand mirrors expand_level: every warp's rounds, in a random warp order.
func (d *emuDevice) expand(qin, qout []item, outCount *uint32, count uint32, next int32) {
	if count == 0 {
		return
	}
	for i := range d.blocks {
		if d.blocks[i].items == nil {
			d.blocks[i].items = make([]item, d.blockCap)
		}
	}
	defer d.flush(qout, outCount)
	d.maxCount = max(d.maxCount, count)
	k := min((count+d.nwarps-1)/d.nwarps, 32)
	stride := d.nwarps * k
	for _, w := range d.rng.Perm(int(d.nwarps)) {
		gwarp := uint32(w)
		for base := gwarp * k; base < count; base += stride {
			var it [32]item
			var excl [32]uint32
			var total uint32
			for l := uint32(0); l < 32; l++ {
				if l < k && base+l < count {
					it[l] = qin[base+l]
				}
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
					w := d.g.Targets[it[j].b+e-excl[j]]
					if d.level[w] == -1 {
						d.level[w] = next
						nb[l], ne[l] = d.g.Offsets[w], d.g.Offsets[w+1]
						nitems[l] = (ne[l] - nb[l] + d.chunk - 1) / d.chunk
					}
				}
				d.push(&d.blocks[gwarp/d.warpsPerBlock], qout, outCount, nitems, nb, ne)
			}
		}
	}
}

// megakernel mirrors bfs_megakernel's loop over levels, with its ring of
// 64-bit level words (high half: items pushed, low half: block arrivals),
// for a grid of blocks blocks; it returns the result words (levels,
// changed).
func (d *emuDevice) megakernel(maxLevels, blocks uint32) (uint32, uint32) {
	word := func(depth uint32) *uint64 {
		i := CtlMegaWord(int(depth))
		return (*uint64)(unsafe.Pointer(&d.ctl[i]))
	}
	dd := uint32(0)
	count := d.ctl[CtlCountWord(0)]
	for count > 0 && dd < maxLevels {
		*word(dd + 2) = 0
		out := word(dd + 1)
		var pushed uint32
		d.expand(d.q[dd&1], d.q[(dd+1)&1], &pushed, count, int32(dd)+1)
		*out += uint64(pushed) << 32
		dd++
		// Every block arrives; the barrier opens when the low half reaches
		// the grid size and hands out the high half as the next count.
		*out += uint64(blocks)
		if uint32(*out) != blocks {
			panic("level word was not fresh")
		}
		count = uint32(*out >> 32)
	}
	changed := uint32(0)
	if count > 0 {
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
	d.expand(d.q[depth&1], d.q[(depth+1)&1], &d.ctl[CtlCountWord(int(depth+1))], count, int32(depth)+1)
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
// arms, several grid sizes and chunk sizes) and checks the levels against
// the reference BFS, the result words and that no queue overflowed.
func TestKernelEmulation(t *testing.T) {
	for _, g := range emuGraphs(t) {
		roots, err := Roots(g, 3, 1)
		require.NoError(t, err)
		for _, chunk := range []int{1, 7, DefaultChunk} {
			for _, shape := range [][3]uint32{{1, 1, 4}, {5, 2, 3}, {132 * 32, 32, 2048}, {792 * 8, 8, 1024}} {
				nwarps, wpb, bcap := shape[0], shape[1], shape[2]
				for _, root := range roots {
					want, err := BFS(g, root)
					require.NoError(t, err)
					st := Stats(g, want)
					name := fmt.Sprintf("%s/chunk%d/warps%d/root%d", g.Name, chunk, nwarps, root)

					d := newEmu(g, chunk, nwarps, wpb, bcap, uint64(root))
					d.init(root)
					levels, changed := d.megakernel(uint32(g.NumVertices()), 132)
					require.Equal(t, want, d.level, name)
					assert.EqualValues(t, st.Levels, levels, name)
					assert.Zero(t, changed, name)
					assert.Zero(t, d.ctl[CtlResultOverflow], name)
					assert.LessOrEqual(t, d.maxCount, d.qcap)

					// Per-level launches, enqueued in batches of 4 without
					// reading anything back in between (the device loop).
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

// TestKernelEmulationBudget checks the megakernel's level budget: stopping
// early leaves the changed flag set.
func TestKernelEmulationBudget(t *testing.T) {
	g, err := Grid(8)
	require.NoError(t, err)
	d := newEmu(g, DefaultChunk, 4, 2, 16, 1)
	d.init(0)
	levels, changed := d.megakernel(5, 3)
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
