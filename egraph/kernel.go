package egraph

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/gpuplan/gpuplan/internal/checked"
)

// Launch constants of the e-graph kernels.
const (
	// DefaultThreadsPerBlock is the default block size.
	DefaultThreadsPerBlock = 256
	// DefaultMaxBlocksPerLaunch is the default grid limit, so one wave
	// covers up to 256*65535 = 16,776,960 items.
	DefaultMaxBlocksPerLaunch = 65535
	// SignatureBucketRecordWords is the size of a bucket device record:
	// [signature, first_bucket_row, row_count, pair_count_lo32, pair_count_hi32].
	SignatureBucketRecordWords = 5
	// CanonicalRewriteRecordWords is the size of a rewrite record: [eclass_id, representative].
	CanonicalRewriteRecordWords = 2
	// KernelEntrySymbol is the PTX entry of every e-graph kernel.
	KernelEntrySymbol = "main"
	// StructuralEquivalenceParams is the PTX parameter count of the
	// structural-equivalence kernel.
	StructuralEquivalenceParams = 13
	// CanonicalRewriteParams is the PTX parameter count of the canonical-rewrite kernel.
	CanonicalRewriteParams = 7
	// SignatureRefreshParams is the PTX parameter count of the signature-refresh kernel.
	SignatureRefreshParams = 7
)

// LaunchConfig bounds the launch waves.
type LaunchConfig struct {
	ThreadsPerBlock    uint32 `json:"threads_per_block"`
	MaxBlocksPerLaunch uint32 `json:"max_blocks_per_launch"`
}

// DefaultLaunchConfig returns 256 threads per block and 65535 blocks.
func DefaultLaunchConfig() LaunchConfig {
	return LaunchConfig{ThreadsPerBlock: DefaultThreadsPerBlock, MaxBlocksPerLaunch: DefaultMaxBlocksPerLaunch}
}

// ZeroThreadsPerBlockError reports threads_per_block = 0.
type ZeroThreadsPerBlockError struct{}

// Error implements the error interface; the message ends with a Fix.
func (ZeroThreadsPerBlockError) Error() string {
	return "ZeroThreadsPerBlock: threads_per_block is 0. Fix: use a positive block size such as 256"
}

// ZeroMaxBlocksPerLaunchError reports max_blocks_per_launch = 0.
type ZeroMaxBlocksPerLaunchError struct{}

// Error implements the error interface; the message ends with a Fix.
func (ZeroMaxBlocksPerLaunchError) Error() string {
	return "ZeroMaxBlocksPerLaunch: max_blocks_per_launch is 0. Fix: use a positive grid limit such as 65535"
}

func (c LaunchConfig) check() error {
	if c.ThreadsPerBlock == 0 {
		return ZeroThreadsPerBlockError{}
	}
	if c.MaxBlocksPerLaunch == 0 {
		return ZeroMaxBlocksPerLaunchError{}
	}
	return nil
}

// Pass is the kind of work a wave does.
type Pass uint8

// Kernel passes.
const (
	PassRowScan Pass = iota
	PassChildEdgeScan
	PassEclassGroupScan
	PassSignaturePairs
	PassUnionPairs
	PassCanonicalRewrites
)

var passNames = [...]string{"RowScan", "ChildEdgeScan", "EclassGroupScan", "SignaturePairs", "UnionPairs", "CanonicalRewrites"}

// String returns the pass name, for example "RowScan".
func (p Pass) String() string {
	if int(p) < len(passNames) {
		return passNames[p]
	}
	return fmt.Sprintf("Pass(%d)", uint8(p))
}

// MarshalText encodes the pass name.
func (p Pass) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// Wave is one bounded launch over items [FirstItem, FirstItem+ItemCount)
// of a pass. Bucket is the signature bucket of a SignaturePairs wave and -1
// otherwise.
type Wave struct {
	Pass            Pass   `json:"pass"`
	Bucket          int    `json:"bucket"`
	FirstItem       uint64 `json:"first_item"`
	ItemCount       uint64 `json:"item_count"`
	Blocks          uint64 `json:"blocks"`
	ThreadsPerBlock uint32 `json:"threads_per_block"`
}

// MaxWavesPerPlan bounds the waves one plan (a scan plan, a bucket plan
// or a union plan) splits its items into. With the default launch config
// a wave covers 16,776,960 items, so real inputs stay far below it; a tiny
// config such as 1 thread x 1 block would otherwise make one wave per item.
const MaxWavesPerPlan = 1 << 16

// TooManyWavesError reports a launch config that splits a pass's items
// into more than MaxWavesPerPlan waves.
type TooManyWavesError struct {
	Pass   Pass
	Items  uint64 // the pass's items
	Waves  uint64 // the waves the plan would hold with this pass
	Config LaunchConfig
}

// Error names the config, the items and the waves, and ends with a Fix.
func (e *TooManyWavesError) Error() string {
	return fmt.Sprintf("TooManyWaves: launch threads_per_block %d x max_blocks_per_launch %d splits %d %s items into waves, %d in the plan, above the limit of %d. Fix: raise launch.threads_per_block or launch.max_blocks_per_launch (the defaults are %d and %d)",
		e.Config.ThreadsPerBlock, e.Config.MaxBlocksPerLaunch, e.Items, e.Pass, e.Waves, MaxWavesPerPlan, DefaultThreadsPerBlock, DefaultMaxBlocksPerLaunch)
}

// appendWaves splits items into waves of at most tpb*maxBlocks items and
// returns the grown slice and the number of blocks added. A plan that would
// hold more than MaxWavesPerPlan waves is a *TooManyWavesError, found
// before anything is allocated.
func appendWaves(waves []Wave, pass Pass, bucket int, items uint64, c LaunchConfig) ([]Wave, uint64, error) {
	per := uint64(c.ThreadsPerBlock) * uint64(c.MaxBlocksPerLaunch) // < 2^64
	n, _ := checked.CeilDiv(items, per)
	if total := uint64(len(waves)) + n; total > MaxWavesPerPlan {
		return waves, 0, &TooManyWavesError{Pass: pass, Items: items, Waves: total, Config: c}
	}
	var blocks uint64
	for first := uint64(0); first < items; first += per {
		n := min(per, items-first)
		b, _ := checked.CeilDiv(n, uint64(c.ThreadsPerBlock))
		waves = append(waves, Wave{Pass: pass, Bucket: bucket, FirstItem: first, ItemCount: n, Blocks: b, ThreadsPerBlock: c.ThreadsPerBlock})
		blocks += b // total blocks <= total items
	}
	return waves, blocks, nil
}

// KernelWorkPlan is the wave plan of the scan kernels (vyre's
// CudaEGraphKernelWorkPlan).
type KernelWorkPlan struct {
	View        KernelView `json:"view"`
	Waves       []Wave     `json:"waves"`
	TotalItems  uint64     `json:"total_items"`
	TotalBlocks uint64     `json:"total_blocks"`
}

// PlanKernelWork emits RowScan (R items), ChildEdgeScan (C) and
// EclassGroupScan (G) passes, skipping empty ones, each split into waves of
// at most ThreadsPerBlock*MaxBlocksPerLaunch items with blocks =
// ceil(items/threads). Errors: ZeroThreadsPerBlockError,
// ZeroMaxBlocksPerLaunchError.
func PlanKernelWork(view KernelView, c LaunchConfig) (KernelWorkPlan, error) {
	if err := c.check(); err != nil {
		return KernelWorkPlan{}, err
	}
	p := KernelWorkPlan{View: view}
	for _, pi := range []struct {
		pass  Pass
		items uint32
	}{{PassRowScan, view.Layout.RowCount}, {PassChildEdgeScan, view.Layout.ChildCount}, {PassEclassGroupScan, view.Layout.GroupCount}} {
		var b uint64
		var err error
		if p.Waves, b, err = appendWaves(p.Waves, pi.pass, -1, uint64(pi.items), c); err != nil {
			return KernelWorkPlan{}, err
		}
		p.TotalItems += uint64(pi.items)
		p.TotalBlocks += b
	}
	return p, nil
}

// ImageViewMismatchError reports an image and a view with different counts.
type ImageViewMismatchError struct {
	Field       string
	Image, View uint64
}

// Error implements the error interface; the message ends with a Fix.
func (e *ImageViewMismatchError) Error() string {
	return fmt.Sprintf("ImageViewMismatch: %s is %d in the image but %d in the kernel view. Fix: build the view from this image's upload plan", e.Field, e.Image, e.View)
}

// ImageColumnOutOfBoundsError reports a row whose children range leaves
// the children column of a hand-built image.
type ImageColumnOutOfBoundsError struct {
	Column          string
	Row             uint64
	Start, End, Len uint64
}

// Error implements the error interface; the message ends with a Fix.
func (e *ImageColumnOutOfBoundsError) Error() string {
	return fmt.Sprintf("ImageColumnOutOfBounds: row %d reads %s[%d:%d] but the column has %d words. Fix: repack the image from a validated snapshot", e.Row, e.Column, e.Start, e.End, e.Len)
}

// SignatureBucket is a group of two or more rows with equal signatures.
// Its rows are BucketRows[FirstBucketRow : FirstBucketRow+RowCount], in
// ascending row order; it holds RowCount*(RowCount-1)/2 candidate pairs.
type SignatureBucket struct {
	Signature          uint32 `json:"signature"`
	FirstBucketRow     uint32 `json:"first_bucket_row"`
	RowCount           uint32 `json:"row_count"`
	CandidatePairCount uint64 `json:"candidate_pair_count"`
}

// SignatureBucketPlan groups duplicate-signature rows and plans one pair
// wave series per bucket.
type SignatureBucketPlan struct {
	Buckets            []SignatureBucket `json:"buckets"`
	BucketRows         []uint32          `json:"bucket_rows"`
	PairWaves          []Wave            `json:"pair_waves"`
	CandidatePairCount uint64            `json:"candidate_pair_count"`
	TotalBlocks        uint64            `json:"total_blocks"`
}

func checkImageView(img *DeviceImage, view KernelView) error {
	if err := img.CheckShape(); err != nil {
		return err
	}
	for _, f := range []struct {
		name        string
		image, view uint32
	}{{"row_count", img.RowCount, view.Layout.RowCount}, {"child_count", img.ChildCount, view.Layout.ChildCount}, {"group_count", img.GroupCount, view.Layout.GroupCount}} {
		if f.image != f.view {
			return &ImageViewMismatchError{Field: f.name, Image: uint64(f.image), View: uint64(f.view)}
		}
	}
	return nil
}

// PlanSignatureBuckets sorts rows by (signature, row), keeps groups of two
// or more equal signatures as buckets and splits each bucket's candidate
// pairs into waves. Errors: launch config errors, image shape errors,
// *ImageViewMismatchError, *checked.OverflowError ("candidate pair count").
func PlanSignatureBuckets(img *DeviceImage, view KernelView, c LaunchConfig) (SignatureBucketPlan, error) {
	if err := c.check(); err != nil {
		return SignatureBucketPlan{}, err
	}
	if err := checkImageView(img, view); err != nil {
		return SignatureBucketPlan{}, err
	}
	sigs := img.Section(SecRowSignatures)
	keys := make([]uint64, len(sigs)) // signature<<32 | row
	for i, sg := range sigs {
		keys[i] = uint64(sg)<<32 | uint64(i)
	}
	slices.Sort(keys)
	rows := make([]uint32, len(keys))
	for i, k := range keys {
		rows[i] = uint32(k)
	}
	var p SignatureBucketPlan
	for i := 0; i < len(rows); {
		j := i + 1
		for j < len(rows) && sigs[rows[j]] == sigs[rows[i]] {
			j++
		}
		if n := uint64(j - i); n >= 2 {
			pairs := n * (n - 1) / 2 // n < 2^32, so no overflow
			b := SignatureBucket{Signature: sigs[rows[i]], FirstBucketRow: uint32(len(p.BucketRows)), RowCount: uint32(n), CandidatePairCount: pairs}
			var err error
			if p.CandidatePairCount, err = checked.Add(p.CandidatePairCount, pairs, "candidate pair count"); err != nil {
				return SignatureBucketPlan{}, err
			}
			var blocks uint64
			if p.PairWaves, blocks, err = appendWaves(p.PairWaves, PassSignaturePairs, len(p.Buckets), pairs, c); err != nil {
				return SignatureBucketPlan{}, err
			}
			if p.TotalBlocks, err = checked.Add(p.TotalBlocks, blocks, "signature pair blocks"); err != nil {
				return SignatureBucketPlan{}, err
			}
			p.Buckets = append(p.Buckets, b)
			p.BucketRows = append(p.BucketRows, rows[i:j]...)
		}
		i = j
	}
	return p, nil
}

// DefaultCandidatePairBudgetBytes is the memory budget for candidate
// pairs when none is given: the worst-case equivalence output (8 bytes a
// pair) of at most 32 Mi pairs.
const DefaultCandidatePairBudgetBytes = 256 << 20

// CandidatePairBudgetError reports candidate pairs whose worst-case
// equivalence output (EquivalencePairBytes each) does not fit the memory
// budget. Identical rows put n rows in one bucket and n(n-1)/2 pairs in
// it, so a small input can ask for a quadratic amount of memory.
type CandidatePairBudgetError struct {
	Pairs       uint64 // candidate pairs of every bucket
	Buckets     int
	LargestRows uint32 // rows of the largest bucket
	NeedBytes   uint64 // Pairs x EquivalencePairBytes (MaxUint64 when that overflows)
	BudgetBytes uint64
}

// EquivalencePairBytes is the output size of one candidate pair.
const EquivalencePairBytes = 8

// Error gives the numbers and ends with a Fix.
func (e *CandidatePairBudgetError) Error() string {
	return fmt.Sprintf("CandidatePairBudget: %d signature buckets hold %d candidate pairs (the largest bucket has %d rows with one signature), whose equivalence output needs %d bytes, above the memory budget of %d bytes. Fix: raise memory_budget_bytes, or plan an e-graph with fewer rows sharing one signature",
		e.Buckets, e.Pairs, e.LargestRows, e.NeedBytes, e.BudgetBytes)
}

// CheckPairBudget returns a *CandidatePairBudgetError when the plan's
// candidate pairs need more than budgetBytes of equivalence output. Call
// it before CollectStructuralEquivalences, whose work and memory grow with
// the pairs.
func (p *SignatureBucketPlan) CheckPairBudget(budgetBytes uint64) error {
	need, err := checked.Mul(p.CandidatePairCount, EquivalencePairBytes, "equivalence pair bytes")
	if err != nil {
		need = math.MaxUint64
	}
	if need <= budgetBytes {
		return nil
	}
	e := &CandidatePairBudgetError{Pairs: p.CandidatePairCount, Buckets: len(p.Buckets), NeedBytes: need, BudgetBytes: budgetBytes}
	for _, b := range p.Buckets {
		e.LargestRows = max(e.LargestRows, b.RowCount)
	}
	return e
}

// BucketRecords returns the fixed-width device records of the buckets:
// 5 words each, [signature, first_bucket_row, row_count, pair_count_lo32,
// pair_count_hi32].
func (p *SignatureBucketPlan) BucketRecords() []uint32 {
	out := make([]uint32, 0, SignatureBucketRecordWords*len(p.Buckets))
	for _, b := range p.Buckets {
		out = append(out, b.Signature, b.FirstBucketRow, b.RowCount, uint32(b.CandidatePairCount), uint32(b.CandidatePairCount>>32))
	}
	return out
}

// SignaturePairOrdinalOutOfBoundsError reports a pair ordinal at or past
// the bucket's pair count (or a bucket index past the plan).
type SignaturePairOrdinalOutOfBoundsError struct {
	Bucket    int
	Ordinal   uint64
	PairCount uint64
}

// Error implements the error interface; the message ends with a Fix.
func (e *SignaturePairOrdinalOutOfBoundsError) Error() string {
	return fmt.Sprintf("SignaturePairOrdinalOutOfBounds: ordinal %d of bucket %d is outside its %d candidate pairs. Fix: decode ordinals below the bucket's candidate_pair_count", e.Ordinal, e.Bucket, e.PairCount)
}

// SignatureBucketRowsOutOfBoundsError reports a bucket whose row range
// leaves bucket_rows, a bucket index past the plan, or a pair count that
// disagrees with the row count.
type SignatureBucketRowsOutOfBoundsError struct {
	Bucket      int
	First, Rows uint64
	Len         uint64
}

// Error implements the error interface; the message ends with a Fix.
func (e *SignatureBucketRowsOutOfBoundsError) Error() string {
	return fmt.Sprintf("SignatureBucketRowsOutOfBounds: bucket %d reads bucket_rows[%d:+%d] of %d rows. Fix: use a bucket plan produced by PlanSignatureBuckets", e.Bucket, e.First, e.Rows, e.Len)
}

// pairsBefore returns r*(2n-r-1)/2, the number of (i<j) pairs whose i is
// below r, dividing the even factor first so nothing overflows.
func pairsBefore(r, n uint64) uint64 {
	f := 2*n - r - 1
	if r%2 == 0 {
		return (r / 2) * f
	}
	return r * (f / 2)
}

// SignaturePairRows decodes candidate pair ordinal of bucket into its two
// image rows (a < b in bucket order) without materialising pairs. Pairs are
// enumerated as (i<j) in row-major order; the local row i is found by
// binary search on the pair prefix r*(2n-r-1)/2, and j = i+1+(ordinal-base).
func SignaturePairRows(p *SignatureBucketPlan, bucket int, ordinal uint64) (uint32, uint32, error) {
	if bucket < 0 || bucket >= len(p.Buckets) {
		return 0, 0, &SignatureBucketRowsOutOfBoundsError{Bucket: bucket, Len: uint64(len(p.BucketRows))}
	}
	b := p.Buckets[bucket]
	n := uint64(b.RowCount)
	if uint64(b.FirstBucketRow)+n > uint64(len(p.BucketRows)) || b.CandidatePairCount != n*(n-1)/2 {
		return 0, 0, &SignatureBucketRowsOutOfBoundsError{Bucket: bucket, First: uint64(b.FirstBucketRow), Rows: n, Len: uint64(len(p.BucketRows))}
	}
	if ordinal >= b.CandidatePairCount {
		return 0, 0, &SignaturePairOrdinalOutOfBoundsError{Bucket: bucket, Ordinal: ordinal, PairCount: b.CandidatePairCount}
	}
	// Largest r in [0, n-2] with pairsBefore(r) <= ordinal.
	lo, hi := uint64(0), n-2
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		if pairsBefore(mid, n) <= ordinal {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	j := lo + 1 + (ordinal - pairsBefore(lo, n))
	rows := p.BucketRows[b.FirstBucketRow:]
	return rows[lo], rows[j], nil
}

// EclassPair is an unordered pair of e-classes found equal, stored as
// (min, max) by the collectors.
type EclassPair struct {
	A uint32 `json:"a"`
	B uint32 `json:"b"`
}

func comparePairs(x, y EclassPair) int {
	if c := cmp.Compare(x.A, y.A); c != 0 {
		return c
	}
	return cmp.Compare(x.B, y.B)
}

// StructuralEquivalences is the CPU reference result of the structural
// equivalence kernel. ExactPairCount counts candidate pairs that are
// structurally equal and in different e-classes, RedundantPairCount equal
// pairs already in one e-class, RejectedCandidatePairCount pairs whose
// signatures collide but whose rows differ; the three sum to the candidate
// pair count. Equivalences are (min, max) e-class pairs, sorted and unique.
type StructuralEquivalences struct {
	Equivalences               []EclassPair `json:"equivalences"`
	ExactPairCount             uint64       `json:"exact_pair_count"`
	RedundantPairCount         uint64       `json:"redundant_pair_count"`
	RejectedCandidatePairCount uint64       `json:"rejected_candidate_pair_count"`
	EquivalenceOutputWords     uint64       `json:"equivalence_output_words"`
}

// CollectStructuralEquivalences compares every candidate pair of p: rows
// are equal only if signature, language op, children length and every child
// agree. Errors: image shape errors, *ImageColumnOutOfBoundsError for a
// children range outside the column, bucket errors of SignaturePairRows.
func CollectStructuralEquivalences(img *DeviceImage, p *SignatureBucketPlan) (StructuralEquivalences, error) {
	if err := img.CheckShape(); err != nil {
		return StructuralEquivalences{}, err
	}
	ecl, ops := img.Section(SecRowEclassIDs), img.Section(SecRowLanguageOpIDs)
	offs, lens, sigs := img.Section(SecRowChildrenOffsets), img.Section(SecRowChildrenLens), img.Section(SecRowSignatures)
	children := img.Section(SecChildren)
	kids := func(r uint32) ([]uint32, error) {
		s, e := uint64(offs[r]), uint64(offs[r])+uint64(lens[r])
		if e > uint64(len(children)) {
			return nil, &ImageColumnOutOfBoundsError{Column: "children", Row: uint64(r), Start: s, End: e, Len: uint64(len(children))}
		}
		return children[s:e], nil
	}
	var out StructuralEquivalences
	for bi, b := range p.Buckets {
		n := uint64(b.RowCount)
		if uint64(b.FirstBucketRow)+n > uint64(len(p.BucketRows)) {
			return StructuralEquivalences{}, &SignatureBucketRowsOutOfBoundsError{Bucket: bi, First: uint64(b.FirstBucketRow), Rows: n, Len: uint64(len(p.BucketRows))}
		}
		rows := p.BucketRows[b.FirstBucketRow : uint64(b.FirstBucketRow)+n]
		for _, r := range rows {
			if uint64(r) >= uint64(img.RowCount) {
				return StructuralEquivalences{}, &ImageColumnOutOfBoundsError{Column: "rows", Row: uint64(r), Start: uint64(r), End: uint64(r) + 1, Len: uint64(img.RowCount)}
			}
		}
		for i := range rows {
			ci, err := kids(rows[i])
			if err != nil {
				return StructuralEquivalences{}, err
			}
			for j := i + 1; j < len(rows); j++ {
				a, c := rows[i], rows[j]
				cj, err := kids(c)
				if err != nil {
					return StructuralEquivalences{}, err
				}
				if sigs[a] != sigs[c] || ops[a] != ops[c] || !slices.Equal(ci, cj) {
					out.RejectedCandidatePairCount++
					continue
				}
				if ecl[a] == ecl[c] {
					out.RedundantPairCount++
					continue
				}
				out.ExactPairCount++
				out.Equivalences = append(out.Equivalences, EclassPair{A: min(ecl[a], ecl[c]), B: max(ecl[a], ecl[c])})
			}
		}
	}
	out.Equivalences = sortUniquePairs(out.Equivalences)
	out.EquivalenceOutputWords = 2 * uint64(len(out.Equivalences))
	return out, nil
}

// EquivalenceOutputPlan sizes the device output of the structural
// equivalence kernel for the worst case: one pair per candidate, plus an
// 8-byte (2-word) counter.
type EquivalenceOutputPlan struct {
	MaxEquivalences uint64 `json:"max_equivalences"`
	PairWords       uint64 `json:"pair_words"`
	PairBytes       uint64 `json:"pair_bytes"`
	CounterWords    uint64 `json:"counter_words"`
	CounterBytes    uint64 `json:"counter_bytes"`
}

// PlanStructuralEquivalenceOutput sizes the output for p. Overflow is a
// *checked.OverflowError naming "equivalence pair words" or "equivalence
// pair bytes".
func PlanStructuralEquivalenceOutput(p *SignatureBucketPlan) (EquivalenceOutputPlan, error) {
	w, err := checked.Mul(p.CandidatePairCount, 2, "equivalence pair words")
	if err != nil {
		return EquivalenceOutputPlan{}, err
	}
	b, err := checked.Mul(w, 4, "equivalence pair bytes")
	if err != nil {
		return EquivalenceOutputPlan{}, err
	}
	return EquivalenceOutputPlan{MaxEquivalences: p.CandidatePairCount, PairWords: w, PairBytes: b, CounterWords: 2, CounterBytes: 8}, nil
}

// CanonicalRewrite maps an e-class to its component representative.
type CanonicalRewrite struct {
	EclassID       uint32 `json:"eclass_id"`
	Representative uint32 `json:"representative"`
}

// UnionCompactionPlan is the result of union compaction: the unique
// normalised pairs, the affected e-classes, the canonical rewrites and the
// waves that apply them.
type UnionCompactionPlan struct {
	UniquePairs          []EclassPair       `json:"unique_pairs"`
	IgnoredSelfPairCount uint64             `json:"ignored_self_pair_count"`
	DuplicatePairCount   uint64             `json:"duplicate_pair_count"`
	AffectedEclasses     []uint32           `json:"affected_eclasses"`
	CanonicalRewrites    []CanonicalRewrite `json:"canonical_rewrites"`
	Waves                []Wave             `json:"waves"`
	TotalBlocks          uint64             `json:"total_blocks"`
}

// RewriteImage returns the rewrite device records, 2 words each.
func (p *UnionCompactionPlan) RewriteImage() []uint32 {
	out := make([]uint32, 0, CanonicalRewriteRecordWords*len(p.CanonicalRewrites))
	for _, r := range p.CanonicalRewrites {
		out = append(out, r.EclassID, r.Representative)
	}
	return out
}

// PlanUnionCompaction drops self pairs, normalises pairs to (min, max),
// sorts and dedups them, runs union-find over the affected e-classes with
// the smaller id always the root (so every representative is its
// component's minimum) and emits rewrites for every e-class whose
// representative differs, in ascending order. Waves: UnionPairs (one item
// per unique pair), then CanonicalRewrites. Errors: launch config errors.
func PlanUnionCompaction(pairs []EclassPair, c LaunchConfig) (UnionCompactionPlan, error) {
	if err := c.check(); err != nil {
		return UnionCompactionPlan{}, err
	}
	var p UnionCompactionPlan
	norm := make([]EclassPair, 0, len(pairs))
	for _, e := range pairs {
		if e.A == e.B {
			p.IgnoredSelfPairCount++
			continue
		}
		norm = append(norm, EclassPair{A: min(e.A, e.B), B: max(e.A, e.B)})
	}
	before := len(norm)
	norm = sortUniquePairs(norm)
	p.DuplicatePairCount = uint64(before - len(norm))
	p.UniquePairs = norm
	ids := make([]uint32, 0, 2*len(norm))
	for _, e := range norm {
		ids = append(ids, e.A, e.B)
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	p.AffectedEclasses = ids
	// Union-find over indices into ids; ids is sorted, so the smaller index
	// is the smaller e-class id.
	parent := make([]int32, len(ids))
	for i := range parent {
		parent[i] = int32(i)
	}
	find := func(x int32) int32 {
		r := x
		for parent[r] != r {
			r = parent[r]
		}
		for parent[x] != r {
			parent[x], x = r, parent[x]
		}
		return r
	}
	idx := func(v uint32) int32 {
		i, _ := slices.BinarySearch(ids, v)
		return int32(i)
	}
	if n := len(ids); n > 0 && uint64(ids[n-1]) < 4*uint64(n)+4096 {
		// Small ids: a dense id -> index table instead of bisection.
		dense := make([]int32, uint64(ids[n-1])+1)
		for i, v := range ids {
			dense[v] = int32(i)
		}
		idx = func(v uint32) int32 { return dense[v] }
	}
	for _, e := range norm {
		a, b := find(idx(e.A)), find(idx(e.B))
		if a == b {
			continue
		}
		if b < a {
			a, b = b, a
		}
		parent[b] = a
	}
	for i, v := range ids {
		if r := find(int32(i)); ids[r] != v {
			p.CanonicalRewrites = append(p.CanonicalRewrites, CanonicalRewrite{EclassID: v, Representative: ids[r]})
		}
	}
	var b1, b2 uint64
	var err error
	if p.Waves, b1, err = appendWaves(p.Waves, PassUnionPairs, -1, uint64(len(norm)), c); err != nil {
		return UnionCompactionPlan{}, err
	}
	if p.Waves, b2, err = appendWaves(p.Waves, PassCanonicalRewrites, -1, uint64(len(p.CanonicalRewrites)), c); err != nil {
		return UnionCompactionPlan{}, err
	}
	p.TotalBlocks = b1 + b2
	return p, nil
}

// sortUniquePairs sorts pairs by (A, B) through packed 64-bit keys and
// drops duplicates, reusing the slice.
func sortUniquePairs(pairs []EclassPair) []EclassPair {
	keys := make([]uint64, len(pairs))
	for i, p := range pairs {
		keys[i] = uint64(p.A)<<32 | uint64(p.B)
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	pairs = pairs[:len(keys)]
	for i, k := range keys {
		pairs[i] = EclassPair{A: uint32(k >> 32), B: uint32(k)}
	}
	return pairs
}
