package kronbuild

import (
	"fmt"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/internal/kernelabi"
)

// This file emulates the sort and CSR kernels: per block, over the block's
// segment of the keys, as the CUDA blocks compute them.

// segments returns the [lo, hi) ranges of a launch's blocks over count
// keys, segment a block, and refuses a grid that does not cover them.
func segments(l *executor.FakeLaunch, kernel string, count, segment uint64) ([][2]uint64, error) {
	blocks := gridBlocks(l)
	if segment == 0 || blocks*segment < count {
		return nil, fmt.Errorf("%s: %d blocks of %d keys do not cover %d keys", kernel, blocks, segment, count)
	}
	out := make([][2]uint64, blocks)
	for b := range out {
		lo := min(uint64(b)*segment, count)
		out[b] = [2]uint64{lo, min(lo+segment, count)}
	}
	return out, nil
}

// passSegments maps a sort pass's digit matrix and blocks, and refuses a
// grid other than its blocks.
func passSegments(l *executor.FakeLaunch, kernel string, p SortPassParams[executor.DevPtr]) ([]uint64, [][2]uint64, error) {
	if gridBlocks(l) != p.Blocks || p.Bits == 0 || p.Bits > DigitBits {
		return nil, nil, fmt.Errorf("%s: a grid of %d blocks, %d bits, for a pass of %d blocks", kernel, gridBlocks(l), p.Bits, p.Blocks)
	}
	hist, err := kernelabi.View[uint64](l, p.Hist, Digits*p.Blocks+1)
	if err != nil {
		return nil, nil, err
	}
	segs, err := segments(l, kernel, p.Count, p.Segment)
	return hist, segs, err
}

func (e *emulator) runSortHist(l *executor.FakeLaunch, p SortHistParams[executor.DevPtr]) error {
	keys, err := kernelabi.View[uint64](l, p.Keys, p.Count)
	if err != nil {
		return err
	}
	hist, segs, err := passSegments(l, KernelSortHist, p.SortPassParams)
	if err != nil {
		return err
	}
	mask := uint64(1)<<p.Bits - 1
	for b, s := range segs {
		var count [Digits]uint64
		for _, k := range keys[s[0]:s[1]] {
			count[(k>>p.Bit)&mask]++
		}
		for d, c := range count {
			hist[uint64(d)*p.Blocks+uint64(b)] = c
		}
	}
	return nil
}

func (e *emulator) runScan(l *executor.FakeLaunch, p ScanParams[executor.DevPtr]) error {
	if gridBlocks(l) != 1 {
		return fmt.Errorf("%s: a grid of %d blocks, not one", KernelScan, gridBlocks(l))
	}
	data, err := kernelabi.View[uint64](l, p.Data, p.Count+1)
	if err != nil {
		return err
	}
	sum := uint64(0)
	for i := range data[:p.Count] {
		data[i], sum = sum, sum+data[i]
	}
	data[p.Count] = sum
	return nil
}

func (e *emulator) runSortScatter(l *executor.FakeLaunch, p SortScatterParams[executor.DevPtr]) error {
	in, err := kernelabi.View[uint64](l, p.In, p.Count)
	if err != nil {
		return err
	}
	out, err := kernelabi.View[uint64](l, p.Out, p.Count)
	if err != nil {
		return err
	}
	hist, segs, err := passSegments(l, KernelSortScatter, p.SortPassParams)
	if err != nil {
		return err
	}
	for b, s := range segs {
		var next [Digits]uint64
		for d := range next {
			next[d] = hist[uint64(d)*p.Blocks+uint64(b)]
		}
		for t0 := s[0]; t0 < s[1]; t0 += SortTile {
			if err := scatterTile(in[t0:min(t0+SortTile, s[1])], out, &next, p.Bit, p.Bits); err != nil {
				return fmt.Errorf("%s: block %d: %w", KernelSortScatter, b, err)
			}
		}
	}
	return nil
}

// scatterTile moves one tile of keys as kron_sort_scatter does: padded
// with ~0 to SortTile keys, ranked stably by digit in memory order (the
// order a warp-striped load gives cub::BlockRadixRankMatch), placed by
// rank, and the first len(tile) written at rel[digit] + rank, rel[d]
// being the digit's next output position less its first rank; then each
// digit's next position moves on by its count, padding included.
func scatterTile(tile, out []uint64, next *[Digits]uint64, bit, bits uint64) error {
	mask := uint64(1)<<bits - 1
	var count [Digits]uint64
	var first [Digits + 1]uint64
	keys := make([]uint64, SortTile)
	for i := range keys {
		keys[i] = ^uint64(0)
		if i < len(tile) {
			keys[i] = tile[i]
		}
		count[(keys[i]>>bit)&mask]++
	}
	for d := range Digits {
		first[d+1] = first[d] + count[d]
	}
	ranked := make([]uint64, SortTile)
	at := first
	for _, k := range keys {
		d := (k >> bit) & mask
		ranked[at[d]] = k
		at[d]++
	}
	for idx, k := range ranked[:len(tile)] {
		d := (k >> bit) & mask
		w := next[d] - first[d] + uint64(idx)
		if w >= uint64(len(out)) {
			return fmt.Errorf("a key of digit %d goes to %d, past %d keys", d, w, len(out))
		}
		out[w] = k
	}
	for d := range Digits {
		next[d] += count[d]
	}
	return nil
}

func (e *emulator) runUniqueCount(l *executor.FakeLaunch, p UniqueCountParams[executor.DevPtr]) error {
	keys, err := kernelabi.View[uint64](l, p.Keys, p.Count)
	if err != nil {
		return err
	}
	segs, err := segments(l, KernelUniqueCount, p.Count, p.Segment)
	if err != nil {
		return err
	}
	counts, err := kernelabi.View[uint64](l, p.Counts, uint64(len(segs)))
	if err != nil {
		return err
	}
	for b, s := range segs {
		counts[b] = 0
		for x := s[0]; x < s[1]; x++ {
			if x == 0 || keys[x] != keys[x-1] {
				counts[b]++
			}
		}
	}
	return nil
}

// csrPart is a compaction's buffers as Go slices.
type csrPart struct {
	p                     CompactParams[executor.DevPtr]
	keys, counts, offsets []uint64
	targets               []uint32
}

func (e *emulator) runCompact(l *executor.FakeLaunch, p CompactParams[executor.DevPtr]) error {
	c := csrPart{p: p}
	var err error
	if c.keys, err = kernelabi.View[uint64](l, p.Keys, p.Count); err != nil {
		return err
	}
	if c.counts, err = kernelabi.View[uint64](l, p.Counts, p.Blocks+1); err != nil {
		return err
	}
	if c.targets, err = kernelabi.View[uint32](l, p.Targets, c.counts[p.Blocks]); err != nil {
		return err
	}
	if c.offsets, err = kernelabi.View[uint64](l, p.Offsets, p.RowFirst+p.Rows+1); err != nil {
		return err
	}
	segs, err := segments(l, KernelCompact, p.Count, p.Segment)
	if err != nil || uint64(len(segs)) != p.Blocks {
		return fmt.Errorf("%s: %d blocks for %d: %v", KernelCompact, len(segs), p.Blocks, err)
	}
	for b, s := range segs {
		c.block(c.counts[b], s[0], s[1])
	}
	return nil
}

// block writes the targets and offsets of keys [lo, hi), the first
// distinct one at position pos, as kron_compact's block does: tile by
// tile, thread t taking the CompactItems keys from lo + t*CompactItems,
// its distinct keys placed after the earlier threads'.
func (c *csrPart) block(pos, lo, hi uint64) {
	const tile = Threads * CompactItems
	for t0 := lo; t0 < hi; t0 += tile {
		var flags [Threads]uint32
		for t := range uint64(Threads) {
			for q := range uint64(CompactItems) {
				if x := t0 + t*CompactItems + q; x < hi && (x == 0 || c.keys[x] != c.keys[x-1]) {
					flags[t] |= 1 << q
				}
			}
		}
		for t := range uint64(Threads) {
			pos = c.thread(t0+t*CompactItems, hi, flags[t], pos)
		}
	}
}

// thread writes what one thread of kron_compact writes for the keys from
// x0 (those below hi) with its flags, its first distinct key at w, and
// returns the position after its distinct keys.
func (c *csrPart) thread(x0, hi uint64, flags uint32, w uint64) uint64 {
	p := c.p
	mask := uint64(1)<<p.Scale - 1
	for q := range uint64(CompactItems) {
		x := x0 + q
		if x >= hi {
			break
		}
		key := c.keys[x]
		row := key >> p.Scale
		if flags>>q&1 != 0 {
			c.targets[w] = uint32(key & mask)
			from := uint64(0)
			if x > 0 {
				from = c.keys[x-1]>>p.Scale + 1
			}
			c.setRows(from, row, p.Base+w)
			w++
		}
		if x == p.Count-1 {
			c.setRows(row+1, p.Rows, p.Base+c.counts[p.Blocks])
		}
	}
	return w
}

// setRows sets the offsets of the part's rows [from, to], none past its
// end.
func (c *csrPart) setRows(from, to, value uint64) {
	for r := from; r <= to && r <= c.p.Rows; r++ {
		c.offsets[c.p.RowFirst+r] = value
	}
}

func (e *emulator) runFill(l *executor.FakeLaunch, p FillParams[executor.DevPtr]) error {
	words, err := kernelabi.View[uint64](l, p.Words, p.First+p.Count)
	if err != nil {
		return err
	}
	for i := range words[p.First:] {
		words[p.First+uint64(i)] = p.Value
	}
	return nil
}
