package egraph_test

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/gpuplan/gpuplan/egraph"
)

// snapshot: e-class 0 = x, e-class 1 = f(x), e-class 2 = f(x) again.
func snapshot() *egraph.Snapshot {
	return &egraph.Snapshot{
		Rows: []egraph.Row{
			{EclassID: 0, LanguageOpID: 0},
			{EclassID: 1, LanguageOpID: 1, ChildrenOffset: 0, ChildrenLen: 1},
			{EclassID: 2, LanguageOpID: 1, ChildrenOffset: 1, ChildrenLen: 1},
		},
		Children:  []uint32{0, 0},
		OpArities: []uint32{0, 1},
	}
}

func ExamplePlanDeviceUpload() {
	plan, err := egraph.PlanDeviceUpload(snapshot())
	if err != nil {
		fmt.Println(err)
		return
	}
	for i, s := range plan.Layout.Spans {
		fmt.Printf("%-20s offset %3d bytes %2d\n", egraph.Section(i), s.Offset, s.ByteLen)
	}
	fmt.Println("total", plan.ByteLen)
	// Output:
	// row_eclass_ids       offset   0 bytes 12
	// row_language_op_ids  offset  12 bytes 12
	// row_children_offsets offset  24 bytes 12
	// row_children_lens    offset  36 bytes 12
	// row_signatures       offset  48 bytes 12
	// children             offset  60 bytes  8
	// group_eclass_ids     offset  68 bytes 12
	// group_offsets        offset  80 bytes 16
	// group_rows           offset  96 bytes 12
	// total 108
}

func ExampleSnapshot_Validate() {
	s := snapshot()
	s.Rows[0].LanguageOpID = 99
	fmt.Println(s.Validate())
	// Output:
	// e-graph image: unknown language_op_id at row 0 (value 99). Fix: add the op to op_arities or correct the row's language_op_id
}

func ExamplePlanKernelWork() {
	plan, _ := egraph.PlanDeviceUpload(snapshot())
	view, _ := egraph.NewKernelView(0x10000, plan)
	work, err := egraph.PlanKernelWork(view, egraph.DefaultLaunchConfig())
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, w := range work.Waves {
		fmt.Println(w.Pass, w.ItemCount, w.Blocks)
	}
	// Output:
	// RowScan 3 1
	// ChildEdgeScan 2 1
	// EclassGroupScan 3 1
}

func ExampleCollectStructuralEquivalences() {
	img, _ := egraph.PackDeviceImage(snapshot())
	plan, _ := egraph.PlanDeviceUploadFromImage(img)
	view, _ := egraph.NewKernelView(0, plan)
	buckets, err := egraph.PlanSignatureBuckets(img, view, egraph.DefaultLaunchConfig())
	if err != nil {
		fmt.Println(err)
		return
	}
	a, b, _ := egraph.SignaturePairRows(&buckets, 0, 0)
	fmt.Println("candidate rows", a, b)
	eq, _ := egraph.CollectStructuralEquivalences(img, &buckets)
	fmt.Println(eq.Equivalences, eq.ExactPairCount)
	// Output:
	// candidate rows 1 2
	// [{1 2}] 1
}

func ExamplePlanUnionCompaction() {
	p, err := egraph.PlanUnionCompaction([]egraph.EclassPair{{A: 9, B: 4}, {A: 4, B: 7}, {A: 2, B: 2}}, egraph.DefaultLaunchConfig())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.CanonicalRewrites, p.IgnoredSelfPairCount)
	// Output:
	// [{7 4} {9 4}] 1
}

func ExampleDecodeReadbackPairsUnique() {
	count := binary.LittleEndian.AppendUint64(nil, 3)
	var pairs []byte
	for _, w := range []uint32{5, 6, 1, 2, 5, 6} {
		pairs = binary.LittleEndian.AppendUint32(pairs, w)
	}
	got, emitted, err := egraph.DecodeReadbackPairsUnique(count, pairs)
	fmt.Println(got, emitted, err)
	// Output:
	// [{1 2} {5 6}] 3 <nil>
}

func ExampleSignaturePairRows() {
	// Four identical leaves in four e-classes form one bucket of 6 pairs.
	s := &egraph.Snapshot{OpArities: []uint32{0}}
	for i := range 4 {
		s.Rows = append(s.Rows, egraph.Row{EclassID: uint32(10 + i)})
	}
	img, _ := egraph.PackDeviceImage(s)
	plan, _ := egraph.PlanDeviceUploadFromImage(img)
	view, _ := egraph.NewKernelView(0, plan)
	buckets, _ := egraph.PlanSignatureBuckets(img, view, egraph.DefaultLaunchConfig())
	var pairs []string
	for ord := uint64(0); ord < buckets.Buckets[0].CandidatePairCount; ord++ {
		a, b, _ := egraph.SignaturePairRows(&buckets, 0, ord)
		pairs = append(pairs, fmt.Sprintf("%d-%d", a, b))
	}
	fmt.Println(strings.Join(pairs, " "))
	_, _, err := egraph.SignaturePairRows(&buckets, 0, 6)
	fmt.Println(err != nil)
	// Output:
	// 0-1 0-2 0-3 1-2 1-3 2-3
	// true
}

func ExampleNewKernelView() {
	plan, _ := egraph.PlanDeviceUpload(snapshot())
	view, err := egraph.NewKernelView(0x7f00_0000_0000, plan)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%#x %#x\n", view.Pointers[egraph.SecRowEclassIDs], view.Pointers[egraph.SecChildren])
	// Output:
	// 0x7f0000000000 0x7f000000003c
}

func ExamplePlanScratchSlab() {
	img, _ := egraph.PackDeviceImage(snapshot())
	plan, _ := egraph.PlanDeviceUploadFromImage(img)
	view, _ := egraph.NewKernelView(0, plan)
	buckets, _ := egraph.PlanSignatureBuckets(img, view, egraph.DefaultLaunchConfig())
	out, _ := egraph.PlanStructuralEquivalenceOutput(&buckets)
	slab, err := egraph.PlanScratchSlab(&buckets, out)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(slab.BucketWords, slab.BucketRows, slab.OutputPairs, slab.OutputCount, slab.ByteLen)
	// Output:
	// {0 20} {20 8} {32 8} {40 8} 48
}

func ExamplePackDeviceImage() {
	img, err := egraph.PackDeviceImage(snapshot())
	if err != nil {
		fmt.Println(err)
		return
	}
	plan, err := egraph.PlanDeviceUploadFromImage(img)
	if err != nil {
		fmt.Println(err)
		return
	}
	// The image is one buffer of u32 words: 4 bytes each.
	fmt.Println(len(img.Words), uint64(len(img.Words))*4 == plan.ByteLen)
	// Output:
	// 27 true
}

func ExampleSignatureBucketPlan_CheckPairBudget() {
	// 1,000 identical leaves in distinct e-classes: one bucket of 499,500
	// candidate pairs, 3,996,000 bytes of worst-case output.
	s := &egraph.Snapshot{OpArities: []uint32{0}}
	for i := range 1000 {
		s.Rows = append(s.Rows, egraph.Row{EclassID: uint32(i)})
	}
	img, _ := egraph.PackDeviceImage(s)
	up, _ := egraph.PlanDeviceUploadFromImage(img)
	view, _ := egraph.NewKernelView(0, up)
	bp, _ := egraph.PlanSignatureBuckets(img, view, egraph.DefaultLaunchConfig())
	fmt.Println(bp.CheckPairBudget(4_000_000))
	fmt.Println(bp.CheckPairBudget(1 << 20))
	// Output:
	// <nil>
	// CandidatePairBudget: 1 signature buckets hold 499500 candidate pairs (the largest bucket has 1000 rows with one signature), whose equivalence output needs 3996000 bytes, above the memory budget of 1048576 bytes. Fix: raise memory_budget_bytes, or plan an e-graph with fewer rows sharing one signature
}
