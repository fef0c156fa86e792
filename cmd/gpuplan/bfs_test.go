package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/workloads/bfsquery"
)

func TestBFSCommand(t *testing.T) {
	out, errs, code := runCLI(t, "", "bfs", "--graph", "grid:4", "--root-ids", "0,5", "--targets", "15,3", "--parents", "--cpu")
	require.Equal(t, exitOK, code, errs)
	require.Equal(t, "root,vertex,level,parent\n0,15,6,11\n0,3,3,2\n5,15,4,11\n5,3,3,2\n", out)
	require.Contains(t, errs, "2 roots answered on the parallel CPU reference")

	dir := t.TempDir()
	bin := filepath.Join(dir, "k.bin")
	_, errs, code = runCLI(t, "", "bfs", "--graph", "kron:10", "--roots", "3", "--parents", "-o", bin)
	require.Equal(t, exitOK, code, errs)
	f, err := os.Open(bin)
	require.NoError(t, err)
	defer f.Close()
	st, err := f.Stat()
	require.NoError(t, err)
	set, err := bfsquery.ReadBinary(f, st.Size())
	require.NoError(t, err)
	require.Len(t, set.Answers, 3)
	g, err := frontier.Kronecker(10, frontier.DefaultEdgeFactor, 1)
	require.NoError(t, err)
	for _, a := range set.Answers {
		want, err := frontier.BFS(g, a.Root)
		require.NoError(t, err)
		require.Equal(t, want, a.Levels)
	}

	edges := filepath.Join(dir, "d.txt")
	require.NoError(t, os.WriteFile(edges, []byte("0 1\n1 2\n2 0\n3 0\n"), 0o644))
	out, errs, code = runCLI(t, "", "bfs", "--graph", "directed:"+edges, "--root-ids", "0", "--parents")
	require.Equal(t, exitOK, code, errs)
	require.Equal(t, "root,vertex,level,parent\n0,0,0,-1\n0,1,1,0\n0,2,2,1\n0,3,-1,-1\n", out, "3 -> 0 is not followed backwards")
}

// --validate checks every answer by the Graph500 rules, on the GPU
// emulation and the CPU, undirected and directed, with and without parents.
func TestBFSCommandValidates(t *testing.T) {
	dir := t.TempDir()
	edges := filepath.Join(dir, "d.txt")
	require.NoError(t, os.WriteFile(edges, []byte("0 1\n1 2\n2 0\n3 0\n"), 0o644))
	for _, args := range [][]string{
		{"--graph", "kron:10", "--roots", "70", "--parents"},
		{"--graph", "grid:30", "--roots", "3", "--cpu"},
		{"--graph", "directed:" + edges, "--root-ids", "0,3", "--parents"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			_, errs, code := runCLI(t, "", append([]string{"bfs", "--validate", "-o", filepath.Join(t.TempDir(), "a.bin")}, args...)...)
			require.Equal(t, exitOK, code, errs)
			require.Contains(t, errs, "answers valid by the Graph500 rules")
		})
	}
}

func TestBFSCommandRefuses(t *testing.T) {
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"bfs"}, exitUsage, "--graph is required"},
		{[]string{"bfs", "--graph", "grid:4", "--roots", "2", "--root-ids", "1"}, exitUsage, "exclude each other"},
		{[]string{"bfs", "--graph", "grid:4", "--root-ids", "1,x"}, exitUsage, `"x" is not a vertex id`},
		{[]string{"bfs", "--graph", "grid:4", "--root-ids", "99"}, exitFailure, "root"},
		{[]string{"bfs", "--graph", "grid:4", "--root-ids", "0", "--targets", "16"}, exitFailure, "targets[0]"},
		{[]string{"bfs", "--graph", "grid:4", "--max-depth", "-3"}, exitUsage, "--max-depth -3"},
		{[]string{"bfs", "--graph", "grid:4", "--validate", "--targets", "3"}, exitUsage, "--validate checks answers over every vertex"},
		{[]string{"bfs", "--graph", "grid:4", "--validate", "--max-depth", "2"}, exitUsage, "drop --targets and --max-depth"},
		{[]string{"bfs", "--graph", "spiral:4"}, exitFailure, "spiral"},
		{[]string{"bfs", "--graph", "directed:"}, exitFailure, "names no file"},
		{[]string{"bfs", "--graph", "grid:4", "--format", "binary"}, exitUsage, "needs -o FILE"},
		{[]string{"bfs", "--graph", "kron:14", "--roots", "100"}, exitUsage, "too many for standard output"},
	}
	for _, c := range cases {
		_, errs, code := runCLI(t, "", c.args...)
		require.Equal(t, c.code, code, "%v: %s", c.args, errs)
		require.Contains(t, errs, c.want, c.args)
		require.True(t, strings.Contains(errs, "Fix:") || c.code == exitUsage, errs)
	}
}
