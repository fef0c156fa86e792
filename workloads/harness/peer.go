package harness

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"strings"
)

// ErrNotExecutable is CheckExecutable's error for a path that is not an
// executable regular file.
var ErrNotExecutable = errors.New("not an executable file")

// CheckExecutable checks that path is a regular file with an execute bit
// set, so that a peer binary is refused before any measurement: it returns
// os.Stat's error, ErrNotExecutable, or nil.
func CheckExecutable(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0 {
		return &fs.PathError{Op: "exec", Path: path, Err: ErrNotExecutable}
	}
	return nil
}

// Command runs the binary bin with args under the operating system, env
// added to the host's environment, its standard output and error into
// stdout and stderr; ctx bounds it (exec.CommandContext).
func Command(ctx context.Context, bin string, args, env []string, stdout, stderr io.Writer) error {
	cmd := exec.CommandContext(ctx, bin, args...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	return cmd.Run()
}

// Exec is Command with both of the binary's outputs into out: the shape of
// a peer configuration's replaceable runner.
func Exec(ctx context.Context, bin string, args, env []string, out io.Writer) error {
	return Command(ctx, bin, args, env, out, out)
}

// LimitedBuffer keeps at most Limit bytes of what is written to it, and
// reports whether it had to drop any (Over). A write always reports every
// byte written, so that a process writing into it is never stopped by a
// short write: the caller decides what an overlong output means. It has no
// ReadFrom, so that io.Copy (which runs a process's output into it) goes
// through Write and the limit holds.
type LimitedBuffer struct {
	// Limit is the most bytes kept.
	Limit int64
	buf   bytes.Buffer
	over  bool
}

// Write keeps what fits under Limit and reports all of p written.
func (b *LimitedBuffer) Write(p []byte) (int, error) {
	room := max(b.Limit-int64(b.buf.Len()), 0)
	if int64(len(p)) > room {
		b.over = true
	}
	b.buf.Write(p[:min(int64(len(p)), room)])
	return len(p), nil
}

// Over reports whether a write went past Limit.
func (b *LimitedBuffer) Over() bool { return b.over }

// Bytes returns the bytes kept (not a copy).
func (b *LimitedBuffer) Bytes() []byte { return b.buf.Bytes() }

// String returns the bytes kept as a string.
func (b *LimitedBuffer) String() string { return b.buf.String() }

// Len returns how many bytes are kept.
func (b *LimitedBuffer) Len() int { return b.buf.Len() }

// TempDir makes a fresh temporary folder named from prefix (os.MkdirTemp)
// for a peer's input and output files, and returns it with the cleanup
// that removes it.
func TempDir(prefix string) (string, func(), error) {
	d, err := os.MkdirTemp("", prefix)
	if err != nil {
		return "", nil, err
	}
	return d, func() { _ = os.RemoveAll(d) }, nil
}

// Tail returns the last n bytes of s (all of s when it is shorter).
func Tail(s string, n int) string {
	return s[max(0, len(s)-n):]
}

// LastLines returns the last n non-empty lines of s, each trimmed, joined
// by " | ".
func LastLines(s string, n int) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return strings.Join(out[max(0, len(out)-n):], " | ")
}
