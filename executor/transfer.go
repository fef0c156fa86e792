package executor

// Upload copies data into the whole of b, as vyre's upload_resident: len(data)
// must be b's length (a *ResidentError of kind ResidentLengthMismatch
// otherwise, and b is unchanged). Use UploadAt to write a part of b.
func (x *Executor) Upload(b Buffer, data []byte) error {
	return x.UploadBuffers([]Buffer{b}, [][]byte{data})
}

// UploadBuffers copies data[i] into the whole of bufs[i] for every i in one
// batch that waits on the host once (vyre's upload_resident_many). Every
// length is checked first; nothing is copied if any is wrong.
func (x *Executor) UploadBuffers(bufs []Buffer, data [][]byte) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return ErrClosed
	}
	if len(bufs) != len(data) {
		return &ResidentError{Kind: ResidentCountMismatch, Op: opUpload, BufferLen: uint64(len(bufs)), Len: uint64(len(data))}
	}
	ups := make([]Upload, len(bufs))
	for i, b := range bufs {
		if err := x.wholeUploadLocked(b, data[i], opUpload); err != nil {
			return err
		}
		ups[i] = Upload{Buffer: b, Data: data[i]}
	}
	return x.uploadLocked(ups)
}

// wholeUploadLocked checks that data is exactly b's length.
func (x *Executor) wholeUploadLocked(b Buffer, data []byte, op string) error {
	r, err := x.residentLocked(b, op, 0, uint64(len(data)))
	if err != nil {
		return err
	}
	if uint64(len(data)) != r.len {
		return &ResidentError{Kind: ResidentLengthMismatch, Op: op, Buffer: b.ID, Len: uint64(len(data)), BufferLen: r.len}
	}
	return nil
}

// UploadAt copies data into b at byte offset off (vyre's
// upload_resident_at).
func (x *Executor) UploadAt(b Buffer, off uint64, data []byte) error {
	return x.UploadMany([]Upload{{Buffer: b, Offset: off, Data: data}})
}

// UploadMany validates every upload (vyre's checked ranges: a
// *ResidentError naming the buffer, offset and length), fuses them
// (FuseUploads) and copies the fused uploads through pinned staging on one
// pooled non-blocking stream, waiting on the host once for the batch
// (vyre's upload_resident_at_many). Nothing is copied if any upload is
// invalid.
func (x *Executor) UploadMany(ups []Upload) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return ErrClosed
	}
	for _, u := range ups {
		if _, err := x.rangeLocked(u.Buffer, u.Offset, uint64(len(u.Data)), opUpload); err != nil {
			return err
		}
	}
	return x.uploadLocked(ups)
}

// hostToDevice is one copy of data to device address dst.
type hostToDevice struct {
	dst  DevPtr
	data []byte
}

// uploadLocked fuses validated uploads and copies them as one batch.
func (x *Executor) uploadLocked(ups []Upload) error {
	fused, err := FuseUploads(ups)
	if err != nil || len(fused) == 0 {
		return err
	}
	copies := make([]hostToDevice, len(fused))
	for i, u := range fused {
		copies[i] = hostToDevice{dst: x.buffers[u.Buffer.ID].ptr + DevPtr(u.Offset), data: u.Data}
	}
	return x.copyInLocked(copies)
}

// copyInLocked copies a batch to the device through a staging ring on one
// pooled stream, with one host wait (more only when the batch is larger
// than the ring), and counts it: one host upload operation per copy, its
// bytes and the waits.
func (x *Executor) copyInLocked(copies []hostToDevice) error {
	var total uint64
	for _, c := range copies {
		total += uint64(len(c.data))
	}
	err := x.batchLocked(RangeUpload, total, func(r *stagingRing) error {
		for _, c := range copies {
			if err := r.put(c.dst, c.data); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		x.tel.add(cHostUploadOps, uint64(len(copies)))
		x.tel.add(cHostToDeviceBytes, total)
	}
	return err
}

// batchLocked runs one batch of copies on a pooled stream through a staging
// ring sized for total bytes, inside profiler range pr, and waits for it
// (ring.finish). When the batch fails after copies were enqueued, the
// stream is synchronised before its staging returns to the pool; if even
// that fails, the stream and the staging are abandoned rather than reused
// while a copy may still be in flight. Every host wait is counted as a sync
// point.
func (x *Executor) batchLocked(pr ProfilerRange, total uint64, body func(*stagingRing) error) error {
	s, err := x.streamLocked()
	if err != nil {
		return err
	}
	abandoned := false
	var waits uint64
	err = x.onDriver(func() error {
		x.rangePush(pr)
		defer x.rangePop()
		r, err := x.newRingLocked(s, total)
		if err != nil {
			return err
		}
		if err = body(r); err == nil {
			err = r.finish()
		} else if x.b.StreamSync(s) == nil {
			r.waits++
		} else {
			abandoned = true
		}
		waits = r.waits
		if abandoned {
			r.abandon()
		} else {
			r.release()
		}
		return err
	})
	x.tel.add(cSyncPoints, waits)
	if !abandoned {
		x.releaseStreamLocked(s)
	}
	return err
}

// Download returns the whole of b (vyre's download_resident).
func (x *Executor) Download(b Buffer) ([]byte, error) {
	out, err := x.DownloadBuffers([]Buffer{b})
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// DownloadBuffers returns the whole of every buffer in one batch that waits
// on the host once (vyre's download_resident_many).
func (x *Executor) DownloadBuffers(bs []Buffer) ([][]byte, error) {
	reqs := make([]ReadRequest, len(bs))
	for i, b := range bs {
		reqs[i] = ReadRequest{Buffer: b, Len: b.Len}
	}
	return x.DownloadMany(reqs)
}

// DownloadRange returns n bytes of b from byte offset off.
func (x *Executor) DownloadRange(b Buffer, off, n uint64) ([]byte, error) {
	out, err := x.DownloadMany([]ReadRequest{{Buffer: b, Offset: off, Len: n}})
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// DownloadRanges returns several ranges of b, fused into as few copies as
// possible, with one wait.
func (x *Executor) DownloadRanges(b Buffer, ranges []Range) ([][]byte, error) {
	reqs := make([]ReadRequest, len(ranges))
	for i, r := range ranges {
		reqs[i] = ReadRequest{Buffer: b, Offset: r.Offset, Len: r.Len}
	}
	return x.DownloadMany(reqs)
}

// DownloadRangeInto copies len(dst) bytes of b from byte offset off into
// dst, without allocating a result.
func (x *Executor) DownloadRangeInto(b Buffer, off uint64, dst []byte) error {
	return x.DownloadManyInto([]ReadRequest{{Buffer: b, Offset: off, Len: uint64(len(dst))}}, [][]byte{dst})
}

// DownloadMany reads ranges of any buffers in one batch and returns each
// request's bytes in a slice of its own (a zero-length request gets an
// empty, non-nil slice). See DownloadManyInto.
func (x *Executor) DownloadMany(reqs []ReadRequest) ([][]byte, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return nil, ErrClosed
	}
	if err := x.checkRangesLocked(reqs, opDownload); err != nil {
		return nil, err
	}
	outs := make([][]byte, len(reqs))
	for i, q := range reqs {
		outs[i] = make([]byte, q.Len)
	}
	if err := x.downloadLocked(reqs, outs); err != nil {
		return nil, err
	}
	return outs, nil
}

// DownloadManyInto reads ranges of any buffers into caller-owned slots,
// outs[i] receiving reqs[i] (vyre's download_resident_ranges_into): the
// counts must match and every slot must have its range's length. Every
// range is checked first (a *ResidentError naming the buffer, offset and
// length). Requests are fused (FuseReadbacks) into as few copies as
// possible, all on one pooled non-blocking stream with one host wait; a
// batch of only empty ranges copies nothing and does not wait.
func (x *Executor) DownloadManyInto(reqs []ReadRequest, outs [][]byte) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return ErrClosed
	}
	if err := x.checkReadsLocked(reqs, outs, opDownload, opDownload); err != nil {
		return err
	}
	return x.downloadLocked(reqs, outs)
}

// checkReadsLocked checks a batch of reads for op: matching counts (named
// countOp in the error), every range, and every output slot's length.
func (x *Executor) checkReadsLocked(reqs []ReadRequest, outs [][]byte, op, countOp string) error {
	if len(reqs) != len(outs) {
		return &ResidentError{Kind: ResidentCountMismatch, Op: countOp, BufferLen: uint64(len(reqs)), Len: uint64(len(outs))}
	}
	if err := x.checkRangesLocked(reqs, op); err != nil {
		return err
	}
	for i, q := range reqs {
		if uint64(len(outs[i])) != q.Len {
			return &ResidentError{Kind: ResidentOutputLength, Op: op, Buffer: q.Buffer.ID, Offset: q.Offset, Len: q.Len, BufferLen: uint64(len(outs[i])), Index: i}
		}
	}
	return nil
}

// checkRangesLocked checks every requested range for op.
func (x *Executor) checkRangesLocked(reqs []ReadRequest, op string) error {
	for _, q := range reqs {
		if _, err := x.rangeLocked(q.Buffer, q.Offset, q.Len, op); err != nil {
			return err
		}
	}
	return nil
}

// deviceToHost is one copy of len(dst) bytes from device address src.
type deviceToHost struct {
	src DevPtr
	dst []byte
}

// readPlan fuses checked reads into copies: a copy read by one request
// lands in that request's slot, a copy shared by several in a temporary
// buffer whose views finish copies to the slots.
type readPlan struct {
	copies []deviceToHost
	views  []ReadView
	shared [][]byte
	bytes  uint64
}

// planReadsLocked fuses checked reads into outs.
func (x *Executor) planReadsLocked(reqs []ReadRequest, outs [][]byte) (readPlan, error) {
	if len(reqs) == 1 { // one range: nothing to fuse (a wave step's readback)
		q := reqs[0]
		if q.Len == 0 {
			return readPlan{}, nil
		}
		c := deviceToHost{src: x.buffers[q.Buffer.ID].ptr + DevPtr(q.Offset), dst: outs[0]}
		return readPlan{copies: []deviceToHost{c}, bytes: q.Len}, nil
	}
	fused, views, err := FuseReadbacks(reqs)
	if err != nil {
		return readPlan{}, err
	}
	users, owner := make([]int, len(fused)), make([]int, len(fused))
	for i, v := range views {
		if v.CopySlot >= 0 {
			users[v.CopySlot]++
			owner[v.CopySlot] = i
		}
	}
	p := readPlan{copies: make([]deviceToHost, len(fused)), views: views, shared: make([][]byte, len(fused))}
	for i, c := range fused {
		dst := outs[owner[i]]
		if users[i] > 1 {
			p.shared[i] = make([]byte, c.Len)
			dst = p.shared[i]
		}
		p.copies[i] = deviceToHost{src: x.buffers[c.Buffer.ID].ptr + DevPtr(c.Offset), dst: dst}
		p.bytes += c.Len
	}
	return p, nil
}

// deliver copies the shared copies' views into their slots.
func (p readPlan) deliver(outs [][]byte) {
	for i, v := range p.views {
		if v.CopySlot >= 0 && p.shared[v.CopySlot] != nil {
			copy(outs[i], p.shared[v.CopySlot][v.ByteOffset:v.ByteOffset+v.ByteLen])
		}
	}
}

// count records the plan's readback: one operation per copy and the union
// of the requested bytes.
func (p readPlan) count(t *Telemetry) {
	t.add(cDeviceReadbackOps, uint64(len(p.copies)))
	t.add(cDeviceToHostBytes, p.bytes)
	t.add(cReadbackBytes, p.bytes)
}

// downloadLocked reads checked requests into outs as one batch.
func (x *Executor) downloadLocked(reqs []ReadRequest, outs [][]byte) error {
	p, err := x.planReadsLocked(reqs, outs)
	if err != nil || len(p.copies) == 0 {
		return err
	}
	if err := x.copyOutLocked(p.copies, p.bytes); err != nil {
		return err
	}
	p.deliver(outs)
	p.count(&x.tel)
	return nil
}

// copyOutLocked copies a batch of total bytes from the device through a
// staging ring on one pooled stream, with one host wait (more only when the
// batch is larger than the ring).
func (x *Executor) copyOutLocked(copies []deviceToHost, total uint64) error {
	return x.batchLocked(RangeDownload, total, func(r *stagingRing) error {
		for _, c := range copies {
			if err := r.get(c.src, c.dst); err != nil {
				return err
			}
		}
		return nil
	})
}
