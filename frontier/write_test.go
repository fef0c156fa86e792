package frontier

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWriteMatrixMarketRoundTrip writes every generator's graph and reads
// it back.
func TestWriteMatrixMarketRoundTrip(t *testing.T) {
	graphs := generatorGraphs(t)
	big, err := Grid(600) // more than one formatting piece
	require.NoError(t, err)
	for _, g := range append(graphs, big) {
		var buf bytes.Buffer
		require.NoError(t, g.WriteMatrixMarket(&buf))
		back, err := ParseMatrixMarket(buf.Bytes(), g.Name+".mtx", DefaultLimits())
		if errors.As(err, new(*SparseInputError)) {
			lim := DefaultLimits()
			lim.VerticesPerByte = 1 << 20 // graphs with many isolated vertices
			back, err = ParseMatrixMarket(buf.Bytes(), g.Name+".mtx", lim)
		}
		require.NoError(t, err, g.Name)
		assert.Equal(t, g.Offsets, back.Offsets, g.Name)
		assert.Equal(t, g.Targets, back.Targets, g.Name)
	}
}

func TestWriteMatrixMarketFormat(t *testing.T) {
	g, err := Grid(2) // 0-1, 0-2, 1-3, 2-3
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, g.WriteMatrixMarket(&buf))
	assert.Equal(t, "%%MatrixMarket matrix coordinate pattern symmetric\n4 4 4\n2 1\n3 1\n4 2\n4 3\n", buf.String())
	f, err := os.CreateTemp(t.TempDir(), "*.mtx")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	ro, err := os.Open(f.Name())
	require.NoError(t, err)
	defer ro.Close()
	err = g.WriteMatrixMarket(ro)
	require.ErrorContains(t, err, "Fix:", "a read-only file cannot be written")
}

func ExampleCSR_WriteMatrixMarket() {
	g, _ := Grid(2)
	_ = g.WriteMatrixMarket(os.Stdout)
	fmt.Println("end")
	// Output:
	// %%MatrixMarket matrix coordinate pattern symmetric
	// 4 4 4
	// 2 1
	// 3 1
	// 4 2
	// 4 3
	// end
}
