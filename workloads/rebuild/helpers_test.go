package rebuild

import (
	"compress/gzip"
	"os"
	"testing"

	"github.com/gpuplan/gpuplan/egraph"
	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/internal/gputest"
	"github.com/stretchr/testify/require"
)

// newFakeExecutor opens an executor over the emulated rebuild kernels on an
// H100 profile with mem bytes of device memory.
func newFakeExecutor(t testing.TB, mem int64, seed uint64) (*executor.Executor, *executor.Fake) {
	t.Helper()
	return gputest.OpenFake(t, "h100", mem, seed, NewFake)
}

// generate builds gen:N:SEED:SHAPE.
func generate(t testing.TB, spec string) *egraph.Graph {
	t.Helper()
	cfg, err := egraph.ParseGenSpec(spec)
	require.NoError(t, err)
	g, err := egraph.Generate(cfg)
	require.NoError(t, err)
	return g
}

// eggDump reads egg's 1e4 dump and its partition from egraph's testdata.
func eggDump(t testing.TB) (*egraph.Graph, *egraph.Partition) {
	t.Helper()
	g, err := egraph.ReadDump(openSample(t, "math-1e4.pre.txt"))
	require.NoError(t, err)
	p, err := egraph.ReadPartition(openSample(t, "math-1e4.post.txt"))
	require.NoError(t, err)
	return g, p
}

// openSample opens egraph/testdata's gzipped name+".gz", unpacked as it is
// read, and closes it when t ends.
func openSample(t testing.TB, name string) *gzip.Reader {
	t.Helper()
	f, err := os.Open(testdataPath(t, name+".gz"))
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	z, err := gzip.NewReader(f)
	require.NoError(t, err)
	return z
}

// testdataPath finds a file of egraph/testdata from the package folder
// (go test) or from the repository root (a test binary run by
// scripts/gpu-check.sh).
func testdataPath(t testing.TB, name string) string {
	for _, dir := range []string{"../../egraph/testdata/", "egraph/testdata/"} {
		if _, err := os.Stat(dir + name); err == nil {
			return dir + name
		}
	}
	t.Fatalf("egraph/testdata/%s not found from the package folder or the repository root", name)
	return ""
}

// references returns the CPU reference and the data-parallel rounds (nil
// above MaxRoundsReference e-nodes, where they take minutes).
func references(t testing.TB, g *egraph.Graph) (worklist, rounds *egraph.RebuildResult) {
	t.Helper()
	w, err := egraph.Rebuild(g)
	require.NoError(t, err)
	if g.NodeCount() > MaxRoundsReference {
		return w, nil
	}
	r, err := egraph.RebuildRounds(g)
	require.NoError(t, err)
	return w, r
}
