package bfsquery

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/internal/graphbudget"
	"github.com/gpuplan/gpuplan/internal/input"
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
// (frontier.LoadBytes). Errors name the line (*frontier.ParseError,
// *frontier.TooLargeError, *frontier.LoadBudgetError).
func ReadDirected(r io.Reader, source string, size int64, lim frontier.Limits) (*frontier.CSR, error) {
	lim = lim.WithDefaults()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var src, dst []int32
	maxID := int64(-1)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || text[0] == '#' || text[0] == '%' {
			continue
		}
		// Each directed edge is one adjacency entry.
		if limit := min(uint64(lim.MaxEdges), frontier.MaxGraphEdgeEntries); uint64(len(src)) >= limit {
			return nil, &frontier.TooLargeError{Source: source, Field: "edges", Value: uint64(len(src)) + 1, Limit: limit}
		}
		u, v, err := parseEdge(text, lim.MaxVertices)
		if err != nil {
			return nil, &frontier.ParseError{Source: source, Line: line, Msg: err.Error(), Fix: fmt.Sprintf("write each edge as two vertex ids from 0 to %d, SRC DST, one per line", lim.MaxVertices-1)}
		}
		maxID = max(maxID, int64(u), int64(v))
		src, dst = append(src, u), append(dst, v)
	}
	if err := sc.Err(); err != nil {
		return nil, &frontier.ParseError{Source: source, Line: line + 1, Msg: err.Error(), Fix: "keep lines under 1 MiB and the file readable"}
	}
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
	g.Name = "directed-" + strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	return g, true, nil
}
