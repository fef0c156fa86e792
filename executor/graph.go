package executor

import "fmt"

// MaxGraphNodes bounds the kernel nodes of one graph.
const MaxGraphNodes = 1 << 20

// GraphNode is a node of a graph being built, by its position.
type GraphNode int

// GraphDep is a dependency of a new node on an earlier one. A Programmatic
// dependency (programmatic dependent launch, Hopper and later) lets the
// dependent kernel start before Node finishes; the kernel must execute
// griddepcontrol.wait before it reads what Node writes.
type GraphDep struct {
	Node         GraphNode
	Programmatic bool
}

// GraphBuilder builds a CUDA graph of kernel nodes with explicit edges,
// instantiated once (Instantiate) and replayed many times (Graph.Launch).
// A GraphBuilder is not safe for concurrent use.
type GraphBuilder struct {
	x      *Executor
	ref    GraphRef
	nodes  []GraphNodeRef
	used   []uint64
	closed bool
}

// Graph is an instantiated graph. The resident buffers its nodes use stay
// in flight (Free refuses them) until Close.
type Graph struct {
	x      *Executor
	exec   GraphExecRef
	nodes  int
	used   []uint64
	closed bool
}

// NewGraph starts an empty graph.
func (x *Executor) NewGraph() (*GraphBuilder, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return nil, ErrClosed
	}
	ref, err := x.b.GraphCreate()
	if err != nil {
		return nil, err
	}
	x.pending++ // the builder holds buffers until Instantiate or Close
	return &GraphBuilder{x: x, ref: ref}, nil
}

// AddKernel adds a launch of k after deps, checked like a stream launch
// (Params arguments and cooperative launches are refused), and returns its
// node.
func (g *GraphBuilder) AddKernel(k *Kernel, cfg LaunchConfig, deps []GraphDep, args ...Arg) (GraphNode, error) {
	x := g.x
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return 0, ErrClosed
	}
	if g.closed {
		return 0, invalidArg("graph", "Fix: start a new graph with NewGraph.", "was instantiated or closed")
	}
	if len(g.nodes) >= MaxGraphNodes {
		return 0, invalidArg("graph", fmt.Sprintf("Fix: build graphs of at most %d nodes.", MaxGraphNodes), "%d nodes", len(g.nodes))
	}
	if cfg.Cooperative {
		return 0, invalidArg("graph node", "Fix: launch cooperative kernels on a stream.", "cooperative launches are not graph nodes here")
	}
	edges := make([]GraphEdge, len(deps))
	for i, d := range deps {
		if d.Node < 0 || int(d.Node) >= len(g.nodes) {
			return 0, invalidArg(fmt.Sprintf("graph dependency %d", i), "Fix: depend on a node AddKernel returned earlier.", "node %d of %d", d.Node, len(g.nodes))
		}
		edges[i] = GraphEdge{From: g.nodes[d.Node], Programmatic: d.Programmatic}
	}
	la, err := x.checkDirectLaunchLocked(k, cfg, args)
	if err != nil {
		return 0, err
	}
	if len(la.clears) > 0 {
		return 0, invalidArg("graph node", "Fix: pass Ptr instead of Out; a graph node does not zero its outputs.", "kernel %s has an Out argument", k.name)
	}
	ref, err := x.b.GraphAddKernel(g.ref, k.ref, cfg, la.vals, edges)
	if err != nil {
		return 0, err
	}
	for _, id := range la.used {
		x.buffers[id].inFlight++
	}
	g.used = append(g.used, la.used...)
	g.nodes = append(g.nodes, ref)
	return GraphNode(len(g.nodes) - 1), nil
}

// Instantiate instantiates the graph; the builder is then closed.
func (g *GraphBuilder) Instantiate() (*Graph, error) {
	x := g.x
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return nil, ErrClosed
	}
	if g.closed {
		return nil, invalidArg("graph", "Fix: start a new graph with NewGraph.", "was instantiated or closed")
	}
	if len(g.nodes) == 0 {
		return nil, invalidArg("graph", "Fix: add at least one kernel node.", "is empty")
	}
	exec, err := x.b.GraphInstantiate(g.ref)
	if err != nil {
		return nil, err
	}
	out := &Graph{x: x, exec: exec, nodes: len(g.nodes), used: g.used}
	g.used = nil
	g.closeLocked()
	x.pending++ // the graph holds its buffers until Close
	return out, nil
}

// Close abandons a graph that was not instantiated.
func (g *GraphBuilder) Close() error {
	g.x.mu.Lock()
	defer g.x.mu.Unlock()
	if g.closed || g.x.closed {
		g.closed = true
		return nil
	}
	return g.closeLocked()
}

func (g *GraphBuilder) closeLocked() error {
	g.closed = true
	g.x.pending--
	releaseUsed(g.x, g.used)
	g.used = nil
	return g.x.b.GraphDestroy(g.ref)
}

// releaseUsed clears one in-flight mark per listed buffer.
func releaseUsed(x *Executor, used []uint64) {
	for _, id := range used {
		if r, ok := x.buffers[id]; ok && r.inFlight > 0 {
			r.inFlight--
		}
	}
}

// Nodes returns the graph's kernel nodes.
func (g *Graph) Nodes() int { return g.nodes }

// Launch enqueues one replay of the graph on s, without waiting; each
// replay counts as one graph launch in the telemetry.
func (g *Graph) Launch(s *Stream) error {
	x := g.x
	x.mu.Lock()
	defer x.mu.Unlock()
	if g.closed {
		return invalidArg("graph", "Fix: instantiate a new graph.", "is closed")
	}
	if err := s.usableLocked(); err != nil {
		return err
	}
	if err := x.b.GraphLaunch(g.exec, s.ref); err != nil {
		return err
	}
	s.markBusyLocked(nil)
	x.tel.add(cGraphLaunches, 1)
	return nil
}

// Close destroys the instantiated graph and releases its buffers. Replays
// enqueued before must be synchronised first.
func (g *Graph) Close() error {
	x := g.x
	x.mu.Lock()
	defer x.mu.Unlock()
	if g.closed || x.closed {
		g.closed = true
		return nil
	}
	g.closed = true
	x.pending--
	releaseUsed(x, g.used)
	g.used = nil
	return x.b.GraphExecDestroy(g.exec)
}
