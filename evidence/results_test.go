package evidence

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"testing/fstest"

	"github.com/gpuplan/gpuplan/internal/input"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hostileResults builds a results directory holding one good file and
// the entry make adds, and returns the directory.
func hostileResults(t *testing.T, make func(dir string) error) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "results")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	good, err := os.ReadFile("testdata/results/grid-demo.csv")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.csv"), good, 0o644))
	require.NoError(t, make(dir))
	return dir
}

func TestLoadResultsRefusesHostileEntries(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "outside.csv")
	good, err := os.ReadFile("testdata/results/grid-demo.csv")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(outside, good, 0o644))
	tests := []struct {
		name     string
		make     func(dir string) error
		contains string
	}{
		{"symlink to /dev/zero", func(dir string) error { return os.Symlink("/dev/zero", filepath.Join(dir, "z.csv")) }, "outside"},
		{"symlink out of the folder", func(dir string) error { return os.Symlink(outside, filepath.Join(dir, "o.csv")) }, "outside"},
		{"fifo", func(dir string) error { return syscall.Mkfifo(filepath.Join(dir, "f.csv"), 0o644) }, "named pipe"},
		{"directory named .csv", func(dir string) error { return os.Mkdir(filepath.Join(dir, "d.csv"), 0o755) }, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := hostileResults(t, tc.make)
			files, err := LoadResults(dir)
			if tc.contains == "" {
				require.NoError(t, err)
				assert.Len(t, files, 1)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.contains)
			assert.Contains(t, err.Error(), "Fix:")
		})
	}
}

func TestLoadResultsLinkInsideTheFolderIsRead(t *testing.T) {
	dir := hostileResults(t, func(dir string) error { return os.Symlink("a.csv", filepath.Join(dir, "b.csv")) })
	files, err := LoadResults(dir)
	require.NoError(t, err)
	require.Len(t, files, 2)
	assert.Equal(t, files[0].Samples, files[1].Samples)
}

func TestLoadResultsLimit(t *testing.T) {
	dir := hostileResults(t, func(string) error { return nil })
	st, err := os.Stat(filepath.Join(dir, "a.csv"))
	require.NoError(t, err)
	_, err = LoadResultsLimit(dir, st.Size()-1)
	var tl *input.TooLargeError
	require.ErrorAs(t, err, &tl)
	assert.Equal(t, st.Size(), tl.Size)
	files, err := LoadResultsLimit(dir, st.Size())
	require.NoError(t, err)
	assert.Len(t, files, 1)
}

func TestLoadResultsFSRefusesLinks(t *testing.T) {
	fsys := fstest.MapFS{
		"a.csv": {Data: []byte(SampleCSVHeader + "\n")},
		"l.csv": {Data: []byte("a.csv"), Mode: os.ModeSymlink},
	}
	_, err := LoadResultsFS(fsys, "results")
	require.Error(t, err)
	assert.True(t, strings.Contains(err.Error(), "not a regular file"), err.Error())
}
