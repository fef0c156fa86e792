package frontier

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/gpuplan/gpuplan/internal/checked"
	"github.com/gpuplan/gpuplan/internal/input"
)

// Default loader limits; DefaultLimits returns them together.
const (
	// DefaultMaxVertices is the largest vertex count a loader accepts.
	DefaultMaxVertices = 1 << 28
	// DefaultMaxEdges is the largest number of edge lines.
	DefaultMaxEdges = 1 << 30
	// DefaultVerticesPerByte bounds the vertex count by the input's size:
	// a file of B bytes may declare (or, for an edge list, imply by its
	// largest id) at most B vertices. Real graph files use far fewer than
	// one vertex per byte; a tiny file that claims millions of vertices is
	// a mistake or an attack, and each vertex costs memory.
	DefaultVerticesPerByte = 1
	// DefaultLoadBudget bounds the memory a load may take (see LoadBytes):
	// 16 GiB, enough for any graph file under the default 1 GiB size limit.
	DefaultLoadBudget = 16 << 30
)

// Limits bounds what a loader accepts before it allocates, so a hostile or
// mistaken file gives an error instead of exhausting memory. A zero field
// takes its default (DefaultLimits).
type Limits struct {
	// MaxVertices is the largest vertex count (edge lists: largest id + 1;
	// Matrix Market: the declared size).
	MaxVertices int
	// MaxEdges is the largest number of edge lines.
	MaxEdges int
	// VerticesPerByte is the largest number of vertices per byte of input.
	// Raise it for a file whose ids leave most vertices isolated.
	VerticesPerByte int
	// MaxLoadBytes is the memory budget of a load, as LoadBytes estimates
	// it before anything is allocated for the graph.
	MaxLoadBytes uint64
	// MaxFileBytes is the largest input, in bytes.
	MaxFileBytes int64
}

// DefaultLimits returns the loaders' default limits: 2^28 vertices, 2^30
// edges, one vertex per input byte, a 16 GiB load budget and 1 GiB files.
func DefaultLimits() Limits {
	return Limits{MaxVertices: DefaultMaxVertices, MaxEdges: DefaultMaxEdges, VerticesPerByte: DefaultVerticesPerByte,
		MaxLoadBytes: DefaultLoadBudget, MaxFileBytes: input.DefaultGraphLimit}
}

// WithDefaults returns lim with its zero fields set to the defaults.
func (lim Limits) WithDefaults() Limits {
	d := DefaultLimits()
	if lim.MaxVertices <= 0 {
		lim.MaxVertices = d.MaxVertices
	}
	if lim.MaxEdges <= 0 {
		lim.MaxEdges = d.MaxEdges
	}
	if lim.VerticesPerByte <= 0 {
		lim.VerticesPerByte = d.VerticesPerByte
	}
	if lim.MaxLoadBytes == 0 {
		lim.MaxLoadBytes = d.MaxLoadBytes
	}
	if lim.MaxFileBytes <= 0 {
		lim.MaxFileBytes = d.MaxFileBytes
	}
	return lim
}

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

// SparseInputError reports a graph file that declares, or implies by its
// largest vertex id, more vertices than its size allows: every vertex costs
// memory, however few edges the file holds.
type SparseInputError struct {
	Source string
	// Line is the size line of a Matrix Market file, or the first line
	// with the largest id of an edge list.
	Line      int
	Vertices  int64
	FileBytes int64
	// PerByte is the limit in vertices per input byte.
	PerByte int
}

// Error names the line, the vertex count, the input size and the limit,
// and ends with a "Fix:".
func (e *SparseInputError) Error() string {
	return fmt.Sprintf("%s:%d: %d vertices for %d bytes of input is more than the %d vertex per byte allowed (at most %d here). Fix: number the vertices from 0 without large gaps, correct the declared size, or raise the vertices-per-byte limit",
		e.Source, e.Line, e.Vertices, e.FileBytes, e.PerByte, int64(e.PerByte)*e.FileBytes)
}

// LoadBudgetError reports a graph whose load would need more memory than
// the budget, estimated before anything is allocated for it.
type LoadBudgetError struct {
	Source string
	// Line is the size line of a Matrix Market file, or the last line of
	// an edge list.
	Line     int
	Vertices int64
	Edges    int64
	// Bytes is LoadBytes's estimate; Budget is Limits.MaxLoadBytes.
	Bytes, Budget uint64
}

// Error names the line, the graph's size, the estimate and the budget,
// and ends with a "Fix:".
func (e *LoadBudgetError) Error() string {
	return fmt.Sprintf("%s:%d: %d vertices and %d edges need about %d bytes to load, above the budget of %d bytes. Fix: use a smaller graph or raise the load memory budget to at least %d",
		e.Source, e.Line, e.Vertices, e.Edges, e.Bytes, e.Budget, e.Bytes)
}

// LoadBytes estimates the peak memory of loading a graph file: the file
// itself, 28 bytes per edge (the parsed endpoints, their copy handed to the
// CSR build, the build's bucketed entries and a compacted copy of the
// adjacency) and 12 bytes per vertex (64-bit offsets and counters).
func LoadBytes(fileBytes, vertices, edges uint64) (uint64, error) {
	perEdge, err := checked.Mul(edges, 28, "load bytes for the edges")
	if err != nil {
		return 0, err
	}
	perVertex, err := checked.Mul(vertices+1, 12, "load bytes for the vertices")
	if err != nil {
		return 0, err
	}
	return checked.Sum("load bytes", fileBytes, perEdge, perVertex)
}

// checkSize applies the vertex-per-byte ratio, the CSR's edge limit and the
// memory budget to a graph of n vertices and m edges read from fileBytes
// bytes, before the edges are joined for the CSR build; line names where n
// was declared or found.
func checkSize(source string, line int, n, m, fileBytes int64, lim Limits) error {
	if n > int64(lim.VerticesPerByte)*max(fileBytes, 1) {
		return &SparseInputError{Source: source, Line: line, Vertices: n, FileBytes: fileBytes, PerByte: lim.VerticesPerByte}
	}
	// Each edge is stored in both directions.
	if entries := 2 * uint64(max(m, 0)); entries > MaxGraphEdgeEntries {
		return &TooLargeError{Source: source, Field: "edge entries", Value: entries, Limit: MaxGraphEdgeEntries}
	}
	need, err := LoadBytes(uint64(fileBytes), uint64(n), uint64(m))
	if err != nil {
		return err
	}
	if need > lim.MaxLoadBytes {
		return &LoadBudgetError{Source: source, Line: line, Vertices: n, Edges: m, Bytes: need, Budget: lim.MaxLoadBytes}
	}
	return nil
}

// LoadFile reads a graph from path ("-" for standard input) through a
// bounded read of at most lim.MaxFileBytes bytes of a regular file: Matrix
// Market for ".mtx", otherwise a whitespace-separated edge list (".el",
// ".txt", ".edges", ...). The graph is treated as undirected.
func LoadFile(path string, lim Limits) (*CSR, error) {
	lim = lim.WithDefaults()
	data, err := input.ReadFile(path, nil, lim.MaxFileBytes)
	if err != nil {
		return nil, fmt.Errorf("reading graph: %w", err)
	}
	var g *CSR
	if strings.EqualFold(filepath.Ext(path), ".mtx") {
		g, err = ParseMatrixMarket(data, path, lim)
	} else {
		g, err = ParseEdgeList(data, path, lim)
	}
	if err != nil {
		return nil, err
	}
	g.Name = fileGraphName(path)
	return g, nil
}

// readAll reads r to its end under lim.MaxFileBytes bytes.
func readAll(r io.Reader, source string, lim Limits) ([]byte, error) {
	data, err := input.ReadFile(input.Stdin, r, lim.MaxFileBytes)
	var tl *input.TooLargeError
	if errors.As(err, &tl) {
		tl.Path = source
	}
	if err != nil {
		return nil, fmt.Errorf("reading graph: %w", err)
	}
	return data, nil
}

// ReadEdgeList reads all of r (at most lim.MaxFileBytes bytes) and parses
// it with ParseEdgeList.
func ReadEdgeList(r io.Reader, source string, lim Limits) (*CSR, error) {
	lim = lim.WithDefaults()
	data, err := readAll(r, source, lim)
	if err != nil {
		return nil, err
	}
	return ParseEdgeList(data, source, lim)
}

// ReadMatrixMarket reads all of r (at most lim.MaxFileBytes bytes) and
// parses it with ParseMatrixMarket.
func ReadMatrixMarket(r io.Reader, source string, lim Limits) (*CSR, error) {
	lim = lim.WithDefaults()
	data, err := readAll(r, source, lim)
	if err != nil {
		return nil, err
	}
	return ParseMatrixMarket(data, source, lim)
}
