package frontier

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Limits bounds what a loader accepts before it allocates, so a hostile or
// mistaken file gives an error instead of exhausting memory.
type Limits struct {
	// MaxVertices is the largest vertex count (edge lists: largest id + 1;
	// Matrix Market: the declared size).
	MaxVertices int
	// MaxEdges is the largest number of edge lines.
	MaxEdges int
}

// DefaultLimits returns the loaders' default limits: 2^28 vertices and 2^30
// edges, about 6 GiB of CSR at the most.
func DefaultLimits() Limits { return Limits{MaxVertices: 1 << 28, MaxEdges: 1 << 30} }

// ParseError reports a malformed line of a graph file.
type ParseError struct {
	Source string
	// Line is 1-based; 0 means the error concerns the whole file.
	Line int
	Msg  string
	Fix  string
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("%s:%d: %s. Fix: %s", e.Source, e.Line, e.Msg, e.Fix)
}

// VertexRangeError reports an edge endpoint outside the graph's vertices.
type VertexRangeError struct {
	Source string
	// Line is the 1-based line of a file, or 0 for in-memory edges.
	Line int
	// Edge is the 0-based index of the edge in memory (when Line is 0).
	Edge        int
	Vertex      int64
	NumVertices int
	// OneBased is true for Matrix Market ids, which count from 1.
	OneBased bool
}

func (e *VertexRangeError) Error() string {
	lo, hi := int64(0), int64(e.NumVertices)-1
	if e.OneBased {
		lo, hi = 1, int64(e.NumVertices)
	}
	where := fmt.Sprintf("%s: edge %d", e.Source, e.Edge)
	if e.Line > 0 {
		where = fmt.Sprintf("%s:%d", e.Source, e.Line)
	}
	return fmt.Sprintf("%s: vertex id %d is out of range %d..%d. Fix: renumber the vertices or correct the declared size", where, e.Vertex, lo, hi)
}

// LoadFile reads a graph from path: Matrix Market for ".mtx", otherwise a
// whitespace-separated edge list (".el", ".txt", ".edges", ...). The graph
// is treated as undirected.
func LoadFile(path string, lim Limits) (*CSR, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("opening graph %s: %w. Fix: check the path", path, err)
	}
	defer f.Close()
	name := fileGraphName(path)
	var g *CSR
	if strings.EqualFold(filepath.Ext(path), ".mtx") {
		g, err = ReadMatrixMarket(f, path, lim)
	} else {
		g, err = ReadEdgeList(f, path, lim)
	}
	if err != nil {
		return nil, err
	}
	g.Name = name
	return g, nil
}

// lineReader yields the lines of a file with their 1-based numbers.
type lineReader struct {
	sc   *bufio.Scanner
	line int
}

func newLineReader(r io.Reader) *lineReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	return &lineReader{sc: sc}
}

func (l *lineReader) next() ([]byte, bool) {
	if !l.sc.Scan() {
		return nil, false
	}
	l.line++
	return l.sc.Bytes(), true
}

func (l *lineReader) err(source string) error {
	if err := l.sc.Err(); err != nil {
		return &ParseError{Source: source, Line: l.line + 1, Msg: "unreadable line: " + err.Error(), Fix: "keep lines under 1 MiB and the file readable"}
	}
	return nil
}

// fields splits b at spaces and tabs into at most len(dst) fields and
// returns how many there were (which may exceed len(dst)).
func fields(b []byte, dst [][]byte) int {
	n := 0
	for {
		for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\r' || b[0] == ',') {
			b = b[1:]
		}
		if len(b) == 0 {
			return n
		}
		i := bytes.IndexAny(b, " \t\r,")
		if i < 0 {
			i = len(b)
		}
		if n < len(dst) {
			dst[n] = b[:i]
		}
		n++
		b = b[i:]
	}
}

// ReadEdgeList reads an edge list: one edge "u v" per line with 0-based
// non-negative integer ids, separated by spaces, tabs or a comma; a third
// field (a weight) is ignored. Blank lines and lines starting with '#' or
// '%' are comments. The vertex count is the largest id + 1. source names
// the input in errors.
func ReadEdgeList(r io.Reader, source string, lim Limits) (*CSR, error) {
	lr := newLineReader(r)
	var src, dst []int32
	maxID := int64(-1)
	var f [3][]byte
	for {
		line, ok := lr.next()
		if !ok {
			break
		}
		k := fields(line, f[:])
		if k == 0 || f[0][0] == '#' || f[0][0] == '%' {
			continue
		}
		if k < 2 || k > 3 {
			return nil, &ParseError{Source: source, Line: lr.line, Msg: fmt.Sprintf("want 2 or 3 fields (u v [weight]), found %d", k), Fix: "write one edge per line as two vertex ids"}
		}
		var ids [2]int64
		for i := 0; i < 2; i++ {
			v, err := strconv.ParseInt(string(f[i]), 10, 64)
			if err != nil {
				return nil, &ParseError{Source: source, Line: lr.line, Msg: fmt.Sprintf("vertex id %q is not an integer", f[i]), Fix: "use non-negative decimal vertex ids"}
			}
			if v < 0 || v >= int64(lim.MaxVertices) {
				return nil, &VertexRangeError{Source: source, Line: lr.line, Vertex: v, NumVertices: lim.MaxVertices}
			}
			ids[i] = v
		}
		if len(src) >= lim.MaxEdges {
			return nil, &TooLargeError{Source: source, Field: fmt.Sprintf("edges (at line %d)", lr.line), Value: uint64(len(src)) + 1, Limit: uint64(lim.MaxEdges)}
		}
		maxID = max(maxID, ids[0], ids[1])
		src = append(src, int32(ids[0]))
		dst = append(dst, int32(ids[1]))
	}
	if err := lr.err(source); err != nil {
		return nil, err
	}
	if len(src) == 0 {
		return nil, &EmptyGraphError{Source: source}
	}
	return BuildUndirected(source, int(maxID+1), src, dst)
}

// ReadMatrixMarket reads a Matrix Market coordinate file as an undirected
// graph: the header "%%MatrixMarket matrix coordinate <field> <symmetry>"
// with field pattern, real, integer or double and symmetry general or
// symmetric; then comment lines starting with '%'; the size line
// "rows cols entries" with rows == cols; then exactly that many entries
// "i j [value]" with 1-based ids. Values are ignored and the graph is
// symmetrized. source names the input in errors.
func ReadMatrixMarket(r io.Reader, source string, lim Limits) (*CSR, error) {
	lr := newLineReader(r)
	header, ok := lr.next()
	if !ok {
		if err := lr.err(source); err != nil {
			return nil, err
		}
		return nil, &ParseError{Source: source, Line: 1, Msg: "the file is empty, want a %%MatrixMarket header", Fix: "start the file with '%%MatrixMarket matrix coordinate pattern symmetric'"}
	}
	var hf [6][]byte
	if k := fields(header, hf[:]); k != 5 || !strings.EqualFold(string(hf[0]), "%%MatrixMarket") {
		return nil, &ParseError{Source: source, Line: 1, Msg: fmt.Sprintf("malformed header %q", truncate(header)), Fix: "start the file with '%%MatrixMarket matrix coordinate pattern symmetric'"}
	}
	if !strings.EqualFold(string(hf[1]), "matrix") || !strings.EqualFold(string(hf[2]), "coordinate") {
		return nil, &ParseError{Source: source, Line: 1, Msg: fmt.Sprintf("object %q format %q is not a coordinate matrix", hf[1], hf[2]), Fix: "convert dense (array) matrices to coordinate format"}
	}
	valueFields := 1
	switch strings.ToLower(string(hf[3])) {
	case "pattern":
		valueFields = 0
	case "real", "integer", "double":
	default:
		return nil, &ParseError{Source: source, Line: 1, Msg: fmt.Sprintf("field %q is not supported", hf[3]), Fix: "use pattern, real or integer"}
	}
	switch strings.ToLower(string(hf[4])) {
	case "general", "symmetric":
	default:
		return nil, &ParseError{Source: source, Line: 1, Msg: fmt.Sprintf("symmetry %q is not supported", hf[4]), Fix: "use general or symmetric"}
	}
	var f [4][]byte
	var n, nnz int64
	for {
		line, ok := lr.next()
		if !ok {
			if err := lr.err(source); err != nil {
				return nil, err
			}
			return nil, &ParseError{Source: source, Line: lr.line, Msg: "the size line \"rows cols entries\" is missing", Fix: "add the size line after the header and comments"}
		}
		k := fields(line, f[:])
		if k == 0 || f[0][0] == '%' {
			continue
		}
		if k != 3 {
			return nil, &ParseError{Source: source, Line: lr.line, Msg: fmt.Sprintf("size line has %d fields, want 3 (rows cols entries)", k), Fix: "write the size line as three integers"}
		}
		var sz [3]int64
		for i := range sz {
			v, err := strconv.ParseInt(string(f[i]), 10, 64)
			if err != nil || v < 0 {
				return nil, &ParseError{Source: source, Line: lr.line, Msg: fmt.Sprintf("size field %q is not a non-negative integer", f[i]), Fix: "write the size line as three non-negative integers"}
			}
			sz[i] = v
		}
		if sz[0] != sz[1] {
			return nil, &ParseError{Source: source, Line: lr.line, Msg: fmt.Sprintf("the matrix is %d x %d, not square", sz[0], sz[1]), Fix: "an adjacency matrix must be square"}
		}
		n, nnz = sz[0], sz[2]
		break
	}
	if n == 0 || nnz == 0 {
		return nil, &EmptyGraphError{Source: source, Vertices: int(min(n, int64(lim.MaxVertices)))}
	}
	if n > int64(lim.MaxVertices) {
		return nil, &TooLargeError{Source: source, Field: fmt.Sprintf("vertices (line %d)", lr.line), Value: uint64(n), Limit: uint64(lim.MaxVertices)}
	}
	if nnz > int64(lim.MaxEdges) {
		return nil, &TooLargeError{Source: source, Field: fmt.Sprintf("entries (line %d)", lr.line), Value: uint64(nnz), Limit: uint64(lim.MaxEdges)}
	}
	src := make([]int32, 0, min(nnz, 1<<20))
	dst := make([]int32, 0, min(nnz, 1<<20))
	for {
		line, ok := lr.next()
		if !ok {
			break
		}
		k := fields(line, f[:])
		if k == 0 || f[0][0] == '%' {
			continue
		}
		if k != 2+valueFields {
			return nil, &ParseError{Source: source, Line: lr.line, Msg: fmt.Sprintf("entry has %d fields, want %d", k, 2+valueFields), Fix: "write each entry as 'row col' (pattern) or 'row col value'"}
		}
		if int64(len(src)) >= nnz {
			return nil, &ParseError{Source: source, Line: lr.line, Msg: fmt.Sprintf("more entries than the %d the size line declares", nnz), Fix: "correct the entry count in the size line"}
		}
		var ids [2]int64
		for i := 0; i < 2; i++ {
			v, err := strconv.ParseInt(string(f[i]), 10, 64)
			if err != nil {
				return nil, &ParseError{Source: source, Line: lr.line, Msg: fmt.Sprintf("index %q is not an integer", f[i]), Fix: "use 1-based decimal indices"}
			}
			if v < 1 || v > n {
				return nil, &VertexRangeError{Source: source, Line: lr.line, Vertex: v, NumVertices: int(n), OneBased: true}
			}
			ids[i] = v - 1
		}
		if valueFields == 1 {
			if _, err := strconv.ParseFloat(string(f[2]), 64); err != nil {
				return nil, &ParseError{Source: source, Line: lr.line, Msg: fmt.Sprintf("value %q is not a number", f[2]), Fix: "write a numeric value or declare the field as pattern"}
			}
		}
		src = append(src, int32(ids[0]))
		dst = append(dst, int32(ids[1]))
	}
	if err := lr.err(source); err != nil {
		return nil, err
	}
	if int64(len(src)) != nnz {
		return nil, &ParseError{Source: source, Line: lr.line, Msg: fmt.Sprintf("found %d entries, the size line declares %d", len(src), nnz), Fix: "correct the entry count or restore the missing entries"}
	}
	return BuildUndirected(source, int(n), src, dst)
}

func truncate(b []byte) string {
	if len(b) > 60 {
		return string(b[:60]) + "..."
	}
	return string(b)
}

// Spec names a benchmark graph: "grid:N", "kron:SCALE", "road:N",
// "rgg:N[:DEGREE]" or "file:PATH" (PATH ending in .mtx for Matrix Market,
// otherwise an edge list).
type Spec struct {
	// Kind is "grid", "kron", "road", "rgg" or "file".
	Kind string
	// Size is N for grid, road and rgg, SCALE for kron, 0 for file.
	Size int
	// Degree is the expected average degree of an rgg graph (0 means
	// DefaultRGGDegree); other kinds ignore it.
	Degree int
	// Path is the file for Kind "file".
	Path string
}

// specHelp lists the spec forms for error messages.
const specHelp = "use grid:N, kron:SCALE, road:N, rgg:N[:DEGREE] or file:PATH"

// ParseSpec parses a graph spec such as "grid:2048", "rgg:2000000:8" or
// "file:roads.mtx".
func ParseSpec(s string) (Spec, error) {
	kind, arg, ok := strings.Cut(s, ":")
	if !ok || arg == "" {
		return Spec{}, fmt.Errorf("graph spec %q: want KIND:ARG. Fix: %s", s, specHelp)
	}
	switch kind {
	case "file":
		return Spec{Kind: kind, Path: arg}, nil
	case "grid", "kron", "road":
		v, err := strconv.Atoi(arg)
		if err != nil || v < 1 {
			return Spec{}, fmt.Errorf("graph spec %q: %q is not a positive integer. Fix: use for example %s:%d", s, arg, kind, map[string]int{"grid": 2048, "kron": 22, "road": 2048}[kind])
		}
		return Spec{Kind: kind, Size: v}, nil
	case "rgg":
		return parseRGGSpec(s, arg)
	default:
		return Spec{}, fmt.Errorf("graph spec %q: unknown kind %q. Fix: %s", s, kind, specHelp)
	}
}

// parseRGGSpec parses the N[:DEGREE] of an rgg spec.
func parseRGGSpec(s, arg string) (Spec, error) {
	size, deg, hasDeg := strings.Cut(arg, ":")
	n, err := strconv.Atoi(size)
	if err != nil || n < 1 {
		return Spec{}, fmt.Errorf("graph spec %q: point count %q is not a positive integer. Fix: use for example rgg:2000000 or rgg:2000000:8", s, size)
	}
	d := DefaultRGGDegree
	if hasDeg {
		if d, err = strconv.Atoi(deg); err != nil || d < 1 {
			return Spec{}, fmt.Errorf("graph spec %q: degree %q is not a positive integer. Fix: use for example rgg:%d:%d", s, deg, n, DefaultRGGDegree)
		}
	}
	return Spec{Kind: "rgg", Size: n, Degree: d}, nil
}

// rggDegree returns the spec's degree, DefaultRGGDegree when it has none.
func (s Spec) rggDegree() int {
	if s.Degree == 0 {
		return DefaultRGGDegree
	}
	return s.Degree
}

// Name returns the workload name the spec's graph is reported under, for
// example "grid-2048", "kron-22", "rgg-2000000-8" (the degree is always
// named) or, for a file, its base name without the extension (characters
// other than letters, digits and . _ - become '-').
func (s Spec) Name() string {
	switch s.Kind {
	case "file":
		return fileGraphName(s.Path)
	case "rgg":
		return fmt.Sprintf("rgg-%d-%d", s.Size, s.rggDegree())
	}
	return fmt.Sprintf("%s-%d", s.Kind, s.Size)
}

// fileGraphName derives a graph name from a file path: the base name
// without its extension (the whole base name if that leaves nothing), with
// every character other than a letter, digit, '.', '_' or '-' replaced by
// '-', so the name is a valid evidence token.
func fileGraphName(path string) string {
	base := filepath.Base(path)
	name := strings.TrimSuffix(base, filepath.Ext(base))
	if name == "" {
		name = base
	}
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-' {
			return r
		}
		return '-'
	}, name)
}

// Build generates or loads the spec's graph. seed drives the random
// generators (kron, road, rgg); grids and files ignore it.
func (s Spec) Build(seed uint64, lim Limits) (*CSR, error) {
	switch s.Kind {
	case "grid":
		return Grid(s.Size)
	case "kron":
		return Kronecker(s.Size, DefaultEdgeFactor, seed)
	case "road":
		return Road(s.Size, seed)
	case "rgg":
		return RandomGeometric(s.Size, s.rggDegree(), seed)
	case "file":
		return LoadFile(s.Path, lim)
	}
	return nil, fmt.Errorf("graph spec kind %q is unknown. Fix: use grid, kron, road, rgg or file", s.Kind)
}
