package bfs

// asyncUnit is an item of the asynchronous megakernel's ring: an edge range
// and its vertex's label.
type asyncUnit struct {
	it  item
	lab uint32
}

// emuAsync is the asynchronous megakernel's shared state as the emulation
// keeps it: the ring, the pending units by label and in all, the window,
// and a block queue's spill space.
type emuAsync struct {
	ring      []asyncUnit
	cnt       map[uint32]int
	work      int
	window    uint32
	spill     []item
	spillLabs []uint32
	spilled   uint32
}

// wm returns the lowest label with a pending unit (0 when none is).
func (a *emuAsync) wm() uint32 {
	lo, any := uint32(0), false
	for l, c := range a.cnt {
		if c > 0 && (!any || l < lo) {
			lo, any = l, true
		}
	}
	return lo
}

// add counts units of label lab as pending (delta below 0: done).
func (a *emuAsync) add(lab uint32, delta int) {
	a.cnt[lab] += delta
	if a.cnt[lab] == 0 {
		delete(a.cnt, lab)
	}
	a.work += delta
}

// megaAsync mirrors the megakernel's asynchronous traversal (direction
// MEGA_ASYNC) with a window of window labels: rounds in which every block,
// in a random order, expands its kept vertices within the window (moving
// those past it to the ring) or, holding none within it, the ring's leading
// items within the window (at most asyncTake), keeping what it finds within
// its budget and pushing the rest to the ring. The pending counts are
// exact here, so wm is the lowest pending label; a round in which no block
// could expand anything ignores the window, as the kernel's idle blocks do.
// It returns the result words (levels, changed 0, one barrier).
func (d *emuDevice) megaAsync(window uint32) (levels, changed, barriers uint32) {
	for b := range d.blocks {
		d.blocks[b].n = 0
		d.keptN[b], d.keptEdges[b] = 0, 0
	}
	d.setKeep(d.keepItems, d.keepEdges, d.keepLow, d.keepItemEdges)
	d.maxlab, d.relabels, d.first, d.fedges, d.srelabels = 0, 0, 0, 0, 0
	a := &emuAsync{cnt: map[uint32]int{}, window: max(window, 1), spill: make([]item, d.qcap), spillLabs: make([]uint32, d.qcap)}
	for i := uint32(0); i < d.ctl[CtlCountWord(0)]; i++ {
		a.ring = append(a.ring, asyncUnit{d.q[0][i], 0})
		a.add(0, 1)
	}
	force := false
	for a.work > 0 {
		progress := false
		for _, b := range d.rng.Perm(len(d.blocks)) {
			if d.asyncRound(a, uint32(b), force) {
				progress = true
			}
		}
		force = !progress
	}
	d.ctl[CtlResult+ResultLevels], d.ctl[CtlResult+ResultChanged], d.ctl[CtlResult+ResultBarriers] = d.megaLevels(), 0, 1
	return d.megaLevels(), 0, 1
}

// asyncRound mirrors one round of block b and reports whether it expanded
// anything.
func (d *emuDevice) asyncRound(a *emuAsync, b uint32, force bool) bool {
	limit := a.wm() + a.window - 1
	if force {
		limit = asyncMaxLabel
	}
	cur := &d.keep[b][d.blockLevel[b]%3]
	kn := d.keptN[b]
	busy := false
	for i := uint32(0); i < kn; i++ {
		busy = busy || cur.ilab[i] <= limit
	}
	var taken []asyncUnit
	if !busy {
		n := 0
		for n < len(a.ring) && n < asyncTake && a.ring[n].lab <= limit {
			n++
		}
		taken, a.ring = a.ring[:n:n], a.ring[n:]
	}
	if !busy && len(taken) == 0 {
		return false
	}
	for _, u := range taken {
		a.add(u.lab, -1)
	}
	// The kept vertices within the window are expanded; those past it go
	// to the ring, their edges given a label whose claims find nothing.
	kok := kn == 0 || busy
	for i := uint32(0); busy && i < kn; i++ {
		if cur.ilab[i] <= limit {
			a.add(cur.ilab[i], -1)
			continue
		}
		d.asyncPush(a, cur.items[i], cur.ilab[i], false)
		cur.ilab[i] = ^uint32(0) - 1
	}
	a.spilled = 0
	s := &emuSink{bq: d.blockQueue(b), qout: a.spill, qlab: a.spillLabs, out: &a.spilled}
	if kok {
		s.kq = &d.keep[b][(d.blockLevel[b]+1)%3]
		s.kq.reset()
		d.expandKept(cur, d.keptEdges[b], s, false)
	}
	for _, u := range taken {
		var it [32]item
		var lab [32]uint32
		it[0], lab[0] = u.it, u.lab
		d.expandItems(it, lab, s)
	}
	if kok {
		nk := d.nextLevel(b)
		for i := uint32(0); i < d.keptN[b]; i++ {
			a.add(nk.ilab[i], 1)
		}
	}
	bq := s.bq
	for i := uint32(0); i < min(bq.n, d.blockCap); i++ {
		d.asyncPush(a, bq.items[i], bq.labs[i], true)
	}
	for i := uint32(0); i < *s.out && i < d.qcap; i++ {
		d.asyncPush(a, s.qout[i], s.qlab[i], true)
	}
	bq.n = 0
	return true
}

// asyncPush appends a unit to the ring (counted as pending when fresh),
// setting the overflow flag where the kernel's ring would: an item or label
// past a slot's fields, or more units than the ring holds.
func (d *emuDevice) asyncPush(a *emuAsync, it item, lab uint32, fresh bool) {
	if it.e-it.b > AsyncItemEdges || lab > asyncMaxLabel || uint32(len(a.ring)) >= d.qcap {
		d.ctl[CtlResult+ResultOverflow] = 1
	}
	a.ring = append(a.ring, asyncUnit{it, lab})
	if fresh {
		a.add(lab, 1)
	}
}
