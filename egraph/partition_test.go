package egraph

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/internal/memcheck"
)

const tinyPartition = `egg-partition v1
# distinct canonical e-nodes after rebuild (egg total_number_of_nodes): 3
nodes 4
classes 2
0
0
3
3
end
`

func TestReadPartition(t *testing.T) {
	p, err := ReadPartition(strings.NewReader(tinyPartition))
	require.NoError(t, err)
	assert.Equal(t, &Partition{Classes: []int32{0, 0, 3, 3}, ClassCount: 2, DistinctNodes: 3}, p)

	plain, err := ReadPartition(strings.NewReader("# mine\n0\n0\n\n3\n3"))
	require.NoError(t, err)
	assert.Equal(t, &Partition{Classes: []int32{0, 0, 3, 3}, ClassCount: 2, DistinctNodes: -1}, plain)

	_, egg := readSample(t)
	assert.Len(t, egg.Classes, 8728)
	assert.Equal(t, 3575, egg.ClassCount)
	assert.Equal(t, 7835, egg.DistinctNodes)
}

func TestReadPartitionErrors(t *testing.T) {
	replace := func(old, new string) string { return strings.Replace(tinyPartition, old, new, 1) }
	tests := []struct {
		name string
		in   string
		line int
		msg  string
	}{
		{"empty", "", 0, "the partition is empty"},
		{"plain bad", "0\n1\nx\n", 3, "class \"x\" is not a non-negative decimal integer"},
		{"plain negative", "-1\n", 1, "class \"-1\""},
		{"no nodes header", replace("nodes 4", "node 4"), 3, `expected "nodes <count>"`},
		{"nodes zero", replace("nodes 4", "nodes 0"), 3, "the partition is empty"},
		{"fewer lines", replace("nodes 4", "nodes 5"), 9, "found \"end\" after only 4 class lines"},
		{"more lines", replace("nodes 4", "nodes 3"), 8, `expected "end" after 3 class lines`},
		{"bad class", replace("3\n3\nend", "3\nz\nend"), 8, "class line 4: \"z\""},
		{"classes disagree", replace("classes 2", "classes 3"), 4, "the header says classes 3 but the lines hold 2"},
		{"data after end", tinyPartition + "5\n", 10, "unexpected data after \"end\""},
		{"truncated", tinyPartition[:strings.Index(tinyPartition, "end")], 8, "the input ends where"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadPartition(strings.NewReader(tc.in))
			var le *LineError
			require.ErrorAs(t, err, &le)
			assert.Equal(t, tc.line, le.Line, "%v", err)
			assert.Contains(t, err.Error(), tc.msg)
			assert.Contains(t, err.Error(), "Fix:")
		})
	}
}

func TestWritePartitionRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, WritePartition(&buf, []int32{5, 5, 1, 7}, 3, "by a test"))
	assert.Contains(t, buf.String(), "# by a test\nnodes 4\nclasses 3\n5\n5\n1\n7\nend\n")
	p, err := ReadPartition(&buf)
	require.NoError(t, err)
	assert.Equal(t, &Partition{Classes: []int32{5, 5, 1, 7}, ClassCount: 3, DistinctNodes: 3}, p)

	buf.Reset()
	require.NoError(t, WritePartition(&buf, []int32{0}, -1))
	assert.NotContains(t, buf.String(), "distinct")
}

func TestComparePartitions(t *testing.T) {
	tests := []struct {
		name string
		a, b []int32
		line int // -2: same
	}{
		{"same", []int32{0, 0, 2}, []int32{0, 0, 2}, -2},
		{"renamed", []int32{0, 0, 2}, []int32{7, 7, 1}, -2},
		{"renamed sparse", []int32{0, 1 << 30, 0}, []int32{3, 4, 3}, -2},
		{"split", []int32{0, 0, 2}, []int32{0, 1, 2}, 1},
		{"merged", []int32{0, 1, 2}, []int32{0, 0, 2}, 1},
		{"merged late", []int32{0, 1, 2, 1}, []int32{5, 6, 7, 7}, 3},
		{"lengths", []int32{0}, []int32{0, 0}, -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := ComparePartitions(tc.a, tc.b)
			if tc.line == -2 {
				require.NoError(t, err)
				require.NoError(t, ComparePartitions(tc.b, tc.a))
				return
			}
			var pm *PartitionMismatchError
			require.ErrorAs(t, err, &pm)
			assert.Equal(t, tc.line, pm.Line)
			assert.Contains(t, err.Error(), "Fix:")
		})
	}
}

func TestComparePartitionsEggSample(t *testing.T) {
	g, egg := readSample(t)
	res, err := Rebuild(g)
	require.NoError(t, err)
	mine := res.NodeClasses(g)
	require.NoError(t, ComparePartitions(mine, egg.Classes))
	// Moving one e-node into another class is caught, at the later of
	// the two lines at the latest.
	for _, i := range []int{0, 100, 8727} {
		j := 0
		for mine[j] == mine[i] {
			j++
		}
		broken := append([]int32(nil), mine...)
		broken[i] = mine[j]
		var pm *PartitionMismatchError
		if err := ComparePartitions(broken, egg.Classes); assert.ErrorAs(t, err, &pm) {
			assert.LessOrEqual(t, pm.Line, max(i, j))
		}
	}
}

func FuzzReadPartition(f *testing.F) {
	f.Add([]byte(tinyPartition))
	f.Add([]byte("0\n1\n1\n"))
	f.Add([]byte("egg-partition v1\nnodes 1\nclasses 1\n0\nend\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		// No input makes memory grow faster than the input itself.
		memcheck.Check(t, memcheck.Bound{Base: 1 << 20, PerByte: 256}, len(data), func() {
			p, err := ReadPartition(bytes.NewReader(data))
			if err != nil {
				var le *LineError
				require.ErrorAs(t, err, &le)
				require.Contains(t, err.Error(), "Fix:")
				return
			}
			require.NotEmpty(t, p.Classes)
			require.Equal(t, countDistinct(p.Classes), p.ClassCount)
			var buf bytes.Buffer
			require.NoError(t, WritePartition(&buf, p.Classes, p.DistinctNodes))
			again, err := ReadPartition(&buf)
			require.NoError(t, err)
			require.Equal(t, p.Classes, again.Classes)
			require.NoError(t, ComparePartitions(p.Classes, again.Classes))
		})
	})
}
