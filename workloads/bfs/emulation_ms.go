package bfs

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"sort"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/internal/kernelabi"
	"github.com/gpuplan/gpuplan/planners"
)

// wide picks a multi-source emulation by its launch's word width: w64 for
// 64-bit words, w32 for 32-bit ones.
func wide[F any](width uint64, w64, w32 F) F {
	if width == 64 {
		return w64
	}
	return w32
}

// msWord is a multi-source pass's vertex word: 32 or 64 roots.
type msWord interface{ ~uint32 | ~uint64 }

// emuMS mirrors the MS struct of the kernels: a pass's arrays for one
// level, with words of type W.
type emuMS[W msWord] struct {
	offsets         []uint32
	targets         []int32
	seen, cur, next []W
	// planes are the level planes of n vertices, laid out as
	// msPlaneWord says for per planes to a group (see ms_plane).
	planes        []W
	width, n, per uint64
	lab           uint32
	ctl           []uint32
	hubs          []uint32
	// graphHubs and graphHubc are the graph's hub list and its count
	// (hubs above bit 32, chunks below).
	graphHubs []uint32
	graphHubc uint64
	rng       *rand.Rand
}

// record mirrors ms_record: fresh joins the planes of the label's set
// bits.
func (m *emuMS[W]) record(u uint32, fresh W) {
	for l, b := m.lab, uint64(0); l != 0; l, b = l>>1, b+1 {
		if l&1 != 0 {
			m.planes[msPlaneWord(b, uint64(u), m.n, m.per)] |= fresh
		}
	}
}

// hubChunk returns hub chunk c of a hub list of nh entries: its vertex and
// its edge range, as ms_hub_of and the kernels' offset arithmetic find
// them.
func (m *emuMS[W]) hubChunk(hubs []uint32, nh, c uint32) (v, b, e uint32) {
	j := hubOf(hubs, nh, c)
	v = hubs[2*j]
	b = m.offsets[v] + (c-hubs[2*j+1])*msHubChunk
	return v, b, min(m.offsets[v+1], b+msHubChunk)
}

// appendList mirrors push_ids and flush_ids: the list's count at control
// word out grows by one per id (the order of a list does not matter).
func (m *emuMS[W]) appendList(list []uint32, out int, id uint32) {
	list[m.ctl[out]] = id
	m.ctl[out]++
}

// push mirrors ms_push: the list's vertices below msHubEdges in a random
// order, then the hub list's chunks (hubLine: chunks, then hubs) in a
// random order, each OR-ing its vertex's frontier bits that a neighbour has
// not seen into the neighbour's next word. The frontier words stay set;
// finish clears them.
func (m *emuMS[W]) push(in, out []uint32, count uint32, outCount, hubLine int) {
	for _, i := range m.rng.Perm(int(count)) {
		v := in[i]
		if b, e := m.offsets[v], m.offsets[v+1]; e-b < msHubEdges {
			m.pushEdges(m.cur[v], b, e, out, outCount)
		}
	}
	nh, chunks := m.ctl[hubLine+1], m.ctl[hubLine]
	for _, c := range m.rng.Perm(int(chunks)) {
		v, b, e := m.hubChunk(m.hubs, nh, uint32(c))
		m.pushEdges(m.cur[v], b, e, out, outCount)
	}
}

// pushEdges pushes frontier word f over the edges [b, e).
func (m *emuMS[W]) pushEdges(f W, b, e uint32, out []uint32, outCount int) {
	for _, u := range m.targets[b:e] {
		if fresh := f &^ m.seen[u]; fresh != 0 {
			old := m.next[u]
			m.next[u] |= fresh
			if old == 0 {
				m.appendList(out, outCount, uint32(u))
			}
		}
	}
}

// hubOf mirrors ms_hub_of: the entry of the nh entries of hubs whose
// chunks hold chunk c.
func hubOf(hubs []uint32, nh, c uint32) uint32 {
	return uint32(sort.Search(int(nh), func(j int) bool { return hubs[2*j+1] > c })) - 1
}

// pullHubs mirrors ms_pull_hubs: the graph's hub chunks in a random
// order, each OR-ing the frontier words of its edges' targets that its
// hub misses into the hub's next word.
func (m *emuMS[W]) pullHubs(full W) {
	nh, chunks := uint32(m.graphHubc>>32), uint32(m.graphHubc)
	for _, c := range m.rng.Perm(int(chunks)) {
		v, b, e := m.hubChunk(m.graphHubs, nh, uint32(c))
		missing := full &^ m.seen[v]
		var acc W
		for _, u := range m.targets[b:e] {
			acc |= m.cur[u] & missing
		}
		m.next[v] |= acc
	}
}

// pull mirrors ms_pull after pullHubs: every vertex below msHubEdges that
// some root of full has not seen ORs its neighbours' frontier words until
// every missing root is found (a warp of 32 vertices at a time, pullWarp);
// a vertex that found any records its levels and joins the list, and is
// counted into the frontier count.
func (m *emuMS[W]) pull(n uint32, full W, out []uint32, outCount int) (nf, mf uint32) {
	m.pullHubs(full)
	for base := uint32(0); base < n; base += 32 {
		var missing [32]W
		var b, e [32]uint32
		for l := range uint32(32) {
			if u := base + l; u < n {
				missing[l] = full &^ m.seen[u]
				b[l], e[l] = m.offsets[u], m.offsets[u+1]
				if e[l]-b[l] >= msHubEdges {
					missing[l] = 0
				}
			}
		}
		fresh := m.pullWarp(missing, b, e)
		for l := range uint32(32) {
			u := base + l
			if fresh[l] == 0 {
				continue
			}
			m.next[u] = fresh[l]
			m.seen[u] |= fresh[l]
			m.record(u, fresh[l])
			m.appendList(out, outCount, u)
			nf++
			mf += e[l] - b[l]
		}
	}
	return nf, mf
}

// pullWarp mirrors a warp's search of ms_pull: each lane ORs the frontier
// words of its first buSerial neighbours; then rounds of 32 edges packed
// across the lanes still missing roots, each slot's word masked by its
// owner's missing roots and OR-ed over the owner's run of slots by a
// segmented scan, each lane stopping once every missing root is found. It
// panics if a lane's result differs from the OR of all its neighbours'
// words, which would be a flaw in the packing.
func (m *emuMS[W]) pullWarp(missing [32]W, b, e [32]uint32) (fresh [32]W) {
	var cur, rem [32]uint32
	for l := range 32 {
		cur[l] = b[l]
		if missing[l] == 0 {
			continue
		}
		k := min(e[l]-b[l], buSerial)
		for i := range k {
			fresh[l] |= m.cur[m.targets[b[l]+i]] & missing[l]
		}
		cur[l] = b[l] + k
		if fresh[l] != missing[l] {
			rem[l] = e[l] - cur[l]
		}
	}
	for {
		excl, incl, run := warpScan(&rem)
		if run == 0 {
			break
		}
		var val [32]W
		var owner [32]uint32
		for slot := range uint32(32) {
			j := ownerOf(excl, slot)
			owner[slot] = j
			if slot < run {
				val[slot] = m.cur[m.targets[cur[j]+slot-excl[j]]] & missing[j]
			}
		}
		// The segmented inclusive OR of the kernel's shuffle scan.
		for o := uint32(1); o < 32; o <<= 1 {
			next := val
			for l := o; l < 32; l++ {
				if l-o >= excl[owner[l]] {
					next[l] |= val[l-o]
				}
			}
			val = next
		}
		for l := range 32 {
			if rem[l] == 0 || excl[l] >= 32 {
				continue
			}
			n := min(incl[l], 32) - excl[l]
			fresh[l] |= val[min(incl[l], 32)-1]
			if fresh[l] == missing[l] {
				rem[l] = 0
			} else {
				cur[l], rem[l] = cur[l]+n, rem[l]-n
			}
		}
	}
	for l := range 32 {
		var all W
		for i := b[l]; missing[l] != 0 && i < e[l]; i++ {
			all |= m.cur[m.targets[i]] & missing[l]
		}
		if all != fresh[l] {
			panic(fmt.Sprintf("multi-source pull: lane %d found %#x, its neighbours give %#x", l, fresh[l], all))
		}
	}
	return fresh
}

// finish mirrors ms_finish_body: list_out's count is at control word
// outCount, its hub list's at hubLine.
func (m *emuMS[W]) finish(pull bool, in, out []uint32, nin uint32, outCount, hubLine int) (nf, mf uint32) {
	for _, v := range in[:nin] {
		m.cur[v] = 0
	}
	if pull {
		for j := range uint32(m.graphHubc >> 32) {
			u := m.graphHubs[2*j]
			if m.next[u] == 0 {
				continue
			}
			deg := m.offsets[u+1] - m.offsets[u]
			m.seen[u] |= m.next[u]
			m.record(u, m.next[u])
			nf++
			mf += deg
			m.appendList(out, outCount, u)
			noteHub(m.ctl, m.hubs, hubLine, u, deg)
		}
		return nf, mf
	}
	for _, u := range out[:m.ctl[outCount]] {
		deg := m.offsets[u+1] - m.offsets[u]
		fresh := m.next[u]
		m.seen[u] |= fresh
		m.record(u, fresh)
		nf++
		mf += deg
		noteHub(m.ctl, m.hubs, hubLine, u, deg)
	}
	return nf, mf
}

// noteHub appends u to a hub list (two words per hub: the vertex and its
// first chunk) when its degree reaches msHubEdges, counting the hub and
// its chunks at ctl[line+1] and ctl[line].
func noteHub(ctl, hubs []uint32, line int, u, deg uint32) {
	if deg < msHubEdges {
		return
	}
	j := ctl[line+1]
	hubs[2*j], hubs[2*j+1] = u, ctl[line]
	ctl[line+1]++
	ctl[line] += (deg + msHubChunk - 1) / msHubChunk
}

// msArrays maps a pass's seen, frontier and next words of n vertices.
func msArrays[W msWord](l *executor.FakeLaunch, seen, cur, next executor.DevPtr, n uint64) (s, c, x []W, err error) {
	if s, err = kernelabi.View[W](l, seen, n); err != nil {
		return
	}
	if c, err = kernelabi.View[W](l, cur, n); err != nil {
		return
	}
	x, err = kernelabi.View[W](l, next, n)
	return
}

// addCounts adds nf vertices and mf edges to the 64-bit frontier count at
// control word i.
func addCounts(ctl []uint32, i int, nf, mf uint32) {
	v := (uint64(ctl[i]) | uint64(ctl[i+1])<<32) + (uint64(nf)<<32 | uint64(mf))
	ctl[i], ctl[i+1] = uint32(v), uint32(v>>32)
}

func (e *emulator) runMSInit(l *executor.FakeLaunch, p MSInitParams[executor.DevPtr]) error {
	if p.Width != 32 && p.Width != 64 || p.NRoots > p.Width {
		return fmt.Errorf("%s: width %d, %d roots", KernelMSInit, p.Width, p.NRoots)
	}
	ctl, err := kernelabi.View[uint32](l, p.Ctl, CtlWords)
	if err != nil {
		return err
	}
	words := p.N * p.Width / 32
	if p.Phase == 0 {
		for _, ptr := range []executor.DevPtr{p.Seen, p.Cur, p.Next} {
			w, err := kernelabi.View[uint32](l, ptr, words)
			if err != nil {
				return err
			}
			clear(w)
		}
		planes, err := kernelabi.View[uint32](l, p.Planes, p.PlaneWords)
		if err != nil {
			return err
		}
		clear(planes)
		clear(ctl)
		return nil
	}
	return wide(p.Width, msRoots[uint64], msRoots[uint32])(l, p, ctl)
}

// msRoots mirrors msbfs_init's phase 1.
func msRoots[W msWord](l *executor.FakeLaunch, p MSInitParams[executor.DevPtr], ctl []uint32) error {
	seen, cur, _, err := msArrays[W](l, p.Seen, p.Cur, p.Next, p.N)
	if err != nil {
		return err
	}
	roots, err := kernelabi.View[uint32](l, p.Roots, p.NRoots)
	if err != nil {
		return err
	}
	offsets, err := kernelabi.View[uint32](l, p.Offsets, p.N+1)
	if err != nil {
		return err
	}
	list, err := kernelabi.View[uint32](l, p.List, p.N)
	if err != nil {
		return err
	}
	hubs, err := hubView(l, p.Hubs)
	if err != nil {
		return err
	}
	for i, v := range roots {
		if uint64(v) >= p.N {
			return fmt.Errorf("%s: root %d of %d vertices", KernelMSInit, v, p.N)
		}
		seen[v] |= W(1) << i
		cur[v] |= W(1) << i
		first := true
		for _, r := range roots[:i] {
			first = first && r != v
		}
		if first {
			list[ctl[CtlCountWord(0)]] = v
			ctl[CtlCountWord(0)]++
			addCounts(ctl, CtlCountsWord(0), 1, offsets[v+1]-offsets[v])
			noteHub(ctl, hubs, CtlCountWord(0)+CtlHubs, v, offsets[v+1]-offsets[v])
		}
	}
	return nil
}

// msLaunch is the buffers of a multi-source level or its finish: the
// graph (targets 0: not read), the pass's words, planes and control words,
// the level's frontier (in) and next frontier (out), its hubs, and the
// graph's hubs with their count.
type msLaunch struct {
	offsets, targets, seen, cur, next, planes, ctl executor.DevPtr
	in, out, hubs, graphHubs                       executor.DevPtr
	n, graphHubc                                   uint64
}

// msLevelMemory maps what a multi-source level or its finish sees (the
// planes up to the group of label lab's highest bit) and returns its
// vertex lists.
func msLevelMemory[W msWord](l *executor.FakeLaunch, b msLaunch, lab uint64, seed uint64) (m *emuMS[W], in, out []uint32, err error) {
	width := uint64(bits.Len64(uint64(^W(0))))
	n := b.n
	m = &emuMS[W]{width: width, n: n, lab: uint32(lab), graphHubc: b.graphHubc, rng: rand.New(rand.NewPCG(seed, 3))}
	if m.offsets, err = kernelabi.View[uint32](l, b.offsets, n+1); err != nil {
		return nil, nil, nil, err
	}
	if b.targets != 0 {
		if m.targets, err = kernelabi.View[int32](l, b.targets, max(1, uint64(m.offsets[n]))); err != nil {
			return nil, nil, nil, err
		}
	}
	if m.seen, m.cur, m.next, err = msArrays[W](l, b.seen, b.cur, b.next, n); err != nil {
		return nil, nil, nil, err
	}
	groups := planners.PlaneGroups(uint64(bits.Len64(lab)), width)
	m.per = planners.PlanesPerGroup(width)
	if m.planes, err = kernelabi.View[W](l, b.planes, groups*n*m.per); err != nil {
		return nil, nil, nil, err
	}
	if m.ctl, err = kernelabi.View[uint32](l, b.ctl, CtlWords); err != nil {
		return nil, nil, nil, err
	}
	in, out, err = m.mapLists(l, b)
	return m, in, out, err
}

func (e *emulator) runMSLevel(l *executor.FakeLaunch, p MSLevelParams[executor.DevPtr]) error {
	return wide(p.Width, msLevel[uint64], msLevel[uint32])(l, p, e.seeds.Next())
}

// msLevel mirrors msbfs_level.
func msLevel[W msWord](l *executor.FakeLaunch, p MSLevelParams[executor.DevPtr], seed uint64) error {
	m, in, out, err := msLevelMemory[W](l, msLaunch{offsets: p.Offsets, targets: p.Targets, seen: p.Seen, cur: p.Cur, next: p.Next,
		planes: p.Planes, ctl: p.Ctl, in: p.ListIn, out: p.ListOut, hubs: p.Hubs, graphHubs: p.GraphHubs, n: p.N, graphHubc: p.GraphHubc},
		p.Depth+1, seed)
	if err != nil {
		return err
	}
	d := int(p.Depth)
	m.ctl[CtlCountWord(d+2)] = 0
	m.ctl[CtlCountsWord(d+2)], m.ctl[CtlCountsWord(d+2)+1] = 0, 0
	m.ctl[CtlCountWord(d+2)+CtlHubs], m.ctl[CtlCountWord(d+2)+CtlHubs+1] = 0, 0
	if p.Pull != 0 {
		full := ^W(0)
		if p.NRoots < uint64(bits.Len64(uint64(^W(0)))) {
			full = W(1)<<p.NRoots - 1
		}
		nf, mf := m.pull(uint32(p.N), full, out, CtlCountWord(d+1))
		addCounts(m.ctl, CtlCountsWord(d+1), nf, mf)
		return nil
	}
	m.push(in, out, m.ctl[CtlCountWord(d)], CtlCountWord(d+1), CtlCountWord(d)+CtlHubs)
	return nil
}

func (e *emulator) runMSFinish(l *executor.FakeLaunch, p MSFinishParams[executor.DevPtr]) error {
	return wide(p.Width, msFinish[uint64], msFinish[uint32])(l, p)
}

// msFinish mirrors msbfs_finish.
func msFinish[W msWord](l *executor.FakeLaunch, p MSFinishParams[executor.DevPtr]) error {
	m, in, out, err := msLevelMemory[W](l, msLaunch{offsets: p.Offsets, seen: p.Seen, cur: p.Cur, next: p.Next, planes: p.Planes,
		ctl: p.Ctl, in: p.ListIn, out: p.ListOut, hubs: p.Hubs, graphHubs: p.GraphHubs, n: p.N, graphHubc: p.GraphHubc}, p.Depth+1, 0)
	if err != nil {
		return err
	}
	d := int(p.Depth)
	nf, mf := m.finish(p.Pull != 0, in, out, m.ctl[CtlCountWord(d)], CtlCountWord(d+1), CtlCountWord(d+1)+CtlHubs)
	addCounts(m.ctl, CtlCountsWord(d+1), nf, mf)
	return nil
}

// mapLists maps a level's lists: the hub lists into m, the vertex lists
// returned.
func (m *emuMS[W]) mapLists(l *executor.FakeLaunch, b msLaunch) (in, out []uint32, err error) {
	if in, err = kernelabi.View[uint32](l, b.in, m.n); err != nil {
		return nil, nil, err
	}
	if out, err = kernelabi.View[uint32](l, b.out, m.n); err != nil {
		return nil, nil, err
	}
	if m.hubs, err = hubView(l, b.hubs); err != nil {
		return nil, nil, err
	}
	m.graphHubs, err = hubView(l, b.graphHubs)
	return in, out, err
}

// hubView is a multi-source pass's whole hub list.
func hubView(l *executor.FakeLaunch, hubs executor.DevPtr) ([]uint32, error) {
	n, err := l.Len(hubs)
	if err != nil {
		return nil, err
	}
	return kernelabi.View[uint32](l, hubs, n/4)
}
