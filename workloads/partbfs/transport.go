package partbfs

import (
	"fmt"
	"time"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/executor/nccl"
	"github.com/gpuplan/gpuplan/internal/kernelabi"
)

// DefaultBlockThreads is the block size of every kernel launch.
const DefaultBlockThreads = 256

// DeviceCopy is the exchange of the one-device simulation: every rank is a
// part on the same executor, and every transfer is a launch of the copy
// kernel, the launches of one collective in flight together.
type DeviceCopy struct {
	x      *executor.Executor
	xs     []*executor.Executor
	k      *executor.Kernel
	grid   executor.GridPlan
	closed bool
}

// NewDeviceCopy returns the device-copy exchange of ranks parts on x.
func NewDeviceCopy(x *executor.Executor, ranks int) (*DeviceCopy, error) {
	if x == nil || ranks < 1 || ranks > MaxParts {
		return nil, fmt.Errorf("device-copy exchange of %d ranks: need an executor and 1 to %d ranks. Fix: pass the executor the parts share and their count", ranks, MaxParts)
	}
	mod, err := x.LoadModule(partPTX)
	if err != nil {
		return nil, err
	}
	k, err := mod.Kernel(KernelCopy)
	if err != nil {
		return nil, err
	}
	grid, err := x.CooperativeGrid(k, DefaultBlockThreads, 0)
	if err != nil {
		return nil, err
	}
	xs := make([]*executor.Executor, ranks)
	for i := range xs {
		xs[i] = x
	}
	return &DeviceCopy{x: x, xs: xs, k: k, grid: grid}, nil
}

// Ranks returns the number of parts.
func (d *DeviceCopy) Ranks() int { return len(d.xs) }

// AllGather copies every part's send region into every part's recv.
func (d *DeviceCopy) AllGather(send, recv []nccl.Region) (nccl.Stats, error) {
	if err := nccl.CheckAllGather(send, recv, d.xs); err != nil {
		return nccl.Stats{}, err
	}
	var ts []nccl.Transfer
	n := send[0].Len
	for from := range d.xs {
		for to := range d.xs {
			dst := recv[to]
			dst.Off, dst.Len = dst.Off+uint64(from)*n, n
			ts = append(ts, nccl.Transfer{From: from, To: to, Src: send[from], Dst: dst})
		}
	}
	return d.copyAll(ts)
}

// SendRecv copies every transfer.
func (d *DeviceCopy) SendRecv(ts []nccl.Transfer) (nccl.Stats, error) {
	if err := nccl.CheckSendRecv(ts, d.xs); err != nil {
		return nccl.Stats{}, err
	}
	return d.copyAll(ts)
}

// copyAll launches one copy per transfer and waits for all of them.
func (d *DeviceCopy) copyAll(ts []nccl.Transfer) (nccl.Stats, error) {
	if d.closed {
		return nccl.Stats{}, fmt.Errorf("device-copy exchange is closed. Fix: exchange before closing the devices")
	}
	t0 := time.Now()
	var st nccl.Stats
	var pending []*executor.Pending
	var first error
	for _, t := range ts {
		if t.Src.Len == 0 {
			continue
		}
		if t.Src.Len%4 != 0 || t.Src.Off%4 != 0 || t.Dst.Off%4 != 0 {
			first = fmt.Errorf("device-copy transfer of %d bytes from offset %d to %d: the copy moves 4-byte words. Fix: align the regions to 4 bytes", t.Src.Len, t.Src.Off, t.Dst.Off)
			break
		}
		words := t.Src.Len / 4
		cfg := d.grid.Config()
		cfg.Cooperative = false
		cfg.Grid[0] = uint32(min(uint64(cfg.Grid[0]), (words+DefaultBlockThreads-1)/DefaultBlockThreads))
		args := kernelabi.MustArgs(CopyParams[executor.Buffer]{Src: t.Src.Buf, Dst: t.Dst.Buf, Words: words})
		args[0], args[1] = executor.PtrAt(t.Src.Buf, t.Src.Off), executor.PtrAt(t.Dst.Buf, t.Dst.Off)
		p, err := d.x.LaunchAsync(d.k, cfg, args...)
		if err != nil {
			first = err
			break
		}
		pending = append(pending, p)
		if t.From != t.To {
			st.Bytes += t.Src.Len
		}
	}
	for _, p := range pending {
		if _, err := p.Wait(); err != nil && first == nil {
			first = err
		}
	}
	st.WallNs = uint64(time.Since(t0))
	return st, first
}

// Close marks the exchange closed; the executor stays open.
func (d *DeviceCopy) Close() error {
	d.closed = true
	return nil
}
