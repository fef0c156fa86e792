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
	"strings"
	"time"

	"github.com/gpuplan/gpuplan/workloads/harness"
)

// PeerArm is the evidence arm of Gunrock's BFS, an external arm
// (evidence.IsExternalArm); the other peers' arms are their PeerKind names.
const PeerArm = "gunrock"

// Limits of a peer run.
const (
	// DefaultPeerTimeout bounds one peer's run: Gunrock's single-threaded
	// .mtx parse takes about a minute for a Kronecker graph of scale 22,
	// and BLEST's reordering about 50 s.
	DefaultPeerTimeout = 20 * time.Minute
	// DefaultPeerOutputBytes bounds what is read of its output.
	DefaultPeerOutputBytes = 64 << 20
)

// PeerConfig runs one peer BFS code's driver binary (see PeerKinds) on the
// benchmark's graph and roots.
type PeerConfig struct {
	// Kind names the peer (a PeerKinds name; "" is gunrock).
	Kind string
	// Binary is the path of the peer's driver binary.
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

// PeerResult is what the benchmark recorded of one peer's run.
type PeerResult struct {
	Peer   string `json:"peer"`
	Binary string `json:"binary"`
	// Graph and Roots are the files the run read.
	Graph string `json:"graph"`
	Roots string `json:"roots"`
	// Command is the command line, a source list elided.
	Command string `json:"command"`
	// Output is the binary's graph line, as parsed: its preprocessing,
	// untimed, is there (Output.Preprocessing).
	Output PeerGraph `json:"output_graph"`
	// Runs is its timed runs: Samples x roots.
	Runs int `json:"runs"`
	// Checked says what was checked of every run.
	Checked string `json:"checked"`
}

// PreprocessingNs returns the peer's untimed preprocessing, all of it, in
// nanoseconds (0 when it reports none).
func (r *PeerResult) PreprocessingNs() float64 {
	var s float64
	for _, v := range r.Output.Preprocessing {
		s += v
	}
	return s * 1e9
}

// name is the peer's name as the user gave it ("" is gunrock).
func (c *PeerConfig) name() string {
	if c.Kind == "" {
		return PeerArm
	}
	return c.Kind
}

// kind returns the peer's kind.
func (c *PeerConfig) kind() (PeerKind, error) { return LookupPeer(c.name()) }

// check refuses an unknown peer, or a binary that is missing or cannot be
// run, before any measurement.
func (c *PeerConfig) check() error {
	k, err := c.kind()
	if err != nil {
		return fmt.Errorf("peer: %w", err)
	}
	err = harness.CheckExecutable(c.Binary)
	switch {
	case errors.Is(err, harness.ErrNotExecutable):
		return fmt.Errorf("peer %s: %q is not an executable file. Fix: pass the driver binary %s", k.Name, c.Binary, k.Build)
	case err != nil:
		return fmt.Errorf("peer %s: binary %q: %w. Fix: build it with %s and pass it", k.Name, c.Binary, err, k.Build)
	}
	return nil
}

// peerFiles is a written peer input: the graph's .mtx file and the roots'.
type peerFiles struct{ graph, roots string }

// peers runs every configured peer in turn. Peers with the same Dir (the
// temporary one included) read one graph file, written once.
func (b *bench) peers() error {
	written := map[string]peerFiles{}
	var cleanups []func()
	defer func() {
		for _, c := range cleanups {
			c()
		}
	}()
	for i := range b.cfg.Peers {
		c := &b.cfg.Peers[i]
		in, ok := written[c.Dir]
		if !ok {
			dir, cleanup, err := c.dir()
			if err != nil {
				return err
			}
			cleanups = append(cleanups, cleanup)
			if in, err = b.writePeerInput(c.name(), dir); err != nil {
				return err
			}
			written[c.Dir] = in
		}
		if err := b.peer(c, in); err != nil {
			return err
		}
	}
	return nil
}

// peer runs one peer on the graph and roots written in in, checks every
// run against the reference and records its samples as its external arm.
func (b *bench) peer(c *PeerConfig, in peerFiles) error {
	k, err := c.kind()
	if err != nil {
		return err
	}
	samples := b.peerRuns(c) / len(b.roots)
	args, env := k.args(peerInput{graph: in.graph, roots: in.roots, list: b.roots}, samples)
	b.cfg.Log("peer %s: %s %s (%d samples of %d roots)", k.Name, c.Binary, elideSources(args), samples, len(b.roots))
	out, err := c.run(k.Name, args, env)
	if err != nil {
		return err
	}
	parsed, err := ParsePeerOutput(k, bytes.NewReader(out))
	if err != nil {
		return fmt.Errorf("peer %s (%s): %w", k.Name, c.Binary, err)
	}
	if err := b.checkPeer(k, c, parsed); err != nil {
		return fmt.Errorf("peer %s (%s) failed validation: %w", k.Name, c.Binary, err)
	}
	b.peerSamples(k, parsed)
	b.res.Peers = append(b.res.Peers, PeerResult{Peer: k.Name, Binary: c.Binary, Graph: in.graph, Roots: in.roots, Output: parsed.Graph, Runs: len(parsed.Runs),
		Command: strings.Join(append(env, c.Binary, elideSources(args)), " "),
		Checked: "every run's source, reached vertices, depth and Graph500 edge count equal the CPU reference's; its checksum is the reference's on that ground (the binary does not print its levels)"})
	return nil
}

// elideSources joins args with a long source list elided.
func elideSources(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = a
		if len(a) > 64 && strings.Count(a, ",") > 4 {
			out[i] = fmt.Sprintf("<%d sources>", strings.Count(a, ",")+1)
		}
	}
	return strings.Join(out, " ")
}

// dir returns the directory of the peer's input and its cleanup.
func (c *PeerConfig) dir() (string, func(), error) {
	if c.Dir != "" {
		return c.Dir, func() {}, os.MkdirAll(c.Dir, 0o755)
	}
	d, cleanup, err := harness.TempDir("gpuplan-peers-")
	if err != nil {
		return "", nil, fmt.Errorf("peer %s: %w. Fix: pass a writable directory for the graph file", c.name(), err)
	}
	return d, cleanup, nil
}

// run runs the binary, bounded in time and output.
func (c *PeerConfig) run(peer string, args, env []string) ([]byte, error) {
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
	err := run(ctx, c.Binary, args, env, out)
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return nil, fmt.Errorf("peer %s: %s ran past its timeout of %s; the end of its output:\n%s\nFix: raise --peer-timeout, or check that it makes progress", peer, c.Binary, timeout, harness.Tail(out.String(), 2000))
	case err != nil:
		return nil, fmt.Errorf("peer %s: %s failed: %w; the end of its output:\n%s\nFix: run it by hand with the same graph to see why (the peer bundle's README lists its requirements)", peer, c.Binary, err, harness.Tail(out.String(), 2000))
	case out.Over():
		return nil, fmt.Errorf("peer %s: %s printed more than %d bytes. Fix: raise the output limit or check what it printed", peer, c.Binary, limit)
	}
	return out.Bytes(), nil
}

// writePeerInput writes the graph and the roots into dir, for the peer
// named peer and those that share dir.
func (b *bench) writePeerInput(peer, dir string) (peerFiles, error) {
	name := strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == ':' {
			return '-'
		}
		return r
	}, b.g.Name)
	graph, roots := filepath.Join(dir, name+".mtx"), filepath.Join(dir, name+".roots")
	if err := writeFileWith(peer, graph, b.g.WriteMatrixMarket); err != nil {
		return peerFiles{}, err
	}
	var rb strings.Builder
	for _, r := range b.roots {
		fmt.Fprintf(&rb, "%d\n", r)
	}
	if err := os.WriteFile(roots, []byte(rb.String()), 0o644); err != nil {
		return peerFiles{}, fmt.Errorf("peer %s: writing %s: %w. Fix: pass a writable directory", peer, roots, err)
	}
	return peerFiles{graph: graph, roots: roots}, nil
}

// writeFileWith writes a file through a buffered writer.
func writeFileWith(peer, path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("peer %s: %w. Fix: pass a writable directory", peer, err)
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

// peerRuns is a peer's runs: its samples times the roots.
func (b *bench) peerRuns(c *PeerConfig) int {
	samples := b.cfg.Samples
	if c.Samples > 0 {
		samples = c.Samples
	}
	return samples * len(b.roots)
}

// peerOrder returns the root index and sample of the peer's k-th run.
func (b *bench) peerOrder(k PeerKind, c *PeerConfig, run int) (root, sample int) {
	n := len(b.roots)
	if k.sampleMajor {
		return run % n, run / n
	}
	per := b.peerRuns(c) / n
	return run / per, run % per
}

// checkPeer holds the parsed output against the graph and the reference:
// the graph's vertices (and, where it prints them, its adjacency entries
// read as a symmetric file), and for every run its number, its source, a
// positive time, and the reference's reached vertices, depth and Graph500
// edges.
func (b *bench) checkPeer(k PeerKind, c *PeerConfig, o PeerOutput) error {
	if err := b.checkPeerGraph(o.Graph); err != nil {
		return err
	}
	want := b.peerRuns(c)
	if len(o.Runs) != want {
		return fmt.Errorf("%d timed runs, want %d (%d samples of %d roots). Fix: check that it took every root", len(o.Runs), want, want/len(b.roots), len(b.roots))
	}
	for j, r := range o.Runs {
		i, _ := b.peerOrder(k, c, j)
		st := b.stats[i]
		switch {
		case r.Run != j:
			return fmt.Errorf("run %d is numbered %d. Fix: check that it took the roots in order", j, r.Run)
		case r.Src != int64(b.roots[i]):
			return fmt.Errorf("run %d started from %d, want root %d. Fix: check that it took the roots in order", j, r.Src, b.roots[i])
		case !(r.TimeMs > 0) || math.IsInf(r.TimeMs, 0):
			return fmt.Errorf("run %d from root %d took %v ms. Fix: check the binary's timer", j, r.Src, r.TimeMs)
		case r.Reached != uint64(st.Reached) || r.Depth != int64(st.Levels-1) || r.InputEdges != st.Edges:
			return fmt.Errorf("run %d from root %d reached %d vertices at depth %d over %d edges; the CPU reference reached %d at depth %d over %d. Fix: this is a bug in the peer; run its selftest", j, r.Src, r.Reached, r.Depth, r.InputEdges, st.Reached, st.Levels-1, st.Edges)
		}
	}
	return nil
}

// checkPeerGraph holds the graph line against the graph: its vertices,
// and Gunrock's adjacency entries and symmetric read.
func (b *bench) checkPeerGraph(g PeerGraph) error {
	if g.Vertices != uint64(b.g.NumVertices()) {
		return fmt.Errorf("it read %d vertices, the graph has %d. Fix: check the .mtx file it was given", g.Vertices, b.g.NumVertices())
	}
	if e, ok := g.Fields["csr_edges"]; ok && (e != fmt.Sprint(b.g.NumEdgeEntries()) || g.Fields["mtx_symmetric"] != "1") {
		return fmt.Errorf("it read %s adjacency entries (symmetric %s), the graph has %d. Fix: check the .mtx file it was given", e, g.Fields["mtx_symmetric"], b.g.NumEdgeEntries())
	}
	return nil
}

// peerSamples records the runs as samples of the peer's arm (one per bench
// sample: every root once) and summarises them.
func (b *bench) peerSamples(k PeerKind, o PeerOutput) {
	n := len(b.roots)
	samples := len(o.Runs) / n
	t := armTimes{perRoot: make([][]float64, n)}
	rows := make([]Sample, samples)
	for j, r := range o.Runs {
		i, s := b.peerOrder(k, &PeerConfig{Samples: samples}, j)
		ns := r.TimeMs * 1e6
		rows[s].WallNs += ns
		t.perRoot[i] = append(t.perRoot[i], ns)
	}
	for s := range rows {
		rows[s].Arm, rows[s].Index, rows[s].Checksum = k.Name, uint64(s), b.res.ReferenceChecksum
		rows[s].DeviceNs = rows[s].WallNs
		t.wall, t.device = append(t.wall, rows[s].WallNs), append(t.device, rows[s].WallNs)
	}
	b.res.Samples = append(b.res.Samples, rows...)
	b.res.Summary.Arms = append(b.res.Summary.Arms, summarize(Arm(k.Name), t.wall, t.device, t.perRoot, b.stats, b.totalLevels()))
}
