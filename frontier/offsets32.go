package frontier

import (
	"fmt"
	"math"
)

// MaxOffsets32Entries is the most adjacency entries a CSR holds when its
// offsets are narrowed to uint32, as the GPU kernels take them: 2^32-1.
const MaxOffsets32Entries = math.MaxUint32

// Offsets32Error reports a graph whose adjacency entries do not fit 32-bit
// offsets, the offsets the GPU kernels take.
type Offsets32Error struct {
	// Source names the graph.
	Source string
	// Part, when not empty, names the range of the graph whose offsets
	// are narrowed on their own (rebased to its first row), for example
	// "device 1's part, vertices [0, 4096),": a graph spread over
	// several devices.
	Part string
	// Entries is the adjacency entries of the graph, or of its Part (for
	// a range narrowed by NarrowOffsets, its largest offset from base).
	Entries uint64
	// Bound is whether Entries is the most a generator may make, known
	// before the graph is built (self loops and duplicates are dropped
	// later), rather than the graph's count.
	Bound bool
	// Limit is MaxOffsets32Entries.
	Limit uint64
}

// Error names the graph (and its part), its entries and the limit, and
// ends with a "Fix:".
func (e *Offsets32Error) Error() string {
	if e.Bound {
		return fmt.Sprintf("graph %q may have up to %d adjacency entries, more than the %d that 32-bit offsets address. Fix: build it on the CPU, or a graph of at most %d generated adjacency entries; the GPU kernels take 32-bit offsets",
			e.Source, e.Entries, e.Limit, e.Limit)
	}
	if e.Part != "" {
		return fmt.Sprintf("graph %q: %s holds %d adjacency entries, more than the %d that 32-bit offsets address. Fix: spread the graph over more devices, so that each part holds at most %d adjacency entries, or run it on the CPU reference; the GPU kernels take 32-bit offsets",
			e.Source, e.Part, e.Entries, e.Limit, e.Limit)
	}
	return fmt.Sprintf("graph %q has %d adjacency entries, more than the %d that 32-bit offsets address. Fix: run it on the CPU reference, or build a graph of at most %d adjacency entries; the GPU kernels take 32-bit offsets",
		e.Source, e.Entries, e.Limit, e.Limit)
}

// CheckOffsets32 returns an *Offsets32Error when g's adjacency entries, the
// larger of len(Targets) and its last offset, pass MaxOffsets32Entries, and
// nil otherwise. It reads two numbers, not the arrays, so that a GPU
// session refuses a graph before it allocates anything for it.
func (g *CSR) CheckOffsets32() error {
	entries := uint64(len(g.Targets))
	if n := len(g.Offsets); n > 0 {
		entries = max(entries, g.Offsets[n-1])
	}
	if entries > MaxOffsets32Entries {
		return &Offsets32Error{Source: g.Name, Entries: entries, Limit: MaxOffsets32Entries}
	}
	return nil
}

// Offsets32 returns g's offsets narrowed to uint32, in a new slice, for the
// GPU kernels: CheckOffsets32's error when the graph does not fit them,
// and NarrowOffsets's when an offset does. The conversion runs on every
// CPU.
func (g *CSR) Offsets32() ([]uint32, error) {
	if err := g.CheckOffsets32(); err != nil {
		return nil, err
	}
	out := make([]uint32, len(g.Offsets))
	if err := NarrowOffsets(g.Name, out, g.Offsets, 0); err != nil {
		return nil, err
	}
	return out, nil
}

// narrowGrain is the fewest offsets worth a goroutine of their own in
// NarrowOffsets: the conversion is bound by memory bandwidth, and a
// smaller share costs more to start than to convert.
const narrowGrain = 1 << 16

// NarrowOffsets writes src[i]-base into dst[i] as uint32 for every i, on
// every CPU, for a graph's offsets (base 0) or a range of them rebased to
// its first (base src[0]). It returns an *Offsets32Error naming source
// when a value is below base or does not fit 32 bits (dst is then partly
// written), and an error when dst and src differ in length.
func NarrowOffsets(source string, dst []uint32, src []uint64, base uint64) error {
	return narrowOffsets(source, dst, src, base, workersFor(len(src), narrowGrain))
}

// narrowOffsets is NarrowOffsets on the given number of workers. Each
// worker ORs its converted values together, so the check costs no branch
// per offset: a value that wrapped below base or passes 32 bits sets a
// high bit.
func narrowOffsets(source string, dst []uint32, src []uint64, base uint64, workers int) error {
	if len(dst) != len(src) {
		return fmt.Errorf("graph %q: narrowing %d offsets into %d. Fix: pass a destination as long as the offsets", source, len(src), len(dst))
	}
	workers = max(1, min(workers, len(src)))
	wide := make([]bool, workers)
	splitRun(len(src), workers, func(w, lo, hi int) {
		s := src[lo:hi]
		d := dst[lo:hi]
		d = d[:len(s)]
		var acc uint64
		for i, v := range s {
			v -= base
			acc |= v
			d[i] = uint32(v)
		}
		wide[w] = acc > math.MaxUint32
	})
	for _, bad := range wide {
		if bad {
			return &Offsets32Error{Source: source, Entries: widest(src, base), Limit: MaxOffsets32Entries}
		}
	}
	return nil
}

// widest returns the largest of src[i]-base, saturating at the largest
// uint64 for a value below base: the entries an *Offsets32Error reports.
func widest(src []uint64, base uint64) uint64 {
	var m uint64
	for _, v := range src {
		if v < base {
			return math.MaxUint64
		}
		m = max(m, v-base)
	}
	return m
}

// WidenOffsets returns 32-bit offsets (read back from a GPU kernel) as a
// CSR's uint64 offsets, in a new slice, converted on every CPU.
func WidenOffsets(src []uint32) []uint64 {
	out := make([]uint64, len(src))
	splitRun(len(src), workersFor(len(src), narrowGrain), func(_, lo, hi int) {
		s := src[lo:hi]
		d := out[lo:hi]
		d = d[:len(s)]
		for i, v := range s {
			d[i] = uint64(v)
		}
	})
	return out
}
