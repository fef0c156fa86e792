package rebuild

import (
	"fmt"
	"math/rand/v2"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/internal/kernelabi"
	"github.com/gpuplan/gpuplan/occupancy"
)

// emuState is the device memory the kernels see, as Go slices.
type emuState struct {
	rowClass, rowOp, rowOffset, rowLen, children, groups, unions []uint32
	parent, cls, canon, pairs, ctl                               []uint32
	table, outClasses, outNodes                                  []uint64
	rows, childSlots, classes, unionPairs, tableSlots            uint64
	rng                                                          *rand.Rand
}

// newEmuState maps the buffers of a step or persistent launch.
func newEmuState(l *executor.FakeLaunch, p StateParams[executor.DevPtr], seed uint64) (*emuState, error) {
	s := &emuState{rows: p.Rows, childSlots: p.ChildSlots, classes: p.Classes, unionPairs: p.UnionPairs, tableSlots: p.TableSlots,
		rng: rand.New(rand.NewPCG(seed, 2))}
	n, err := l.Len(p.Image)
	if err != nil {
		return nil, err
	}
	image, err := kernelabi.View[uint32](l, p.Image, n/4)
	if err != nil {
		return nil, err
	}
	sec := func(off, n uint64) ([]uint32, error) {
		if off+n > uint64(len(image)) {
			return nil, fmt.Errorf("image section [%d, %d) passes the image's %d words", off, off+n, len(image))
		}
		return image[off : off+n], nil
	}
	for _, v := range []struct {
		dst    *[]uint32
		off, n uint64
	}{{&s.rowClass, p.SecClass, p.Rows}, {&s.rowOp, p.SecOp, p.Rows}, {&s.rowOffset, p.SecOffset, p.Rows},
		{&s.rowLen, p.SecLen, p.Rows}, {&s.children, p.SecChildren, p.ChildSlots}, {&s.groups, p.SecGroups, p.Classes}} {
		if *v.dst, err = sec(v.off, v.n); err != nil {
			return nil, err
		}
	}
	return s, s.mapState(l, p)
}

// mapState maps the state buffers.
func (s *emuState) mapState(l *executor.FakeLaunch, p StateParams[executor.DevPtr]) error {
	var err error
	u32 := []struct {
		dst *[]uint32
		ptr executor.DevPtr
		n   uint64
	}{{&s.unions, p.Unions, 2 * max(p.UnionPairs, 1)}, {&s.parent, p.Parent, p.Classes}, {&s.cls, p.Cls, p.Rows},
		{&s.canon, p.Canon, max(p.ChildSlots, 1)}, {&s.pairs, p.Pairs, 2 * p.Rows}, {&s.ctl, p.Ctl, CtlWords}}
	for _, v := range u32 {
		if *v.dst, err = kernelabi.View[uint32](l, v.ptr, v.n); err != nil {
			return err
		}
	}
	if s.table, err = kernelabi.View[uint64](l, p.Table, p.TableSlots); err != nil {
		return err
	}
	out, err := kernelabi.View[uint64](l, p.Out, 2+p.Classes+p.Rows)
	if err != nil {
		return err
	}
	s.outClasses, s.outNodes = out[:1+p.Classes], out[1+p.Classes:]
	if p.TableSlots == 0 || p.TableSlots&(p.TableSlots-1) != 0 {
		return fmt.Errorf("table of %d slots is not a power of two", p.TableSlots)
	}
	return nil
}

// Emulation emulates the rebuild kernels (kernelabi.Emulation): the same
// buffers, stages, control words and readback slabs as the CUDA kernels,
// with the items of every pass taken in a random order. A Session over a
// fake backend with these kernels runs every arm.
type Emulation = kernelabi.Emulation

// NewEmulation returns the emulation of every rebuild entry point, with a
// seed for its orders.
func NewEmulation(seed uint64) *Emulation { return kernelabi.NewEmulation(seed, fakes) }

// NewFake returns a fake backend for dev with the rebuild kernels emulated.
func NewFake(dev occupancy.Device, seed uint64) *executor.Fake {
	return NewEmulation(seed).NewFake(dev)
}

// emulator is what the rebuild kernels' emulations share: the emulation's
// launch seeds.
type emulator struct {
	seeds *kernelabi.LaunchSeeds
}

// fakes returns the fake kernels of every rebuild entry point, with the
// register and shared-memory use the occupancy model sees (what ptxas
// reports for the real kernels on sm_90).
func fakes(seeds *kernelabi.LaunchSeeds) map[string]kernelabi.Fake {
	e := &emulator{seeds: seeds}
	return map[string]kernelabi.Fake{
		KernelReset:           {Run: kernelabi.Emulate(e.runReset), Regs: 16},
		KernelStep:            {Run: kernelabi.Emulate(e.runStep), Regs: 32},
		KernelPersistent:      {Run: kernelabi.Emulate(e.runPersistent), Regs: 32, Smem: 8},
		KernelBarrierOnly:     {Regs: 16, Smem: 8},
		KernelIncremental:     {Run: kernelabi.Emulate(e.runIncremental), Regs: 32, Smem: 8},
		KernelIncrementalStep: {Run: kernelabi.Emulate(e.runIncStep), Regs: 32},
		KernelBucketPairs:     {Run: kernelabi.Emulate(e.runBuckets), Regs: 24},
	}
}

func (e *emulator) runReset(l *executor.FakeLaunch, p ResetParams[executor.DevPtr]) error {
	parent, err := kernelabi.View[uint32](l, p.Parent, p.Classes)
	if err != nil {
		return err
	}
	ctl, err := kernelabi.View[uint32](l, p.Ctl, CtlWords)
	if err != nil {
		return err
	}
	out, err := kernelabi.View[uint64](l, p.Out, 2+p.Classes)
	if err != nil {
		return err
	}
	for c := range parent {
		parent[c] = uint32(c)
	}
	clear(ctl)
	out[0], out[1+p.Classes] = 0, 0
	return nil
}

func (e *emulator) runStep(l *executor.FakeLaunch, p StepParams[executor.DevPtr]) error {
	s, err := newEmuState(l, p.StateParams, e.seeds.Next())
	if err != nil {
		return err
	}
	s.step(p.Round, p.Stages, p.ItemFirst, p.ItemCount)
	return nil
}

func (e *emulator) runPersistent(l *executor.FakeLaunch, p PersistentParams[executor.DevPtr]) error {
	s, err := newEmuState(l, p.StateParams, e.seeds.Next())
	if err != nil {
		return err
	}
	if grid := uint64(l.Config.Grid[0]) * uint64(l.Config.Grid[1]) * uint64(l.Config.Grid[2]); grid > MaxPersistentBlocks {
		s.ctl[CtlResult+ResultMisuse] = MisuseGrid
		return nil
	}
	s.persistent(p.MaxRounds, p.PhaseStarts)
	return nil
}

// roundStages and compactStages are the stage masks of a round and of the
// compaction; afterUnite the stages that need the pending pairs applied.
const (
	roundStagesMask   = 1<<StageUnite | 1<<StageClear | 1<<StageCanonClasses | 1<<StageCanonChildren | 1<<StageGroup
	compactStagesMask = 1<<StageCompactClasses | 1<<StageCompactNodes
	afterUniteMask    = 1<<StageCanonClasses | 1<<StageCanonChildren | 1<<StageGroup
)

func has(mask uint64, st Stage) bool { return mask&st.Bit() != 0 }

// phaseOK mirrors phase_ok.
func phaseOK(mask uint64) bool {
	if has(mask, StageUnite) && mask&afterUniteMask != 0 || has(mask, StageClear) && has(mask, StageGroup) {
		return false
	}
	return !(mask&roundStagesMask != 0 && mask&compactStagesMask != 0)
}

// step mirrors rebuild_step.
func (s *emuState) step(round, stages, first, count uint64) {
	res := s.ctl[CtlResult:]
	if !phaseOK(stages) || stages > 0xffffffff {
		res[ResultMisuse] = MisusePhases
		return
	}
	var pending uint64
	var emit func() uint32
	if stages&roundStagesMask != 0 {
		if res[ResultDone] != 0 {
			return
		}
		pending = s.unionPairs
		if round > 0 {
			pending = uint64(s.ctl[CtlCountWord(int(round))])
		}
		if round > 0 && pending == 0 {
			res[ResultDone], res[ResultRounds] = 1, uint32(round)
			return
		}
		next := CtlCountWord(int(round + 1))
		if has(stages, StageUnite) {
			s.ctl[next] = 0
		}
		emit = func() uint32 { s.ctl[next]++; return s.ctl[next] - 1 }
	}
	src := s.pairs
	if round == 0 {
		src = s.unions
	}
	links := s.runPhase(stages, src, pending, first, count, emit)
	if has(stages, StageUnite) {
		if round == 0 {
			res[ResultUnionMerges] += links
		} else {
			res[ResultCongruenceMerges] += links
		}
	}
}

// nextPhase mirrors next_phase.
func nextPhase(starts uint64, from Stage) uint64 {
	var m uint64
	for st := from; st <= StageGroup; st++ {
		if st > from && has(starts, st) {
			break
		}
		m |= st.Bit()
	}
	return m
}

// phasesOK mirrors phases_ok.
func phasesOK(starts uint64) bool {
	if !has(starts, StageUnite) || starts&^uint64(roundStagesMask) != 0 {
		return false
	}
	for st := StageUnite; st <= StageGroup; st++ {
		if has(starts, st) && !phaseOK(nextPhase(starts, st)) {
			return false
		}
	}
	return true
}

// persistent mirrors rebuild_persistent: the phases of every round, a
// grid barrier (counted) after each, the emitted pairs of the round's last
// phase as the next round's pending pairs, then the compaction.
func (s *emuState) persistent(maxRounds, starts uint64) {
	res := s.ctl[CtlResult:]
	if !phasesOK(starts) {
		res[ResultMisuse] = MisusePhases
		return
	}
	var barriers, round, unionLinks, links uint32
	pending, changed := s.unionPairs, true
	for uint64(round) < maxRounds {
		var emitted uint32
		emit := func() uint32 { emitted++; return emitted - 1 }
		for st := StageUnite; st <= StageGroup; {
			mask := nextPhase(starts, st)
			src := s.pairs
			if round == 0 {
				src = s.unions
			}
			l := s.runPhase(mask, src, pending, 0, allItems, emit)
			if round == 0 {
				unionLinks += l
			} else {
				links += l
			}
			barriers++
			for b := mask; b != 0; b &= b - 1 {
				st++
			}
		}
		round++
		pending = uint64(emitted)
		if pending == 0 {
			changed = false
			break
		}
	}
	s.runPhase(compactStagesMask, s.pairs, 0, 0, allItems, nil)
	res[ResultUnionMerges] += unionLinks
	res[ResultCongruenceMerges] += links
	res[ResultRounds], res[ResultBarriers] = round, barriers
	res[ResultChanged] = 0
	if changed {
		res[ResultChanged] = 1
	}
}

// clip mirrors clip: items [first, first+count) of n.
func clip(n, first, count uint64) (lo, hi uint64) {
	lo = min(first, n)
	if count < n-lo {
		return lo, lo + count
	}
	return lo, n
}

// order returns lo..hi-1 in a random order.
func (s *emuState) order(lo, hi uint64) []uint64 {
	out := make([]uint64, hi-lo)
	for i, p := range s.rng.Perm(int(hi - lo)) {
		out[i] = lo + uint64(p)
	}
	return out
}

// runPhase mirrors run_phase and returns the links of its unite stage.
func (s *emuState) runPhase(mask uint64, src []uint32, pending, first, count uint64, emit func() uint32) uint32 {
	var links uint32
	if has(mask, StageUnite) {
		for _, k := range s.order(0, pending) {
			if s.unite(src[2*k], src[2*k+1]) {
				links++
			}
		}
	}
	if has(mask, StageClear) {
		clear(s.table)
	}
	if has(mask, StageCanonChildren) && !has(mask, StageGroup) {
		lo, hi := clip(s.childSlots, first, count)
		for _, k := range s.order(lo, hi) {
			s.canon[k] = s.find(s.children[k])
		}
	}
	if has(mask, StageCanonClasses) || has(mask, StageGroup) {
		lo, hi := clip(s.rows, first, count)
		for _, i := range s.order(lo, hi) {
			s.row(mask, uint32(i), emit)
		}
	}
	if has(mask, StageCompactClasses) {
		lo, hi := clip(s.classes, first, count)
		for _, g := range s.order(lo, hi) {
			if cl := s.groups[g]; s.find(cl) != cl {
				s.outClasses[1+s.outClasses[0]] = uint64(s.find(cl))<<32 | uint64(cl)
				s.outClasses[0]++
			}
		}
	}
	if has(mask, StageCompactNodes) {
		for _, k := range s.order(0, s.tableSlots) {
			if v := s.table[k]; v != 0 && uint32(v) != IncTombstone {
				row := uint32(v) - 1
				s.outNodes[1+s.outNodes[0]] = uint64(s.cls[row])<<32 | uint64(row)
				s.outNodes[0]++
			}
		}
	}
	return links
}

// row mirrors one row of row_pass.
func (s *emuState) row(mask uint64, i uint32, emit func() uint32) {
	var c uint32
	if has(mask, StageCanonClasses) {
		c = s.find(s.rowClass[i])
		s.cls[i] = c
	} else {
		c = s.cls[i]
	}
	if !has(mask, StageGroup) {
		return
	}
	op, lo, n := s.rowOp[i], s.rowOffset[i], s.rowLen[i]
	h := s.signature(op, lo, n, has(mask, StageCanonChildren))
	if owner := s.insert(i, h, op, lo, n); owner != i {
		if oc := s.cls[owner]; oc != c {
			slot := emit()
			s.pairs[2*slot], s.pairs[2*slot+1] = oc, c
		}
	}
}

// find mirrors find: path halving.
func (s *emuState) find(x uint32) uint32 {
	for {
		p := s.parent[x]
		if p == x {
			return x
		}
		gp := s.parent[p]
		if gp == p {
			return p
		}
		s.parent[x] = gp
		x = gp
	}
}

// unite mirrors unite: the larger root is linked under the smaller.
func (s *emuState) unite(a, b uint32) bool {
	a, b = s.find(a), s.find(b)
	if a == b {
		return false
	}
	s.parent[max(a, b)] = min(a, b)
	return true
}

// signature mirrors signature: NodeSignature over the canonical children,
// which it rewrites first when rewrite.
func (s *emuState) signature(op, lo, n uint32, rewrite bool) uint32 {
	h := op*sigOpMul ^ n
	for k := lo; k < lo+n; k++ {
		if rewrite {
			s.canon[k] = s.find(s.children[k])
		}
		h = (h ^ s.canon[k]) * sigChildMul
		h ^= h >> 15
	}
	h ^= h >> 16
	h *= sigFinMul1
	h ^= h >> 13
	h *= sigFinMul2
	h ^= h >> 16
	return h
}

// insert mirrors insert.
func (s *emuState) insert(i, h, op, lo, n uint32) uint32 {
	mask := s.tableSlots - 1
	key := uint64(h)<<32 | uint64(i+1)
	pos := uint64(h) & mask
	for range s.tableSlots {
		v := s.table[pos]
		if v == 0 {
			s.table[pos] = key
			return i
		}
		if uint32(v>>32) == h {
			if j := uint32(v) - 1; s.sameRow(j, op, lo, n) {
				return j
			}
		}
		pos = (pos + 1) & mask
	}
	s.ctl[CtlResult+ResultOverflow] = 1
	return i
}

// sameRow mirrors same_row.
func (s *emuState) sameRow(j, op, lo, n uint32) bool {
	if s.rowOp[j] != op || s.rowLen[j] != n {
		return false
	}
	jl := s.rowOffset[j]
	for k := range n {
		if s.canon[jl+k] != s.canon[lo+k] {
			return false
		}
	}
	return true
}

// runBuckets mirrors rebuild_bucket_pairs, the threads of the wave in a
// random order.
func (e *emulator) runBuckets(l *executor.FakeLaunch, p BucketParams[executor.DevPtr]) error {
	n, err := l.Len(p.Image)
	if err != nil {
		return err
	}
	image, err := kernelabi.View[uint32](l, p.Image, n/4)
	if err != nil {
		return err
	}
	sn, err := l.Len(p.Slab)
	if err != nil {
		return err
	}
	slab, err := l.Bytes(p.Slab, sn)
	if err != nil {
		return err
	}
	ctl, err := kernelabi.View[uint64](l, p.Ctl, CtlWords/2)
	if err != nil {
		return err
	}
	b := emuBuckets{image: image, slab: slab, ctr: ctl[CtlBucket/2:], p: p}
	rng := rand.New(rand.NewPCG(e.seeds.Next(), 3))
	for _, t := range rng.Perm(int(p.Count)) {
		if err := b.pair(p.First + uint64(t)); err != nil {
			return err
		}
	}
	return nil
}

// emuBuckets is the memory one bucket wave sees.
type emuBuckets struct {
	image []uint32
	slab  []byte
	ctr   []uint64
	p     BucketParams[executor.DevPtr]
}

func (b emuBuckets) u32(off uint64) uint32 {
	s := b.slab[off:]
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}

// pair mirrors one thread of rebuild_bucket_pairs.
func (b emuBuckets) pair(ord uint64) error {
	rec := b.p.BucketWords + 4*BucketRecordWords*b.p.Bucket
	if rec+4*BucketRecordWords > uint64(len(b.slab)) {
		return fmt.Errorf("bucket %d's record passes the slab", b.p.Bucket)
	}
	n, total := uint64(b.u32(rec+8)), uint64(b.u32(rec+12))|uint64(b.u32(rec+16))<<32
	if ord >= total || n < 2 {
		return nil
	}
	lo, hi := uint64(0), n-2
	for lo < hi {
		if mid := lo + (hi-lo+1)/2; pairsBefore(mid, n) <= ord {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	j := lo + 1 + (ord - pairsBefore(lo, n))
	rows := b.p.BucketRows + 4*uint64(b.u32(rec+4))
	x, y := b.u32(rows+4*lo), b.u32(rows+4*j)
	img, p := b.image, b.p
	offA, offB, lenA, lenB := img[p.SecOffset+uint64(x)], img[p.SecOffset+uint64(y)], img[p.SecLen+uint64(x)], img[p.SecLen+uint64(y)]
	eq := img[p.SecSig+uint64(x)] == img[p.SecSig+uint64(y)] && img[p.SecOp+uint64(x)] == img[p.SecOp+uint64(y)] && lenA == lenB &&
		uint64(offA)+uint64(lenA) <= p.ChildSlots && uint64(offB)+uint64(lenB) <= p.ChildSlots
	for k := uint32(0); eq && k < lenA; k++ {
		eq = img[p.SecChildren+uint64(offA+k)] == img[p.SecChildren+uint64(offB+k)]
	}
	ca, cb := img[p.SecClass+uint64(x)], img[p.SecClass+uint64(y)]
	switch {
	case !eq:
		b.ctr[BucketRejected/2]++
	case ca == cb:
		b.ctr[BucketRedundant/2]++
	default:
		b.ctr[BucketExact/2]++
		count := b.slab[p.OutCount:]
		slot := uint64(b.u32(p.OutCount)) | uint64(b.u32(p.OutCount+4))<<32
		at := p.OutPairs + 8*slot
		put32(b.slab[at:], min(ca, cb))
		put32(b.slab[at+4:], max(ca, cb))
		slot++
		put32(count, uint32(slot))
		put32(count[4:], uint32(slot>>32))
	}
	return nil
}

func put32(b []byte, v uint32) {
	b[0], b[1], b[2], b[3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
}

// pairsBefore mirrors pairs_before.
func pairsBefore(r, n uint64) uint64 {
	f := 2*n - r - 1
	if r%2 == 0 {
		return (r / 2) * f
	}
	return r * (f / 2)
}
