package frontier

import (
	"bytes"
	"fmt"
	"github.com/gpuplan/gpuplan/internal/quote"
	"runtime"
	"strconv"
	"strings"
)

// parseChunkBytes is the smallest piece of a graph file worth parsing on
// its own goroutine.
const parseChunkBytes = 256 << 10

// ParseEdgeList parses an edge list: one edge "u v" per line with 0-based
// non-negative integer ids, separated by spaces, tabs or a comma; a third
// field (a weight) is ignored. Blank lines and lines starting with '#' or
// '%' are comments. The vertex count is the largest id + 1, which lim bounds
// by the input's size and memory budget before anything is allocated for
// the vertices. source names the input in errors. The file is parsed in
// pieces on every CPU; errors name the same line a line-by-line reading
// would (the first bad one).
func ParseEdgeList(data []byte, source string, lim Limits) (*CSR, error) {
	return parseEdgeList(data, source, lim.WithDefaults(), parseParts(len(data)))
}

// ParseMatrixMarket parses a Matrix Market coordinate file as an
// undirected graph: the header "%%MatrixMarket matrix coordinate <field>
// <symmetry>" with field pattern, real, integer or double and symmetry
// general or symmetric; then comment lines starting with '%'; the size line
// "rows cols entries" with rows == cols; then exactly that many entries
// "i j [value]" with 1-based ids. Values are checked and ignored, and the
// graph is symmetrized. The declared size is checked against the input's
// size and lim's memory budget before anything is allocated for it. source
// names the input in errors. The entries are parsed in pieces on every
// CPU; errors name the same line a line-by-line reading would.
func ParseMatrixMarket(data []byte, source string, lim Limits) (*CSR, error) {
	return parseMatrixMarket(data, source, lim.WithDefaults(), parseParts(len(data)))
}

// parseParts returns how many pieces a parse of size bytes is cut into:
// pieces of at least parseChunkBytes, up to 16 per CPU for load balance.
func parseParts(size int) int {
	return max(1, min(size/parseChunkBytes, 16*runtime.GOMAXPROCS(0)))
}

// chunkResult is what parsing one piece of a file found.
type chunkResult struct {
	src, dst []int32
	// lines counts the piece's lines (up to its error, if it has one).
	lines int
	// err is the piece's first error, with a Line relative to the piece.
	err error
	// errEntry: the line of err had an entry's field count (Matrix
	// Market), so it counts against the declared entries.
	errEntry bool
	// maxID is the piece's largest id (edge lists) and maxLine the first
	// line it appears on, relative to the piece.
	maxID   int64
	maxLine int
}

// lineIter yields the lines of data and counts them: a line ends at '\n'
// or at the end of data, and a final '\n' does not start another line.
type lineIter struct {
	data []byte
	n    int
}

func (l *lineIter) next() ([]byte, bool) {
	if len(l.data) == 0 {
		return nil, false
	}
	l.n++
	i := bytes.IndexByte(l.data, '\n')
	if i < 0 {
		line := l.data
		l.data = nil
		return line, true
	}
	line := l.data[:i]
	l.data = l.data[i+1:]
	return line, true
}

// splitLines cuts data into at most parts pieces, each ending just after a
// '\n' (the last one where data ends), and returns the piece boundaries.
func splitLines(data []byte, parts int) []int {
	bounds := []int{0}
	for p := 1; p < parts; p++ {
		at := max(len(data)*p/parts, bounds[len(bounds)-1])
		i := bytes.IndexByte(data[at:], '\n')
		if i < 0 {
			break
		}
		if at += i + 1; at < len(data) && at > bounds[len(bounds)-1] {
			bounds = append(bounds, at)
		}
	}
	return append(bounds, len(data))
}

// isSeparator reports whether c separates the fields of a line.
func isSeparator(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == ',' }

// fields splits b at spaces, tabs, carriage returns and commas into at most
// len(dst) fields and returns how many there were (which may exceed
// len(dst)).
func fields(b []byte, dst [][]byte) int {
	n, i := 0, 0
	for {
		for i < len(b) && isSeparator(b[i]) {
			i++
		}
		if i == len(b) {
			return n
		}
		j := i
		for j < len(b) && !isSeparator(b[j]) {
			j++
		}
		if n < len(dst) {
			dst[n] = b[i:j]
		}
		n++
		i = j
	}
}

// parseInt64 parses a decimal integer exactly as strconv.ParseInt(s, 10,
// 64) does (an optional sign, then digits, within int64), without
// converting b to a string.
func parseInt64(b []byte) (int64, bool) {
	neg := false
	if len(b) > 0 && (b[0] == '+' || b[0] == '-') {
		neg = b[0] == '-'
		b = b[1:]
	}
	if len(b) == 0 {
		return 0, false
	}
	const cutoff = (1 << 63) / 10 // 922337203685477580, remainder 8
	var u uint64
	for _, c := range b {
		d := c - '0'
		if d > 9 || u > cutoff || (u == cutoff && d > 8) {
			return 0, false
		}
		u = u*10 + uint64(d)
	}
	if neg {
		return -int64(u), true // u == 1<<63 gives math.MinInt64
	}
	if u > 1<<63-1 {
		return 0, false
	}
	return int64(u), true
}

// lineCapacity is the number of lines in data: enough room for its edges.
func lineCapacity(data []byte) int { return bytes.Count(data, []byte{'\n'}) + 1 }

// parseEdgeChunk parses one piece of an edge list up to its first error.
func parseEdgeChunk(data []byte, source string, lim Limits) chunkResult {
	r := chunkResult{maxID: -1}
	c := lineCapacity(data)
	r.src, r.dst = make([]int32, 0, c), make([]int32, 0, c)
	l := lineIter{data: data}
	var f [3][]byte
	for {
		line, ok := l.next()
		if !ok {
			break
		}
		k := fields(line, f[:])
		if k == 0 || f[0][0] == '#' || f[0][0] == '%' {
			continue
		}
		if k < 2 || k > 3 {
			r.err = &ParseError{Source: source, Line: l.n, Msg: fmt.Sprintf("want 2 or 3 fields (u v [weight]), found %d", k), Fix: "write one edge per line as two vertex ids"}
			break
		}
		var ids [2]int64
		for i := range ids {
			v, ok := parseInt64(f[i])
			if !ok {
				r.err = &ParseError{Source: source, Line: l.n, Msg: fmt.Sprintf("vertex id %s is not an integer", echo(f[i])), Fix: "use non-negative decimal vertex ids"}
				break
			}
			if v < 0 || v >= int64(lim.MaxVertices) {
				r.err = &VertexRangeError{Source: source, Line: l.n, Vertex: v, NumVertices: lim.MaxVertices}
				break
			}
			ids[i] = v
		}
		if r.err != nil {
			break
		}
		if m := max(ids[0], ids[1]); m > r.maxID {
			r.maxID, r.maxLine = m, l.n
		}
		r.src = append(r.src, int32(ids[0]))
		r.dst = append(r.dst, int32(ids[1]))
	}
	r.lines = l.n
	return r
}

// parsePieces parses the pieces of data between bounds with parse, on
// every CPU.
func parsePieces(data []byte, bounds []int, parse func([]byte) chunkResult) []chunkResult {
	res := make([]chunkResult, len(bounds)-1)
	dynamicRun(len(res), runtime.GOMAXPROCS(0), func(_, c int) {
		res[c] = parse(data[bounds[c]:bounds[c+1]])
	})
	return res
}

// shiftLine moves a piece's error to its line in the whole file.
func shiftLine(err error, by int) error {
	switch e := err.(type) {
	case *ParseError:
		e.Line += by
	case *VertexRangeError:
		e.Line += by
	}
	return err
}

// entryLine returns the line, within piece, of its k-th line (1-based)
// that is neither blank nor a comment.
func entryLine(piece []byte, k int, comment func(first byte) bool) int {
	l := lineIter{data: piece}
	var f [1][]byte
	for {
		line, ok := l.next()
		if !ok {
			return l.n
		}
		if fields(line, f[:]) > 0 && !comment(f[0][0]) {
			if k--; k == 0 {
				return l.n
			}
		}
	}
}

func edgeListComment(c byte) bool { return c == '#' || c == '%' }

func matrixMarketComment(c byte) bool { return c == '%' }

// joinEdges concatenates the pieces' edges into one slice, sources first,
// for buildOwned.
func joinEdges(res []chunkResult, total int) []int32 {
	edges := make([]int32, 2*total)
	at := make([]int, len(res)+1)
	for c, r := range res {
		at[c+1] = at[c] + len(r.src)
	}
	dynamicRun(len(res), runtime.GOMAXPROCS(0), func(_, c int) {
		copy(edges[at[c]:], res[c].src)
		copy(edges[total+at[c]:], res[c].dst)
	})
	return edges
}

// parseEdgeList is ParseEdgeList cut into at most parts pieces.
func parseEdgeList(data []byte, source string, lim Limits, parts int) (*CSR, error) {
	bounds := splitLines(data, parts)
	res := parsePieces(data, bounds, func(p []byte) chunkResult { return parseEdgeChunk(p, source, lim) })
	lineOff, total := 0, 0
	maxID, maxLine := int64(-1), 0
	for c, r := range res {
		if total+len(r.src) > lim.MaxEdges {
			line := lineOff + entryLine(data[bounds[c]:bounds[c+1]], lim.MaxEdges-total+1, edgeListComment)
			return nil, &TooLargeError{Source: source, Field: fmt.Sprintf("edges (at line %d)", line), Value: uint64(lim.MaxEdges) + 1, Limit: uint64(lim.MaxEdges)}
		}
		if r.err != nil {
			return nil, shiftLine(r.err, lineOff)
		}
		if r.maxID > maxID {
			maxID, maxLine = r.maxID, lineOff+r.maxLine
		}
		total += len(r.src)
		lineOff += r.lines
	}
	if total == 0 {
		return nil, &EmptyGraphError{Source: source}
	}
	if err := checkSize(source, maxLine, maxID+1, int64(total), int64(len(data)), lim); err != nil {
		return nil, err
	}
	edges := joinEdges(res, total)
	return buildOwned(source, int(maxID+1), edges[:total], edges[total:], edges)
}

// mtxHeader is what the header and size lines of a Matrix Market file
// declare.
type mtxHeader struct {
	valueFields int
	n, nnz      int64
	// sizeLine is the line of the size line; rest is the data after it.
	sizeLine int
	rest     []byte
}

// parseMatrixMarket is ParseMatrixMarket with the entries cut into at most
// parts pieces.
func parseMatrixMarket(data []byte, source string, lim Limits, parts int) (*CSR, error) {
	h, err := parseMTXHeader(data, source)
	if err != nil {
		return nil, err
	}
	if h.n == 0 || h.nnz == 0 {
		return nil, &EmptyGraphError{Source: source, Vertices: int(min(h.n, int64(lim.MaxVertices)))}
	}
	if h.n > int64(lim.MaxVertices) {
		return nil, &TooLargeError{Source: source, Field: fmt.Sprintf("vertices (line %d)", h.sizeLine), Value: uint64(h.n), Limit: uint64(lim.MaxVertices)}
	}
	if h.nnz > int64(lim.MaxEdges) {
		return nil, &TooLargeError{Source: source, Field: fmt.Sprintf("entries (line %d)", h.sizeLine), Value: uint64(h.nnz), Limit: uint64(lim.MaxEdges)}
	}
	// An entry line takes at least 2 bytes per field ("1 2\n"), so the
	// rest of the file bounds the entries whatever the size line says.
	fit := int64(len(h.rest)+1) / int64(2*(2+h.valueFields))
	if err := checkSize(source, h.sizeLine, h.n, min(h.nnz, fit), int64(len(data)), lim); err != nil {
		return nil, err
	}
	bounds := splitLines(h.rest, parts)
	res := parsePieces(h.rest, bounds, func(p []byte) chunkResult { return parseMTXChunk(p, source, h) })
	total, lines, err := h.countEntries(res, bounds, source)
	if err != nil {
		return nil, err
	}
	if int64(total) != h.nnz {
		return nil, &ParseError{Source: source, Line: lines, Msg: fmt.Sprintf("found %d entries, the size line declares %d", total, h.nnz), Fix: "correct the entry count or restore the missing entries"}
	}
	edges := joinEdges(res, total)
	return buildOwned(source, int(h.n), edges[:total], edges[total:], edges)
}

// countEntries walks the parsed pieces in order and returns the entry
// count and the file's line count, or the first error a line-by-line
// reading would meet: a piece's own error, or an entry past the declared
// count (checked, as a line-by-line reading does, once a line has an
// entry's field count and before its indices are read).
func (h *mtxHeader) countEntries(res []chunkResult, bounds []int, source string) (total, lines int, err error) {
	lines = h.sizeLine
	for c, r := range res {
		e := int64(len(r.src))
		over := int64(total)+e > h.nnz || (r.err != nil && r.errEntry && int64(total)+e == h.nnz)
		if over {
			line := lines + entryLine(h.rest[bounds[c]:bounds[c+1]], int(h.nnz)-total+1, matrixMarketComment)
			return 0, 0, &ParseError{Source: source, Line: line, Msg: fmt.Sprintf("more entries than the %d the size line declares", h.nnz), Fix: "correct the entry count in the size line"}
		}
		if r.err != nil {
			return 0, 0, shiftLine(r.err, lines)
		}
		total += len(r.src)
		lines += r.lines
	}
	return total, lines, nil
}

// parseMTXHeader reads the header and the size line.
func parseMTXHeader(data []byte, source string) (mtxHeader, error) {
	l := lineIter{data: data}
	header, ok := l.next()
	if !ok {
		return mtxHeader{}, &ParseError{Source: source, Line: 1, Msg: "the file is empty, want a %%MatrixMarket header", Fix: "start the file with '%%MatrixMarket matrix coordinate pattern symmetric'"}
	}
	h, err := parseBanner(header, source)
	if err != nil {
		return mtxHeader{}, err
	}
	var f [4][]byte
	for {
		line, ok := l.next()
		if !ok {
			return mtxHeader{}, &ParseError{Source: source, Line: l.n, Msg: "the size line \"rows cols entries\" is missing", Fix: "add the size line after the header and comments"}
		}
		k := fields(line, f[:])
		if k == 0 || f[0][0] == '%' {
			continue
		}
		if k != 3 {
			return mtxHeader{}, &ParseError{Source: source, Line: l.n, Msg: fmt.Sprintf("size line has %d fields, want 3 (rows cols entries)", k), Fix: "write the size line as three integers"}
		}
		var sz [3]int64
		for i := range sz {
			v, ok := parseInt64(f[i])
			if !ok || v < 0 {
				return mtxHeader{}, &ParseError{Source: source, Line: l.n, Msg: fmt.Sprintf("size field %s is not a non-negative integer", echo(f[i])), Fix: "write the size line as three non-negative integers"}
			}
			sz[i] = v
		}
		if sz[0] != sz[1] {
			return mtxHeader{}, &ParseError{Source: source, Line: l.n, Msg: fmt.Sprintf("the matrix is %d x %d, not square", sz[0], sz[1]), Fix: "an adjacency matrix must be square"}
		}
		h.n, h.nnz, h.sizeLine, h.rest = sz[0], sz[2], l.n, l.data
		return h, nil
	}
}

// parseBanner checks the "%%MatrixMarket matrix coordinate <field>
// <symmetry>" header and returns how many value fields an entry has.
func parseBanner(header []byte, source string) (mtxHeader, error) {
	var hf [6][]byte
	if k := fields(header, hf[:]); k != 5 || !strings.EqualFold(string(hf[0]), "%%MatrixMarket") {
		return mtxHeader{}, &ParseError{Source: source, Line: 1, Msg: fmt.Sprintf("malformed header %s", echo(header)), Fix: "start the file with '%%MatrixMarket matrix coordinate pattern symmetric'"}
	}
	if !strings.EqualFold(string(hf[1]), "matrix") || !strings.EqualFold(string(hf[2]), "coordinate") {
		return mtxHeader{}, &ParseError{Source: source, Line: 1, Msg: fmt.Sprintf("object %s format %s is not a coordinate matrix", echo(hf[1]), echo(hf[2])), Fix: "convert dense (array) matrices to coordinate format"}
	}
	h := mtxHeader{valueFields: 1}
	switch strings.ToLower(string(hf[3])) {
	case "pattern":
		h.valueFields = 0
	case "real", "integer", "double":
	default:
		return mtxHeader{}, &ParseError{Source: source, Line: 1, Msg: fmt.Sprintf("field %s is not supported", echo(hf[3])), Fix: "use pattern, real or integer"}
	}
	switch strings.ToLower(string(hf[4])) {
	case "general", "symmetric":
	default:
		return mtxHeader{}, &ParseError{Source: source, Line: 1, Msg: fmt.Sprintf("symmetry %s is not supported", echo(hf[4])), Fix: "use general or symmetric"}
	}
	return h, nil
}

// parseMTXChunk parses one piece of a Matrix Market file's entries up to
// its first error.
func parseMTXChunk(data []byte, source string, h mtxHeader) chunkResult {
	var r chunkResult
	c := lineCapacity(data)
	r.src, r.dst = make([]int32, 0, c), make([]int32, 0, c)
	l := lineIter{data: data}
	var f [4][]byte
	for {
		line, ok := l.next()
		if !ok {
			break
		}
		k := fields(line, f[:])
		if k == 0 || f[0][0] == '%' {
			continue
		}
		if k != 2+h.valueFields {
			r.err = &ParseError{Source: source, Line: l.n, Msg: fmt.Sprintf("entry has %d fields, want %d", k, 2+h.valueFields), Fix: "write each entry as 'row col' (pattern) or 'row col value'"}
			break
		}
		u, v, err := parseMTXEntry(f[:k], source, l.n, h.n)
		if err != nil {
			r.err, r.errEntry = err, true
			break
		}
		r.src = append(r.src, u)
		r.dst = append(r.dst, v)
	}
	r.lines = l.n
	return r
}

// parseMTXEntry reads an entry's fields: two 1-based indices up to n,
// returned 0-based, and, when there is one, a numeric value (checked, not
// kept).
func parseMTXEntry(f [][]byte, source string, line int, n int64) (u, v int32, err error) {
	var ids [2]int32
	for i := range ids {
		x, ok := parseInt64(f[i])
		if !ok {
			return 0, 0, &ParseError{Source: source, Line: line, Msg: fmt.Sprintf("index %s is not an integer", echo(f[i])), Fix: "use 1-based decimal indices"}
		}
		if x < 1 || x > n {
			return 0, 0, &VertexRangeError{Source: source, Line: line, Vertex: x, NumVertices: int(n), OneBased: true}
		}
		ids[i] = int32(x - 1)
	}
	if len(f) == 3 {
		if _, err := strconv.ParseFloat(string(f[2]), 64); err != nil {
			return 0, 0, &ParseError{Source: source, Line: line, Msg: fmt.Sprintf("value %s is not a number", echo(f[2])), Fix: "write a numeric value or declare the field as pattern"}
		}
	}
	return ids[0], ids[1], nil
}

// echo is an input's bytes as an error message repeats them (quote.Echo).
func echo(b []byte) string { return quote.Echo(string(b)) }
