package rebuild

import (
	"testing"

	"github.com/gpuplan/gpuplan/egraph"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadbackValidation feeds the partition builder rewrites a broken
// kernel could leave: every one is refused with an error naming the
// rewrite, and good ones build the labels.
func TestReadbackValidation(t *testing.T) {
	s := &Session{name: "t", plans: Plans{Sizes: Sizes{Classes: 6, Rows: 6}}}
	run := Run{Arm: ArmDeviceLoop, UnionMerges: 2, CongruenceMerges: 1}
	good := []egraph.EclassPair{{A: 3, B: 1}, {A: 5, B: 1}, {A: 4, B: 0}}
	res, err := s.result(run, good, 4)
	require.NoError(t, err)
	assert.Equal(t, []int32{0, 1, 2, 1, 0, 1}, res.Labels)
	assert.Equal(t, 3, res.Classes)
	assert.Equal(t, 4, res.ClassesAfterUnions)
	for name, c := range map[string]struct {
		rw   []egraph.EclassPair
		want string
	}{
		"larger root":   {[]egraph.EclassPair{{A: 1, B: 3}, {A: 5, B: 1}, {A: 4, B: 0}}, "not smaller"},
		"outside":       {[]egraph.EclassPair{{A: 9, B: 1}, {A: 5, B: 1}, {A: 4, B: 0}}, "outside 0..5"},
		"twice":         {[]egraph.EclassPair{{A: 3, B: 1}, {A: 3, B: 0}, {A: 4, B: 0}}, "second time"},
		"chained":       {[]egraph.EclassPair{{A: 3, B: 1}, {A: 1, B: 0}, {A: 4, B: 0}}, "itself rewritten"},
		"merge counts":  {[]egraph.EclassPair{{A: 3, B: 1}}, "the device counted 3 merges"},
		"rewrite count": {[]egraph.EclassPair{{A: 3, B: 1}, {A: 5, B: 1}, {A: 4, B: 0}, {A: 2, B: 0}}, "leave 2 classes"},
	} {
		_, err := s.result(run, c.rw, 4)
		require.ErrorContains(t, err, c.want, name)
		assert.Contains(t, err.Error(), "Fix:", name)
	}
	// Union compaction's rules: a root must be its class's smallest id.
	_, err = compactRewrites([]egraph.EclassPair{{A: 2, B: 1}, {A: 3, B: 2}})
	require.ErrorContains(t, err, "not their own union compaction")
	rw, err := compactRewrites(good[:2])
	require.NoError(t, err)
	assert.Equal(t, []egraph.CanonicalRewrite{{EclassID: 3, Representative: 1}, {EclassID: 5, Representative: 1}}, rw)
}

// TestCheckNodeTable checks the e-node table check itself: it accepts a
// correct table and refuses one with a duplicate key, a missing key or a
// wrong class.
func TestCheckNodeTable(t *testing.T) {
	g := generate(t, "gen:2000:4")
	ref, err := egraph.Rebuild(g)
	require.NoError(t, err)
	keys := newKeyIndex(g, ref.Labels)
	var table []NodeEntry
	seen := map[uint64][]int32{}
	for i := range int32(g.NodeCount()) {
		dup := false
		for _, j := range seen[keys.sig(i)] {
			dup = dup || keys.equal(i, j)
		}
		if !dup {
			seen[keys.sig(i)] = append(seen[keys.sig(i)], i)
			table = append(table, NodeEntry{Row: uint32(i), Class: uint32(ref.Labels[g.NodeClass[i]])})
		}
	}
	require.Len(t, table, ref.DistinctNodes)
	require.NoError(t, CheckNodeTable(g, ref.Labels, table))
	require.ErrorContains(t, CheckNodeTable(g, ref.Labels, table[1:]), "is not in the e-node table")
	wrong := append([]NodeEntry(nil), table...)
	wrong[3].Class++
	require.ErrorContains(t, CheckNodeTable(g, ref.Labels, wrong), "a class other than its label")
	var dupRow uint32
	for i := range int32(g.NodeCount()) {
		if idx := keys.sig(i); len(seen[idx]) > 0 && seen[idx][0] != i && keys.equal(i, seen[idx][0]) {
			dupRow = uint32(i)
			break
		}
	}
	require.NotZero(t, dupRow, "gen:2000:4 has equal e-nodes")
	dups := append(append([]NodeEntry(nil), table...), NodeEntry{Row: dupRow, Class: uint32(ref.Labels[g.NodeClass[dupRow]])})
	require.ErrorContains(t, CheckNodeTable(g, ref.Labels, dups), "the same canonical key")
}
