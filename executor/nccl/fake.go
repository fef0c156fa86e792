package nccl

import (
	"crypto/rand"
	"slices"
	"sync"
	"time"

	"github.com/gpuplan/gpuplan/executor"
)

// Fake runs the collectives through the host: every source region is
// downloaded from its executor and uploaded to its destinations, all reads
// before any write, as a group. It needs neither NCCL nor a GPU (its
// executors are usually on the CPU fake backend) and checks its arguments
// as the CUDA communicator does.
type Fake struct {
	xs     []*executor.Executor
	closed bool
}

// NewFake returns a fake communicator over one executor per rank.
func NewFake(xs []*executor.Executor) (*Fake, error) {
	if err := checkExecutors(xs); err != nil {
		return nil, err
	}
	return &Fake{xs: append([]*executor.Executor(nil), xs...)}, nil
}

// Ranks returns the number of ranks.
func (f *Fake) Ranks() int { return len(f.xs) }

// AllGather gathers every rank's send region into every rank's recv.
func (f *Fake) AllGather(send, recv []Region) (Stats, error) {
	if f.closed {
		return Stats{}, argErr("communicator", "is closed")
	}
	if err := CheckAllGather(send, recv, f.xs); err != nil {
		return Stats{}, err
	}
	var ts []Transfer
	n := send[0].Len
	for from := range f.xs {
		for to := range f.xs {
			dst := recv[to]
			dst.Off, dst.Len = dst.Off+uint64(from)*n, n
			ts = append(ts, Transfer{From: from, To: to, Src: send[from], Dst: dst})
		}
	}
	return f.run(ts)
}

// SendRecv runs the transfers as one group.
func (f *Fake) SendRecv(ts []Transfer) (Stats, error) {
	if f.closed {
		return Stats{}, argErr("communicator", "is closed")
	}
	if err := CheckSendRecv(ts, f.xs); err != nil {
		return Stats{}, err
	}
	return f.run(ts)
}

// run reads every source, then writes every destination.
func (f *Fake) run(ts []Transfer) (Stats, error) {
	t0 := time.Now()
	data := make([][]byte, len(ts))
	var st Stats
	for i, t := range ts {
		if t.Src.Len == 0 {
			continue
		}
		var err error
		if data[i], err = t.Src.X.DownloadRange(t.Src.Buf, t.Src.Off, t.Src.Len); err != nil {
			return st, err
		}
	}
	for i, t := range ts {
		if t.Src.Len == 0 {
			continue
		}
		if err := t.Dst.X.UploadAt(t.Dst.Buf, t.Dst.Off, data[i]); err != nil {
			return st, err
		}
		if t.From != t.To {
			st.Bytes += t.Src.Len
		}
	}
	st.WallNs = uint64(time.Since(t0))
	return st, nil
}

// Close marks the communicator closed; the executors stay open.
func (f *Fake) Close() error {
	f.closed = true
	return nil
}

// NewFakeUniqueID returns a random UniqueID for OpenFakeRank.
func NewFakeUniqueID() UniqueID {
	var id UniqueID
	_, _ = rand.Read(id[:])
	return id
}

// fakeGroups are the fake communicators of the process, by unique id. One
// lock guards them all, and a collective's host copies run under it.
var fakeGroups = struct {
	mu sync.Mutex
	m  map[UniqueID]*fakeGroup
}{m: map[UniqueID]*fakeGroup{}}

// fakeGroup is one fake communicator: its ranks, and the collectives in
// progress by sequence number.
type fakeGroup struct {
	id       UniqueID
	members  []*FakeRank
	joined   int
	left     int
	complete chan struct{}
	aborted  chan struct{}
	abort    error
	rounds   map[int]*fakeRound
}

// fakeRound is one collective: the k-th call of every rank.
type fakeRound struct {
	op      string
	parts   []fakePart
	arrived []bool
	n       int
	done    chan struct{}
	stats   []Stats
	err     error
}

// fakePart is one rank's arguments to a collective.
type fakePart struct {
	send, recv   Region
	sends, recvs []PeerRegion
}

// abortLocked aborts g with cause (the first cause stays) and removes it
// from the registry, so that a later rank with its id starts afresh.
func (g *fakeGroup) abortLocked(cause error) {
	if g.abort != nil {
		return
	}
	g.abort = cause
	close(g.aborted)
	if fakeGroups.m[g.id] == g {
		delete(fakeGroups.m, g.id)
	}
}

// FakeRank is one rank of a fake communicator whose ranks run in this
// process, one goroutine and one executor each: OpenFakeRank joins a
// registry keyed by the unique id, and the collectives meet there and
// move the bytes with the executors' downloads and uploads. It checks its
// arguments as the CUDA communicator of one rank does, and also what only
// a view of every rank shows (every rank sends the same length, sends
// match receives). It times out as the CUDA one does: a rank that never
// joins, or never calls a collective, makes the others fail with a
// *TimeoutError, and the communicator is aborted. Every rank's k-th
// collective meets the others' k-th, even a SendRecv with nothing to
// send; an all-gather of zero bytes returns at once, as on NCCL. Its
// methods run one at a time.
type FakeRank struct {
	mu          sync.Mutex
	g           *fakeGroup
	x           *executor.Executor
	rank, ranks int
	timeout     time.Duration
	seq         int
	closed      bool
}

// OpenFakeRank joins rank of ranks to the fake communicator of id, and
// waits until every rank has joined or Options.InitTimeout passes.
func OpenFakeRank(x *executor.Executor, id UniqueID, rank, ranks int, opts Options) (*FakeRank, error) {
	if err := checkRankOpen(x, rank, ranks); err != nil {
		return nil, err
	}
	f := &FakeRank{x: x, rank: rank, ranks: ranks, timeout: opts.collectiveTimeout()}
	fakeGroups.mu.Lock()
	g := fakeGroups.m[id]
	if g == nil {
		g = &fakeGroup{id: id, members: make([]*FakeRank, ranks), complete: make(chan struct{}), aborted: make(chan struct{}), rounds: map[int]*fakeRound{}}
		fakeGroups.m[id] = g
	}
	switch {
	case len(g.members) != ranks:
		fakeGroups.mu.Unlock()
		return nil, argErr("ranks", "is %d, but the ranks that joined this unique id have %d", ranks, len(g.members))
	case g.members[rank] != nil:
		fakeGroups.mu.Unlock()
		return nil, argErr("rank", "%d has joined this unique id already", rank)
	}
	f.g = g
	g.members[rank] = f
	if g.joined++; g.joined == ranks {
		close(g.complete)
	}
	fakeGroups.mu.Unlock()

	t := time.NewTimer(opts.initTimeout())
	defer t.Stop()
	select {
	case <-g.complete:
		return f, nil
	case <-g.aborted:
	case <-t.C:
		fakeGroups.mu.Lock()
		select {
		case <-g.complete:
			fakeGroups.mu.Unlock()
			return f, nil
		default:
		}
		var missing []int
		for r, m := range g.members {
			if m == nil {
				missing = append(missing, r)
			}
		}
		g.abortLocked(&TimeoutError{Op: "ncclCommInitRank", Rank: rank, Ranks: ranks, Timeout: opts.initTimeout(), Missing: missing})
		fakeGroups.mu.Unlock()
		return nil, g.abort
	}
	return nil, abortedError(rank, g.abort)
}

// Rank returns this rank.
func (f *FakeRank) Rank() int { return f.rank }

// Ranks returns the number of ranks.
func (f *FakeRank) Ranks() int { return f.ranks }

// AllGather gathers every rank's send into every rank's recv.
func (f *FakeRank) AllGather(send, recv Region) (Stats, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.usable(); err != nil {
		return Stats{}, err
	}
	if err := CheckRankAllGather(send, recv, f.x, f.ranks); err != nil {
		return Stats{}, err
	}
	if send.Len == 0 {
		return Stats{}, nil
	}
	return f.meet("AllGather", fakePart{send: send, recv: recv})
}

// SendRecv runs this rank's sends and receives as one group.
func (f *FakeRank) SendRecv(sends, recvs []PeerRegion) (Stats, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.usable(); err != nil {
		return Stats{}, err
	}
	if err := CheckRankSendRecv(sends, recvs, f.x, f.rank, f.ranks); err != nil {
		return Stats{}, err
	}
	return f.meet("SendRecv", fakePart{sends: nonEmpty(sends), recvs: nonEmpty(recvs)})
}

// nonEmpty returns the parts of one byte or more.
func nonEmpty(ps []PeerRegion) []PeerRegion {
	var out []PeerRegion
	for _, p := range ps {
		if p.Region.Len > 0 {
			out = append(out, p)
		}
	}
	return out
}

// usable refuses a closed or aborted communicator.
func (f *FakeRank) usable() error {
	if f.closed {
		return argErr("communicator", "is closed")
	}
	fakeGroups.mu.Lock()
	defer fakeGroups.mu.Unlock()
	if f.g.abort != nil {
		return abortedError(f.rank, f.g.abort)
	}
	return nil
}

// meet posts this rank's part of its next collective, runs the collective
// when the last rank posts, and waits for it within the timeout.
func (f *FakeRank) meet(op string, part fakePart) (Stats, error) {
	t0 := time.Now()
	st, err := f.wait(op, part)
	st.WallNs = uint64(time.Since(t0))
	return st, err
}

// wait is meet without the clock.
func (f *FakeRank) wait(op string, part fakePart) (Stats, error) {
	g := f.g
	fakeGroups.mu.Lock()
	seq := f.seq
	f.seq++
	rd := g.rounds[seq]
	if rd == nil {
		rd = &fakeRound{op: op, parts: make([]fakePart, f.ranks), arrived: make([]bool, f.ranks), done: make(chan struct{}), stats: make([]Stats, f.ranks)}
		g.rounds[seq] = rd
	}
	if rd.op != op && rd.err == nil {
		first := slices.Index(rd.arrived, true)
		rd.err = argErr("collective", "%d is %s on rank %d but %s on rank %d (every rank calls the same collectives in the same order)", seq, op, f.rank, rd.op, first)
	}
	rd.parts[f.rank], rd.arrived[f.rank] = part, true
	if rd.n++; rd.n == f.ranks {
		if rd.err == nil {
			rd.err = rd.run()
		}
		delete(g.rounds, seq)
		close(rd.done)
	}
	fakeGroups.mu.Unlock()

	t := time.NewTimer(f.timeout)
	defer t.Stop()
	select {
	case <-rd.done:
		return rd.stats[f.rank], rd.err
	case <-g.aborted:
	case <-t.C:
		fakeGroups.mu.Lock()
		defer fakeGroups.mu.Unlock()
		select {
		case <-rd.done:
			return rd.stats[f.rank], rd.err
		default:
		}
		var missing []int
		for r, ok := range rd.arrived {
			if !ok {
				missing = append(missing, r)
			}
		}
		g.abortLocked(&TimeoutError{Op: op, Rank: f.rank, Ranks: f.ranks, Timeout: f.timeout, Missing: missing})
		return Stats{}, g.abort
	}
	select {
	case <-rd.done:
		return rd.stats[f.rank], rd.err
	default:
	}
	return Stats{}, abortedError(f.rank, g.abort)
}

// run checks what only every rank's parts together show, then reads every
// source and writes every destination.
func (rd *fakeRound) run() error {
	var ts []Transfer
	if rd.op == "AllGather" {
		n := rd.parts[0].send.Len
		for from, p := range rd.parts {
			if p.send.Len != n {
				return argErr("send", "is %d bytes on rank %d and %d on rank 0 (every rank sends the same length)", p.send.Len, from, n)
			}
		}
		for from, p := range rd.parts {
			for to, q := range rd.parts {
				dst := q.recv
				dst.Off, dst.Len = dst.Off+uint64(from)*n, n
				ts = append(ts, Transfer{From: from, To: to, Src: p.send, Dst: dst})
			}
		}
	} else {
		for from, p := range rd.parts {
			for to, q := range rd.parts {
				sends, recvs := peerParts(p.sends, to), peerParts(q.recvs, from)
				if len(sends) != len(recvs) {
					return argErr("sends", "on rank %d hold %d regions to rank %d, which receives %d from it", from, len(sends), to, len(recvs))
				}
				for k := range sends {
					if sends[k].Len != recvs[k].Len {
						return argErr("sends", "on rank %d: send %d to rank %d is %d bytes, its receive there %d", from, k, to, sends[k].Len, recvs[k].Len)
					}
					ts = append(ts, Transfer{From: from, To: to, Src: sends[k], Dst: recvs[k]})
				}
			}
		}
	}
	data := make([][]byte, len(ts))
	for i, t := range ts {
		var err error
		if data[i], err = t.Src.X.DownloadRange(t.Src.Buf, t.Src.Off, t.Src.Len); err != nil {
			return err
		}
	}
	for i, t := range ts {
		if err := t.Dst.X.UploadAt(t.Dst.Buf, t.Dst.Off, data[i]); err != nil {
			return err
		}
		if t.From != t.To {
			rd.stats[t.To].Bytes += t.Src.Len
		}
	}
	return nil
}

// peerParts returns the regions of the parts addressed to rank, in order.
func peerParts(ps []PeerRegion, rank int) []Region {
	var rs []Region
	for _, p := range ps {
		if p.Rank == rank {
			rs = append(rs, p.Region)
		}
	}
	return rs
}

// Close leaves the communicator; the executor stays open. The registry
// forgets the communicator once every rank has closed.
func (f *FakeRank) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil
	}
	f.closed = true
	fakeGroups.mu.Lock()
	defer fakeGroups.mu.Unlock()
	if f.g.left++; f.g.left == len(f.g.members) && fakeGroups.m[f.g.id] == f.g {
		delete(fakeGroups.m, f.g.id)
	}
	return nil
}
