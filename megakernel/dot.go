package megakernel

import (
	"fmt"
	"io"
	"strconv"

	"gonum.org/v1/gonum/graph"
	"gonum.org/v1/gonum/graph/encoding"
	"gonum.org/v1/gonum/graph/encoding/dot"
	"gonum.org/v1/gonum/graph/simple"

	"github.com/gpuplan/gpuplan/internal/quote"
)

// TooLargeForDOTError reports a plan with more than MaxDOTWaves waves.
type TooLargeForDOTError struct{ Waves int }

// Error describes the failure and ends with a "Fix:" sentence.
func (e *TooLargeForDOTError) Error() string {
	return fmt.Sprintf("the plan has %d waves; a Graphviz drawing is limited to %d. Fix: use --json or the text output, or plan a smaller subset of the waves", e.Waves, MaxDOTWaves)
}

// attrs is a list of DOT attributes; it implements encoding.Attributer.
type attrs []encoding.Attribute

// Attributes returns the attributes.
func (a attrs) Attributes() []encoding.Attribute { return a }

// dotNode is one wave. In a cluster it carries its label; in the whole
// graph, which only draws the edges, it carries none, so each wave's
// attributes are written once, inside its barrier group.
type dotNode struct {
	id int64
	attrs
}

// ID returns the wave id.
func (n dotNode) ID() int64 { return n.id }

// DOTID names the wave's node "w<id>".
func (n dotNode) DOTID() string { return "w" + strconv.FormatInt(n.id, 10) }

// dotEdge is one dependency, with its style.
type dotEdge struct {
	from, to dotNode
	attrs
}

// From returns the producer wave.
func (e dotEdge) From() graph.Node { return e.from }

// To returns the consumer wave.
func (e dotEdge) To() graph.Node { return e.to }

// ReversedEdge returns the edge the other way round.
func (e dotEdge) ReversedEdge() graph.Edge { return dotEdge{from: e.to, to: e.from, attrs: e.attrs} }

// dotGraph is a directed graph with a DOT name, graph and node attributes,
// and subgraphs (the barrier groups as clusters).
type dotGraph struct {
	*simple.DirectedGraph
	id                string
	graphAttr, nodeAt attrs
	clusters          []dot.Graph
}

// DOTID returns the graph's name.
func (g dotGraph) DOTID() string { return g.id }

// DOTAttributers returns the graph's and its nodes' default attributes.
func (g dotGraph) DOTAttributers() (graph, node, edge encoding.Attributer) {
	return g.graphAttr, g.nodeAt, attrs(nil)
}

// Structure returns the clusters.
func (g dotGraph) Structure() []dot.Graph { return g.clusters }

// WriteDOT writes the wave DAG as Graphviz DOT, encoded by gonum's
// graph/encoding/dot: one cluster per barrier group, whose waves carry
// their sizes; solid edges for the per-producer waits and dashed grey
// edges for the dependencies the wait form drops. Plans with more than
// MaxDOTWaves waves are refused with *TooLargeForDOTError.
func (p *WorkloadPlan) WriteDOT(out io.Writer) error {
	if len(p.WaveNames) > MaxDOTWaves {
		return &TooLargeForDOTError{Waves: len(p.WaveNames)}
	}
	name := quote.Text(p.Name)
	if p.Name == "" {
		name = "megakernel"
	}
	g := dotGraph{DirectedGraph: simple.NewDirectedGraph(), id: name,
		graphAttr: attrs{{Key: "label", Value: fmt.Sprintf("%s: %s, %s, %s, %s", name, p.Execution.Topology,
			plural(len(p.Groups), "barrier group", "barrier groups"), plural(p.GlobalBarriers, "grid-wide barrier", "grid-wide barriers"),
			plural(p.WaitStats.Waits, "producer wait", "producer waits"))},
			{Key: "labelloc", Value: "t"}, {Key: "compound", Value: "true"}},
		nodeAt: attrs{{Key: "shape", Value: "box"}, {Key: "style", Value: "rounded"}, {Key: "fontsize", Value: "10"}},
	}
	for id := range p.WaveNames {
		g.AddNode(dotNode{id: int64(id)})
	}
	for gi, members := range p.Groups {
		g.clusters = append(g.clusters, p.dotCluster(gi, members))
	}
	p.addDOTEdges(g.DirectedGraph)
	b, err := dot.Marshal(g, "", "", "  ")
	if err != nil {
		return fmt.Errorf("drawing the plan as DOT: %w. Fix: report this as a bug", err)
	}
	_, err = out.Write(append(b, '\n'))
	return err
}

// dotCluster is barrier group gi: a subgraph of its waves, each labelled
// with its name and sizes.
func (p *WorkloadPlan) dotCluster(gi int, members []int) dot.Graph {
	c := dotGraph{DirectedGraph: simple.NewDirectedGraph(), id: fmt.Sprintf("cluster_%d", gi),
		graphAttr: attrs{{Key: "label", Value: fmt.Sprintf("group %d", gi)}, {Key: "style", Value: "dashed"}}}
	for _, id := range members {
		wv := p.waves[id]
		c.AddNode(dotNode{id: int64(id), attrs: attrs{{Key: "label", Value: fmt.Sprintf("%s\nfrontier %s, scratch %s, output %s",
			p.waveLabel(id), humanBytes(wv.FrontierBytes), humanBytes(wv.ScratchBytes), humanBytes(wv.OutputBytes))}}})
	}
	return c
}

// addDOTEdges adds each dependency once: solid where a wave waits on its
// producer, dashed grey where the wait form drops it as implied.
func (p *WorkloadPlan) addDOTEdges(g *simple.DirectedGraph) {
	kept := make(map[[2]int]bool, p.WaitStats.Waits)
	for v, ws := range p.Waits {
		for _, q := range ws {
			kept[[2]int{q, v}] = true
		}
	}
	dropped := attrs{{Key: "style", Value: "dashed"}, {Key: "color", Value: "gray"}}
	for _, d := range p.deps {
		if g.HasEdgeFromTo(int64(d.Before), int64(d.After)) {
			continue
		}
		e := dotEdge{from: dotNode{id: int64(d.Before)}, to: dotNode{id: int64(d.After)}}
		if !kept[[2]int{d.Before, d.After}] {
			e.attrs = dropped
		}
		g.SetEdge(e)
	}
}
