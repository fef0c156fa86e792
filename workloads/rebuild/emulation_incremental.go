package rebuild

import (
	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/internal/kernelabi"
)

// emuInc is the incremental state rebuild_incremental sees, as Go slices.
type emuInc struct {
	*emuState
	useStart, uses              []uint32
	head, next, up              []uint32
	slot, classStamp, rowStamp  []uint32
	losers, dirty, keyed, c     []uint32
	barriers, unionLinks, links uint32
}

// newEmuInc maps the buffers of an incremental launch.
func newEmuInc(l *executor.FakeLaunch, st StateParams[executor.DevPtr], p IncStateParams[executor.DevPtr], seed uint64) (*emuInc, error) {
	s, err := newEmuState(l, st, seed)
	if err != nil {
		return nil, err
	}
	m := &emuInc{emuState: s}
	c, r := st.Classes, st.Rows
	var link, stamp, lists []uint32
	for _, v := range []struct {
		dst *[]uint32
		ptr executor.DevPtr
		n   uint64
	}{{&m.useStart, p.UseStart, c + 1}, {&m.uses, p.Uses, max(r+st.ChildSlots, 1)}, {&link, p.Link, 3 * c}, {&m.slot, p.Slot, r},
		{&stamp, p.Stamp, c + r}, {&lists, p.Lists, c + 2*r}, {&m.c, p.IncCtl, IncCtlWords}} {
		if *v.dst, err = kernelabi.View[uint32](l, v.ptr, v.n); err != nil {
			return nil, err
		}
	}
	m.head, m.next, m.up = link[:c], link[c:2*c], link[2*c:]
	m.classStamp, m.rowStamp = stamp[:c], stamp[c:]
	m.losers, m.dirty, m.keyed = lists[:c], lists[c:c+r], lists[c+r:]
	return m, nil
}

func (e *emulator) runIncremental(l *executor.FakeLaunch, p IncrementalParams[executor.DevPtr]) error {
	m, err := newEmuInc(l, p.StateParams, p.IncStateParams, e.seeds.Next())
	if err != nil {
		return err
	}
	if grid := uint64(l.Config.Grid[0]) * uint64(l.Config.Grid[1]) * uint64(l.Config.Grid[2]); grid > MaxPersistentBlocks {
		m.ctl[CtlResult+ResultMisuse] = MisuseGrid
		return nil
	}
	m.run(p.MaxRounds)
	return nil
}

func (e *emulator) runIncStep(l *executor.FakeLaunch, p IncStepParams[executor.DevPtr]) error {
	m, err := newEmuInc(l, p.StateParams, p.IncStateParams, e.seeds.Next())
	if err != nil {
		return err
	}
	m.step(p.Round, p.Phase)
	return nil
}

// step mirrors rebuild_incremental_step.
func (m *emuInc) step(round, phase uint64) {
	res := m.ctl[CtlResult:]
	switch {
	case phase > IncPhaseInit:
		res[ResultMisuse] = MisusePhases
		return
	case phase == IncPhaseInit:
		m.init()
		return
	case res[ResultDone] != 0:
		return
	}
	pending := m.unionPairs
	if round > 0 {
		if pending = uint64(m.ctl[CtlCountWord(int(round))]); pending == 0 {
			res[ResultDone], res[ResultRounds] = 1, uint32(round)
			return
		}
	}
	next := CtlCountWord(int(round + 1))
	if phase == 0 {
		m.ctl[next] = 0
	}
	emit := func() uint32 { m.ctl[next]++; return m.ctl[next] - 1 }
	links := m.phase(uint32(round), uint32(phase), pending, emit)
	if phase == 0 && round == 0 {
		res[ResultUnionMerges] += links
	} else if phase == 0 {
		res[ResultCongruenceMerges] += links
	}
}

// run mirrors rebuild_incremental: the initialisation (a barrier), the
// rounds of four phases, then the compaction.
func (m *emuInc) run(maxRounds uint64) {
	m.init()
	m.barriers = 1
	var round uint32
	pending, changed := m.unionPairs, true
	for uint64(round) < maxRounds {
		pending = m.round(round, pending)
		round++
		if pending == 0 {
			changed = false
			break
		}
	}
	m.runPhase(compactStagesMask, m.pairs, 0, 0, allItems, nil)
	res := m.ctl[CtlResult:]
	res[ResultUnionMerges] += m.unionLinks
	res[ResultCongruenceMerges] += m.links
	res[ResultRounds], res[ResultBarriers] = round, m.barriers
	res[ResultChanged] = 0
	if changed {
		res[ResultChanged] = 1
	}
}

// init mirrors inc_init.
func (m *emuInc) init() {
	for c := range m.head {
		m.head[c], m.classStamp[c] = IncNil, 0
	}
	for i := range m.rowStamp {
		m.rowStamp[i], m.slot[i] = 0, IncNil
	}
	clear(m.c)
}

// round mirrors inc_round and returns the pairs the round emitted.
func (m *emuInc) round(round uint32, pending uint64) uint64 {
	var emitted uint32
	emit := func() uint32 { emitted++; return emitted - 1 }
	for phase := range uint32(IncPhases) {
		if l := m.phase(round, phase, pending, emit); round == 0 {
			m.unionLinks += l
		} else {
			m.links += l
		}
	}
	m.barriers += IncPhases
	return uint64(emitted)
}

// phase mirrors inc_phase and returns the links of its unite phase.
func (m *emuInc) phase(round, phase uint32, pending uint64, emit func() uint32) uint32 {
	switch phase {
	case 0:
		m.c[IncKeyed] = 0
		src := m.pairs
		if round == 0 {
			src = m.unions
		}
		return m.unitePass(src, pending)
	case 1:
		if round > 0 {
			for _, k := range m.order(0, uint64(m.c[IncLosers])) {
				m.walk(m.losers[k], round)
			}
		}
	case 2:
		nd := uint64(m.c[IncDirty])
		full := round == 0 || nd > m.rows/2 || uint64(m.c[IncTombs])+nd > m.tableSlots/4
		m.c[IncFull] = 0
		if full {
			m.c[IncFull] = 1
			m.canonAll()
		} else {
			m.canonDirty(nd)
		}
	default:
		full := m.c[IncFull] != 0
		if full {
			m.groupPass(nil, m.rows, emit)
		} else {
			m.groupPass(m.keyed, uint64(m.c[IncKeyed]), emit)
		}
		m.book(round, full)
	}
	return 0
}

// unitePass mirrors inc_unite_pass.
func (m *emuInc) unitePass(src []uint32, pending uint64) uint32 {
	var links uint32
	for _, k := range m.order(0, pending) {
		a, b := m.find(src[2*k]), m.find(src[2*k+1])
		if a == b {
			continue
		}
		w, l := min(a, b), max(a, b)
		m.parent[l] = w
		links++
		m.up[l], m.next[l], m.head[w] = w, m.head[w], l
		m.losers[m.c[IncLosers]] = l
		m.c[IncLosers]++
	}
	return links
}

// claim mirrors claim.
func claim(stamp []uint32, x, st uint32) bool {
	old := stamp[x]
	stamp[x] = st
	return old != st
}

// markUses mirrors mark_uses.
func (m *emuInc) markUses(c, st uint32) {
	for _, i := range m.uses[m.useStart[c]:m.useStart[c+1]] {
		if claim(m.rowStamp, i, st) {
			m.dirty[m.c[IncDirty]] = i
			m.c[IncDirty]++
		}
	}
}

// firstClaim mirrors first_claim.
func (m *emuInc) firstClaim(x, st uint32) uint32 {
	for x != IncNil && !claim(m.classStamp, x, st) {
		x = m.next[x]
	}
	return x
}

// walk mirrors walk: the stackless walk of loser l's subtree.
func (m *emuInc) walk(l, st uint32) {
	if !claim(m.classStamp, l, st) {
		return
	}
	m.markUses(l, st)
	for c := l; ; {
		d := m.firstClaim(m.head[c], st)
		for d == IncNil && c != l {
			if d = m.firstClaim(m.next[c], st); d == IncNil {
				c = m.up[c]
			}
		}
		if d == IncNil {
			return
		}
		c = d
		m.markUses(c, st)
	}
}

// canonAll mirrors canon_all_pass.
func (m *emuInc) canonAll() {
	clear(m.table)
	for _, k := range m.order(0, m.childSlots) {
		m.canon[k] = m.find(m.children[k])
	}
	for _, i := range m.order(0, m.rows) {
		m.cls[i] = m.find(m.rowClass[i])
	}
}

// canonDirty mirrors canon_dirty_pass.
func (m *emuInc) canonDirty(nd uint64) {
	for _, k := range m.order(0, nd) {
		i := m.dirty[k]
		m.cls[i] = m.find(m.rowClass[i])
		changed := false
		for j := m.rowOffset[i]; j < m.rowOffset[i]+m.rowLen[i]; j++ {
			if r := m.find(m.children[j]); r != m.canon[j] {
				m.canon[j], changed = r, true
			}
		}
		if !changed {
			continue
		}
		if p := m.slot[i]; p != IncNil {
			m.table[p] = m.table[p]&^0xFFFFFFFF | IncTombstone
			m.slot[i] = IncNil
			m.c[IncTombsNew]++
		}
		m.keyed[m.c[IncKeyed]] = i
		m.c[IncKeyed]++
	}
}

// groupPass mirrors inc_group_pass over list[0, n), or rows 0..n-1.
func (m *emuInc) groupPass(list []uint32, n uint64, emit func() uint32) {
	for _, k := range m.order(0, n) {
		i := uint32(k)
		if list != nil {
			i = list[k]
		}
		op, lo, ln := m.rowOp[i], m.rowOffset[i], m.rowLen[i]
		owner, at := m.insertLive(i, m.signature(op, lo, ln, false), op, lo, ln)
		m.slot[i] = at
		if owner != i {
			if oc, c := m.cls[owner], m.cls[i]; oc != c {
				slot := emit()
				m.pairs[2*slot], m.pairs[2*slot+1] = oc, c
			}
		}
	}
}

// insertLive mirrors insert_live: it returns the owner and, when row i
// claimed a slot, the slot (IncNil otherwise).
func (m *emuInc) insertLive(i, h, op, lo, n uint32) (owner, at uint32) {
	mask := m.tableSlots - 1
	pos := uint64(h) & mask
	for range m.tableSlots {
		v := m.table[pos]
		if v == 0 {
			m.table[pos] = uint64(h)<<32 | uint64(i+1)
			return i, uint32(pos)
		}
		if uint32(v) != IncTombstone && uint32(v>>32) == h {
			if j := uint32(v) - 1; m.sameRow(j, op, lo, n) {
				return j, IncNil
			}
		}
		pos = (pos + 1) & mask
	}
	m.ctl[CtlResult+ResultOverflow] = 1
	return i, IncNil
}

// book mirrors inc_book.
func (m *emuInc) book(round uint32, full bool) {
	nd := uint64(m.c[IncDirty])
	t := uint64(m.c[IncTouches]) | uint64(m.c[IncTouches+1])<<32
	if full {
		t += m.rows
		m.c[IncTombs] = 0
		if round > 0 {
			m.c[IncFullPasses]++
		}
	} else {
		t += nd
		m.c[IncTombs] += m.c[IncTombsNew]
	}
	m.c[IncTouches], m.c[IncTouches+1] = uint32(t), uint32(t>>32)
	m.c[IncTombsNew], m.c[IncLosers], m.c[IncDirty] = 0, 0, 0
}
