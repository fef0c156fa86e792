// Package input opens the files a command reads with the guarantees every
// gpuplan input needs: a size limit (an input larger than the limit is an
// error, never silently truncated or read until memory runs out), a refusal
// of anything that is not a regular file (a FIFO would block forever, a
// device such as /dev/zero never ends), and "-" for standard input under the
// same limit.
package input

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/gpuplan/gpuplan/internal/quote"
)

// Default size limits. Commands expose them as flags so a user with a larger
// input can raise them.
const (
	// DefaultJSONLimit bounds a JSON document (plans, profiles, gates).
	DefaultJSONLimit int64 = 256 << 20
	// DefaultCSVLimit bounds an evidence CSV file.
	DefaultCSVLimit int64 = 256 << 20
	// DefaultGraphLimit bounds a graph file (edge list or Matrix Market).
	DefaultGraphLimit int64 = 1 << 30
)

// Stdin is the path that names standard input.
const Stdin = "-"

// TooLargeError reports an input larger than its limit.
type TooLargeError struct {
	Path  string
	Limit int64
	// Size is the file's size when known from its metadata, or -1 when the
	// input was a stream that passed the limit while being read.
	Size int64
}

// Error names the input, its size and the limit, and ends with a "Fix:".
func (e *TooLargeError) Error() string {
	size := "more than " + fmt.Sprint(e.Limit)
	if e.Size >= 0 {
		size = fmt.Sprint(e.Size)
	}
	return fmt.Sprintf("%s: input is %s bytes, above the limit of %d bytes. Fix: check that this is the intended file, or raise the limit with the command's size-limit flag",
		echo(e.Path), size, e.Limit)
}

// NotRegularError reports an input that is not a regular file.
type NotRegularError struct {
	Path string
	Mode fs.FileMode
}

// Error names the input and its kind, and ends with a "Fix:".
func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s: is %s, not a regular file. Fix: pass a regular file (or - to read standard input)", echo(e.Path), kind(e.Mode))
}

// OutsideRootError reports a path whose target (after following symbolic
// links) lies outside the folder it was found in.
type OutsideRootError struct {
	Path, Target, Root string
}

// Error names the path, where it leads and the folder it must stay in.
func (e *OutsideRootError) Error() string {
	root := echo(e.Root)
	return fmt.Sprintf("%s: leads to %s, outside %s. Fix: keep the file itself inside %s rather than a link to elsewhere", echo(e.Path), echo(e.Target), root, root)
}

func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "not a regular file"
}

// File is an opened input. Reads past its limit fail with *TooLargeError.
type File struct {
	r      io.Reader
	closer io.Closer
	// Name is the path as given ("-" for standard input).
	Name string
	// Size is the file's size from its metadata, or -1 for standard input.
	Size int64
}

// Read reads from the input; past the limit it returns *TooLargeError.
func (f *File) Read(p []byte) (int, error) { return f.r.Read(p) }

// Close closes the file (standard input is left open).
func (f *File) Close() error {
	if f.closer == nil {
		return nil
	}
	return f.closer.Close()
}

// Open opens path for reading under limit bytes (limit must be positive).
// "-" reads stdin. A path that is not a regular file after following
// symbolic links is refused before it is opened, so a FIFO cannot block.
func Open(path string, stdin io.Reader, limit int64) (*File, error) {
	if limit <= 0 {
		return nil, fmt.Errorf("%s: size limit %d is not positive. Fix: pass a positive limit in bytes", echo(path), limit)
	}
	if path == Stdin {
		if stdin == nil {
			stdin = os.Stdin
		}
		return &File{r: &limitReader{r: stdin, left: limit, path: path, limit: limit}, Name: path, Size: -1}, nil
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, openError(path, err)
	}
	if !st.Mode().IsRegular() {
		return nil, &NotRegularError{Path: path, Mode: st.Mode()}
	}
	if st.Size() > limit {
		return nil, &TooLargeError{Path: path, Limit: limit, Size: st.Size()}
	}
	fh, err := os.Open(path)
	if err != nil {
		return nil, openError(path, err)
	}
	// The file may have been swapped or may grow after the Stat: the reader
	// enforces the limit as well.
	return &File{r: &limitReader{r: fh, left: limit, path: path, limit: limit}, closer: fh, Name: path, Size: st.Size()}, nil
}

// ReadFile reads the whole of path (or stdin for "-") under limit bytes.
func ReadFile(path string, stdin io.Reader, limit int64) ([]byte, error) {
	f, err := Open(path, stdin, limit)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, 0, max(0, min(f.Size, limit))+1)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// WithinRoot resolves path's symbolic links and returns an
// *OutsideRootError when its target is not inside root (also resolved).
func WithinRoot(root, path string) error {
	r, err := filepath.EvalSymlinks(root)
	if err != nil {
		return openError(root, err)
	}
	t, err := filepath.EvalSymlinks(path)
	if err != nil {
		return openError(path, err)
	}
	r, _ = filepath.Abs(r)
	t, _ = filepath.Abs(t)
	rel, err := filepath.Rel(r, t)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return &OutsideRootError{Path: path, Target: t, Root: root}
	}
	return nil
}

func openError(path string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s: no such file. Fix: check the path", echo(path))
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%s: permission denied. Fix: make the file readable", echo(path))
	}
	// The system's error repeats the path raw; the message names it once, quoted.
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %s: %w. Fix: check the path", echo(path), pe.Op, pe.Err)
	}
	return fmt.Errorf("%s: %w. Fix: check the path", echo(path), err)
}

// echo returns path as a refusal repeats it, at the head of the message
// as the operating system's own errors put it: unchanged when it is plain
// text (quote.Plain) of at most quote.MaxEcho bytes, else as quote.Echo
// gives it, quoted and cut.
func echo(path string) string {
	if quote.Plain(path) && len(path) <= quote.MaxEcho {
		return path
	}
	return quote.Echo(path)
}

// limitReader returns *TooLargeError once more than limit bytes were read.
type limitReader struct {
	r           io.Reader
	left, limit int64
	path        string
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.left < 0 {
		return 0, &TooLargeError{Path: l.path, Limit: l.limit, Size: -1}
	}
	// Read one byte past the limit, to tell "exactly the limit" from "more".
	if int64(len(p)) > l.left+1 {
		p = p[:l.left+1]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	if l.left < 0 {
		return n - int(-l.left), &TooLargeError{Path: l.path, Limit: l.limit, Size: -1}
	}
	return n, err
}
