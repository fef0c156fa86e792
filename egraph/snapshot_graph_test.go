package egraph

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/internal/memcheck"
)

func TestFromSnapshot(t *testing.T) {
	g, err := FromSnapshot(specSnapshot())
	require.NoError(t, err)
	assert.Equal(t, &Graph{
		Ops:        []OpDecl{{0, "op0"}, {1, "op1"}},
		ClassCount: 2,
		NodeClass:  []int32{0, 1, 1},
		NodeOp:     []int32{0, 1, 1},
		ChildStart: []int32{0, 0, 1, 2},
		Children:   []int32{0, 0},
		ClassIDs:   []uint32{0, 1},
	}, g)
	res, err := Rebuild(g)
	require.NoError(t, err)
	assert.Equal(t, 2, res.Classes)
	assert.Equal(t, 2, res.DistinctNodes, "the two copies of f(x) are one canonical e-node")
}

func TestFromSnapshotSparseIDs(t *testing.T) {
	// e-classes 7 (x), 1<<31+5 (y), 40 (f(x)) and 9 (f(y), with shared
	// children ranges and a variadic op; classes 7 and 1<<31+5 hold a
	// second leaf each so that x ~ y and the f's merge by congruence.
	big := uint32(1<<31 + 5)
	s := &Snapshot{
		Rows: []Row{
			{EclassID: 7, LanguageOpID: 0},
			{EclassID: big, LanguageOpID: 1},
			{EclassID: 40, LanguageOpID: 2, ChildrenOffset: 0, ChildrenLen: 1},
			{EclassID: 9, LanguageOpID: 2, ChildrenOffset: 1, ChildrenLen: 1},
			{EclassID: 7, LanguageOpID: 3},
			{EclassID: big, LanguageOpID: 3},
			{EclassID: 40, LanguageOpID: 4, ChildrenOffset: 0, ChildrenLen: 2},
		},
		Children:  []uint32{7, big},
		OpArities: []uint32{0, 0, 1, 0, AnyArity},
	}
	g, err := FromSnapshot(s)
	require.NoError(t, err)
	assert.Equal(t, []uint32{7, 9, 40, big}, g.ClassIDs, "dense ids follow the order of the e-class ids")
	assert.Equal(t, []int32{0, 3, 2, 1, 0, 3, 2}, g.NodeClass)
	assert.Equal(t, VariadicArity, g.Ops[4].Arity)
	res, err := Rebuild(g)
	require.NoError(t, err)
	classes := res.NodeClasses(g)
	assert.Equal(t, []uint32{7, 7, 9, 9, 7, 7, 9}, []uint32{g.SourceClassID(classes[0]), g.SourceClassID(classes[1]), g.SourceClassID(classes[2]),
		g.SourceClassID(classes[3]), g.SourceClassID(classes[4]), g.SourceClassID(classes[5]), g.SourceClassID(classes[6])},
		"each class is named by its smallest e-class id")

	back, err := g.ToSnapshot()
	require.NoError(t, err)
	again, err := FromSnapshot(back)
	require.NoError(t, err)
	assert.Equal(t, g, again)
}

func TestFromSnapshotErrors(t *testing.T) {
	_, err := FromSnapshot(&Snapshot{})
	var ge *GraphError
	require.ErrorAs(t, err, &ge)
	assert.Equal(t, "rows", ge.Field)

	bad := specSnapshot()
	bad.Children[1] = 5
	_, err = FromSnapshot(bad)
	var ie *ImageError
	require.ErrorAs(t, err, &ie)
	assert.Equal(t, uint64(2), ie.Row, "the error names the row (e-node)")

	huge := specSnapshot()
	huge.OpArities = append(huge.OpArities, math.MaxInt32+1)
	_, err = FromSnapshot(huge)
	require.ErrorAs(t, err, &ge)
	assert.Equal(t, "op_arities[2]", ge.Field)
}

func TestToSnapshotPacks(t *testing.T) {
	// A dump becomes the device image's input: rows in e-node order.
	g, _ := readSample(t)
	s, err := g.ToSnapshot()
	require.NoError(t, err)
	img, err := PackDeviceImage(s)
	require.NoError(t, err)
	assert.Equal(t, uint32(8728), img.RowCount)
	assert.Equal(t, uint32(8157), img.GroupCount)
	back, err := FromSnapshot(s)
	require.NoError(t, err)
	assert.Equal(t, g.NodeClass, back.NodeClass)
	assert.Equal(t, g.Children, back.Children)
	_, err = (&Graph{}).ToSnapshot()
	require.Error(t, err)
}

func FuzzFromSnapshot(f *testing.F) {
	seed, err := json.Marshal(specSnapshot())
	require.NoError(f, err)
	f.Add(seed)
	f.Add([]byte(`{"rows":[{"eclass_id":4294967295,"language_op_id":0,"children_offset":0,"children_len":1}],"children":[4294967295],"op_arities":[4294967295]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		// No input makes memory grow faster than the input itself.
		memcheck.Check(t, memcheck.Bound{Base: 1 << 20, PerByte: 256}, len(data), func() {
			var s Snapshot
			if json.Unmarshal(data, &s) != nil || len(s.Rows) > 200 {
				return
			}
			g, err := FromSnapshot(&s)
			if err != nil {
				require.Contains(t, err.Error(), "Fix:")
				return
			}
			require.NoError(t, g.Validate())
			require.Equal(t, len(s.Rows), g.NodeCount())
			for i, r := range s.Rows {
				require.Equal(t, r.EclassID, g.SourceClassID(g.NodeClass[i]))
			}
			if len(g.Children) <= 2000 {
				checkAllAgree(t, g)
			}
		})
	})
}
