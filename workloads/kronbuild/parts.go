package kronbuild

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"time"
	"unsafe"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/workloads/harness"
)

// phase is one timed step of a build: what it enqueues on the stream and
// the duration its device time adds to.
type phase struct {
	time *time.Duration
	run  func() error
}

// phases runs the steps with a timing event before the first and after
// each, waits for the stream, and adds each step's device time to its
// duration.
func (b *builder) phases(steps []phase) error {
	b.tl.reset()
	if _, err := b.tl.mark(); err != nil {
		return err
	}
	for _, s := range steps {
		if err := s.run(); err != nil {
			return err
		}
		if _, err := b.tl.mark(); err != nil {
			return err
		}
	}
	if err := b.sync(); err != nil {
		return err
	}
	for i, s := range steps {
		d, err := b.tl.since(i, i+1)
		if err != nil {
			return err
		}
		*s.time += d
	}
	return nil
}

// edgeParams are the edge kernels' generator parameters.
func (b *builder) edgeParams() EdgeParams[executor.Buffer] {
	tAB, tA, tC := frontier.KroneckerThresholds()
	return EdgeParams[executor.Buffer]{Perm: b.fixed.perm, Seed: b.seed, Scale: uint64(b.plan.Scale), Edges: b.plan.Edges,
		TAB: uint64(tAB), TA: uint64(tA), TC: uint64(tC)}
}

// count counts every bucket's adjacency entries on the device and reads
// the counts back.
func (b *builder) count() ([]uint64, error) {
	buckets := uint64(b.plan.Buckets)
	p := CountParams[executor.Buffer]{EdgeParams: b.edgeParams(), Counts: b.fixed.counts,
		BucketShift: uint64(b.plan.Scale - bits.TrailingZeros64(buckets)), Buckets: buckets}
	run := func() error {
		return b.launch(b.k.count, b.strideGrid(b.k.count, b.plan.Edges, Threads), p, zeroed{"Counts", b.fixed.counts})
	}
	if err := b.phases([]phase{{&b.times.Count, run}}); err != nil {
		return nil, err
	}
	raw, err := b.x.DownloadRange(b.fixed.counts, 0, buckets*wordBytes)
	if err != nil {
		return nil, err
	}
	counts := make([]uint64, buckets)
	for i := range counts {
		counts[i] = binary.LittleEndian.Uint64(raw[i*wordBytes:])
	}
	return counts, nil
}

// buildPart builds part p, whose targets start base entries into the
// graph's: its keys generated, sorted and compacted into its targets and
// offsets, and its targets read back.
func (b *builder) buildPart(p *Part, base uint64) error {
	if p.Entries == 0 {
		fill := FillParams[executor.Buffer]{Words: b.fixed.offsets, First: p.FirstVertex, Count: p.Vertices + 1, Value: base}
		run := func() error { return b.launch(b.k.fill, b.strideGrid(b.k.fill, p.Vertices+1, Threads), fill) }
		return b.phases([]phase{{&b.times.CSR, run}})
	}
	if err := b.allocScratch(p.Entries, p.Bytes); err != nil {
		return err
	}
	var sorted, free executor.Buffer
	keyBits := b.plan.Scale + bits.Len64(p.Vertices-1)
	err := b.phases([]phase{
		{&b.times.Generate, func() error { return b.generate(p) }},
		{&b.times.Sort, func() (err error) { sorted, free, err = b.sortKeys(p.Entries, keyBits); return err }},
		{&b.times.CSR, func() error { return b.compact(p, sorted, free, base) }},
	})
	if err == nil {
		err = b.finishPart(p, free, base)
	}
	if err != nil {
		return err
	}
	return harness.Free(b.x, harness.Buffers(&b.scratch))
}

// finishPart checks part p's generated keys against its count, and reads
// its distinct entries' count and its targets back. The graph's targets
// are allocated at the first part: exactly for one part, else with room
// for every entry before deduplication (the parts after it are not
// deduplicated yet).
func (b *builder) finishPart(p *Part, targets executor.Buffer, base uint64) error {
	cursor, err := b.readWord(b.fixed.ctl, CtlCursor)
	if err != nil {
		return err
	}
	distinct, err := b.readWord(b.scratch.hist, shapeFor(p.Entries).blocks)
	if err != nil {
		return err
	}
	if cursor != p.Entries || distinct == 0 || distinct > p.Entries {
		return fmt.Errorf("kronbuild %s: the part of vertices %d to %d generated %d keys (%d distinct), but %d were counted. Fix: this is a bug in the kernels; report it",
			b.plan.Graph, p.FirstVertex, p.FirstVertex+p.Vertices-1, cursor, distinct, p.Entries)
	}
	p.Distinct = distinct
	start := time.Now()
	if b.targets == nil {
		size := b.plan.Entries
		if len(b.plan.Parts) == 1 {
			size = distinct
		}
		b.targets = make([]int32, size)
	}
	err = b.x.DownloadRangeInto(targets, 0, harness.BytesOf(b.targets[base:base+distinct]))
	b.times.Readback += time.Since(start)
	return err
}

// generate enqueues the generation of part p's keys.
func (b *builder) generate(p *Part) error {
	g := GenerateParams[executor.Buffer]{EdgeParams: b.edgeParams(), Keys: b.scratch.keys, Ctl: b.fixed.ctl,
		RowFirst: p.FirstVertex, Rows: p.Vertices, Capacity: p.Entries}
	return b.launch(b.k.generate, b.strideGrid(b.k.generate, b.plan.Edges, Threads*GenEdges), g, zeroed{"Ctl", b.fixed.ctl})
}

// allocScratch allocates the sort scratch of count keys, required bytes
// in all as the plan says.
func (b *builder) allocScratch(count, required uint64) error {
	sizes := []uint64{count * keyBytes, count * keyBytes, shapeFor(count).histWords() * wordBytes}
	return harness.Allocate(b.x, "kronbuild sort scratch", harness.Buffers(&b.scratch), sizes, required)
}

// sortKeys enqueues the sort of the scratch's count keys on their low
// keyBits bits, a pass per digit, and returns the buffer that will hold
// them sorted and the other one.
func (b *builder) sortKeys(count uint64, keyBits int) (sorted, free executor.Buffer, err error) {
	sh := shapeFor(count)
	cfg := executor.Linear(uint32(sh.blocks), Threads)
	in, out := b.scratch.keys, b.scratch.alt
	for bit := 0; bit < keyBits; bit += DigitBits {
		pass := SortPassParams[executor.Buffer]{Hist: b.scratch.hist, Count: count, Bit: uint64(bit), Bits: uint64(min(DigitBits, keyBits-bit)),
			Segment: sh.segment, Blocks: sh.blocks}
		if err := b.launch(b.k.sortHist, cfg, SortHistParams[executor.Buffer]{Keys: in, SortPassParams: pass}); err != nil {
			return in, out, err
		}
		if err := b.scan(b.scratch.hist, Digits*sh.blocks); err != nil {
			return in, out, err
		}
		if err := b.launch(b.k.sortScatter, cfg, SortScatterParams[executor.Buffer]{In: in, Out: out, SortPassParams: pass}); err != nil {
			return in, out, err
		}
		in, out = out, in
	}
	return in, out, nil
}

// scan enqueues the exclusive prefix sum of buf's first count words, the
// total after them.
func (b *builder) scan(buf executor.Buffer, count uint64) error {
	return b.launch(b.k.scan, executor.Linear(1, ScanThreads), ScanParams[executor.Buffer]{Data: buf, Count: count})
}

// compact enqueues the CSR of part p from its sorted keys: the distinct
// keys counted per block and placed, then its targets into the free
// buffer and its offsets.
func (b *builder) compact(p *Part, sorted, free executor.Buffer, base uint64) error {
	sh := shapeFor(p.Entries)
	cfg := executor.Linear(uint32(sh.blocks), Threads)
	count := UniqueCountParams[executor.Buffer]{Keys: sorted, Counts: b.scratch.hist, Count: p.Entries, Segment: sh.segment}
	if err := b.launch(b.k.uniqueCount, cfg, count); err != nil {
		return err
	}
	if err := b.scan(b.scratch.hist, sh.blocks); err != nil {
		return err
	}
	c := CompactParams[executor.Buffer]{Keys: sorted, Counts: b.scratch.hist, Targets: free, Offsets: b.fixed.offsets, Count: p.Entries,
		Segment: sh.segment, Blocks: sh.blocks, Scale: uint64(b.plan.Scale), RowFirst: p.FirstVertex, Rows: p.Vertices, Base: base}
	return b.launch(b.k.compact, cfg, c)
}

// readOffsets reads the graph's 64-bit offsets back into the CSR's and
// checks that they end at its entries.
func (b *builder) readOffsets(entries uint64) ([]uint64, error) {
	start := time.Now()
	offsets := make([]uint64, b.plan.Vertices+1)
	err := b.x.DownloadRangeInto(b.fixed.offsets, 0, unsafe.Slice((*byte)(unsafe.Pointer(&offsets[0])), 8*len(offsets)))
	b.times.Readback += time.Since(start)
	if err != nil {
		return nil, err
	}
	if last := offsets[b.plan.Vertices]; last != entries {
		return nil, fmt.Errorf("kronbuild %s: the offsets end at %d, not at the %d entries. Fix: this is a bug in the kernels; report it", b.plan.Graph, last, entries)
	}
	return offsets, nil
}
