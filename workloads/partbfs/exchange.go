package partbfs

import (
	"github.com/gpuplan/gpuplan/executor/nccl"
)

// exchange moves a level step's data between the parts of the plan, for
// the level protocol (traversal): over every part of one process
// (partsExchange, nccl.Collectives) or between the processes that hold one
// part each (rankExchange, nccl.RankCollectives). Every process of a
// traversal calls the same methods in the same order.
type exchange interface {
	// allGather gathers every part's send region into every part's recv
	// region; regions gives both for each part held here.
	allGather(regions func(p *part) (send, recv nccl.Region)) (nccl.Stats, error)
	// sendRecv runs a top-down step's links as one group.
	sendRecv(ls []link) (nccl.Stats, error)
	// totals sums every part's found vertices and edges of the step from
	// depth.
	totals(depth int) (found, edges uint64, err error)
}

// link is one transfer of a top-down step: part from sends part to its
// discoveries for to, n bytes of its queue (outbox) or of its next bitmap,
// from slot to of the source into slot from of to's exchange buffer.
type link struct {
	from, to int
	queue    bool
	n, slot  uint64
}

// src is the link's source region on part p (the sender).
func (l link) src(p *part) nccl.Region {
	buf := p.buf.next
	if l.queue {
		buf = p.buf.outbox
	}
	return nccl.Region{X: p.x, Buf: buf, Off: uint64(l.to) * l.slot, Len: l.n}
}

// dst is the link's destination region on part p (the receiver).
func (l link) dst(p *part) nccl.Region {
	return nccl.Region{X: p.x, Buf: p.buf.xbuf, Off: uint64(l.from) * l.slot, Len: l.n}
}

// partsExchange is the exchange of a Session: every part is held by this
// process and tr is the communicator over their executors.
type partsExchange struct {
	t  *traversal
	tr nccl.Collectives
}

// allGather runs one all-gather over every part.
func (x *partsExchange) allGather(regions func(p *part) (send, recv nccl.Region)) (nccl.Stats, error) {
	send, recv := make([]nccl.Region, len(x.t.parts)), make([]nccl.Region, len(x.t.parts))
	for i, p := range x.t.parts {
		send[i], recv[i] = regions(p)
	}
	return x.tr.AllGather(send, recv)
}

// sendRecv runs every link as one group of transfers.
func (x *partsExchange) sendRecv(ls []link) (nccl.Stats, error) {
	ts := make([]nccl.Transfer, len(ls))
	for i, l := range ls {
		ts[i] = nccl.Transfer{From: l.from, To: l.to, Src: l.src(x.t.parts[l.from]), Dst: l.dst(x.t.parts[l.to])}
	}
	return x.tr.SendRecv(ts)
}

// totals reads every part's counters.
func (x *partsExchange) totals(depth int) (found, edges uint64, err error) { return x.t.found(depth) }
