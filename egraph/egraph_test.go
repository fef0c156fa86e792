package egraph

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gpuplan/gpuplan/internal/checked"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/internal/memcheck"
)

// specSnapshot has 3 rows, 2 children and 2 e-classes: x (class 0) and two
// copies of f(x) in class 1.
func specSnapshot() *Snapshot {
	return &Snapshot{
		Rows: []Row{
			{EclassID: 0, LanguageOpID: 0},
			{EclassID: 1, LanguageOpID: 1, ChildrenOffset: 0, ChildrenLen: 1},
			{EclassID: 1, LanguageOpID: 1, ChildrenOffset: 1, ChildrenLen: 1},
		},
		Children:  []uint32{0, 0},
		OpArities: []uint32{0, 1},
	}
}

func TestUploadPlanSpecVector(t *testing.T) {
	plan, err := PlanDeviceUpload(specSnapshot())
	require.NoError(t, err)
	var offs []uint64
	for _, s := range plan.Layout.Spans {
		offs = append(offs, s.Offset)
	}
	assert.Equal(t, []uint64{0, 12, 24, 36, 48, 60, 68, 76, 88}, offs)
	assert.Equal(t, uint64(12), plan.Layout.Spans[SecRowSignatures].ByteLen)
	assert.Equal(t, uint64(8), plan.Layout.Spans[SecChildren].ByteLen)
	assert.Equal(t, uint64(100), plan.ByteLen)
	assert.Equal(t, ByteLayout{RowCount: 3, ChildCount: 2, GroupCount: 2, Spans: plan.Layout.Spans}, plan.Layout)

	img, err := PackDeviceImage(specSnapshot())
	require.NoError(t, err)
	fromImage, err := PlanDeviceUploadFromImage(img)
	require.NoError(t, err)
	assert.Equal(t, plan, fromImage, "the plan from a packed image equals the plan from the snapshot")

	// The sections hold the documented contents.
	sig := RowSignature(1, []uint32{0})
	assert.Equal(t, []uint32{0, 1, 1}, img.Section(SecRowEclassIDs))
	assert.Equal(t, []uint32{0, 1, 1}, img.Section(SecRowLanguageOpIDs))
	assert.Equal(t, []uint32{0, 0, 1}, img.Section(SecRowChildrenOffsets))
	assert.Equal(t, []uint32{0, 1, 1}, img.Section(SecRowChildrenLens))
	assert.Equal(t, []uint32{RowSignature(0, nil), sig, sig}, img.Section(SecRowSignatures))
	assert.Equal(t, []uint32{0, 0}, img.Section(SecChildren))
	assert.Equal(t, []uint32{0, 1}, img.Section(SecGroupEclassIDs))
	assert.Equal(t, []uint32{0, 1, 3}, img.Section(SecGroupOffsets))
	assert.Equal(t, []uint32{0, 1, 2}, img.Section(SecGroupRows))
}

func TestKernelViewPointers(t *testing.T) {
	plan, err := PlanDeviceUpload(specSnapshot())
	require.NoError(t, err)
	const base = 0x7f0000000000
	v, err := NewKernelView(base, plan)
	require.NoError(t, err)
	for i, off := range []uint64{0, 12, 24, 36, 48, 60, 68, 76, 88} {
		assert.Equal(t, base+off, v.Pointers[i])
	}
	_, err = NewKernelView(math.MaxUint64-50, plan)
	var ve *KernelViewError
	require.ErrorAs(t, err, &ve)
	assert.Contains(t, err.Error(), "Fix:")
	bad := plan
	bad.ByteLen = 90
	_, err = NewKernelView(0, bad)
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, SecGroupRows, ve.Section)
}

func TestSnapshotValidation(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(s *Snapshot)
		ctx   string
		row   uint64
		value uint64
	}{
		{"unknown op (spec vector)", func(s *Snapshot) { s.Rows[0].LanguageOpID = 99 }, CtxUnknownOp, 0, 99},
		{"children range", func(s *Snapshot) { s.Rows[2].ChildrenOffset = 2 }, CtxChildrenRange, 2, 3},
		{"children range wide", func(s *Snapshot) { s.Rows[1].ChildrenOffset = math.MaxUint32 }, CtxChildrenRange, 1, math.MaxUint32 + 1},
		{"arity", func(s *Snapshot) { s.Rows[1].ChildrenLen = 2 }, CtxArityMismatch, 1, 2},
		{"unknown child", func(s *Snapshot) { s.Children[1] = 7 }, CtxUnknownChildEcls, 2, 7},
		{"op checked before children", func(s *Snapshot) { s.Rows[1].LanguageOpID = 5; s.Rows[1].ChildrenOffset = 9 }, CtxUnknownOp, 1, 5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := specSnapshot()
			tc.edit(s)
			_, err := PlanDeviceUpload(s)
			var ie *ImageError
			require.ErrorAs(t, err, &ie)
			assert.Equal(t, tc.ctx, ie.Context)
			assert.Equal(t, tc.row, ie.Row)
			assert.Equal(t, tc.value, ie.Value)
			assert.Contains(t, err.Error(), "Fix:")
		})
	}
	s := specSnapshot()
	s.OpArities[1] = AnyArity
	s.Rows[1].ChildrenLen = 2
	s.Rows[1].ChildrenOffset = 0
	require.NoError(t, s.Validate(), "AnyArity accepts any children count")
	// Sparse e-class ids take the sorted-set path.
	sparse := &Snapshot{
		Rows:      []Row{{EclassID: 4_000_000_000}, {EclassID: 7, LanguageOpID: 1, ChildrenLen: 1}},
		Children:  []uint32{4_000_000_000},
		OpArities: []uint32{0, 1},
	}
	require.NoError(t, sparse.Validate())
	img, err := PackDeviceImage(sparse)
	require.NoError(t, err)
	assert.Equal(t, []uint32{7, 4_000_000_000}, img.Section(SecGroupEclassIDs))
	assert.Equal(t, []uint32{1, 0}, img.Section(SecGroupRows))
	sparse.Children[0] = 4_000_000_001
	var ie *ImageError
	require.ErrorAs(t, sparse.Validate(), &ie)
	assert.Equal(t, ImageError{Context: CtxUnknownChildEcls, Row: 1, Value: 4_000_000_001, Fix: ie.Fix}, *ie)
	require.ErrorAs(t, specSnapshot().validate(2), &ie)
	assert.Equal(t, CtxRowCount, ie.Context)
	s = specSnapshot()
	s.Rows = s.Rows[:1]
	require.ErrorAs(t, s.validate(1), &ie)
	assert.Equal(t, CtxChildCount, ie.Context)
}

func TestImageShapeErrors(t *testing.T) {
	img, err := PackDeviceImage(specSnapshot())
	require.NoError(t, err)
	bad := *img
	bad.Words = bad.Words[:24]
	_, err = PlanDeviceUploadFromImage(&bad)
	require.ErrorContains(t, err, "Fix: supply exactly 25 words")
	huge := DeviceImage{RowCount: math.MaxUint32, ChildCount: math.MaxUint32, GroupCount: math.MaxUint32}
	_, err = PlanDeviceUploadFromImage(&huge)
	require.Error(t, err)
	// The x4 checks: a layout of 2^62 words overflows bytes.
	_, _, err = layoutFromCounts(1<<62, 0, 0)
	var be *ByteSizeOverflowError
	require.ErrorAs(t, err, &be)
	assert.Equal(t, "row_eclass_ids", be.Context)
	_, _, err = layoutFromCounts(0, 0, 1<<62)
	require.ErrorAs(t, err, &be)
	assert.Equal(t, "group_eclass_ids", be.Context)
	assert.Contains(t, be.Error(), "Fix:")
}

func TestPlanKernelWork(t *testing.T) {
	plan, err := PlanDeviceUpload(specSnapshot())
	require.NoError(t, err)
	v, err := NewKernelView(4096, plan)
	require.NoError(t, err)
	wp, err := PlanKernelWork(v, DefaultLaunchConfig())
	require.NoError(t, err)
	assert.Equal(t, []Wave{
		{Pass: PassRowScan, Bucket: -1, ItemCount: 3, Blocks: 1, ThreadsPerBlock: 256},
		{Pass: PassChildEdgeScan, Bucket: -1, ItemCount: 2, Blocks: 1, ThreadsPerBlock: 256},
		{Pass: PassEclassGroupScan, Bucket: -1, ItemCount: 2, Blocks: 1, ThreadsPerBlock: 256},
	}, wp.Waves)
	assert.Equal(t, uint64(7), wp.TotalItems)
	assert.Equal(t, uint64(3), wp.TotalBlocks)

	// Large passes split into bounded waves; empty passes are skipped.
	big := KernelView{Layout: ByteLayout{RowCount: 16_776_960*2 + 5, ChildCount: 0, GroupCount: 1}}
	wp, err = PlanKernelWork(big, DefaultLaunchConfig())
	require.NoError(t, err)
	require.Len(t, wp.Waves, 4)
	assert.Equal(t, Wave{Pass: PassRowScan, Bucket: -1, FirstItem: 16_776_960, ItemCount: 16_776_960, Blocks: 65535, ThreadsPerBlock: 256}, wp.Waves[1])
	assert.Equal(t, Wave{Pass: PassRowScan, Bucket: -1, FirstItem: 33_553_920, ItemCount: 5, Blocks: 1, ThreadsPerBlock: 256}, wp.Waves[2])
	assert.Equal(t, PassEclassGroupScan, wp.Waves[3].Pass)
	assert.Equal(t, uint64(65535*2+1+1), wp.TotalBlocks)

	_, err = PlanKernelWork(v, LaunchConfig{ThreadsPerBlock: 0, MaxBlocksPerLaunch: 0})
	assert.Equal(t, ZeroThreadsPerBlockError{}, err)
	_, err = PlanKernelWork(v, LaunchConfig{ThreadsPerBlock: 32})
	assert.Equal(t, ZeroMaxBlocksPerLaunchError{}, err)
	assert.Contains(t, err.Error(), "Fix:")
}

// mergeSnapshot: classes 0 (a), 1 (b), 2 = f(a), 3 = f(a), 4 = f(b),
// 5 = g(a), 6 = f(a) again in class 2.
func mergeSnapshot() *Snapshot {
	return &Snapshot{
		Rows: []Row{
			{EclassID: 0, LanguageOpID: 0},
			{EclassID: 1, LanguageOpID: 0},
			{EclassID: 2, LanguageOpID: 1, ChildrenOffset: 0, ChildrenLen: 1},
			{EclassID: 3, LanguageOpID: 1, ChildrenOffset: 1, ChildrenLen: 1},
			{EclassID: 4, LanguageOpID: 1, ChildrenOffset: 2, ChildrenLen: 1},
			{EclassID: 5, LanguageOpID: 2, ChildrenOffset: 0, ChildrenLen: 1},
			{EclassID: 2, LanguageOpID: 1, ChildrenOffset: 3, ChildrenLen: 1},
		},
		Children:  []uint32{0, 0, 1, 0},
		OpArities: []uint32{0, 1, 1},
	}
}

func bucketsFor(t *testing.T, s *Snapshot, c LaunchConfig) (*DeviceImage, SignatureBucketPlan) {
	t.Helper()
	img, err := PackDeviceImage(s)
	require.NoError(t, err)
	up, err := PlanDeviceUploadFromImage(img)
	require.NoError(t, err)
	v, err := NewKernelView(0, up)
	require.NoError(t, err)
	bp, err := PlanSignatureBuckets(img, v, c)
	require.NoError(t, err)
	return img, bp
}

func TestSignatureBucketsAndEquivalences(t *testing.T) {
	img, bp := bucketsFor(t, mergeSnapshot(), DefaultLaunchConfig())
	// Leaves a and b share op 0 and no children: one bucket {0,1}; f(a)
	// rows 2,3,6 form a bucket of 3. f(b) and g(a) are alone.
	require.Len(t, bp.Buckets, 2)
	byRows := map[uint32][]uint32{}
	for _, b := range bp.Buckets {
		byRows[b.RowCount] = bp.BucketRows[b.FirstBucketRow : b.FirstBucketRow+b.RowCount]
	}
	assert.Equal(t, []uint32{0, 1}, byRows[2])
	assert.Equal(t, []uint32{2, 3, 6}, byRows[3])
	assert.Equal(t, uint64(4), bp.CandidatePairCount)
	assert.Len(t, bp.PairWaves, 2)
	assert.Len(t, bp.BucketRecords(), 2*SignatureBucketRecordWords)

	eq, err := CollectStructuralEquivalences(img, &bp)
	require.NoError(t, err)
	// a vs b: equal (same op, no children) -> classes 0,1 merge. f(a) rows:
	// (2,3) exact, (2,6) redundant (both class 2), (3,6) exact (3,2).
	assert.Equal(t, []EclassPair{{0, 1}, {2, 3}}, eq.Equivalences)
	assert.Equal(t, uint64(3), eq.ExactPairCount)
	assert.Equal(t, uint64(1), eq.RedundantPairCount)
	assert.Equal(t, uint64(0), eq.RejectedCandidatePairCount)
	assert.Equal(t, uint64(4), eq.EquivalenceOutputWords)

	out, err := PlanStructuralEquivalenceOutput(&bp)
	require.NoError(t, err)
	assert.Equal(t, EquivalenceOutputPlan{MaxEquivalences: 4, PairWords: 8, PairBytes: 32, CounterWords: 2, CounterBytes: 8}, out)
	slab, err := PlanScratchSlab(&bp, out)
	require.NoError(t, err)
	assert.Equal(t, ScratchSlab{BucketWords: ByteSpan{0, 40}, BucketRows: ByteSpan{40, 20}, OutputPairs: ByteSpan{64, 32}, OutputCount: ByteSpan{96, 8}, ByteLen: 104}, slab)
	empty, err := PlanScratchSlab(&SignatureBucketPlan{}, EquivalenceOutputPlan{})
	require.NoError(t, err)
	assert.Equal(t, ScratchSlab{BucketWords: ByteSpan{0, 4}, BucketRows: ByteSpan{4, 4}, OutputPairs: ByteSpan{8, 8}, OutputCount: ByteSpan{16, 8}, ByteLen: 24}, empty)
}

func TestSignatureCollisionIsRejected(t *testing.T) {
	// Hand-build an image whose rows f(a) and f(b) share a forged signature.
	img, _ := bucketsFor(t, mergeSnapshot(), DefaultLaunchConfig())
	sigs := img.Section(SecRowSignatures)
	sigs[4] = sigs[2] // f(b) collides with f(a)
	sigs[5] = sigs[2] // g(a) collides too
	up, err := PlanDeviceUploadFromImage(img)
	require.NoError(t, err)
	v, _ := NewKernelView(0, up)
	bp, err := PlanSignatureBuckets(img, v, DefaultLaunchConfig())
	require.NoError(t, err)
	eq, err := CollectStructuralEquivalences(img, &bp)
	require.NoError(t, err)
	assert.Equal(t, []EclassPair{{0, 1}, {2, 3}}, eq.Equivalences, "collisions are filtered")
	assert.Equal(t, uint64(1+10), bp.CandidatePairCount)
	assert.Equal(t, uint64(7), eq.RejectedCandidatePairCount)

	// A row whose children range leaves the column is reported.
	img.Section(SecRowChildrenOffsets)[6] = 4
	_, err = CollectStructuralEquivalences(img, &bp)
	var ce *ImageColumnOutOfBoundsError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, ImageColumnOutOfBoundsError{Column: "children", Row: 6, Start: 4, End: 5, Len: 4}, *ce)
	assert.Contains(t, err.Error(), "Fix:")
}

func TestImageViewMismatch(t *testing.T) {
	img, err := PackDeviceImage(specSnapshot())
	require.NoError(t, err)
	up, _ := PlanDeviceUploadFromImage(img)
	v, _ := NewKernelView(0, up)
	for _, tc := range []struct {
		field string
		edit  func(v *KernelView)
	}{
		{"row_count", func(v *KernelView) { v.Layout.RowCount = 4 }},
		{"child_count", func(v *KernelView) { v.Layout.ChildCount = 9 }},
		{"group_count", func(v *KernelView) { v.Layout.GroupCount = 0 }},
	} {
		bad := v
		tc.edit(&bad)
		_, err := PlanSignatureBuckets(img, bad, DefaultLaunchConfig())
		var me *ImageViewMismatchError
		require.ErrorAs(t, err, &me)
		assert.Equal(t, tc.field, me.Field)
		assert.Contains(t, err.Error(), "Fix:")
	}
	_, err = PlanSignatureBuckets(img, v, LaunchConfig{})
	assert.Equal(t, ZeroThreadsPerBlockError{}, err)
}

func TestLargeBucketSplitsIntoPairWaves(t *testing.T) {
	// 100 identical leaves in distinct classes: 4950 pairs; 32 threads x 4
	// blocks = 128 pairs per wave -> 39 waves.
	s := &Snapshot{OpArities: []uint32{0}}
	for i := range 100 {
		s.Rows = append(s.Rows, Row{EclassID: uint32(i)})
	}
	_, bp := bucketsFor(t, s, LaunchConfig{ThreadsPerBlock: 32, MaxBlocksPerLaunch: 4})
	require.Len(t, bp.Buckets, 1)
	assert.Equal(t, uint64(4950), bp.CandidatePairCount)
	assert.Len(t, bp.PairWaves, 39)
	var items uint64
	for i, w := range bp.PairWaves {
		assert.Equal(t, items, w.FirstItem)
		assert.LessOrEqual(t, w.ItemCount, uint64(128))
		assert.Equal(t, 0, w.Bucket)
		if i < 38 {
			assert.Equal(t, uint64(4), w.Blocks)
		}
		items += w.ItemCount
	}
	assert.Equal(t, uint64(4950), items)
	assert.Equal(t, uint64(38*4+3), bp.TotalBlocks) // last wave: 4950-38*128 = 86 items, 3 blocks
}

func TestSignaturePairRowsErrors(t *testing.T) {
	img, bp := bucketsFor(t, mergeSnapshot(), DefaultLaunchConfig())
	_, _, err := SignaturePairRows(&bp, 0, bp.Buckets[0].CandidatePairCount)
	var oe *SignaturePairOrdinalOutOfBoundsError
	require.ErrorAs(t, err, &oe)
	assert.Contains(t, err.Error(), "Fix:")
	var re *SignatureBucketRowsOutOfBoundsError
	_, _, err = SignaturePairRows(&bp, 2, 0)
	require.ErrorAs(t, err, &re)
	bad := bp
	bad.Buckets = slices.Clone(bp.Buckets)
	bad.Buckets[1].FirstBucketRow = 4
	_, _, err = SignaturePairRows(&bad, 1, 0)
	require.ErrorAs(t, err, &re)
	assert.Contains(t, err.Error(), "Fix:")
	_, err = CollectStructuralEquivalences(img, &bad)
	require.ErrorAs(t, err, &re)
}

// TestSignaturePairRowsBijection: decoding every ordinal gives exactly the
// (i<j) row-major enumeration.
func TestSignaturePairRowsBijection(t *testing.T) {
	for seed := uint64(0); seed < 40; seed++ {
		r := rand.New(rand.NewPCG(seed, 12))
		n := 2 + r.IntN(60)
		rows := r.Perm(1000)[:n]
		bp := SignatureBucketPlan{BucketRows: make([]uint32, 3+n), Buckets: []SignatureBucket{{FirstBucketRow: 3, RowCount: uint32(n), CandidatePairCount: uint64(n * (n - 1) / 2)}}}
		for i, v := range rows {
			bp.BucketRows[3+i] = uint32(v)
		}
		ord := uint64(0)
		for i := 0; i < n; i++ {
			for j := i + 1; j < n; j++ {
				a, b, err := SignaturePairRows(&bp, 0, ord)
				require.NoError(t, err)
				require.Equal(t, [2]uint32{uint32(rows[i]), uint32(rows[j])}, [2]uint32{a, b}, "seed %d ordinal %d", seed, ord)
				ord++
			}
		}
		_, _, err := SignaturePairRows(&bp, 0, ord)
		require.Error(t, err)
	}
	// Huge buckets decode without overflow: the last pair of 2^32-1 rows.
	n := uint64(math.MaxUint32)
	assert.Equal(t, n*(n-1)/2, pairsBefore(n-1, n))
	assert.Equal(t, n*(n-1)/2-1, pairsBefore(n-2, n))
}

// randomSnapshot builds a valid snapshot with many structural duplicates.
func randomSnapshot(r *rand.Rand, rows int) *Snapshot {
	s := &Snapshot{OpArities: []uint32{0, 1, 2, AnyArity}}
	classes := 1 + r.IntN(rows/2+1)
	for i := 0; i < rows; i++ {
		ecl := uint32(r.IntN(classes))
		if i < classes {
			ecl = uint32(i) // every class owns a row
		}
		op := uint32(r.IntN(4))
		arity := int(op)
		if op == 3 {
			arity = r.IntN(3)
		}
		if i < classes {
			op, arity = 0, 0
		}
		off := uint32(len(s.Children))
		for range arity {
			s.Children = append(s.Children, uint32(r.IntN(min(classes, 3))))
		}
		s.Rows = append(s.Rows, Row{EclassID: ecl, LanguageOpID: op, ChildrenOffset: off, ChildrenLen: uint32(arity)})
	}
	return s
}

func TestStructuralEquivalenceProperties(t *testing.T) {
	for seed := uint64(0); seed < 60; seed++ {
		r := rand.New(rand.NewPCG(seed, 11))
		s := randomSnapshot(r, 2+r.IntN(60))
		img, bp := bucketsFor(t, s, LaunchConfig{ThreadsPerBlock: 1 + uint32(r.IntN(8)), MaxBlocksPerLaunch: 1 + uint32(r.IntN(3))})
		eq, err := CollectStructuralEquivalences(img, &bp)
		require.NoError(t, err)
		// Reference: compare every pair of rows directly.
		want := map[EclassPair]bool{}
		for i, a := range s.Rows {
			for _, b := range s.Rows[i+1:] {
				if a.LanguageOpID == b.LanguageOpID && slices.Equal(s.Children[a.ChildrenOffset:a.ChildrenOffset+a.ChildrenLen], s.Children[b.ChildrenOffset:b.ChildrenOffset+b.ChildrenLen]) && a.EclassID != b.EclassID {
					want[EclassPair{min(a.EclassID, b.EclassID), max(a.EclassID, b.EclassID)}] = true
				}
			}
		}
		require.Len(t, eq.Equivalences, len(want), "seed %d", seed)
		for _, p := range eq.Equivalences {
			require.True(t, want[p])
		}
		require.True(t, slices.IsSortedFunc(eq.Equivalences, comparePairs))
		require.Equal(t, bp.CandidatePairCount, eq.ExactPairCount+eq.RedundantPairCount+eq.RejectedCandidatePairCount)
		// Groups partition the rows by e-class.
		gids, goffs, grows := img.Section(SecGroupEclassIDs), img.Section(SecGroupOffsets), img.Section(SecGroupRows)
		require.True(t, slices.IsSorted(gids))
		for g := range gids {
			for _, row := range grows[goffs[g]:goffs[g+1]] {
				require.Equal(t, gids[g], s.Rows[row].EclassID)
			}
			require.True(t, slices.IsSorted(grows[goffs[g]:goffs[g+1]]))
		}
	}
}

// refComponents is a simple reference: repeated relaxation of labels to the
// minimum over edges until a fixed point.
func refComponents(pairs []EclassPair) map[uint32]uint32 {
	label := map[uint32]uint32{}
	for _, p := range pairs {
		label[p.A], label[p.B] = p.A, p.B
	}
	for changed := true; changed; {
		changed = false
		for _, p := range pairs {
			m := min(label[p.A], label[p.B])
			if label[p.A] != m || label[p.B] != m {
				label[p.A], label[p.B], changed = m, m, true
			}
		}
	}
	return label
}

func TestUnionCompaction(t *testing.T) {
	p, err := PlanUnionCompaction([]EclassPair{{5, 3}, {3, 5}, {7, 7}, {9, 3}, {1, 2}, {2, 1}}, DefaultLaunchConfig())
	require.NoError(t, err)
	assert.Equal(t, uint64(1), p.IgnoredSelfPairCount)
	assert.Equal(t, uint64(2), p.DuplicatePairCount)
	assert.Equal(t, []EclassPair{{1, 2}, {3, 5}, {3, 9}}, p.UniquePairs)
	assert.Equal(t, []uint32{1, 2, 3, 5, 9}, p.AffectedEclasses)
	assert.Equal(t, []CanonicalRewrite{{2, 1}, {5, 3}, {9, 3}}, p.CanonicalRewrites)
	assert.Equal(t, []uint32{2, 1, 5, 3, 9, 3}, p.RewriteImage())
	assert.Equal(t, []Wave{
		{Pass: PassUnionPairs, Bucket: -1, ItemCount: 3, Blocks: 1, ThreadsPerBlock: 256},
		{Pass: PassCanonicalRewrites, Bucket: -1, ItemCount: 3, Blocks: 1, ThreadsPerBlock: 256},
	}, p.Waves)
	// Sparse ids take the bisection path.
	big, err := PlanUnionCompaction([]EclassPair{{4_000_000_000, 3}, {3_000_000_000, 4_000_000_000}, {10, 11}}, DefaultLaunchConfig())
	require.NoError(t, err)
	assert.Equal(t, []CanonicalRewrite{{11, 10}, {3_000_000_000, 3}, {4_000_000_000, 3}}, big.CanonicalRewrites)
	_, err = PlanUnionCompaction(nil, LaunchConfig{ThreadsPerBlock: 1})
	assert.Equal(t, ZeroMaxBlocksPerLaunchError{}, err)
	empty, err := PlanUnionCompaction(nil, DefaultLaunchConfig())
	require.NoError(t, err)
	assert.Empty(t, empty.Waves)
}

func TestUnionCompactionLargeGeneratedComponents(t *testing.T) {
	for seed := uint64(0); seed < 30; seed++ {
		r := rand.New(rand.NewPCG(seed, 13))
		ids := r.Perm(100000)
		m := 10 + r.IntN(3000)
		pairs := make([]EclassPair, m)
		pool := ids[:1+r.IntN(2000)]
		for i := range pairs {
			pairs[i] = EclassPair{uint32(pool[r.IntN(len(pool))]), uint32(pool[r.IntN(len(pool))])}
		}
		p, err := PlanUnionCompaction(pairs, DefaultLaunchConfig())
		require.NoError(t, err)
		ref := refComponents(func() []EclassPair {
			var out []EclassPair
			for _, q := range pairs {
				if q.A != q.B {
					out = append(out, q)
				}
			}
			return out
		}())
		require.Len(t, p.AffectedEclasses, len(ref))
		rw := map[uint32]uint32{}
		for _, c := range p.CanonicalRewrites {
			rw[c.EclassID] = c.Representative
			require.Less(t, c.Representative, c.EclassID, "the representative is the component minimum")
		}
		for id, rep := range ref {
			if rep == id {
				require.NotContains(t, rw, id)
			} else {
				require.Equal(t, rep, rw[id], "seed %d id %d", seed, id)
			}
		}
		require.True(t, slices.IsSortedFunc(p.CanonicalRewrites, func(a, b CanonicalRewrite) int { return int(int64(a.EclassID) - int64(b.EclassID)) }))
	}
}

func encodePairs(pairs []EclassPair) ([]byte, []byte) {
	count := binary.LittleEndian.AppendUint64(nil, uint64(len(pairs)))
	var buf []byte
	for _, p := range pairs {
		buf = binary.LittleEndian.AppendUint32(buf, p.A)
		buf = binary.LittleEndian.AppendUint32(buf, p.B)
	}
	return count, buf
}

func TestDecodeReadbackPairs(t *testing.T) {
	for seed := uint64(0); seed < 50; seed++ {
		r := rand.New(rand.NewPCG(seed, 14))
		var stream []EclassPair
		for range r.IntN(200) {
			stream = append(stream, EclassPair{uint32(r.IntN(20)), uint32(r.IntN(20))})
		}
		count, buf := encodePairs(stream)
		buf = append(buf, make([]byte, 8*r.IntN(4))...) // unused capacity
		got, n, err := DecodeReadbackPairs(count, buf)
		require.NoError(t, err)
		require.Equal(t, uint64(len(stream)), n)
		require.Equal(t, len(stream), len(got))
		uniq, n, err := DecodeReadbackPairsUnique(count, buf)
		require.NoError(t, err)
		require.Equal(t, uint64(len(stream)), n, "the emitted count")
		want := slices.Clone(stream)
		slices.SortFunc(want, comparePairs)
		want = slices.Compact(want)
		require.Equal(t, want, uniq)
	}
	_, _, err := DecodeReadbackPairs([]byte{1, 0, 0}, nil)
	assert.Equal(t, &ShortReadbackError{Field: "output count", Need: 8, Have: 3}, err)
	count, buf := encodePairs([]EclassPair{{1, 2}, {3, 4}})
	_, _, err = DecodeReadbackPairsUnique(count, buf[:15])
	assert.Equal(t, &ShortReadbackError{Field: "output pairs", Need: 16, Have: 15}, err)
	_, _, err = DecodeReadbackPairs(binary.LittleEndian.AppendUint64(nil, math.MaxUint64), buf)
	assert.ErrorContains(t, err, "Fix:")
}

func TestOutputPlanOverflow(t *testing.T) {
	_, err := PlanStructuralEquivalenceOutput(&SignatureBucketPlan{CandidatePairCount: math.MaxUint64 / 2})
	var oe *checked.OverflowError
	require.ErrorAs(t, err, &oe)
	assert.Equal(t, "equivalence pair bytes", oe.Field)
	_, err = PlanScratchSlab(&SignatureBucketPlan{}, EquivalenceOutputPlan{PairBytes: math.MaxUint64 - 8})
	require.ErrorAs(t, err, &oe)
}

func FuzzPackDeviceImage(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 1, 1, 0, 1, 1, 1, 1, 1}, []byte{0, 0}, uint8(2))
	f.Add([]byte{0, 99, 0, 0}, []byte{}, uint8(1))
	f.Fuzz(func(t *testing.T, rowBytes, children []byte, ops uint8) {
		// No input makes memory grow faster than the input itself.
		memcheck.Check(t, memcheck.Bound{Base: 1 << 20, PerByte: 256}, len(rowBytes)+len(children)+8, func() {
			s := &Snapshot{}
			for i := 0; i < int(ops%6); i++ {
				s.OpArities = append(s.OpArities, []uint32{0, 1, 2, AnyArity}[i%4])
			}
			for i := 0; i+4 <= len(rowBytes); i += 4 {
				s.Rows = append(s.Rows, Row{EclassID: uint32(rowBytes[i] % 8), LanguageOpID: uint32(rowBytes[i+1] % 8), ChildrenOffset: uint32(rowBytes[i+2]), ChildrenLen: uint32(rowBytes[i+3] % 4)})
			}
			for _, c := range children {
				s.Children = append(s.Children, uint32(c%8))
			}
			plan, err := PlanDeviceUpload(s)
			if err != nil {
				require.Contains(t, err.Error(), "Fix:")
				return
			}
			require.Equal(t, uint64(len(plan.Words))*4, plan.ByteLen)
			img := &DeviceImage{RowCount: plan.Layout.RowCount, ChildCount: plan.Layout.ChildCount, GroupCount: plan.Layout.GroupCount, Words: plan.Words}
			v, err := NewKernelView(1<<40, plan)
			require.NoError(t, err)
			bp, err := PlanSignatureBuckets(img, v, LaunchConfig{ThreadsPerBlock: 2, MaxBlocksPerLaunch: 2})
			require.NoError(t, err)
			eq, err := CollectStructuralEquivalences(img, &bp)
			require.NoError(t, err)
			require.Equal(t, bp.CandidatePairCount, eq.ExactPairCount+eq.RedundantPairCount+eq.RejectedCandidatePairCount)
			for bi, b := range bp.Buckets {
				for o := uint64(0); o < b.CandidatePairCount; o++ {
					a, c, err := SignaturePairRows(&bp, bi, o)
					require.NoError(t, err)
					require.Equal(t, img.Section(SecRowSignatures)[a], img.Section(SecRowSignatures)[c])
				}
			}
			u, err := PlanUnionCompaction(eq.Equivalences, DefaultLaunchConfig())
			require.NoError(t, err)
			for _, rw := range u.CanonicalRewrites {
				require.Less(t, rw.Representative, rw.EclassID)
			}
		})
	})
}

func FuzzDecodeReadbackPairs(f *testing.F) {
	c, p := encodePairs([]EclassPair{{1, 2}, {1, 2}, {0, 9}})
	f.Add(c, p)
	f.Add([]byte{255, 255, 255, 255, 255, 255, 255, 255}, []byte{1})
	f.Fuzz(func(t *testing.T, count, pairs []byte) {
		// No input makes memory grow faster than the input itself.
		memcheck.Check(t, memcheck.Bound{Base: 1 << 20, PerByte: 256}, len(count)+len(pairs), func() {
			u, n, err := DecodeReadbackPairsUnique(count, pairs)
			if err != nil {
				require.Contains(t, err.Error(), "Fix:")
				return
			}
			require.LessOrEqual(t, uint64(len(u)), n)
			require.True(t, slices.IsSortedFunc(u, comparePairs))
		})
	})
}

func benchSnapshot(rows int) *Snapshot {
	// rows/4 distinct leaves (one op each, as constants and symbols are),
	// then binary rows f(a, b) spread over rows/2 e-classes; about a third
	// of them repeat an earlier row, so buckets stay small.
	leaves := rows / 4
	s := &Snapshot{OpArities: make([]uint32, leaves+1)}
	bin := uint32(leaves)
	s.OpArities[bin] = 2
	for i := 0; i < rows; i++ {
		if i < leaves {
			s.Rows = append(s.Rows, Row{EclassID: uint32(i), LanguageOpID: uint32(i)})
			continue
		}
		j := i
		if i%3 == 0 {
			j = i / 3 // repeat an earlier shape
		}
		off := uint32(len(s.Children))
		s.Children = append(s.Children, uint32(j%leaves), uint32((j*7)%leaves))
		s.Rows = append(s.Rows, Row{EclassID: uint32(i / 2), LanguageOpID: bin, ChildrenOffset: off, ChildrenLen: 2})
	}
	return s
}

func BenchmarkPlanDeviceUpload(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		s := benchSnapshot(n)
		b.Run(fmt.Sprintf("rows=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := PlanDeviceUpload(s); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkSignatureBucketsAndEquivalences(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		s := benchSnapshot(n)
		img, err := PackDeviceImage(s)
		require.NoError(b, err)
		up, _ := PlanDeviceUploadFromImage(img)
		v, _ := NewKernelView(0, up)
		b.Run(fmt.Sprintf("rows=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				bp, err := PlanSignatureBuckets(img, v, DefaultLaunchConfig())
				if err != nil {
					b.Fatal(err)
				}
				if _, err := CollectStructuralEquivalences(img, &bp); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkPlanUnionCompaction(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		r := rand.New(rand.NewPCG(1, 2))
		pairs := make([]EclassPair, n)
		for i := range pairs {
			pairs[i] = EclassPair{uint32(r.IntN(n)), uint32(r.IntN(n))}
		}
		b.Run(fmt.Sprintf("pairs=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := PlanUnionCompaction(pairs, DefaultLaunchConfig()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func TestBucketRecordsFixedWidth(t *testing.T) {
	p := SignatureBucketPlan{Buckets: []SignatureBucket{
		{Signature: 0xdeadbeef, FirstBucketRow: 0, RowCount: 3, CandidatePairCount: 3},
		{Signature: 7, FirstBucketRow: 3, RowCount: 131074, CandidatePairCount: 1<<33 + 5},
	}}
	assert.Equal(t, []uint32{0xdeadbeef, 0, 3, 3, 0, 7, 3, 131074, 5, 2}, p.BucketRecords())
	u := UnionCompactionPlan{CanonicalRewrites: []CanonicalRewrite{{9, 1}}}
	assert.Len(t, u.RewriteImage(), CanonicalRewriteRecordWords)
}
