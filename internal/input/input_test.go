package input

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/gpuplan/gpuplan/internal/quote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small.json")
	require.NoError(t, os.WriteFile(small, []byte(`{"a":1}`), 0o644))
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	link := filepath.Join(dir, "zero")
	require.NoError(t, os.Symlink("/dev/zero", link))

	tests := []struct {
		name  string
		path  string
		stdin string
		limit int64
		want  string
		err   any
		msg   string
	}{
		{name: "regular", path: small, limit: 100, want: `{"a":1}`},
		{name: "exactly the limit", path: small, limit: 7, want: `{"a":1}`},
		{name: "over the limit", path: small, limit: 6, err: new(*TooLargeError), msg: "input is 7 bytes, above the limit of 6 bytes"},
		{name: "stdin", path: "-", stdin: "hello", limit: 5, want: "hello"},
		{name: "stdin over", path: "-", stdin: "hello!", limit: 5, err: new(*TooLargeError), msg: "more than 5 bytes"},
		{name: "fifo", path: fifo, limit: 100, err: new(*NotRegularError), msg: "a named pipe (FIFO), not a regular file"},
		{name: "device through a link", path: link, limit: 100, err: new(*NotRegularError), msg: "a character device"},
		{name: "directory", path: dir, limit: 100, err: new(*NotRegularError), msg: "a directory"},
		{name: "missing", path: filepath.Join(dir, "nope"), limit: 100, msg: "no such file. Fix: check the path"},
		{name: "zero limit", path: small, limit: 0, msg: "size limit 0 is not positive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadFile(tt.path, strings.NewReader(tt.stdin), tt.limit)
			if tt.msg == "" {
				require.NoError(t, err)
				assert.Equal(t, tt.want, string(got))
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.msg)
			assert.Contains(t, err.Error(), "Fix:")
			switch target := tt.err.(type) {
			case **TooLargeError:
				assert.True(t, errors.As(err, target))
			case **NotRegularError:
				assert.True(t, errors.As(err, target))
			}
		})
	}
}

// TestHostilePathsEchoed checks that a path with control characters, or
// longer than a message repeats, is quoted and cut in every refusal,
// the system's own error text included (it repeats the path raw).
func TestHostilePathsEchoed(t *testing.T) {
	dir := t.TempDir()
	long := filepath.Join(dir, "\x1b[2J"+strings.Repeat("a", 300))
	nested := filepath.Join(dir, "\x1b[2J"+strings.Repeat("b", 100), "x")
	for _, tt := range []struct {
		name  string
		path  string
		limit int64
	}{
		{"name too long", long, 100},
		{"missing", nested, 100},
		{"zero limit", long, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadFile(tt.path, nil, tt.limit)
			require.Error(t, err)
			msg := err.Error()
			assert.NotContains(t, msg, "\x1b", "the escape is quoted")
			assert.Less(t, len(msg), 2*quote.MaxEcho+100, "the path is cut")
			assert.Contains(t, msg, "Fix:")
		})
	}
}

// TestStreamLimit checks that a stream is cut at its limit however it is
// read: a reader that never ends stops with an error, not an allocation.
func TestStreamLimit(t *testing.T) {
	for _, limit := range []int64{1, 10, 4096, 1 << 20} {
		f, err := Open("-", endless{}, limit)
		require.NoError(t, err)
		var buf bytes.Buffer
		_, err = buf.ReadFrom(f)
		var tl *TooLargeError
		require.ErrorAs(t, err, &tl)
		assert.EqualValues(t, limit, buf.Len())
	}
}

type endless struct{}

func (endless) Read(p []byte) (int, error) { return len(p), nil }

func TestWithinRoot(t *testing.T) {
	root := t.TempDir()
	inside := filepath.Join(root, "a.csv")
	require.NoError(t, os.WriteFile(inside, []byte("x"), 0o644))
	require.NoError(t, os.Symlink(inside, filepath.Join(root, "link.csv")))
	out := filepath.Join(t.TempDir(), "b.csv")
	require.NoError(t, os.WriteFile(out, []byte("x"), 0o644))
	require.NoError(t, os.Symlink(out, filepath.Join(root, "escape.csv")))

	require.NoError(t, WithinRoot(root, inside))
	require.NoError(t, WithinRoot(root, filepath.Join(root, "link.csv")))
	err := WithinRoot(root, filepath.Join(root, "escape.csv"))
	var oe *OutsideRootError
	require.ErrorAs(t, err, &oe)
	assert.Contains(t, err.Error(), "outside "+root)
}
