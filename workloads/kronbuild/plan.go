package kronbuild

import (
	"fmt"

	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/internal/checked"
)

// Bytes of one item of the device buffers.
const (
	// labelBytes is a vertex's label (uint32).
	labelBytes = 4
	// offsetBytes is a CSR offset on the device: 64-bit, as frontier.CSR's
	// are, so that a graph past 2^32-1 adjacency entries needs no other build.
	offsetBytes = 8
	// keyBytes is a sort key: an adjacency entry (row<<scale | target) or
	// a shuffle draw (j<<scale | step).
	keyBytes = 8
	// wordBytes is a control word, a bucket count or a digit count.
	wordBytes = 8
)

// Plan is a build's device memory plan: every buffer's size, computed with
// checked arithmetic before it is allocated, and the parts the vertices
// are built in.
type Plan struct {
	// Graph names the graph ("kron-SCALE") of Scale and EdgeFactor.
	Graph      string `json:"graph"`
	Scale      int    `json:"scale"`
	EdgeFactor int    `json:"edge_factor"`
	// Vertices is 2^Scale; Edges the generated edges, EdgeFactor x 2^Scale.
	Vertices uint64 `json:"vertices"`
	Edges    uint64 `json:"edges"`
	// Buckets is the number of source buckets the entries are counted in,
	// each of BucketVertices consecutive vertices: a part is a run of
	// buckets.
	Buckets        int    `json:"buckets"`
	BucketVertices uint64 `json:"bucket_vertices"`
	// BudgetBytes is the device memory budget the plan fits.
	BudgetBytes uint64 `json:"budget_bytes"`
	// FixedBytes is what the whole build holds: the labels, the offsets,
	// the bucket counts and the control words.
	FixedBytes uint64 `json:"fixed_bytes"`
	// PermutationBytes is the scratch of drawing the labels on the device
	// (0 when they are drawn on the host): the shuffle's draws, twice, and
	// their sort's digit matrix.
	PermutationBytes uint64 `json:"permutation_bytes"`
	// Entries is the adjacency entries before deduplication, 2 per edge
	// that is not a self loop, counted on the device (0 until counted).
	Entries uint64 `json:"entries"`
	// Parts are the parts in vertex order, set once the entries are
	// counted.
	Parts []Part `json:"parts,omitempty"`
	// PeakBytes is the most device memory the build holds at once.
	PeakBytes uint64 `json:"peak_bytes"`
}

// Part is a range of source vertices built together: their entries are
// generated, sorted and compacted in one go.
type Part struct {
	// FirstVertex and Vertices are the part's source vertices.
	FirstVertex uint64 `json:"first_vertex"`
	Vertices    uint64 `json:"vertices"`
	// Entries is the part's adjacency entries before deduplication, the
	// keys it sorts.
	Entries uint64 `json:"entries"`
	// Bytes is the part's scratch: its keys, twice, and the digit matrix.
	Bytes uint64 `json:"bytes"`
	// Distinct is the part's adjacency entries in the CSR, set once it is
	// built.
	Distinct uint64 `json:"distinct"`
}

// BudgetError is a build that does not fit the device memory budget,
// refused before the buffers that would pass it are allocated.
type BudgetError struct {
	// Graph and Scale name the graph ("kron-SCALE").
	Graph string
	Scale int
	// What names what needs the bytes; NeededBytes is what the build would
	// hold at once with it, BudgetBytes the device memory budget.
	What        string
	NeededBytes uint64
	BudgetBytes uint64
	// Fix says how to make it fit.
	Fix string
}

// Error names the graph, what needs the bytes, the bytes and the budget,
// and ends with the fix.
func (e *BudgetError) Error() string {
	return fmt.Sprintf("kronbuild %s (scale %d): %s needs %d bytes of device memory but the budget is %d bytes. Fix: %s",
		e.Graph, e.Scale, e.What, e.NeededBytes, e.BudgetBytes, e.Fix)
}

// budgetFix is the fix of a budget too small for what every build holds.
const budgetFix = "raise Config.MaxDeviceBytes (0 uses the executor's live budget), free device memory, or build a smaller scale"

// newPlan plans the buffers a build of (scale, edgeFactor) holds
// throughout and the device permutation's scratch (none with
// hostPermutation), and refuses them over budget. The parameters are
// Check's.
func newPlan(scale, edgeFactor int, budget uint64, hostPermutation bool) (Plan, error) {
	n := uint64(1) << scale
	p := Plan{Graph: frontier.KroneckerName(scale), Scale: scale, EdgeFactor: edgeFactor, Vertices: n, Edges: uint64(edgeFactor) << scale,
		Buckets: int(min(n, MaxBuckets)), BudgetBytes: budget}
	p.BucketVertices = n / uint64(p.Buckets)
	var err error
	if p.FixedBytes, err = fixedBytes(n, uint64(p.Buckets)); err != nil {
		return p, err
	}
	if !hostPermutation {
		if p.PermutationBytes, err = sortBytes(n - 1); err != nil {
			return p, err
		}
	}
	if p.PeakBytes, err = checked.Add(p.FixedBytes, p.PermutationBytes, "kronbuild permutation peak bytes"); err != nil {
		return p, err
	}
	if p.FixedBytes > budget {
		return p, p.refuse("the labels, offsets and counters", p.FixedBytes, budgetFix)
	}
	if p.PeakBytes > budget {
		return p, p.refuse("drawing the labels on the device", p.PeakBytes,
			"set Config.HostPermutation to draw them on the host (no device scratch), or "+budgetFix)
	}
	return p, nil
}

// Check returns the error Build refuses (scale, edgeFactor) with, before
// anything is allocated: frontier.CheckKronecker's (which bounds the
// adjacency entries by frontier.MaxGraphEdgeEntries). The device's offsets
// are 64-bit, so no other bound applies before the memory plan.
func Check(scale, edgeFactor int) error { return frontier.CheckKronecker(scale, edgeFactor) }

// CheckBudget returns the *BudgetError Build refuses (scale, edgeFactor)
// with under a device memory budget of budget bytes before it allocates
// anything: when the labels, offsets and counters every build holds, or
// with them the scratch of drawing the labels on the device (none with
// hostPermutation, Config.HostPermutation), pass the budget. A build it
// passes may still be refused once its entries are counted on the device,
// when one bucket's part does not fit beside them. Parameters Check
// refuses are refused with its error.
func CheckBudget(scale, edgeFactor int, budget uint64, hostPermutation bool) error {
	if err := Check(scale, edgeFactor); err != nil {
		return err
	}
	_, err := newPlan(scale, edgeFactor, budget, hostPermutation)
	return err
}

// refuse returns the *BudgetError of what needing need bytes.
func (p *Plan) refuse(what string, need uint64, fix string) error {
	return &BudgetError{Graph: p.Graph, Scale: p.Scale, What: what, NeededBytes: need, BudgetBytes: p.BudgetBytes, Fix: fix}
}

// fixedBytes is what a build of n vertices holds throughout: n labels,
// n+1 offsets, the bucket counts and the control words.
func fixedBytes(n, buckets uint64) (uint64, error) {
	labels, err := checked.Mul(n, labelBytes, "kronbuild label bytes")
	if err != nil {
		return 0, err
	}
	offsets, err := checked.Mul(n+1, offsetBytes, "kronbuild offset bytes")
	if err != nil {
		return 0, err
	}
	return checked.Sum("kronbuild fixed bytes", labels, offsets, buckets*wordBytes, CtlWords*wordBytes)
}

// sortBytes is the scratch of sorting count keys: the keys, twice, and
// the digit matrix (which then holds the distinct keys' counts); 0 for no
// keys.
func sortBytes(count uint64) (uint64, error) {
	if count == 0 {
		return 0, nil
	}
	keys, err := checked.Mul(count, 2*keyBytes, "kronbuild sort key bytes")
	if err != nil {
		return 0, err
	}
	return checked.Add(keys, shapeFor(count).histWords()*wordBytes, "kronbuild sort bytes")
}

// sortShape is how the sort kernels split count keys: blocks of segment
// consecutive keys (whole tiles, but for the last block).
type sortShape struct{ blocks, segment uint64 }

// shapeFor returns the shape of a sort of count keys (count > 0): as few
// tiles a block as MaxSortBlocks allows.
func shapeFor(count uint64) sortShape {
	tiles := (count + SortTile - 1) / SortTile
	blocks := min(tiles, MaxSortBlocks)
	per := (tiles + blocks - 1) / blocks
	return sortShape{blocks: (tiles + per - 1) / per, segment: per * SortTile}
}

// histWords is the digit matrix's words: a count per digit and block, and
// the total after them.
func (s sortShape) histWords() uint64 { return Digits*s.blocks + 1 }

// splitParts plans the parts from the entries counted per bucket: runs
// of buckets, each as long as its scratch fits beside the fixed buffers.
// A bucket that does not fit alone is refused.
func (p *Plan) splitParts(counts []uint64) error {
	if len(counts) != p.Buckets {
		return fmt.Errorf("kronbuild %s: %d bucket counts for %d buckets. Fix: this is a bug in the build; report it", p.Graph, len(counts), p.Buckets)
	}
	if p.FixedBytes > p.BudgetBytes {
		return p.refuse("the labels, offsets and counters", p.FixedBytes, budgetFix)
	}
	limit := p.BudgetBytes - p.FixedBytes
	var cur Part
	p.Parts, p.Entries = nil, 0
	for b, c := range counts {
		grown, err := sortBytes(cur.Entries + c)
		if err != nil {
			return err
		}
		if grown > limit && cur.Vertices > 0 {
			p.Parts = append(p.Parts, cur)
			cur = Part{FirstVertex: uint64(b) * p.BucketVertices}
			if grown, err = sortBytes(c); err != nil {
				return err
			}
		}
		if grown > limit {
			return p.refuse(fmt.Sprintf("the part of bucket %d (vertices %d to %d, %d adjacency entries)", b, uint64(b)*p.BucketVertices,
				uint64(b+1)*p.BucketVertices-1, c), p.FixedBytes+grown, "a part holds at least one bucket: "+budgetFix)
		}
		cur.Vertices += p.BucketVertices
		cur.Entries += c
		cur.Bytes = grown
		p.Entries += c
	}
	p.Parts = append(p.Parts, cur)
	for _, q := range p.Parts {
		p.PeakBytes = max(p.PeakBytes, p.FixedBytes+q.Bytes)
	}
	return nil
}
