package bfs

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gpuplan/gpuplan/workloads/harness"
)

// PeerArm is the evidence arm of Gunrock's BFS, an external arm
// (evidence.IsExternalArm).
const PeerArm = "gunrock"

// Limits of a peer run.
const (
	// DefaultPeerTimeout bounds a Gunrock run: its single-threaded .mtx
	// parse takes about a minute for a Kronecker graph of scale 22.
	DefaultPeerTimeout = 20 * time.Minute
	// DefaultPeerOutputBytes bounds what is read of its output.
	DefaultPeerOutputBytes = 64 << 20
)

// PeerConfig runs Gunrock essentials' BFS example (the patched binary of
// the peer bundle, which prints a GUNROCK_BFS_GRAPH line and one
// GUNROCK_BFS line per timed run) on the benchmark's graph and roots.
type PeerConfig struct {
	// Binary is the path of Gunrock's bfs binary.
	Binary string
	// Dir is where the graph (written as a symmetric Matrix Market file by
	// frontier.CSR.WriteMatrixMarket) and the roots (0-based, one per line)
	// are written and kept; "" writes them to a temporary directory that is
	// removed after the run.
	Dir string
	// Timeout bounds the run (0: DefaultPeerTimeout).
	Timeout time.Duration
	// MaxOutputBytes bounds the output read (0: DefaultPeerOutputBytes).
	MaxOutputBytes int64
	// Samples is the peer's samples, each one run from every root (0: the
	// benchmark's Samples).
	Samples int
	// exec runs the binary with its arguments and extra environment,
	// writing its output to out (nil: the operating system runs it).
	exec func(ctx context.Context, bin string, args, env []string, out io.Writer) error
}

// PeerResult is what the benchmark recorded of the Gunrock run.
type PeerResult struct {
	Binary string `json:"binary"`
	// Graph and Roots are the files the run read.
	Graph string `json:"graph"`
	Roots string `json:"roots"`
	// Command is the command line, the source list elided.
	Command string `json:"command"`
	// Output is the binary's graph line, as parsed.
	Output GunrockGraph `json:"output_graph"`
	// Runs is its timed runs: Samples x roots, sample by sample.
	Runs int `json:"runs"`
	// Checked says what was checked of every run.
	Checked string `json:"checked"`
}

// check refuses a binary that is missing or cannot be run, before any
// measurement.
func (c *PeerConfig) check() error {
	err := harness.CheckExecutable(c.Binary)
	switch {
	case errors.Is(err, harness.ErrNotExecutable):
		return fmt.Errorf("peer gunrock: %q is not an executable file. Fix: pass the bfs binary the peer bundle's build produced", c.Binary)
	case err != nil:
		return fmt.Errorf("peer gunrock: binary %q: %w. Fix: build it with the peer bundle's run.sh (BUILD_DIR=... ./run.sh build) and pass its bin/bfs", c.Binary, err)
	}
	return nil
}

// peer runs Gunrock on the graph and roots, checks every run against the
// reference and records its samples as the arm PeerArm.
func (b *bench) peer() error {
	c := b.cfg.Peer
	if c == nil {
		return nil
	}
	dir, cleanup, err := c.dir()
	if err != nil {
		return err
	}
	defer cleanup()
	graph, rootsFile, err := b.writePeerInput(dir)
	if err != nil {
		return err
	}
	args := []string{"-m", graph, "-s", b.peerSources()}
	b.cfg.Log("peer gunrock: %s -m %s -s <%d sources: %d samples of %d roots>", c.Binary, graph, b.peerRuns(), b.peerRuns()/len(b.roots), len(b.roots))
	out, err := c.run(args)
	if err != nil {
		return err
	}
	parsed, err := ParseGunrockOutput(bytes.NewReader(out))
	if err != nil {
		return fmt.Errorf("peer gunrock (%s): %w", c.Binary, err)
	}
	if err := b.checkPeer(parsed); err != nil {
		return fmt.Errorf("peer gunrock (%s) failed validation: %w", c.Binary, err)
	}
	b.peerSamples(parsed)
	b.res.Peer = &PeerResult{Binary: c.Binary, Graph: graph, Roots: rootsFile, Output: parsed.Graph, Runs: len(parsed.Runs),
		Command: fmt.Sprintf("GUNROCK_WARMUP=1 %s -m %s -s <sources>", c.Binary, graph),
		Checked: "every run's source, reached vertices, depth and Graph500 edge count equal the CPU reference's; its checksum is the reference's on that ground (the binary does not print its levels)"}
	return nil
}

// dir returns the directory of the peer's input and its cleanup.
func (c *PeerConfig) dir() (string, func(), error) {
	if c.Dir != "" {
		return c.Dir, func() {}, os.MkdirAll(c.Dir, 0o755)
	}
	d, cleanup, err := harness.TempDir("gpuplan-gunrock-")
	if err != nil {
		return "", nil, fmt.Errorf("peer gunrock: %w. Fix: pass a writable directory for the graph file", err)
	}
	return d, cleanup, nil
}

// run runs the binary, bounded in time and output.
func (c *PeerConfig) run(args []string) ([]byte, error) {
	timeout, limit := c.Timeout, c.MaxOutputBytes
	if timeout <= 0 {
		timeout = DefaultPeerTimeout
	}
	if limit <= 0 {
		limit = DefaultPeerOutputBytes
	}
	run := c.exec
	if run == nil {
		run = harness.Exec
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	out := &harness.LimitedBuffer{Limit: limit}
	err := run(ctx, c.Binary, args, []string{"GUNROCK_WARMUP=1"}, out)
	if err != nil {
		return nil, fmt.Errorf("peer gunrock: %s failed: %w; the end of its output:\n%s\nFix: run it by hand with the same graph to see why (the peer bundle's README lists its requirements)", c.Binary, err, harness.Tail(out.String(), 2000))
	}
	if out.Over() {
		return nil, fmt.Errorf("peer gunrock: %s printed more than %d bytes. Fix: raise the output limit or check what it printed", c.Binary, limit)
	}
	return out.Bytes(), nil
}

// writePeerInput writes the graph and the roots into dir.
func (b *bench) writePeerInput(dir string) (graph, roots string, err error) {
	name := strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == ':' {
			return '-'
		}
		return r
	}, b.g.Name)
	graph, roots = filepath.Join(dir, name+".mtx"), filepath.Join(dir, name+".roots")
	if err := writeFileWith(graph, b.g.WriteMatrixMarket); err != nil {
		return "", "", err
	}
	var rb strings.Builder
	for _, r := range b.roots {
		fmt.Fprintf(&rb, "%d\n", r)
	}
	if err := os.WriteFile(roots, []byte(rb.String()), 0o644); err != nil {
		return "", "", fmt.Errorf("peer gunrock: writing %s: %w. Fix: pass a writable directory", roots, err)
	}
	return graph, roots, nil
}

// writeFileWith writes a file through a buffered writer.
func writeFileWith(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("peer gunrock: %w. Fix: pass a writable directory", err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	err = write(w)
	if err == nil {
		err = w.Flush()
	}
	if e := f.Close(); err == nil {
		err = e
	}
	return err
}

// peerRuns is the peer's runs: its samples times the roots.
func (b *bench) peerRuns() int {
	samples := b.cfg.Samples
	if c := b.cfg.Peer; c != nil && c.Samples > 0 {
		samples = c.Samples
	}
	return samples * len(b.roots)
}

// peerSources is the source list: every root, once per sample, sample by
// sample.
func (b *bench) peerSources() string {
	var sb strings.Builder
	for s := range b.peerRuns() / len(b.roots) {
		for i, r := range b.roots {
			if s > 0 || i > 0 {
				sb.WriteByte(',')
			}
			sb.WriteString(strconv.Itoa(int(r)))
		}
	}
	return sb.String()
}

// checkPeer holds the parsed output against the graph and the reference:
// the graph's vertices and adjacency entries read as a symmetric file, and
// for every run its source (sample by sample, root by root), a positive
// time, and the reference's reached vertices, depth and Graph500 edges.
func (b *bench) checkPeer(o GunrockOutput) error {
	g := o.Graph
	if g.Vertices != uint64(b.g.NumVertices()) || g.CSREdges != uint64(b.g.NumEdgeEntries()) || !g.Symmetric {
		return fmt.Errorf("it read %d vertices and %d adjacency entries (symmetric %v), the graph has %d and %d. Fix: check the .mtx file it was given", g.Vertices, g.CSREdges, g.Symmetric, b.g.NumVertices(), b.g.NumEdgeEntries())
	}
	want := b.peerRuns()
	if len(o.Runs) != want {
		return fmt.Errorf("%d timed runs, want %d (%d samples of %d roots). Fix: check that it took every source", len(o.Runs), want, want/len(b.roots), len(b.roots))
	}
	for k, r := range o.Runs {
		i := k % len(b.roots)
		st := b.stats[i]
		switch {
		case r.Run != k:
			return fmt.Errorf("run %d is numbered %d. Fix: check that it took the sources in order", k, r.Run)
		case r.Src != int64(b.roots[i]):
			return fmt.Errorf("run %d started from %d, want root %d. Fix: check that it took the sources in order", k, r.Src, b.roots[i])
		case !(r.TimeMs > 0) || math.IsInf(r.TimeMs, 0):
			return fmt.Errorf("run %d from root %d took %v ms. Fix: check the binary's timer", k, r.Src, r.TimeMs)
		case r.Reached != uint64(st.Reached) || r.Depth != int64(st.Levels-1) || r.InputEdges != st.Edges:
			return fmt.Errorf("run %d from root %d reached %d vertices at depth %d over %d edges; the CPU reference reached %d at depth %d over %d. Fix: this is a bug in the peer; run its --validate", k, r.Src, r.Reached, r.Depth, r.InputEdges, st.Reached, st.Levels-1, st.Edges)
		}
	}
	return nil
}

// peerSamples records the runs as samples of the arm PeerArm (one per
// bench sample: every root once) and summarises them.
func (b *bench) peerSamples(o GunrockOutput) {
	k := len(b.roots)
	t := armTimes{perRoot: make([][]float64, k)}
	for s := range len(o.Runs) / k {
		row := Sample{Arm: PeerArm, Index: uint64(s), Checksum: b.res.ReferenceChecksum}
		for i := range k {
			ns := o.Runs[s*k+i].TimeMs * 1e6
			row.WallNs += ns
			t.perRoot[i] = append(t.perRoot[i], ns)
		}
		row.DeviceNs = row.WallNs
		t.wall, t.device = append(t.wall, row.WallNs), append(t.device, row.WallNs)
		b.res.Samples = append(b.res.Samples, row)
	}
	b.res.Summary.Arms = append(b.res.Summary.Arms, summarize(PeerArm, t.wall, t.device, t.perRoot, b.stats, b.totalLevels()))
}

// GunrockOutput is what the patched Gunrock BFS binary printed: its graph
// line and its timed runs, in order (other lines are ignored).
type GunrockOutput struct {
	Graph GunrockGraph `json:"graph"`
	Runs  []GunrockRun `json:"runs"`
}

// GunrockGraph is the GUNROCK_BFS_GRAPH line: the file, its vertices and
// adjacency entries as loaded, whether it was read as symmetric, and the
// advance load balancing and filter settings.
type GunrockGraph struct {
	File      string `json:"file"`
	Vertices  uint64 `json:"vertices"`
	CSREdges  uint64 `json:"csr_edges"`
	Symmetric bool   `json:"mtx_symmetric"`
	Advance   int64  `json:"advance"`
	Filter    int64  `json:"filter"`
}

// GunrockRun is one GUNROCK_BFS line: the run's number and source, its
// time (CUDA events around the traversal), the vertices it reached, its
// depth (the largest level), the adjacency entries of the reached
// vertices, their self loops, and the Graph500 edge count.
type GunrockRun struct {
	Run        int     `json:"run"`
	Src        int64   `json:"src"`
	TimeMs     float64 `json:"time_ms"`
	Reached    uint64  `json:"reached"`
	Depth      int64   `json:"depth"`
	CSREdges   uint64  `json:"csr_edges"`
	SelfLoops  uint64  `json:"self_loops"`
	InputEdges uint64  `json:"input_edges"`
}

// GunrockLineError is a malformed line of Gunrock's output.
type GunrockLineError struct {
	Line  int
	Field string
	Msg   string
}

// Error names the line and the field, and ends with a "Fix:".
func (e *GunrockLineError) Error() string {
	return fmt.Sprintf("gunrock output line %d, field %s: %s. Fix: use the peer bundle's patched bfs binary, which prints GUNROCK_BFS_GRAPH and GUNROCK_BFS lines", e.Line, e.Field, e.Msg)
}

// ParseGunrockOutput reads the patched Gunrock BFS binary's output: one
// GUNROCK_BFS_GRAPH line, then a GUNROCK_BFS line per timed run, each a
// list of key=value fields. A line longer than 1 MiB, a missing or
// malformed field, a run before the graph line, a second graph line or no
// run at all is an error naming the line.
func ParseGunrockOutput(r io.Reader) (GunrockOutput, error) {
	var out GunrockOutput
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	graphLine := 0
	for line := 1; sc.Scan(); line++ {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		switch fields[0] {
		case "GUNROCK_BFS_GRAPH":
			if graphLine != 0 {
				return out, &GunrockLineError{Line: line, Field: "GUNROCK_BFS_GRAPH", Msg: fmt.Sprintf("a second graph line (the first is line %d)", graphLine)}
			}
			g, err := parseGunrockGraph(line, fields[1:])
			if err != nil {
				return out, err
			}
			out.Graph, graphLine = g, line
		case "GUNROCK_BFS":
			if graphLine == 0 {
				return out, &GunrockLineError{Line: line, Field: "GUNROCK_BFS", Msg: "a run before the graph line"}
			}
			run, err := parseGunrockRun(line, fields[1:])
			if err != nil {
				return out, err
			}
			out.Runs = append(out.Runs, run)
		}
	}
	if err := sc.Err(); err != nil {
		return out, fmt.Errorf("gunrock output: %w. Fix: check the binary's output", err)
	}
	if len(out.Runs) == 0 {
		return out, errors.New("gunrock output has no GUNROCK_BFS run line. Fix: use the peer bundle's patched bfs binary and give it sources")
	}
	return out, nil
}

// gunrockFields reads key=value fields into a map, refusing repeats.
func gunrockFields(line int, fields []string) (map[string]string, error) {
	m := make(map[string]string, len(fields))
	for _, f := range fields {
		k, v, ok := strings.Cut(f, "=")
		if !ok || k == "" {
			return nil, &GunrockLineError{Line: line, Field: f, Msg: "not a key=value field"}
		}
		if _, dup := m[k]; dup {
			return nil, &GunrockLineError{Line: line, Field: k, Msg: "repeated"}
		}
		m[k] = v
	}
	return m, nil
}

// fieldReader reads typed fields of one line, keeping the first error.
type fieldReader struct {
	line int
	m    map[string]string
	err  error
}

func (f *fieldReader) fail(key, msg string) {
	if f.err == nil {
		f.err = &GunrockLineError{Line: f.line, Field: key, Msg: msg}
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

func (f *fieldReader) flag(key string) bool {
	switch v := f.str(key); v {
	case "0":
		return false
	case "1":
		return true
	}
	f.fail(key, fmt.Sprintf("%q is not 0 or 1", f.m[key]))
	return false
}

// parseGunrockGraph reads a GUNROCK_BFS_GRAPH line's fields.
func parseGunrockGraph(line int, fields []string) (GunrockGraph, error) {
	m, err := gunrockFields(line, fields)
	if err != nil {
		return GunrockGraph{}, err
	}
	f := &fieldReader{line: line, m: m}
	g := GunrockGraph{File: f.str("file"), Vertices: f.uint("vertices"), CSREdges: f.uint("csr_edges"),
		Symmetric: f.flag("mtx_symmetric"), Advance: f.int("advance"), Filter: f.int("filter")}
	return g, f.err
}

// parseGunrockRun reads a GUNROCK_BFS line's fields: run=N first, then the
// rest; the Graph500 count must be the one its other fields give.
func parseGunrockRun(line int, fields []string) (GunrockRun, error) {
	m, err := gunrockFields(line, fields)
	if err != nil {
		return GunrockRun{}, err
	}
	f := &fieldReader{line: line, m: m}
	r := GunrockRun{Src: f.int("src"), TimeMs: f.float("time_ms"), Reached: f.uint("reached"), Depth: f.int("depth"),
		CSREdges: f.uint("csr_edges"), SelfLoops: f.uint("self_loops"), InputEdges: f.uint("input_edges")}
	run := f.uint("run")
	undirected := f.flag("undirected")
	if f.err != nil {
		return r, f.err
	}
	if run > math.MaxInt32 {
		return r, &GunrockLineError{Line: line, Field: "run", Msg: fmt.Sprintf("%d is too large", run)}
	}
	r.Run = int(run)
	if undirected && (r.CSREdges > math.MaxUint64-r.SelfLoops || r.InputEdges != (r.CSREdges+r.SelfLoops)/2) ||
		!undirected && r.InputEdges != r.CSREdges {
		return r, &GunrockLineError{Line: line, Field: "input_edges", Msg: fmt.Sprintf("%d does not follow from csr_edges %d, self_loops %d and undirected %v", r.InputEdges, r.CSREdges, r.SelfLoops, undirected)}
	}
	return r, nil
}
