package executor

import (
	"cmp"
	"slices"

	"github.com/gpuplan/gpuplan/internal/checked"
)

// Upload is one host-to-device copy: Data is written into Buffer at byte
// Offset.
type Upload struct {
	Buffer Buffer
	Offset uint64
	Data   []byte
}

// ReadRequest asks for Len bytes of Buffer starting at byte Offset.
type ReadRequest struct {
	Buffer Buffer
	Offset uint64
	Len    uint64
}

// FusedCopy is one device-to-host copy that serves one or more read
// requests.
type FusedCopy struct {
	Buffer Buffer
	Offset uint64
	Len    uint64
}

// ReadView locates one read request's bytes inside the fused copies:
// copies[CopySlot] starting at ByteOffset, ByteLen bytes. A zero-length
// request gets CopySlot -1 and no bytes.
type ReadView struct {
	CopySlot   int
	ByteOffset uint64
	ByteLen    uint64
}

// end returns off+n, or an overflow error naming field.
func end(off, n uint64, field string) (uint64, error) {
	return checked.Add(off, n, field)
}

// FuseUploads merges uploads as vyre's resident_transfer_fusion does. In
// submission order, an upload is merged with every pending upload to the
// same buffer whose byte range overlaps or touches its own:
//
//   - if the later upload covers all of them, it replaces them (its bytes
//     are used as they are, without a copy);
//   - otherwise the bytes are merged into one new buffer covering the union,
//     later bytes winning;
//   - empty uploads never schedule a copy.
//
// The result, applied in any order, leaves device memory exactly as the
// input applied in order would; no two results for one buffer overlap or
// touch. Results keep the order in which their first contributor was
// submitted. The input slices are never modified.
func FuseUploads(uploads []Upload) ([]Upload, error) {
	type pending struct {
		up       Upload
		start    uint64
		stop     uint64
		order    int
		removed  bool
		borrowed bool // Data aliases the caller's slice
	}
	var out []*pending
	for i, u := range uploads {
		if len(u.Data) == 0 {
			continue
		}
		stop, err := end(u.Offset, uint64(len(u.Data)), "upload end offset")
		if err != nil {
			return nil, err
		}
		var hit []*pending
		for _, p := range out {
			if !p.removed && p.up.Buffer.ID == u.Buffer.ID && p.start <= stop && u.Offset <= p.stop {
				hit = append(hit, p)
			}
		}
		if len(hit) == 0 {
			out = append(out, &pending{up: u, start: u.Offset, stop: stop, order: i, borrowed: true})
			continue
		}
		lo, hi := u.Offset, stop
		first := hit[0].order
		for _, p := range hit {
			lo, hi = min(lo, p.start), max(hi, p.stop)
			first = min(first, p.order)
			p.removed = true
		}
		merged := &pending{start: lo, stop: hi, order: first}
		if lo == u.Offset && hi == stop {
			merged.up, merged.borrowed = u, true
		} else {
			buf := make([]byte, hi-lo)
			for _, p := range hit {
				copy(buf[p.start-lo:], p.up.Data)
			}
			copy(buf[u.Offset-lo:], u.Data)
			merged.up = Upload{Buffer: u.Buffer, Offset: lo, Data: buf}
		}
		out = append(out, merged)
	}
	res := make([]Upload, 0, len(out))
	live := make([]*pending, 0, len(out))
	for _, p := range out {
		if !p.removed {
			live = append(live, p)
		}
	}
	slices.SortStableFunc(live, func(a, b *pending) int { return cmp.Compare(a.order, b.order) })
	for _, p := range live {
		res = append(res, p.up)
	}
	return res, nil
}

// FuseReadbacks plans device-to-host copies as vyre does: zero-length requests
// are dropped, the rest are sorted by (buffer id, offset) unless already in
// order, and same-buffer intervals that overlap or touch are merged. Each
// request gets a view into the fused copies. The copied bytes are exactly
// the union of the requested intervals per buffer, and no two fused copies
// could still be merged.
func FuseReadbacks(reqs []ReadRequest) ([]FusedCopy, []ReadView, error) {
	views := make([]ReadView, len(reqs))
	idx := make([]int, 0, len(reqs))
	for i, r := range reqs {
		if _, err := end(r.Offset, r.Len, "readback end offset"); err != nil {
			return nil, nil, err
		}
		if r.Len == 0 {
			views[i] = ReadView{CopySlot: -1}
			continue
		}
		idx = append(idx, i)
	}
	less := func(a, b int) int {
		ra, rb := reqs[a], reqs[b]
		if c := cmp.Compare(ra.Buffer.ID, rb.Buffer.ID); c != 0 {
			return c
		}
		if c := cmp.Compare(ra.Offset, rb.Offset); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	}
	if !slices.IsSortedFunc(idx, less) {
		slices.SortFunc(idx, less)
	}
	var copies []FusedCopy
	var stop uint64
	for _, i := range idx {
		r := reqs[i]
		rend := r.Offset + r.Len // checked above
		n := len(copies)
		if n > 0 && copies[n-1].Buffer.ID == r.Buffer.ID && r.Offset <= stop {
			if rend > stop {
				stop = rend
				copies[n-1].Len = stop - copies[n-1].Offset
			}
		} else {
			copies = append(copies, FusedCopy(r))
			stop = rend
		}
		views[i] = ReadView{CopySlot: len(copies) - 1, ByteOffset: r.Offset - copies[len(copies)-1].Offset, ByteLen: r.Len}
	}
	return copies, views, nil
}
