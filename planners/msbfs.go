package planners

import (
	"fmt"

	"github.com/gpuplan/gpuplan/internal/checked"
)

// MultiSourceBFSRequest asks how to run a BFS from many roots over one
// resident graph, several roots per pass: each vertex keeps a visited, a
// frontier and a next word with one bit per root of the pass.
type MultiSourceBFSRequest struct {
	// Roots is the number of roots (K).
	Roots uint64 `json:"roots"`
	// Vertices is the graph's vertex count.
	Vertices uint64 `json:"vertices"`
	// GraphBytes is the resident graph's size.
	GraphBytes uint64 `json:"graph_bytes"`
	// LevelBytes is the output per root and vertex: 4 for int32 levels, 0
	// when a pass returns only per-root checksums.
	LevelBytes uint64 `json:"level_bytes"`
	// LevelBits, when not 0, keeps a pass's levels as bit planes instead
	// of LevelBytes per root: LevelBits planes (the bits of the deepest
	// level a pass can reach, at most 32) of one word of the pass's width
	// per vertex, where bit i of plane b is bit b of root i's level. A
	// vertex's planes lie in groups of PlaneGroupBytes.
	LevelBits uint64 `json:"level_bits"`
	// Width is the roots per word, 32 or 64, or 0 to let the planner pick.
	Width uint64 `json:"width"`
	// BudgetBytes is the device memory the passes may use.
	BudgetBytes uint64 `json:"budget_bytes"`
}

// PlaneGroupBytes is the bytes of one vertex's group of level planes:
// one sector, so that the planes of a level's low bits are written
// together.
const PlaneGroupBytes = 32

// PlanesPerGroup returns how many level planes of width-bit words one
// group of PlaneGroupBytes holds.
func PlanesPerGroup(width uint64) uint64 { return max(1, PlaneGroupBytes*8/max(width, 1)) }

// PlaneGroups returns the groups of PlaneGroupBytes that bits planes of
// width-bit words take per vertex.
func PlaneGroups(bits, width uint64) uint64 {
	per := PlanesPerGroup(width)
	return (bits + per - 1) / per
}

// MultiSourceBFSBatch is one pass: roots FirstRoot..FirstRoot+Roots-1 in
// the request's order.
type MultiSourceBFSBatch struct {
	FirstRoot uint64 `json:"first_root"`
	Roots     uint64 `json:"roots"`
}

// MultiSourceBFSPlan groups the roots into passes that fit the budget.
type MultiSourceBFSPlan struct {
	// Width is the roots per vertex word.
	Width uint64 `json:"width"`
	// Batches are the passes, in root order; all but the last hold Width
	// roots.
	Batches []MultiSourceBFSBatch `json:"batches"`
	// MaskBytes is the visited, frontier and next words: 3 x vertices x
	// width / 8.
	MaskBytes uint64 `json:"mask_bytes"`
	// OutputBytes is the largest pass's levels: roots x vertices x
	// level_bytes, or with level_bits vertices x the plane groups' bytes.
	OutputBytes uint64 `json:"output_bytes"`
	// ResidentBytes = graph + masks + output of the largest pass.
	ResidentBytes uint64 `json:"resident_bytes"`
	// AvoidedPasses is the single-root traversals saved: roots - batches.
	AvoidedPasses uint64 `json:"avoided_passes"`
}

// PlanMultiSourceBFS picks the word width and groups the roots into
// batches of that many (the last one partial). With Width 0 it picks 32
// for at most 32 roots, otherwise 64 when a 64-root pass fits the budget
// and 32 when only that fits. A pass that does not fit is refused with the
// numbers of the smallest pass tried.
func PlanMultiSourceBFS(req MultiSourceBFSRequest) (MultiSourceBFSPlan, error) {
	if err := checkMultiSourceRequest(req); err != nil {
		return MultiSourceBFSPlan{}, err
	}
	widths := []uint64{req.Width}
	if req.Width == 0 {
		widths = []uint64{32}
		if req.Roots > 32 {
			widths = []uint64{64, 32}
		}
	}
	var plan MultiSourceBFSPlan
	for _, w := range widths {
		var err error
		if plan, err = multiSourceBytes(req, w); err != nil {
			return MultiSourceBFSPlan{}, err
		}
		if plan.ResidentBytes <= req.BudgetBytes {
			plan.Batches = multiSourceBatches(req.Roots, w)
			plan.AvoidedPasses = req.Roots - uint64(len(plan.Batches))
			return plan, nil
		}
	}
	return MultiSourceBFSPlan{}, &MultiSourceBFSError{Kind: MultiSourceOverBudget, Width: plan.Width,
		BatchRoots: min(req.Roots, plan.Width), GraphBytes: req.GraphBytes, MaskBytes: plan.MaskBytes,
		OutputBytes: plan.OutputBytes, RequiredBytes: plan.ResidentBytes, BudgetBytes: req.BudgetBytes}
}

// multiSourceBytes sizes the largest pass at width w.
func multiSourceBytes(req MultiSourceBFSRequest, w uint64) (MultiSourceBFSPlan, error) {
	p := MultiSourceBFSPlan{Width: w}
	var err error
	if p.MaskBytes, err = checked.Mul(req.Vertices, 3*w/8, "mask bytes (vertices x 3 words of width/8 bytes)"); err != nil {
		return p, err
	}
	if p.OutputBytes, err = multiSourceOutput(req, w); err != nil {
		return p, err
	}
	p.ResidentBytes, err = checked.Sum("resident bytes (graph_bytes + masks + output)", req.GraphBytes, p.MaskBytes, p.OutputBytes)
	return p, err
}

// multiSourceOutput sizes the levels of the largest pass at width w: the
// plane groups of every vertex with level_bits, else level_bytes per root
// of the pass and vertex.
func multiSourceOutput(req MultiSourceBFSRequest, w uint64) (uint64, error) {
	if req.LevelBits != 0 {
		return checked.Mul(req.Vertices, PlaneGroups(req.LevelBits, w)*PlaneGroupBytes, "output bytes (vertices x level plane groups)")
	}
	perRoot, err := checked.Mul(req.Vertices, req.LevelBytes, "output bytes per root (vertices x level_bytes)")
	if err != nil {
		return 0, err
	}
	return checked.Mul(perRoot, min(req.Roots, w), "output bytes (roots of a pass x vertices x level_bytes)")
}

// multiSourceBatches cuts roots 0..roots-1 into batches of w.
func multiSourceBatches(roots, w uint64) []MultiSourceBFSBatch {
	batches := make([]MultiSourceBFSBatch, 0, (roots+w-1)/w)
	for first := uint64(0); first < roots; first += w {
		batches = append(batches, MultiSourceBFSBatch{FirstRoot: first, Roots: min(w, roots-first)})
	}
	return batches
}

// MultiSourceBFSErrorKind names a multi-source planning failure.
type MultiSourceBFSErrorKind uint8

// The failures, in the order they are checked.
const (
	// MultiSourceZeroRoots: roots is 0.
	MultiSourceZeroRoots MultiSourceBFSErrorKind = iota + 1
	// MultiSourceZeroVertices: vertices is 0.
	MultiSourceZeroVertices
	// MultiSourceZeroGraphBytes: graph_bytes is 0.
	MultiSourceZeroGraphBytes
	// MultiSourceBadWidth: width is not 0, 32 or 64.
	MultiSourceBadWidth
	// MultiSourceBadLevelBits: level_bits is above 32.
	MultiSourceBadLevelBits
	// MultiSourceZeroBudget: budget_bytes is 0.
	MultiSourceZeroBudget
	// MultiSourceOverBudget: no pass width fits budget_bytes.
	MultiSourceOverBudget
)

// MultiSourceBFSError is a multi-source planning failure. For OverBudget
// it carries the numbers of the pass that did not fit.
type MultiSourceBFSError struct {
	Kind MultiSourceBFSErrorKind
	// Width is the bad width (BadWidth) or the width of the pass tried
	// (OverBudget).
	Width uint64
	// LevelBits is the bad level bits (BadLevelBits).
	LevelBits  uint64
	BatchRoots uint64
	GraphBytes, MaskBytes, OutputBytes,
	RequiredBytes, BudgetBytes uint64
}

var multiSourceFields = [...]string{
	MultiSourceZeroRoots:      "roots",
	MultiSourceZeroVertices:   "vertices",
	MultiSourceZeroGraphBytes: "graph_bytes",
	MultiSourceBadWidth:       "width",
	MultiSourceBadLevelBits:   "level_bits",
	MultiSourceZeroBudget:     "budget_bytes",
	MultiSourceOverBudget:     "budget_bytes",
}

// Field returns the input field the error is about.
func (e *MultiSourceBFSError) Field() string {
	if int(e.Kind) < len(multiSourceFields) {
		return multiSourceFields[e.Kind]
	}
	return ""
}

// Error describes the failure, names the input field and ends with a "Fix:" sentence.
func (e *MultiSourceBFSError) Error() string {
	f := e.Field()
	switch e.Kind {
	case MultiSourceZeroRoots:
		return fmt.Sprintf("multi-source BFS: %s is 0. Fix: ask for at least one root", f)
	case MultiSourceZeroVertices:
		return fmt.Sprintf("multi-source BFS: %s is 0. Fix: pass the graph's vertex count", f)
	case MultiSourceZeroGraphBytes:
		return fmt.Sprintf("multi-source BFS: %s is 0. Fix: pass the resident graph's size in bytes", f)
	case MultiSourceBadWidth:
		return fmt.Sprintf("multi-source BFS: %s is %d. Fix: use 32 or 64 roots per word, or 0 to let the planner pick", f, e.Width)
	case MultiSourceBadLevelBits:
		return fmt.Sprintf("multi-source BFS: %s is %d. Fix: levels are 32-bit; use at most 32 planes, or 0 for level_bytes per root", f, e.LevelBits)
	case MultiSourceZeroBudget:
		return fmt.Sprintf("multi-source BFS: %s is 0. Fix: pass the device bytes the passes may use", f)
	case MultiSourceOverBudget:
		return fmt.Sprintf("multi-source BFS: a pass of %d roots at width %d needs %d bytes (graph %d + masks %d + levels %d), above %s %d. Fix: raise %s to at least %d, or return per-root checksums instead of levels (level_bytes and level_bits 0)",
			e.BatchRoots, e.Width, e.RequiredBytes, e.GraphBytes, e.MaskBytes, e.OutputBytes, f, e.BudgetBytes, f, e.RequiredBytes)
	}
	return fmt.Sprintf("multi-source BFS error %d. Fix: check the request", uint8(e.Kind))
}

// checkMultiSourceRequest returns the first failure in the order of the
// kinds.
func checkMultiSourceRequest(req MultiSourceBFSRequest) error {
	switch {
	case req.Roots == 0:
		return &MultiSourceBFSError{Kind: MultiSourceZeroRoots}
	case req.Vertices == 0:
		return &MultiSourceBFSError{Kind: MultiSourceZeroVertices}
	case req.GraphBytes == 0:
		return &MultiSourceBFSError{Kind: MultiSourceZeroGraphBytes}
	case req.Width != 0 && req.Width != 32 && req.Width != 64:
		return &MultiSourceBFSError{Kind: MultiSourceBadWidth, Width: req.Width}
	case req.LevelBits > 32:
		return &MultiSourceBFSError{Kind: MultiSourceBadLevelBits, LevelBits: req.LevelBits}
	case req.BudgetBytes == 0:
		return &MultiSourceBFSError{Kind: MultiSourceZeroBudget}
	}
	return nil
}
