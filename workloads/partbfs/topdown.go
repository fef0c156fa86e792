package partbfs

import (
	"encoding/binary"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/executor/nccl"
	"github.com/gpuplan/gpuplan/internal/kernelabi"
	"github.com/gpuplan/gpuplan/partition"
	"github.com/gpuplan/gpuplan/planners"
)

// topDown runs one top-down step: every part expands its frontier and
// counts what it found for each other part; the counts are gathered and
// read once; every pair's form follows from them (partition.PairExchange);
// the queue-form slices are compacted; the discoveries are sent with one
// grouped send/receive; and every part claims what reached it.
func (t *traversal) topDown(depth int, d planners.BFSDirectionDecision) (Step, error) {
	var st Step
	if err := t.expandAndCount(depth); err != nil {
		return st, err
	}
	counts, gather, err := t.gatherCounts()
	if err != nil {
		return st, err
	}
	if st.Exchange, err = t.plan.LevelExchange(d, counts); err != nil {
		return st, err
	}
	forms, err := t.plan.Forms(counts)
	if err != nil {
		return st, err
	}
	if err := t.compact(forms); err != nil {
		return st, err
	}
	sent, err := t.ex.sendRecv(t.links(forms, counts))
	if err != nil {
		return st, err
	}
	st.MeasuredBytes, st.ExchangeNs = gather.Bytes+sent.Bytes, gather.WallNs+sent.WallNs
	err = t.launchAll(func(p *part) (*executor.Kernel, []executor.Arg, bool) {
		var queues, bitmaps uint64
		for src := range t.plan.Parts {
			switch forms[src][p.index] {
			case partition.ExchangeQueue:
				queues |= 1 << src
			case partition.ExchangeBitmap:
				bitmaps |= 1 << src
			}
		}
		cur, next := p.buf.front(depth)
		return p.k.apply, kernelabi.MustArgs(ApplyParams[executor.Buffer]{Offsets: p.buf.offsets, Level: p.buf.level, Front: cur,
			FrontNext: next, Next: p.buf.next, Xbuf: p.buf.xbuf, Counts: p.buf.counts, Ctl: p.buf.ctl, N: p.plan.Vertices,
			ShapeParams: t.shape(p), Depth: uint64(depth), QueueMask: queues, BitmapMask: bitmaps}), true
	})
	return st, err
}

// expandAndCount runs the expansion on every part held here, then the
// counts.
func (t *traversal) expandAndCount(depth int) error {
	err := t.launchAll(func(p *part) (*executor.Kernel, []executor.Arg, bool) {
		cur, _ := p.buf.front(depth)
		return p.k.expand, kernelabi.MustArgs(ExpandParams[executor.Buffer]{Offsets: p.buf.offsets, Targets: p.buf.targets,
			Level: p.buf.level, Front: cur, Next: p.buf.next, Bounds: p.buf.bounds, Ctl: p.buf.ctl, N: p.plan.Vertices,
			ShapeParams: t.shape(p)}), true
	})
	if err != nil {
		return err
	}
	return t.launchAll(func(p *part) (*executor.Kernel, []executor.Arg, bool) {
		return p.k.count, kernelabi.MustArgs(CountParams[executor.Buffer]{Next: p.buf.next, Bounds: p.buf.bounds, Counts: p.buf.counts,
			Ctl: p.buf.ctl, ShapeParams: t.shape(p)}), true
	})
}

// gatherCounts all-gathers every part's row of counts into every part's
// matrix and reads the matrix from the first part held here: counts[d][e]
// is what part d found for part e.
func (t *traversal) gatherCounts() ([][]uint64, nccl.Stats, error) {
	parts := t.numParts()
	st, err := t.ex.allGather(func(p *part) (send, recv nccl.Region) {
		return nccl.Region{X: p.x, Buf: p.buf.counts, Len: 8 * parts}, nccl.Region{X: p.x, Buf: p.buf.counts, Off: 8 * parts, Len: 8 * parts * parts}
	})
	if err != nil {
		return nil, st, err
	}
	p0 := t.parts[0]
	raw, err := p0.x.DownloadRange(p0.buf.counts, 8*parts, 8*parts*parts)
	if err != nil {
		return nil, st, err
	}
	counts := make([][]uint64, parts)
	for d := range counts {
		counts[d] = make([]uint64, parts)
		for e := range counts[d] {
			counts[d][e] = binary.LittleEndian.Uint64(raw[8*(uint64(d)*parts+uint64(e)):])
		}
	}
	return counts, st, nil
}

// compact turns every queue-form slice into a queue, on the parts held
// here that send any.
func (t *traversal) compact(forms [][]partition.ExchangeForm) error {
	return t.launchAll(func(p *part) (*executor.Kernel, []executor.Arg, bool) {
		var mask uint64
		for e, f := range forms[p.index] {
			if f == partition.ExchangeQueue {
				mask |= 1 << e
			}
		}
		return p.k.compact, kernelabi.MustArgs(CompactParams[executor.Buffer]{Next: p.buf.next, Outbox: p.buf.outbox, Bounds: p.buf.bounds,
			Ctl: p.buf.ctl, ShapeParams: t.shape(p), QueueMask: mask}), mask != 0
	})
}

// links lists the sends of a top-down step, between every pair of parts
// of the plan: from part d to part e, d's queue of counts[d][e] indices or
// d's slice e of next (e's words), into e's exchange buffer at slot d
// (SliceWords words from d x 8S). Pairs with nothing to send are left out.
func (t *traversal) links(forms [][]partition.ExchangeForm, counts [][]uint64) []link {
	slot := 8 * t.plan.SliceWords
	var ls []link
	for d := range t.plan.Parts {
		for e, to := range t.plan.Parts {
			l := link{from: d, to: e, slot: slot}
			switch forms[d][e] {
			case partition.ExchangeQueue:
				l.queue, l.n = true, 4*counts[d][e]
			case partition.ExchangeBitmap:
				l.n = 8 * to.Words
			}
			if l.n != 0 {
				ls = append(ls, l)
			}
		}
	}
	return ls
}
