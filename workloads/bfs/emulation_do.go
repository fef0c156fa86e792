package bfs

import (
	"fmt"

	"github.com/gpuplan/gpuplan/planners"
)

// emuDirState mirrors DirState: the previous level's direction and
// frontier size, the unexplored edges at the previous decision and which
// visited bitmap is current.
type emuDirState struct {
	prev, prevNF, mu, parity uint32
}

// decide mirrors the decision of the kernels: the device rule on the
// frontier's nf vertices and mf edges, and the unexplored edges it leaves.
func (s emuDirState) decide(nf, mf, n, entries uint32) (dir, reason, mu uint32) {
	mu = s.mu - mf
	dd, rr := deviceRule(planners.BFSDirection(s.prev), uint64(nf), uint64(s.prevNF), uint64(mf), uint64(mu), uint64(n), uint64(entries))
	return uint32(dd), uint32(rr), mu
}

// after returns the state after a level in direction dir from a frontier
// of nf vertices that left mu edges unexplored.
func (s emuDirState) after(dir, nf, mu uint32) emuDirState {
	p := s.parity
	if dir == uint32(DirBottomUp) {
		p ^= 1
	}
	return emuDirState{prev: dir, prevNF: nf, mu: mu, parity: p}
}

// writeLog mirrors a decision log entry's write.
func (d *emuDevice) writeLog(step, dir, reason, parity, depth, nf, mf, mu uint32) {
	e := d.log[4*(step%d.logCap):]
	e[0] = dir | reason<<logReasonShift | parity<<logParityBit | depth<<logDepthShift
	e[1], e[2], e[3] = nf, mf, mu
}

// readLog returns the direction state that log entry step leaves.
func (d *emuDevice) logState(step uint32) emuDirState {
	e := d.log[4*(step%d.logCap):]
	prev := emuDirState{mu: e[3], parity: e[0] >> logParityBit & 1}
	return prev.after(e[0]&logDirMask, e[1], e[3])
}

// visited mirrors visited: vertex u's bit in a bitmap.
func visitedBit(vis []uint32, u uint32) bool { return vis[u/32]>>(u%32)&1 != 0 }

// buSearch mirrors bu_search for one warp: lane l's vertex has edges
// [b[l], e[l]) and searches when active[l]. Each lane checks its first
// buSerial edges alone; then rounds of 32 edges packed across the lanes
// still searching (the exclusive scan and owner search of the kernel),
// each lane stopping at the first round that finds a visited neighbour. It
// panics if a lane's result differs from whether any neighbour is
// visited, which would be a flaw in the packing.
func (d *emuDevice) buSearch(vin []uint32, active [32]bool, b, e [32]uint32) (found [32]bool) {
	var cur, rem [32]uint32
	for l := range 32 {
		cur[l] = b[l]
		if !active[l] {
			continue
		}
		m := min(e[l]-b[l], buSerial)
		for i := range m {
			found[l] = found[l] || visitedBit(vin, uint32(d.targets[b[l]+i]))
		}
		cur[l] = b[l] + m
		if !found[l] {
			rem[l] = e[l] - cur[l]
		}
	}
	for {
		excl, incl, run := warpScan(&rem)
		if run == 0 {
			break
		}
		var hm uint32
		for slot := uint32(0); slot < min(run, 32); slot++ {
			j := ownerOf(excl, slot)
			if visitedBit(vin, uint32(d.targets[cur[j]+slot-excl[j]])) {
				hm |= 1 << slot
			}
		}
		for l := range 32 {
			if rem[l] == 0 || excl[l] >= 32 {
				continue
			}
			n := min(incl[l], 32) - excl[l]
			if seg := hm >> excl[l] & uint32(uint64(1)<<n-1); seg != 0 {
				found[l], rem[l] = true, 0
			} else {
				cur[l], rem[l] = cur[l]+n, rem[l]-n
			}
		}
	}
	for l := range 32 {
		any := false
		for i := b[l]; active[l] && i < e[l]; i++ {
			any = any || visitedBit(vin, uint32(d.targets[i]))
		}
		if any != found[l] {
			panic(fmt.Sprintf("bottom-up search: lane %d found %v, its neighbours say %v", l, found[l], any))
		}
	}
	return found
}

// ownerOf mirrors warp_owner: the last lane j with excl[j] <= slot.
func ownerOf(excl [32]uint32, slot uint32) uint32 {
	j := uint32(0)
	for step := uint32(16); step >= 1; step >>= 1 {
		if j+step < 32 && excl[j+step] <= slot {
			j += step
		}
	}
	return j
}

// buLevel mirrors bu_level: tiles of buTileWords words per warp, taken by
// the blocks (tile t by block t % blocks) in a random order; each tile's
// finds get level lab, their bits in vout, and are counted into the 64-bit
// count at control word counts with one add, and pushed through the tile
// block's sink only while the running count of finds stays within n /
// beta.
func (d *emuDevice) buLevel(vin, vout []uint32, n, lab uint32, counts int, sink func(block uint32) *emuSink) {
	nwords := (n + 31) / 32
	perTile := d.warpsPerBlock * buTileWords
	tiles := (nwords + perTile - 1) / perTile
	for _, t := range d.rng.Perm(int(tiles)) {
		var tnf, tmf uint32
		var finds [][32]found
		for w := uint32(t) * perTile; w < min(uint32(t+1)*perTile, nwords); w++ {
			var active [32]bool
			var b, e [32]uint32
			word := vin[w]
			for l := range uint32(32) {
				v := 32*w + l
				if v < n && word>>l&1 == 0 {
					b[l], e[l] = d.offsets[v], d.offsets[v+1]
					active[l] = e[l] > b[l]
				}
			}
			f := d.buSearch(vin, active, b, e)
			var fm uint32
			var lanes [32]found
			for l := range uint32(32) {
				if !f[l] {
					continue
				}
				fm |= 1 << l
				d.level[32*w+l] = int32(lab)
				d.maxlab = max(d.maxlab, lab)
				tnf++
				tmf += e[l] - b[l]
				lanes[l] = found{nitems: (e[l] - b[l] + d.chunk - 1) / d.chunk, b: b[l], e: e[l], lab: lab}
			}
			vout[w] = word | fm
			finds = append(finds, lanes)
		}
		if tnf == 0 {
			continue
		}
		old := d.addCtl64(counts, uint64(tnf)<<32|uint64(tmf))
		if (old>>32+uint64(tnf))*planners.DefaultDirectionBeta > uint64(n) {
			continue
		}
		s := sink(uint32(t) % uint32(len(d.blocks)))
		for i := range finds {
			d.push(s, &finds[i])
		}
	}
}

// doLevel mirrors bfs_do_level at depth dep with the host's direction dir
// (0: the device rule decides); it returns the next frontier's vertices.
func (d *emuDevice) doLevel(dep, dir uint32) uint32 {
	n := uint32(len(d.level))
	fc := d.ctl64(CtlCountsWord(int(dep)))
	nf, mf := uint32(fc>>32), uint32(fc)
	d.ctl[CtlCountWord(int(dep+2))] = 0
	d.setCtl64(CtlCountsWord(int(dep+2)), 0)
	if nf == 0 {
		return 0
	}
	d.ctl[CtlResult+ResultLevels] = dep + 1
	total := d.offsets[n]
	st := emuDirState{mu: total}
	if dep > 0 {
		st = d.logState(dep - 1)
	}
	rule, reason, mu := st.decide(nf, mf, n, total)
	if dir != 0 && dir != rule && d.ctl[CtlResult+ResultDirMismatch] == 0 {
		d.ctl[CtlResult+ResultDirMismatch] = dep + 1
	}
	if dir == 0 {
		dir = rule
	}
	d.writeLog(dep, dir, reason, st.parity, 1, nf, mf, mu)
	vcur, vnxt := d.vis[st.parity], d.vis[st.parity^1]
	out := &d.ctl[CtlCountWord(int(dep+1))]
	qout := d.q[(dep+1)&1]
	if dir == uint32(DirTopDown) {
		d.mark = vcur
		d.expand(d.q[dep&1], nil, dep, d.ctl[CtlCountWord(int(dep))], qout, out, nil)
		d.mark = nil
		d.takeCounts(CtlCountsWord(int(dep + 1)))
	} else {
		d.buLevel(vcur, vnxt, n, dep+1, CtlCountsWord(int(dep+1)), func(b uint32) *emuSink {
			return &emuSink{bq: d.blockQueue(b), qout: qout, out: out}
		})
		d.flush(qout, out)
	}
	return uint32(d.ctl64(CtlCountsWord(int(dep+1))) >> 32)
}

// warpScan returns the exclusive and inclusive prefix sums of the 32 lanes'
// values v, as a warp's scan gives each lane, and their total.
func warpScan(v *[32]uint32) (excl, incl [32]uint32, total uint32) {
	for l := range 32 {
		excl[l] = total
		total += v[l]
		incl[l] = total
	}
	return excl, incl, total
}
