package evidence

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/gpuplan/gpuplan/internal/input"
)

// ResultFile is one evidence file: its path relative to the results
// directory (slash-separated) and its samples.
type ResultFile struct {
	Path    string
	Samples []Sample
}

// DefaultResultFileLimit bounds the size of one evidence file.
const DefaultResultFileLimit = input.DefaultCSVLimit

// LoadResults is LoadResultsLimit with DefaultResultFileLimit.
func LoadResults(dir string) ([]ResultFile, error) {
	return LoadResultsLimit(dir, DefaultResultFileLimit)
}

// LoadResultsLimit reads every *.csv file under dir (recursively, in path
// order) with ReadSamples. A missing directory holds no results. A
// malformed file is an error naming it, its line and column. Every file
// must be a regular file of at most limit bytes: a FIFO, a device, a file
// above the limit, or a symbolic link whose target lies outside dir (a
// link to /dev/zero, say) is an error naming it; links to directories are
// not followed.
func LoadResultsLimit(dir string, limit int64) ([]ResultFile, error) {
	if _, err := os.Stat(dir); os.IsNotExist(err) {
		return nil, nil
	}
	paths, err := csvPaths(os.DirFS(dir), dir)
	if err != nil {
		return nil, err
	}
	out := make([]ResultFile, 0, len(paths))
	for _, p := range paths {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := input.WithinRoot(dir, full); err != nil {
			return nil, err
		}
		f, err := input.Open(full, nil, limit)
		if err != nil {
			return nil, err
		}
		samples, err := ReadSamples(filepath.ToSlash(full), f)
		f.Close()
		if err != nil {
			return nil, err
		}
		out = append(out, ResultFile{Path: p, Samples: samples})
	}
	return out, nil
}

// LoadResultsFS is LoadResults over a file system; prefix is prepended to
// file names in errors. Entries that are not regular files are refused:
// a file system cannot say where a link leads.
func LoadResultsFS(fsys fs.FS, prefix string) ([]ResultFile, error) {
	paths, err := csvPaths(fsys, prefix)
	if err != nil {
		return nil, err
	}
	out := make([]ResultFile, 0, len(paths))
	for _, p := range paths {
		name := filepath.ToSlash(filepath.Join(prefix, p))
		samples, err := readFSFile(fsys, p, name)
		if err != nil {
			return nil, err
		}
		out = append(out, ResultFile{Path: p, Samples: samples})
	}
	return out, nil
}

func readFSFile(fsys fs.FS, p, name string) ([]Sample, error) {
	st, err := fs.Lstat(fsys, p)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w. Fix: check the file's permissions", name, err)
	}
	if !st.Mode().IsRegular() {
		return nil, &input.NotRegularError{Path: name, Mode: st.Mode()}
	}
	if st.Size() > DefaultResultFileLimit {
		return nil, &input.TooLargeError{Path: name, Limit: DefaultResultFileLimit, Size: st.Size()}
	}
	f, err := fsys.Open(p)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w. Fix: check the file's permissions", name, err)
	}
	defer f.Close()
	return ReadSamples(name, io.LimitReader(f, DefaultResultFileLimit))
}

// csvPaths lists the *.csv files under fsys in path order.
func csvPaths(fsys fs.FS, prefix string) ([]string, error) {
	var paths []string
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".csv") {
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing results in %s: %w. Fix: check the results directory", prefix, err)
	}
	sort.Strings(paths)
	return paths, nil
}
