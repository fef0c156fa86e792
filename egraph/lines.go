package egraph

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
)

// LineError reports a problem with a line-based input (a dump or a
// partition file). Line is the 1-based line number, or 0 when the problem
// concerns the input as a whole.
type LineError struct {
	Line int
	Msg  string
	Fix  string
}

// Error names the line, says what is wrong and ends with a Fix.
func (e *LineError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("%s. Fix: %s", e.Msg, e.Fix)
	}
	return fmt.Sprintf("line %d: %s. Fix: %s", e.Line, e.Msg, e.Fix)
}

// maxLineBytes bounds one data line; a longer one is an error (comment
// lines may be longer: their rest is skipped).
const maxLineBytes = 1 << 16

// lineReader yields the data lines of a text input: blank lines and lines
// starting with '#' are skipped, surrounding white space is trimmed. It
// reuses one buffer, so reading allocates nothing per line.
type lineReader struct {
	br   *bufio.Reader
	line int
	// comment, when set, sees every comment line (trimmed) before it is
	// skipped.
	comment func(line []byte)
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, maxLineBytes)}
}

// next returns the next data line, valid until the following call, or
// io.EOF at the end of the input.
func (lr *lineReader) next() ([]byte, error) {
	for {
		raw, err := lr.br.ReadSlice('\n')
		if len(raw) == 0 && err == io.EOF {
			return nil, io.EOF
		}
		lr.line++
		long := errors.Is(err, bufio.ErrBufferFull)
		if err != nil && err != io.EOF && !long {
			return nil, err
		}
		s := bytes.TrimSpace(raw)
		if len(s) > 0 && s[0] == '#' {
			if lr.comment != nil {
				lr.comment(s)
			}
			if long {
				if err := lr.skipRest(); err != nil {
					return nil, err
				}
			}
			continue
		}
		if long {
			return nil, &LineError{Line: lr.line, Msg: fmt.Sprintf("the line is longer than %d bytes", maxLineBytes), Fix: "check that the input is an uncorrupted text file"}
		}
		if len(s) > 0 {
			return s, nil
		}
	}
}

// skipRest discards the remainder of an over-long comment line.
func (lr *lineReader) skipRest() error {
	for {
		_, err := lr.br.ReadSlice('\n')
		if !errors.Is(err, bufio.ErrBufferFull) {
			if err == io.EOF {
				return nil
			}
			return err
		}
	}
}

// fields is a cursor over the white-space separated fields of one line.
type fields struct {
	s []byte
	i int
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\r' || b == '\v' || b == '\f' }

// token returns the next field, or nil at the end of the line.
func (f *fields) token() []byte {
	for f.i < len(f.s) && isSpace(f.s[f.i]) {
		f.i++
	}
	start := f.i
	for f.i < len(f.s) && !isSpace(f.s[f.i]) {
		f.i++
	}
	if start == f.i {
		return nil
	}
	return f.s[start:f.i]
}

// done reports whether no field remains.
func (f *fields) done() bool {
	for f.i < len(f.s) && isSpace(f.s[f.i]) {
		f.i++
	}
	return f.i == len(f.s)
}

// errNotNumber and errTooLarge classify a field that parseID rejects.
var (
	errNotNumber = errors.New("not a non-negative decimal integer")
	errTooLarge  = errors.New("larger than 2147483647")
)

// parseID parses a non-negative decimal int32 (no sign, digits only).
func parseID(b []byte) (int32, error) {
	if len(b) == 0 {
		return 0, errNotNumber
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, errNotNumber
		}
		v = v*10 + int64(c-'0')
		if v > math.MaxInt32 {
			return 0, errTooLarge
		}
	}
	return int32(v), nil
}

// quote shows a field in an error message, shortened if long.
func quote(b []byte) string {
	const most = 40
	if len(b) > most {
		return fmt.Sprintf("%q...", b[:most])
	}
	return fmt.Sprintf("%q", b)
}
