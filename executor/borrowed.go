package executor

import (
	"slices"
	"time"
)

// borrowedLocked runs a dispatch through host staging instead of its
// resident buffers (Options.ResidentBorrowedFallback, vyre's resident
// borrowed fallback), synchronously: every buffer the dispatch uses is read
// back (an Out buffer starts as zeros instead), copied into a transient
// device buffer of its own, the kernel runs on the copies, and the copies
// are read back and written into the resident buffers. It waits five times
// (readback, upload, launch, readback, upload; a dispatch with only Out
// buffers skips the first) and counts one ResidentBorrowedFallbackDispatch.
// The Pending it returns is finished.
func (x *Executor) borrowedLocked(t0 time.Time, k *Kernel, cfg LaunchConfig, args []Arg, la launchArgs, tails [][]uint64) (*Pending, error) {
	ids := distinctIDs(la.used)
	var t Timing
	err := x.onDriver(func() error {
		x.rangePush(RangeBorrowedFallback)
		defer x.rangePop()
		var err error
		t, err = x.borrowedRunLocked(t0, k, cfg, args, la, tails, ids)
		return err
	})
	if err != nil {
		return nil, err
	}
	x.tel.add(cResidentBorrowedFallback, 1)
	return &Pending{x: x, k: k, cfg: cfg, done: true, result: t}, nil
}

// borrowedRunLocked stages the buffers ids, runs the dispatch on the copies
// and writes them back.
func (x *Executor) borrowedRunLocked(t0 time.Time, k *Kernel, cfg LaunchConfig, args []Arg, la launchArgs, tails [][]uint64, ids []uint64) (Timing, error) {
	host, err := x.borrowedReadLocked(ids, la)
	if err != nil {
		return Timing{}, err
	}
	copies := make([]DevPtr, len(ids))
	defer func() {
		for _, p := range copies {
			if p != 0 {
				_ = x.b.MemFree(p)
			}
		}
	}()
	up := make([]hostToDevice, len(ids))
	for i := range ids {
		if copies[i], err = x.b.MemAlloc(uint64(len(host[i]))); err != nil {
			return Timing{}, err
		}
		x.tel.add(cTransientAllocBytes, uint64(len(host[i])))
		up[i] = hostToDevice{dst: copies[i], data: host[i]}
	}
	if err := x.copyInLocked(up); err != nil {
		return Timing{}, err
	}
	t, err := x.borrowedLaunchLocked(t0, k, cfg, args, la, tails, ids, copies)
	if err != nil {
		return t, err
	}
	return t, x.borrowedWriteBackLocked(ids, host, copies)
}

// borrowedReadLocked reads back the buffers the dispatch reads: every one
// but the Out buffers, which start as zeros.
func (x *Executor) borrowedReadLocked(ids []uint64, la launchArgs) ([][]byte, error) {
	host := make([][]byte, len(ids))
	var reqs []ReadRequest
	var outs [][]byte
	for i, id := range ids {
		n := x.buffers[id].len
		host[i] = make([]byte, n)
		if !la.clearing(id) {
			reqs = append(reqs, ReadRequest{Buffer: Buffer{ID: id, Len: n}, Len: n})
			outs = append(outs, host[i])
		}
	}
	return host, x.downloadLocked(reqs, outs)
}

// borrowedLaunchLocked launches the dispatch with the copies' addresses in
// place of the resident buffers' and waits for it.
func (x *Executor) borrowedLaunchLocked(t0 time.Time, k *Kernel, cfg LaunchConfig, args []Arg, la launchArgs, tails [][]uint64, ids []uint64, copies []DevPtr) (Timing, error) {
	for i, a := range args {
		if a.kind == argBuffer || a.kind == argOut {
			la.vals[i] = uint64(copies[slices.Index(ids, a.buf.ID)]) + a.off
		}
	}
	la.clears = nil // the Out buffers' copies were uploaded as zeros
	launches, _ := launchCount(cfg, len(tails))
	p := &Pending{x: x, k: k, cfg: cfg, t0: t0, launches: launches}
	if err := x.enqueueDriverLocked(p, k, cfg, args, la, tails); err != nil {
		x.finishLocked(p)
		return Timing{}, err
	}
	p.enqueue = time.Since(t0)
	return x.waitLocked(p)
}

// borrowedWriteBackLocked reads the copies back and uploads them into the
// resident buffers.
func (x *Executor) borrowedWriteBackLocked(ids []uint64, host [][]byte, copies []DevPtr) error {
	down := make([]deviceToHost, len(ids))
	var total uint64
	for i := range ids {
		down[i] = deviceToHost{src: copies[i], dst: host[i]}
		total += uint64(len(host[i]))
	}
	if err := x.copyOutLocked(down, total); err != nil {
		return err
	}
	readback := readPlan{copies: down, bytes: total}
	readback.count(&x.tel)
	up := make([]hostToDevice, len(ids))
	for i, id := range ids { // the executor stays locked: no buffer was freed
		up[i] = hostToDevice{dst: x.buffers[id].ptr, data: host[i]}
	}
	return x.copyInLocked(up)
}

// distinctIDs returns the ids in first-seen order without repeats.
func distinctIDs(ids []uint64) []uint64 {
	out := make([]uint64, 0, len(ids))
	for _, id := range ids {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}
