package partbfs

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc64"
	"hash/fnv"
	"strings"
	"unsafe"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/executor/nccl"
	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/partition"
)

// Rank is one process's place in a partitioned traversal whose parts run
// in separate processes (one process per GPU, on one machine or several),
// one part each.
type Rank struct {
	// Rank is this process's rank, which is also the plan index of the
	// part it holds; Ranks is the number of ranks, which is the plan's
	// part count.
	Rank, Ranks int
	// Comm is the rank's communicator (nccl.OpenRank; nccl.OpenFakeRank
	// in tests). Its Rank and Ranks equal the fields above, and its
	// Options.CollectiveTimeout bounds every exchange of the session.
	Comm nccl.RankCollectives
}

// check refuses a rank out of range or a communicator of another shape.
func (r Rank) check() error {
	switch {
	case r.Comm == nil:
		return fmt.Errorf("partitioned BFS rank %d: Rank.Comm is nil. Fix: open the rank's communicator with nccl.OpenRank (nccl.OpenFakeRank in tests)", r.Rank)
	case r.Ranks < 1 || r.Ranks > MaxParts:
		return fmt.Errorf("partitioned BFS: Rank.Ranks = %d is outside 1..%d. Fix: run one rank per part, at most %d", r.Ranks, MaxParts, MaxParts)
	case r.Rank < 0 || r.Rank >= r.Ranks:
		return fmt.Errorf("partitioned BFS: Rank.Rank = %d is outside 0..%d (a world of %d ranks). Fix: give every process a distinct rank from 0 to the world size minus 1", r.Rank, r.Ranks-1, r.Ranks)
	case r.Comm.Ranks() != r.Ranks:
		return fmt.Errorf("partitioned BFS rank %d: the communicator has %d ranks but Rank.Ranks is %d. Fix: open the communicator with the partition's world size", r.Rank, r.Comm.Ranks(), r.Ranks)
	case r.Comm.Rank() != r.Rank:
		return fmt.Errorf("partitioned BFS rank %d: the communicator is rank %d's. Fix: open the communicator with this process's rank", r.Rank, r.Comm.Rank())
	}
	return nil
}

// RankSession is one rank's share of a partitioned BFS whose parts run in
// separate processes: it holds part Rank.Rank of the same partition.New
// plan a Session would run (one executor), resident, and runs the same
// level protocol with the same kernels, exchanging through Rank.Comm.
// Every level's direction comes from the global frontier (every rank's
// found counts, all-gathered after each step) and every top-down pair's
// form from the gathered count matrix, so the ranks together produce the
// levels, decisions and exchange bytes of the one-process Session.
//
// Every rank calls the same methods in the same order (Run with the same
// root, GatherLevels after the same run): they are collectives. Nothing
// waits longer than the communicator's timeout: a rank that fails before
// an exchange tells the others where it can (at open, at the start of a
// run, and in GatherLevels, every rank then fails naming it), and
// otherwise the others fail with the communicator's *nccl.TimeoutError.
type RankSession struct {
	traversal
	rank Rank
}

// openWords are the words every rank all-gathers while it opens: its
// budget, its graph's vertices, edge entries and offsets checksum, and
// its configuration's checksum.
const openWords = 5

// NewRankSession opens rank r's part of the partition of g on x. Every
// rank passes the same graph and configuration: the ranks all-gather their
// budgets (x's live budget, capped by Config.MaxResidentBytes) and a
// checksum of the graph and the configuration, refuse to go on when a
// rank's differ, and plan the partition from every rank's budget, so every
// rank computes the same plan; each part is named after this rank's device
// (the ranks of a run share one GPU model). The kernels take 32-bit
// offsets: a part of more than frontier.MaxOffsets32Entries adjacency
// entries is refused on every rank with a *frontier.Offsets32Error. The
// part then allocates exactly its plan's bytes and uploads its rows, and
// the ranks agree that every part is set up. While it opens, a buffer of
// 40 x (Ranks + 1) bytes holds the gathered words.
func NewRankSession(x *executor.Executor, g *frontier.CSR, r Rank, cfg Config) (*RankSession, error) {
	if x == nil || g == nil {
		return nil, fmt.Errorf("partitioned BFS rank %d needs an executor and a graph. Fix: open the rank's device and build or load the graph every rank runs", r.Rank)
	}
	if err := r.check(); err != nil {
		return nil, err
	}
	cfg, err := checkConfig(cfg, g)
	if err != nil {
		return nil, err
	}
	s := &RankSession{traversal: newTraversal(g, cfg), rank: r}
	s.ex = &rankExchange{t: &s.traversal, r: r}
	scratch, err := x.Alloc(8 * openWords * uint64(r.Ranks+1))
	if err != nil {
		return nil, s.wrap(err)
	}
	defer func() { _ = x.Free(scratch) }()
	if err := s.planRanks(x, scratch); err != nil {
		return nil, err
	}
	setUp := s.setUpRank(x)
	agreed := s.agree(setUp, "set up its part", func(words []uint64) ([][]uint64, error) {
		return gatherWords(r.Comm, x, scratch, openWords, words)
	})
	if agreed != nil {
		_ = s.free()
		return nil, agreed
	}
	return s, nil
}

// wrap names the rank in err.
func (s *RankSession) wrap(err error) error {
	return fmt.Errorf("partitioned BFS rank %d of %d: %w", s.rank.Rank, s.rank.Ranks, err)
}

// planRanks all-gathers every rank's budget and checksums through
// scratch, checks that every rank holds the same graph and configuration,
// and plans the partition from the budgets.
func (s *RankSession) planRanks(x *executor.Executor, scratch executor.Buffer) error {
	budget, err := x.Budget()
	if err != nil {
		return s.wrap(err)
	}
	own := []uint64{s.cfg.budget(budget), uint64(s.g.NumVertices()), uint64(s.g.NumEdgeEntries()), offsetsSum(s.g), s.cfg.sum()}
	all, err := gatherWords(s.rank.Comm, x, scratch, openWords, own)
	if err != nil {
		return s.wrap(err)
	}
	devs := make([]partition.Device, s.rank.Ranks)
	for r, w := range all {
		if w[1] != own[1] || w[2] != own[2] || w[3] != own[3] || w[4] != own[4] {
			return fmt.Errorf("partitioned BFS rank %d: rank %d holds another graph or configuration (%d vertices and %d adjacency entries there, %d and %d here, or other offsets or settings). "+
				"Fix: start every rank with the same graph (the same spec and seed, or the same file) and the same configuration", s.rank.Rank, r, w[1], w[2], own[1], own[2])
		}
		devs[r] = partition.Device{Name: x.Device().Name, BudgetBytes: w[0]}
	}
	if s.plan, err = s.planOver(devs); err != nil {
		return err
	}
	return checkParts(s.g.Name, s.plan)
}

// setUpRank loads the kernels and sets this rank's part up.
func (s *RankSession) setUpRank(x *executor.Executor) error {
	k, err := loadKernels(x, s.cfg.BlockThreads)
	if err == nil {
		err = s.addPart(s.rank.Rank, x, k)
	}
	if err != nil {
		return s.wrap(err)
	}
	return nil
}

// agree all-gathers whether every rank's local work (err on this rank)
// succeeded, through gather. This rank's own error comes first; a failure
// elsewhere is an error naming the ranks that failed to do what.
func (s *RankSession) agree(err error, what string, gather func([]uint64) ([][]uint64, error)) error {
	ok := uint64(1)
	if err != nil {
		ok = 0
	}
	all, gerr := gather([]uint64{ok})
	if err != nil {
		return err
	}
	if gerr != nil {
		return s.wrap(gerr)
	}
	var failed []string
	for r, w := range all {
		if w[0] != 1 {
			failed = append(failed, fmt.Sprint(r))
		}
	}
	if len(failed) == 0 {
		return nil
	}
	word := "rank"
	if len(failed) > 1 {
		word = "ranks"
	}
	return fmt.Errorf("partitioned BFS rank %d: %s %s could not %s. Fix: read the error %s %s reports and run every rank again once it is fixed",
		s.rank.Rank, word, strings.Join(failed, ", "), what, word, strings.Join(failed, ", "))
}

// gather all-gathers words through the part's counts buffer.
func (s *RankSession) gather(words []uint64) ([][]uint64, error) {
	p := s.parts[0]
	return gatherWords(s.rank.Comm, p.x, p.buf.counts, s.rank.Ranks, words)
}

// Rank returns the session's rank.
func (s *RankSession) Rank() Rank { return s.rank }

// Plan returns the partition plan every rank runs by.
func (s *RankSession) Plan() partition.Plan { return s.plan }

// Config returns the configuration with its defaults filled in.
func (s *RankSession) Config() Config { return s.cfg }

// Graph returns the graph.
func (s *RankSession) Graph() *frontier.CSR { return s.g }

// Part returns the plan's part this rank holds.
func (s *RankSession) Part() partition.Part { return s.plan.Parts[s.rank.Rank] }

// Close frees the part's buffers; the communicator and the executor stay
// open.
func (s *RankSession) Close() error { return s.free() }

// noRoot is the word a rank gathers for a root that is not a vertex.
const noRoot = ^uint64(0)

// Run traverses the graph from root, as Session.Run does, with every other
// rank: the ranks first all-gather their roots and refuse to run (every
// one of them, naming the rank) when a rank's root differs or is not a
// vertex. The Run's MeasuredBytes and ExchangeBytes are what this rank
// received (the sum over the ranks is what the one-process session
// moves); its times are this rank's. Read the rank's levels with Levels,
// or every vertex's with GatherLevels.
func (s *RankSession) Run(root int32) (Run, error) {
	word := noRoot
	rootErr := s.checkRoot(root)
	if rootErr == nil {
		word = uint64(root)
	}
	all, err := s.gather([]uint64{word})
	if rootErr != nil {
		return Run{}, s.wrap(rootErr)
	}
	if err != nil {
		return Run{}, s.wrap(err)
	}
	for r, w := range all {
		switch {
		case w[0] == noRoot:
			return Run{}, fmt.Errorf("partitioned BFS rank %d: rank %d was given a root that is not a vertex of %s. Fix: pass every rank the same root, a vertex of the graph", s.rank.Rank, r, s.g.Name)
		case w[0] != word:
			return Run{}, fmt.Errorf("partitioned BFS rank %d: rank %d runs from root %d, this rank from %d. Fix: pass every rank the same root", s.rank.Rank, r, w[0], root)
		}
	}
	run, err := s.run(root)
	if err != nil {
		return run, s.wrap(err)
	}
	return run, nil
}

// Levels checks the part's error flags and downloads its levels of the
// last run: the levels of the vertices [Part().First, Part().End).
func (s *RankSession) Levels() ([]int32, error) { return s.levels() }

// GatherLevels assembles the levels of the last run on rank 0, through the
// communicator: every rank calls it; every rank checks its part's error
// flags, rank 0 allocates 4 bytes per vertex for the gather, and the ranks
// agree that both succeeded; then every rank sends its part's levels to
// rank 0. Rank 0 returns every vertex's level; the other ranks return nil.
func (s *RankSession) GatherLevels() ([]int32, error) {
	p := s.parts[0]
	n := uint64(s.g.NumVertices())
	var buf executor.Buffer
	err := s.checkFlags()
	if err == nil && s.rank.Rank == 0 {
		if buf, err = p.x.Alloc(4 * max(1, n)); err == nil {
			defer func() { _ = p.x.Free(buf) }()
		}
	}
	if err := s.agree(err, "gather the levels", s.gather); err != nil {
		return nil, err
	}
	var sends, recvs []nccl.PeerRegion
	if v := p.plan.Vertices; v > 0 {
		sends = append(sends, nccl.PeerRegion{Rank: 0, Region: nccl.Region{X: p.x, Buf: p.buf.level, Len: 4 * v}})
	}
	if s.rank.Rank == 0 {
		for r, q := range s.plan.Parts {
			if q.Vertices > 0 {
				recvs = append(recvs, nccl.PeerRegion{Rank: r, Region: nccl.Region{X: p.x, Buf: buf, Off: 4 * q.First, Len: 4 * q.Vertices}})
			}
		}
	}
	if _, err := s.rank.Comm.SendRecv(sends, recvs); err != nil {
		return nil, s.wrap(err)
	}
	if s.rank.Rank != 0 {
		return nil, nil
	}
	raw, err := p.x.DownloadRange(buf, 0, 4*n)
	if err != nil {
		return nil, s.wrap(err)
	}
	return appendWords(make([]int32, 0, n), raw), nil
}

// rankExchange is the exchange of a RankSession: this process holds one
// part, and r.Comm reaches the ranks that hold the others.
type rankExchange struct {
	t *traversal
	r Rank
}

// allGather runs this rank's part of the all-gather.
func (x *rankExchange) allGather(regions func(p *part) (send, recv nccl.Region)) (nccl.Stats, error) {
	send, recv := regions(x.t.parts[0])
	return x.r.Comm.AllGather(send, recv)
}

// sendRecv runs the links from and to this rank as one group.
func (x *rankExchange) sendRecv(ls []link) (nccl.Stats, error) {
	p := x.t.parts[0]
	var sends, recvs []nccl.PeerRegion
	for _, l := range ls {
		if l.from == x.r.Rank {
			sends = append(sends, nccl.PeerRegion{Rank: l.to, Region: l.src(p)})
		}
		if l.to == x.r.Rank {
			recvs = append(recvs, nccl.PeerRegion{Rank: l.from, Region: l.dst(p)})
		}
	}
	return x.r.Comm.SendRecv(sends, recvs)
}

// totals all-gathers every rank's found vertices and edges and sums them.
// The gather is control traffic, as the one-process session's reads of
// the counters are: it is not counted in a step's exchange.
func (x *rankExchange) totals(depth int) (found, edges uint64, err error) {
	f, e, err := x.t.found(depth)
	if err != nil {
		return 0, 0, err
	}
	p := x.t.parts[0]
	all, err := gatherWords(x.r.Comm, p.x, p.buf.counts, x.r.Ranks, []uint64{f, e})
	if err != nil {
		return 0, 0, err
	}
	for _, w := range all {
		found, edges = found+w[0], edges+w[1]
	}
	return found, edges, nil
}

// gatherWords all-gathers words (as many on every rank) through buf, in
// chunks of at most chunk words: a chunk is uploaded at offset 0, gathered
// at offset 8 x chunk (buf holds 8 x chunk x (ranks + 1) bytes) and
// zeroed again after, so a counts buffer (chunk = ranks: its row, then its
// matrix) keeps its row zero between steps, as the kernels expect. It
// returns every rank's words, by rank.
func gatherWords(c nccl.RankCollectives, x *executor.Executor, buf executor.Buffer, chunk int, words []uint64) ([][]uint64, error) {
	ranks := c.Ranks()
	out := make([][]uint64, ranks)
	for start := 0; start < len(words); start += chunk {
		part := words[start:min(start+chunk, len(words))]
		k := uint64(len(part))
		raw := make([]byte, 8*k)
		for i, w := range part {
			binary.LittleEndian.PutUint64(raw[8*i:], w)
		}
		recv := nccl.Region{X: x, Buf: buf, Off: 8 * uint64(chunk), Len: 8 * k * uint64(ranks)}
		got, err := gatherChunk(c, x, buf, raw, recv)
		if err != nil {
			return nil, err
		}
		for r := range out {
			for i := range k {
				out[r] = append(out[r], binary.LittleEndian.Uint64(got[8*(uint64(r)*k+i):]))
			}
		}
	}
	return out, nil
}

// gatherChunk uploads raw at offset 0 of buf, all-gathers it into recv,
// zeroes it again and returns what recv holds.
func gatherChunk(c nccl.RankCollectives, x *executor.Executor, buf executor.Buffer, raw []byte, recv nccl.Region) ([]byte, error) {
	if err := x.UploadAt(buf, 0, raw); err != nil {
		return nil, err
	}
	if _, err := c.AllGather(nccl.Region{X: x, Buf: buf, Len: uint64(len(raw))}, recv); err != nil {
		return nil, err
	}
	got, err := x.DownloadRange(buf, recv.Off, recv.Len)
	clear(raw)
	return got, errors.Join(err, x.UploadAt(buf, 0, raw))
}

// offsetsSum is a checksum of g's offsets (CRC-64), which the ranks compare
// to find a rank that holds another graph.
func offsetsSum(g *frontier.CSR) uint64 {
	if len(g.Offsets) == 0 {
		return 0
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(&g.Offsets[0])), 8*len(g.Offsets))
	return crc64.Checksum(b, crc64.MakeTable(crc64.ECMA))
}

// sum is a checksum of the settings every rank must share (the strategy,
// the block size and the direction thresholds).
func (c Config) sum() uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d/%d/%+v", c.Strategy, c.BlockThreads, c.Direction)
	return h.Sum64()
}
