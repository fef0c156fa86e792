package nccl

import (
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
