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
func (s *Session) topDown(depth int, d planners.BFSDirectionDecision) (Step, error) {
	var st Step
	if err := s.expandAndCount(depth); err != nil {
		return st, err
	}
	counts, gather, err := s.gatherCounts()
	if err != nil {
		return st, err
	}
	if st.Exchange, err = s.plan.LevelExchange(d, counts); err != nil {
		return st, err
	}
	forms, err := s.plan.Forms(counts)
	if err != nil {
		return st, err
	}
	if err := s.compact(forms); err != nil {
		return st, err
	}
	sent, err := s.tr.SendRecv(s.transfers(forms, counts))
	if err != nil {
		return st, err
	}
	st.MeasuredBytes, st.ExchangeNs = gather.Bytes+sent.Bytes, gather.WallNs+sent.WallNs
	err = s.launchAll(func(p *part) (*executor.Kernel, []executor.Arg, bool) {
		var queues, bitmaps uint64
		for src := range s.parts {
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
			ShapeParams: s.shape(p), Depth: uint64(depth), QueueMask: queues, BitmapMask: bitmaps}), true
	})
	return st, err
}

// expandAndCount runs the expansion on every part, then the counts.
func (s *Session) expandAndCount(depth int) error {
	err := s.launchAll(func(p *part) (*executor.Kernel, []executor.Arg, bool) {
		cur, _ := p.buf.front(depth)
		return p.k.expand, kernelabi.MustArgs(ExpandParams[executor.Buffer]{Offsets: p.buf.offsets, Targets: p.buf.targets,
			Level: p.buf.level, Front: cur, Next: p.buf.next, Bounds: p.buf.bounds, Ctl: p.buf.ctl, N: p.plan.Vertices,
			ShapeParams: s.shape(p)}), true
	})
	if err != nil {
		return err
	}
	return s.launchAll(func(p *part) (*executor.Kernel, []executor.Arg, bool) {
		return p.k.count, kernelabi.MustArgs(CountParams[executor.Buffer]{Next: p.buf.next, Bounds: p.buf.bounds, Counts: p.buf.counts,
			Ctl: p.buf.ctl, ShapeParams: s.shape(p)}), true
	})
}

// gatherCounts all-gathers every part's row of counts into every part's
// matrix and reads the matrix from the first part: counts[d][e] is what
// part d found for part e.
func (s *Session) gatherCounts() ([][]uint64, nccl.Stats, error) {
	parts := uint64(len(s.parts))
	send, recv := make([]nccl.Region, parts), make([]nccl.Region, parts)
	for i, p := range s.parts {
		send[i] = nccl.Region{X: p.x, Buf: p.buf.counts, Len: 8 * parts}
		recv[i] = nccl.Region{X: p.x, Buf: p.buf.counts, Off: 8 * parts, Len: 8 * parts * parts}
	}
	st, err := s.tr.AllGather(send, recv)
	if err != nil {
		return nil, st, err
	}
	p0 := s.parts[0]
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

// compact turns every queue-form slice into a queue, on the parts that
// send any.
func (s *Session) compact(forms [][]partition.ExchangeForm) error {
	return s.launchAll(func(p *part) (*executor.Kernel, []executor.Arg, bool) {
		var mask uint64
		for e, f := range forms[p.index] {
			if f == partition.ExchangeQueue {
				mask |= 1 << e
			}
		}
		return p.k.compact, kernelabi.MustArgs(CompactParams[executor.Buffer]{Next: p.buf.next, Outbox: p.buf.outbox, Bounds: p.buf.bounds,
			Ctl: p.buf.ctl, ShapeParams: s.shape(p), QueueMask: mask}), mask != 0
	})
}

// transfers lists the sends of a top-down step: from part d to part e,
// d's queue of counts[d][e] indices or d's slice e of next (e's words),
// into e's exchange buffer at slot d (SliceWords words from d x 8S).
func (s *Session) transfers(forms [][]partition.ExchangeForm, counts [][]uint64) []nccl.Transfer {
	slot := 8 * s.plan.SliceWords
	var ts []nccl.Transfer
	for d, from := range s.parts {
		for e, to := range s.parts {
			var src executor.Buffer
			var n uint64
			switch forms[d][e] {
			case partition.ExchangeQueue:
				src, n = from.buf.outbox, 4*counts[d][e]
			case partition.ExchangeBitmap:
				src, n = from.buf.next, 8*to.plan.Words
			}
			if n == 0 {
				continue
			}
			ts = append(ts, nccl.Transfer{From: d, To: e, Src: nccl.Region{X: from.x, Buf: src, Off: uint64(e) * slot, Len: n},
				Dst: nccl.Region{X: to.x, Buf: to.buf.xbuf, Off: uint64(d) * slot, Len: n}})
		}
	}
	return ts
}
