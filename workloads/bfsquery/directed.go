package bfsquery

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/internal/graphbudget"
	"github.com/gpuplan/gpuplan/internal/input"
	"github.com/gpuplan/gpuplan/internal/quote"
)

// DirectedPrefix marks a graph spec whose file's edges have a direction:
// "directed:PATH" (an edge list of SRC DST lines).
const DirectedPrefix = "directed:"

// ReadDirected reads a directed edge list: one edge "SRC DST" per line
// (non-negative vertex ids separated by spaces or tabs; lines starting with
// '#' or '%' and blank lines are skipped), and builds its out-edges, each
// list sorted, duplicates and self loops dropped. The vertices are 0 to
// the largest id. Everything is bounded by lim before it is allocated: the
// edges, the vertices (also per input byte) and the load's memory
// (frontier.LoadBytes). A comment line may be of any length, as in the
// edge lists frontier.ParseEdgeList reads, and so may the spaces between
// fields; a line whose fields take more than MaxLineBytes is refused at
// its line. Errors name the line (*frontier.ParseError,
// *frontier.TooLargeError, *frontier.LoadBudgetError).
func ReadDirected(r io.Reader, source string, size int64, lim frontier.Limits) (*frontier.CSR, error) {
	lim = lim.WithDefaults()
	lr := &lineReader{r: bufio.NewReaderSize(r, 64<<10)}
	var src, dst []int32
	maxID := int64(-1)
	for {
		raw, err := lr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, lr.error(source, err)
		}
		text := strings.TrimSpace(string(raw))
		if text == "" || isComment(text[0]) {
			continue
		}
		// Each directed edge is one adjacency entry.
		if limit := min(uint64(lim.MaxEdges), frontier.MaxGraphEdgeEntries); uint64(len(src)) >= limit {
			return nil, &frontier.TooLargeError{Source: source, Field: "edges", Value: uint64(len(src)) + 1, Limit: limit}
		}
		u, v, err := parseEdge(text, lim.MaxVertices)
		if err != nil {
			return nil, &frontier.ParseError{Source: source, Line: lr.line, Msg: err.Error(), Fix: fmt.Sprintf("write each edge as two vertex ids from 0 to %d, SRC DST, one per line", lim.MaxVertices-1)}
		}
		maxID = max(maxID, int64(u), int64(v))
		src, dst = append(src, u), append(dst, v)
	}
	line := lr.line
	if maxID < 0 {
		return nil, &frontier.ParseError{Source: source, Msg: "the file has no edge", Fix: "give at least one SRC DST line"}
	}
	n := maxID + 1
	if per := int64(lim.VerticesPerByte) * max(size, int64(line)); size >= 0 && n > per {
		return nil, &frontier.TooLargeError{Source: source, Field: "vertices per input byte", Value: uint64(n), Limit: uint64(per)}
	}
	need, err := frontier.LoadBytes(uint64(max(size, 0)), uint64(n), uint64(len(src)))
	if err != nil {
		return nil, err
	}
	if need > lim.MaxLoadBytes {
		return nil, &frontier.LoadBudgetError{Source: source, Line: line, Vertices: n, Edges: int64(len(src)), Bytes: need, Budget: lim.MaxLoadBytes}
	}
	return buildDirected(source, int(n), src, dst), nil
}

// MaxLineBytes bounds the fields of one line of a directed edge list, the
// line less the repeats of the spaces between its fields: a longer line is
// refused at its line unless it is a comment.
const MaxLineBytes = 1 << 20

// isComment reports whether a line whose first character (after spaces) is
// c is a comment.
func isComment(c byte) bool { return c == '#' || c == '%' }

// lineReader reads a directed edge list's lines and counts them, holding at
// most MaxLineBytes of a line: a longer comment line is skipped to its end,
// a longer line of fields is an error (*longLineError).
type lineReader struct {
	r    *bufio.Reader
	buf  []byte
	line int
}

// longLineError is a line whose fields are longer than MaxLineBytes; head
// is its start.
type longLineError struct{ head []byte }

func (e *longLineError) Error() string {
	return fmt.Sprintf("the line's fields are longer than %d bytes (1 MiB): %s", MaxLineBytes, quote.Echo(string(e.head)))
}

// next returns the next line, without its newline; io.EOF after the last.
func (l *lineReader) next() ([]byte, error) {
	l.buf = l.buf[:0]
	read, skip := false, false
	for {
		chunk, err := l.r.ReadSlice('\n')
		read = read || len(chunk) > 0
		if !skip {
			if skip, err = l.add(chunk, err); skip {
				l.buf = append(l.buf[:0], '#')
			}
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF && !read:
			return nil, io.EOF
		case err != nil && err != io.EOF:
			l.line++
			return nil, err
		}
		l.line++
		return bytes.TrimSuffix(l.buf, []byte{'\n'}), nil
	}
}

// add appends chunk, a piece of the current line, to the line held,
// squeezing the runs of spaces of both once they would pass MaxLineBytes.
// It reports whether the line is a comment too long to hold (the rest is
// to be skipped), and returns err, or a *longLineError for a longer line
// of fields.
func (l *lineReader) add(chunk []byte, err error) (bool, error) {
	if len(l.buf)+len(chunk) <= MaxLineBytes {
		l.buf = append(l.buf, chunk...)
		return false, err
	}
	l.buf = appendSqueezed(l.buf[:0], l.buf)
	l.buf = appendSqueezed(l.buf, chunk)
	if len(l.buf) <= MaxLineBytes {
		return false, err
	}
	t := bytes.TrimLeft(l.buf, " ")
	if isComment(t[0]) {
		return true, err
	}
	return false, &longLineError{head: t[:min(len(t), quote.MaxEcho)]}
}

// appendSqueezed appends src to dst with every run of ASCII spaces, tabs,
// carriage returns, newlines, vertical tabs and form feeds made one space
// (joined with a space dst ends with): the line's fields are unchanged.
// dst may be src[:0].
func appendSqueezed(dst, src []byte) []byte {
	for _, c := range src {
		if c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f' {
			if len(dst) > 0 && dst[len(dst)-1] == ' ' {
				continue
			}
			c = ' '
		}
		dst = append(dst, c)
	}
	return dst
}

// error is the *frontier.ParseError of err, met reading line l.line.
func (l *lineReader) error(source string, err error) error {
	var le *longLineError
	if errors.As(err, &le) {
		return &frontier.ParseError{Source: source, Line: l.line, Msg: le.Error(),
			Fix: "write one edge per line, SRC DST; only a comment line (starting with # or %) may be longer"}
	}
	return &frontier.ParseError{Source: source, Line: l.line, Msg: err.Error(), Fix: "check that the file is readable"}
}

// parseEdge reads "SRC DST".
func parseEdge(text string, maxVertices int) (int32, int32, error) {
	f := strings.Fields(text)
	if len(f) != 2 {
		return 0, 0, fmt.Errorf("%d fields, want SRC DST", len(f))
	}
	var ids [2]int32
	for i, s := range f {
		v, err := strconv.ParseUint(s, 10, 31)
		if err != nil || v >= uint64(min(maxVertices, math.MaxInt32)) {
			return 0, 0, fmt.Errorf("%q is not a vertex id below %d", clipField(s), maxVertices)
		}
		ids[i] = int32(v)
	}
	return ids[0], ids[1], nil
}

func clipField(s string) string {
	if len(s) > 24 {
		return s[:21] + "..."
	}
	return s
}

// buildDirected builds the out-edge CSR of n vertices.
func buildDirected(name string, n int, src, dst []int32) *frontier.CSR {
	off := make([]uint64, n+1)
	for _, u := range src {
		off[u+1]++
	}
	for v := 1; v <= n; v++ {
		off[v] += off[v-1]
	}
	tgt := make([]int32, len(src))
	cur := append([]uint64(nil), off[:n]...)
	for i, u := range src {
		tgt[cur[u]] = dst[i]
		cur[u]++
	}
	// Sort each list and drop duplicates and self loops, compacting.
	w := uint64(0)
	start := uint64(0)
	for u := range n {
		list := tgt[start:off[u+1]]
		slices.Sort(list)
		start = off[u+1]
		off[u] = w
		prev := int32(-1)
		for _, t := range list {
			if t == prev || t == int32(u) {
				continue
			}
			tgt[w] = t
			w++
			prev = t
		}
	}
	off[n] = w
	return &frontier.CSR{Name: name, Offsets: off, Targets: slices.Clip(tgt[:w])}
}

// LoadSpec loads a graph spec: frontier's specs (grid:N, grid3d:N, kron:SCALE,
// road:N, rgg:N[:DEGREE], file:PATH) give undirected graphs, and
// "directed:PATH" a directed edge list. It reports whether the graph is
// directed. A generated graph that would not fit the host memory
// available is refused before anything is allocated (graphbudget.Check).
func LoadSpec(spec string, seed uint64, lim frontier.Limits) (*frontier.CSR, bool, error) {
	path, ok := strings.CutPrefix(spec, DirectedPrefix)
	if !ok {
		s, err := frontier.ParseSpec(spec)
		if err != nil {
			return nil, false, err
		}
		if err := graphbudget.Check(s, spec, graphbudget.Available(), 0); err != nil {
			return nil, false, err
		}
		g, err := s.Build(seed, lim)
		if err != nil {
			return nil, false, err
		}
		g.Name = s.Name()
		return g, false, nil
	}
	if path == "" {
		return nil, true, fmt.Errorf("graph spec %q names no file. Fix: write directed:PATH, PATH an edge list of SRC DST lines", spec)
	}
	lim = lim.WithDefaults()
	f, err := input.Open(path, nil, lim.MaxFileBytes)
	if err != nil {
		return nil, true, err
	}
	defer f.Close()
	g, err := ReadDirected(f, path, f.Size, lim)
	if err != nil {
		return nil, true, err
	}
	g.Name = DirectedName(path)
	return g, true, nil
}

// DirectedName is the name of the graph of directed:PATH: "directed-" and
// the name file:PATH gives its graph (frontier.Spec.Name: the base name
// without its extension, every character other than a letter, digit, '.',
// '_' or '-' made '-'), so that a file name holding an escape sequence or a
// newline names a graph that prints as it is.
func DirectedName(path string) string {
	return "directed-" + frontier.Spec{Kind: "file", Path: path}.Name()
}
