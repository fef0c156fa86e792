package nccl

import (
	"fmt"
	"strings"
	"time"

	"github.com/gpuplan/gpuplan/executor"
)

// UniqueIDBytes is the size of NCCL's ncclUniqueId.
const UniqueIDBytes = 128

// UniqueID is an NCCL unique id (ncclUniqueId): rank 0 makes one with
// NewUniqueID, and every rank of the communicator opens its rank with the
// same id (package rendezvous carries it from rank 0 to the other
// processes as its Payload).
type UniqueID [UniqueIDBytes]byte

// The timeouts of the communicators with one local rank.
const (
	// DefaultInitTimeout is Options.InitTimeout's default.
	DefaultInitTimeout = 60 * time.Second
	// DefaultCollectiveTimeout is Options.CollectiveTimeout's default.
	DefaultCollectiveTimeout = 60 * time.Second
)

// MaxRanks bounds the ranks of a communicator with one local rank.
const MaxRanks = 1 << 16

// PeerRegion is one point-to-point part of a rank's SendRecv: Region is
// sent to rank Rank, or received from it.
type PeerRegion struct {
	Rank   int
	Region Region
}

// RankCollectives are the collectives of one rank of a communicator whose
// other ranks run in other processes (or goroutines, for the fake). Every
// rank calls the same collectives in the same order; each call returns
// once this rank's part has completed, or fails with a *TimeoutError when
// Options.CollectiveTimeout passes first, after which the communicator is
// aborted and every later call fails.
type RankCollectives interface {
	// Rank returns this rank; Ranks the number of ranks.
	Rank() int
	Ranks() int
	// AllGather copies every rank r's send into every rank's recv at
	// offset r x send.Len. Every rank sends the same length, and recv is
	// Ranks() times as long. An all-gather of zero bytes returns at once.
	AllGather(send, recv Region) (Stats, error)
	// SendRecv runs this rank's sends and receives as one group. Between
	// two ranks the k-th send from rank a to rank b arrives in the k-th
	// receive on b from a, of the same length; a send to this rank itself
	// is a local copy into the matching receive from itself. Parts of zero
	// bytes are skipped.
	SendRecv(sends, recvs []PeerRegion) (Stats, error)
	// Close releases the communicator; the executor stays open.
	Close() error
}

// The fake has the collectives of RankComm.
var _ RankCollectives = (*FakeRank)(nil)

// TimeoutError is a rank's collective, or the creation of its
// communicator, that did not complete in time. The communicator was
// aborted: every later call fails with an error that wraps this one.
type TimeoutError struct {
	// Op is the collective ("AllGather", "SendRecv"), or
	// "ncclCommInitRank" for the creation.
	Op string
	// Rank is the rank that waited, Ranks the communicator's size.
	Rank, Ranks int
	// Timeout is how long it waited.
	Timeout time.Duration
	// Missing lists the ranks known not to have joined the call (the fake
	// knows them; NCCL does not say).
	Missing []int
}

// Error names the operation, the rank and the timeout, and ends with a
// "Fix:" sentence.
func (e *TimeoutError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "nccl: %s on rank %d of %d did not complete within %v", e.Op, e.Rank, e.Ranks, e.Timeout)
	if len(e.Missing) > 0 {
		word := "ranks"
		if len(e.Missing) == 1 {
			word = "rank"
		}
		fmt.Fprintf(&b, " (%s %s never joined it)", word, joinInts(e.Missing))
	}
	b.WriteString("; the communicator was aborted. Fix: ")
	if e.Op == "ncclCommInitRank" {
		b.WriteString("start every rank with the same unique id and number of ranks within Options.InitTimeout, check the other ranks' errors, and check that the ranks reach each other (NCCL_DEBUG=INFO; NCCL_SOCKET_IFNAME picks the network interface)")
	} else {
		b.WriteString("make every rank call the same collectives in the same order with matching lengths, check the other ranks' errors, and raise Options.CollectiveTimeout if the transfer is only slow")
	}
	return b.String()
}

// joinInts lists ns as "1, 4, 5".
func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ", ")
}

// abortedError is a call on a communicator aborted by an earlier timeout.
func abortedError(rank int, cause error) error {
	return fmt.Errorf("nccl: the communicator of rank %d was aborted: %w", rank, cause)
}

// initTimeout returns InitTimeout or its default.
func (o Options) initTimeout() time.Duration {
	if o.InitTimeout > 0 {
		return o.InitTimeout
	}
	return DefaultInitTimeout
}

// collectiveTimeout returns CollectiveTimeout or its default.
func (o Options) collectiveTimeout() time.Duration {
	if o.CollectiveTimeout > 0 {
		return o.CollectiveTimeout
	}
	return DefaultCollectiveTimeout
}

// checkRankOpen checks OpenRank's arguments.
func checkRankOpen(x *executor.Executor, rank, ranks int) error {
	switch {
	case x == nil:
		return argErr("executor", "is nil")
	case ranks < 1 || ranks > MaxRanks:
		return argErr("ranks", "is %d, outside 1..%d", ranks, MaxRanks)
	case rank < 0 || rank >= ranks:
		return argErr("rank", "is %d, outside 0..%d", rank, ranks-1)
	}
	return nil
}

// checkLocal checks that r lies inside its buffer on x.
func checkLocal(field string, r Region, x *executor.Executor) error {
	switch {
	case r.X == nil || r.X != x:
		return argErr(field, "is not on this rank's executor")
	case r.Off > r.Buf.Len || r.Len > r.Buf.Len-r.Off:
		return argErr(field, "is %d bytes at offset %d of a %d-byte buffer", r.Len, r.Off, r.Buf.Len)
	}
	return nil
}

// CheckRankAllGather checks a rank's AllGather arguments: send and recv on
// the rank's executor x, inside their buffers, recv ranks times as long as
// send.
func CheckRankAllGather(send, recv Region, x *executor.Executor, ranks int) error {
	if err := checkLocal("send", send, x); err != nil {
		return err
	}
	if err := checkLocal("recv", recv, x); err != nil {
		return err
	}
	if recv.Len%uint64(ranks) != 0 || recv.Len/uint64(ranks) != send.Len {
		return argErr("recv", "is %d bytes, not %d ranks x %d", recv.Len, ranks, send.Len)
	}
	return nil
}

// CheckRankSendRecv checks a rank's SendRecv arguments: every peer in
// 0..ranks-1, every region on the rank's executor x and inside its buffer,
// and the sends to the rank itself matched in order by receives from it
// of the same length.
func CheckRankSendRecv(sends, recvs []PeerRegion, x *executor.Executor, rank, ranks int) error {
	for _, side := range []struct {
		name string
		ps   []PeerRegion
	}{{"sends", sends}, {"recvs", recvs}} {
		for i, p := range side.ps {
			f := fmt.Sprintf("%s[%d]", side.name, i)
			if p.Rank < 0 || p.Rank >= ranks {
				return argErr(f, "names rank %d of %d", p.Rank, ranks)
			}
			if err := checkLocal(f, p.Region, x); err != nil {
				return err
			}
		}
	}
	selfSends, selfRecvs := selfParts(sends, rank), selfParts(recvs, rank)
	if len(selfSends) != len(selfRecvs) {
		return argErr("sends and recvs", "hold %d sends to rank %d itself and %d receives from it", len(selfSends), rank, len(selfRecvs))
	}
	for k := range selfSends {
		if s, r := sends[selfSends[k]], recvs[selfRecvs[k]]; s.Region.Len != r.Region.Len {
			return argErr(fmt.Sprintf("sends[%d]", selfSends[k]), "sends %d bytes to rank %d itself into recvs[%d] of %d", s.Region.Len, rank, selfRecvs[k], r.Region.Len)
		}
	}
	return nil
}

// selfParts returns the indices of the parts addressed to rank itself
// (zero-byte parts included), in order.
func selfParts(ps []PeerRegion, rank int) []int {
	var is []int
	for i, p := range ps {
		if p.Rank == rank {
			is = append(is, i)
		}
	}
	return is
}
