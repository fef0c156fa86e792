package bfs

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// PeerOutput is what a peer's binary printed: its graph line and its timed
// runs, in order (other lines, warm-ups included, are ignored).
type PeerOutput struct {
	Graph PeerGraph `json:"graph"`
	Runs  []PeerRun `json:"runs"`
}

// PeerGraph is the PREFIX_GRAPH line: the file, the vertices read, every
// field as printed, and the untimed preprocessing it reports (each field
// whose name ends in _s, in seconds: BLEST's CSC build, reordering and
// BVSS).
type PeerGraph struct {
	File          string             `json:"file"`
	Vertices      uint64             `json:"vertices"`
	Fields        map[string]string  `json:"fields"`
	Preprocessing map[string]float64 `json:"preprocessing_s,omitempty"`
}

// PeerRun is one PREFIX line: the run's number and source, its time, the
// vertices it reached, its depth (the largest level) and its Graph500 edge
// count (the input edges inside the traversed component, each once).
type PeerRun struct {
	Run        int     `json:"run"`
	Src        int64   `json:"src"`
	TimeMs     float64 `json:"time_ms"`
	Reached    uint64  `json:"reached"`
	Depth      int64   `json:"depth"`
	InputEdges uint64  `json:"input_edges"`
}

// PeerLineError is a malformed line of a peer's output.
type PeerLineError struct {
	Peer  string
	Line  int
	Field string
	Msg   string
}

// Error names the peer, the line and the field, and ends with a "Fix:".
func (e *PeerLineError) Error() string {
	return fmt.Sprintf("%s output line %d, field %s: %s. Fix: use the peer bundle's driver binary, which prints %s_GRAPH and %s run lines",
		e.Peer, e.Line, e.Field, e.Msg, peerPrefixOf(e.Peer), peerPrefixOf(e.Peer))
}

// peerPrefixOf is the output prefix of the peer named name.
func peerPrefixOf(name string) string {
	if k, err := LookupPeer(name); err == nil {
		return k.Prefix
	}
	return strings.ToUpper(name) + "_BFS"
}

// ParsePeerOutput reads a peer's output (k names the peer and its line
// prefix): one PREFIX_GRAPH line, then a PREFIX line per timed run, each a
// list of key=value fields. A line longer than 1 MiB, a missing or
// malformed field, a run before the graph line, a second graph line or no
// run at all is an error naming the line.
func ParsePeerOutput(k PeerKind, r io.Reader) (PeerOutput, error) {
	var out PeerOutput
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	graphLine := 0
	for line := 1; sc.Scan(); line++ {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		var err error
		switch fields[0] {
		case k.Prefix + "_GRAPH":
			if graphLine != 0 {
				return out, &PeerLineError{Peer: k.Name, Line: line, Field: fields[0], Msg: fmt.Sprintf("a second graph line (the first is line %d)", graphLine)}
			}
			out.Graph, err = parsePeerGraph(k.Name, line, fields[1:])
			graphLine = line
		case k.Prefix:
			if graphLine == 0 {
				return out, &PeerLineError{Peer: k.Name, Line: line, Field: fields[0], Msg: "a run before the graph line"}
			}
			var run PeerRun
			run, err = parsePeerRun(k.Name, line, fields[1:])
			out.Runs = append(out.Runs, run)
		}
		if err != nil {
			return out, err
		}
	}
	if err := sc.Err(); err != nil {
		return out, fmt.Errorf("%s output: %w. Fix: check the binary's output", k.Name, err)
	}
	if len(out.Runs) == 0 {
		return out, fmt.Errorf("%s output has no %s run line. Fix: use the peer bundle's driver binary and give it roots", k.Name, k.Prefix)
	}
	return out, nil
}

// peerFields reads key=value fields into a map, refusing repeats.
func peerFields(peer string, line int, fields []string) (map[string]string, error) {
	m := make(map[string]string, len(fields))
	for _, f := range fields {
		k, v, ok := strings.Cut(f, "=")
		if !ok || k == "" {
			return nil, &PeerLineError{Peer: peer, Line: line, Field: f, Msg: "not a key=value field"}
		}
		if _, dup := m[k]; dup {
			return nil, &PeerLineError{Peer: peer, Line: line, Field: k, Msg: "repeated"}
		}
		m[k] = v
	}
	return m, nil
}

// fieldReader reads typed fields of one line, keeping the first error.
type fieldReader struct {
	peer string
	line int
	m    map[string]string
	err  error
}

func (f *fieldReader) fail(key, msg string) {
	if f.err == nil {
		f.err = &PeerLineError{Peer: f.peer, Line: f.line, Field: key, Msg: msg}
	}
}

func (f *fieldReader) str(key string) string {
	v, ok := f.m[key]
	if !ok {
		f.fail(key, "missing")
	}
	return v
}

func (f *fieldReader) uint(key string) uint64 {
	v, err := strconv.ParseUint(f.str(key), 10, 64)
	if err != nil {
		f.fail(key, fmt.Sprintf("%q is not a non-negative integer", f.m[key]))
	}
	return v
}

func (f *fieldReader) int(key string) int64 {
	v, err := strconv.ParseInt(f.str(key), 10, 64)
	if err != nil {
		f.fail(key, fmt.Sprintf("%q is not an integer", f.m[key]))
	}
	return v
}

func (f *fieldReader) float(key string) float64 {
	v, err := strconv.ParseFloat(f.str(key), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		f.fail(key, fmt.Sprintf("%q is not a finite non-negative number", f.m[key]))
	}
	return v
}

// parsePeerGraph reads a PREFIX_GRAPH line's fields.
func parsePeerGraph(peer string, line int, fields []string) (PeerGraph, error) {
	m, err := peerFields(peer, line, fields)
	if err != nil {
		return PeerGraph{}, err
	}
	f := &fieldReader{peer: peer, line: line, m: m}
	g := PeerGraph{File: f.str("file"), Vertices: f.uint("vertices"), Fields: m}
	for k := range m {
		if name, ok := strings.CutSuffix(k, "_s"); ok && name != "" {
			if g.Preprocessing == nil {
				g.Preprocessing = map[string]float64{}
			}
			g.Preprocessing[name] = f.float(k)
		}
	}
	return g, f.err
}

// parsePeerRun reads a run line's fields: its time in time_ms or time_s
// (exactly one), and, where it prints them (Gunrock), the adjacency
// entries and self loops its Graph500 count must follow from.
func parsePeerRun(peer string, line int, fields []string) (PeerRun, error) {
	m, err := peerFields(peer, line, fields)
	if err != nil {
		return PeerRun{}, err
	}
	f := &fieldReader{peer: peer, line: line, m: m}
	r := PeerRun{Src: f.int("src"), Reached: f.uint("reached"), Depth: f.int("depth"), InputEdges: f.uint("input_edges")}
	_, ms := m["time_ms"]
	_, sec := m["time_s"]
	switch {
	case ms && sec:
		f.fail("time_s", "given beside time_ms")
	case sec:
		r.TimeMs = f.float("time_s") * 1e3
	default:
		r.TimeMs = f.float("time_ms")
	}
	run := f.uint("run")
	if f.err != nil {
		return r, f.err
	}
	if run > math.MaxInt32 {
		return r, &PeerLineError{Peer: peer, Line: line, Field: "run", Msg: fmt.Sprintf("%d is too large", run)}
	}
	r.Run = int(run)
	return r, checkEdgeCounts(peer, line, m, r.InputEdges)
}

// checkEdgeCounts holds a run's Graph500 count against the adjacency
// entries and self loops it also printed, when it printed them: half the
// entries plus the self loops' halves on an undirected graph, the entries
// on a directed one.
func checkEdgeCounts(peer string, line int, m map[string]string, input uint64) error {
	if _, ok := m["self_loops"]; !ok {
		return nil
	}
	f := &fieldReader{peer: peer, line: line, m: m}
	entries, loops := f.uint("csr_edges"), f.uint("self_loops")
	undirected := f.str("undirected") == "1"
	if f.err != nil {
		return f.err
	}
	if undirected && (entries > math.MaxUint64-loops || input != (entries+loops)/2) || !undirected && input != entries {
		return &PeerLineError{Peer: peer, Line: line, Field: "input_edges", Msg: fmt.Sprintf("%d does not follow from csr_edges %d, self_loops %d and undirected %v", input, entries, loops, undirected)}
	}
	return nil
}
