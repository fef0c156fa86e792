package rendezvous

import (
	"fmt"
	"strings"
)

// Reason says why a rendezvous failed.
type Reason int

const (
	// ReasonConfig: this rank's Config is invalid.
	ReasonConfig Reason = iota + 1
	// ReasonUnreachable: a joining rank found no rank 0 to connect to before its
	// deadline.
	ReasonUnreachable
	// ReasonTimeout: rank 0's deadline passed before every rank joined, or a
	// joining rank got no answer in time.
	ReasonTimeout
	// ReasonRefused: rank 0 refused this rank; Msg holds rank 0's reason.
	ReasonRefused
	// ReasonMismatch: rank 0 received a hello that disagrees with its own
	// configuration (world size, device key, rank out of range or twice).
	ReasonMismatch
	// ReasonProtocol: the peer sent a message that breaks the protocol.
	ReasonProtocol
	// ReasonNetwork: a connection failed while the answer was sent or read.
	ReasonNetwork
	// ReasonCanceled: the context was canceled.
	ReasonCanceled
)

var reasonNames = map[Reason]string{ReasonConfig: "config", ReasonUnreachable: "unreachable", ReasonTimeout: "timeout", ReasonRefused: "refused",
	ReasonMismatch: "mismatch", ReasonProtocol: "protocol", ReasonNetwork: "network", ReasonCanceled: "canceled"}

// String names the reason.
func (r Reason) String() string {
	if n, ok := reasonNames[r]; ok {
		return n
	}
	return fmt.Sprintf("reason(%d)", int(r))
}

// Error is a failed rendezvous, seen from one rank.
type Error struct {
	// Rank is the rank that reports the error (-1 when it is not known).
	Rank int
	// Addr is rank 0's address, or the address file's path when no address
	// was read from it.
	Addr string
	// Reason says what went wrong.
	Reason Reason
	// Missing lists the ranks that had not joined when rank 0 gave up
	// (ReasonTimeout or ReasonCanceled, on rank 0).
	Missing []int
	// Msg says what happened, Fix what to do about it.
	Msg, Fix string
	// Err is the underlying network, file or context error, if any.
	Err error
}

// Error names the rank, rank 0's address and what happened, and ends with
// a "Fix:" sentence.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("rendezvous: ")
	if e.Rank >= 0 {
		fmt.Fprintf(&b, "rank %d", e.Rank)
		if e.Addr != "" {
			fmt.Fprintf(&b, " (rank 0 at %s)", e.Addr)
		}
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	if e.Err != nil {
		fmt.Fprintf(&b, " (%v)", e.Err)
	}
	if e.Fix != "" {
		b.WriteString(". Fix: ")
		b.WriteString(e.Fix)
	}
	return b.String()
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// Fixes shared by several errors.
const (
	fixWorld    = "start every rank with the same --world-size"
	fixRanks    = "give every process a distinct rank from 0 to the world size minus 1, with rank 0 the process that listens"
	fixKey      = "run every rank on the same kind of GPU and driver, from the same gpuplan build"
	fixProtocol = "point every rank at the address rank 0 listens on, and start every rank from the same gpuplan build"
	fixStart    = "start every rank within the timeout (raise it for slow launches), check the missing ranks' own errors, and check that they reach rank 0's address"
)

// formatRanks lists ranks as "1, 4, 5", at most 16 of them and a count of
// the rest.
func formatRanks(rs []int) string {
	var b strings.Builder
	for i, r := range rs {
		if i == 16 {
			fmt.Fprintf(&b, " and %d more", len(rs)-i)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprint(&b, r)
	}
	return b.String()
}

// plural returns "rank" or "ranks" for n.
func plural(n int) string {
	if n == 1 {
		return "rank"
	}
	return "ranks"
}
