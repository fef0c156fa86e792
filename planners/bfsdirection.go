package planners

import (
	"fmt"
	"math/bits"
)

// BFSDirection is the direction one BFS level runs in.
type BFSDirection uint8

const (
	// DirectionTopDown expands the out-edges of every frontier vertex
	// (push): its work is the frontier's edges.
	DirectionTopDown BFSDirection = iota + 1
	// DirectionBottomUp has every unvisited vertex scan its edges for a
	// parent in the frontier bitmap and stop at the first one found
	// (pull): its work is at most the unexplored edges.
	DirectionBottomUp
)

// String returns "top-down" or "bottom-up".
func (d BFSDirection) String() string {
	switch d {
	case DirectionTopDown:
		return "top-down"
	case DirectionBottomUp:
		return "bottom-up"
	}
	return fmt.Sprintf("BFSDirection(%d)", uint8(d))
}

// MarshalText writes the direction's name, so JSON shows "top-down".
func (d BFSDirection) MarshalText() ([]byte, error) {
	if d != DirectionTopDown && d != DirectionBottomUp {
		return nil, fmt.Errorf("BFS direction %d is not top-down (1) or bottom-up (2). Fix: use DirectionTopDown or DirectionBottomUp", uint8(d))
	}
	return []byte(d.String()), nil
}

// Beamer's thresholds (Beamer, Asanović and Patterson, "Direction-optimizing
// breadth-first search", SC 2012) and the degree gate's default.
const (
	// DefaultDirectionAlpha: go bottom-up once the frontier's edges
	// exceed the unexplored edges / 14.
	DefaultDirectionAlpha = 14
	// DefaultDirectionBeta: go back top-down once the frontier shrinks
	// below the vertices / 24.
	DefaultDirectionBeta = 24
	// DefaultBottomUpMinDegree: graphs of average degree below 5 (grids
	// at 4, road networks near 2.6) keep every level top-down. Their
	// frontiers stay a thin wave, so a bottom-up level would scan every
	// unvisited vertex to find few parents.
	DefaultBottomUpMinDegree = 5
)

// DirectionParams are the direction planner's thresholds.
type DirectionParams struct {
	// Alpha: a top-down level is followed by a bottom-up one when
	// frontier_edges x Alpha > unexplored_edges.
	Alpha uint64 `json:"alpha"`
	// Beta: a bottom-up level is followed by a top-down one when the
	// frontier shrank and frontier_vertices x Beta <= vertices.
	Beta uint64 `json:"beta"`
	// MinAverageDegree: when edge_entries < MinAverageDegree x vertices,
	// every level is top-down; 0 disables the gate.
	MinAverageDegree uint64 `json:"min_average_degree"`
}

// DefaultDirectionParams returns Beamer's alpha 14 and beta 24 and the
// degree gate at 5.
func DefaultDirectionParams() DirectionParams {
	return DirectionParams{Alpha: DefaultDirectionAlpha, Beta: DefaultDirectionBeta, MinAverageDegree: DefaultBottomUpMinDegree}
}

// BFSGraphProfile is the degree profile of the graph a BFS traverses.
type BFSGraphProfile struct {
	// Vertices is the vertex count.
	Vertices uint64 `json:"vertices"`
	// EdgeEntries is the adjacency entry count (an undirected edge counts
	// twice); EdgeEntries / Vertices is the average degree.
	EdgeEntries uint64 `json:"edge_entries"`
}

// BFSLevelState describes the frontier a BFS level is about to expand.
type BFSLevelState struct {
	// Level is the level the step discovers (1 for the root's neighbours).
	Level uint64 `json:"level"`
	// Previous is the direction of the previous step, 0 before the first.
	Previous BFSDirection `json:"previous"`
	// FrontierVertices is the frontier's vertex count (n_f, at least 1).
	FrontierVertices uint64 `json:"frontier_vertices"`
	// PreviousFrontierVertices is the previous step's frontier size.
	PreviousFrontierVertices uint64 `json:"previous_frontier_vertices"`
	// FrontierEdges is the sum of the frontier's degrees (m_f).
	FrontierEdges uint64 `json:"frontier_edges"`
	// UnexploredEdges is the sum of the unvisited vertices' degrees (m_u).
	UnexploredEdges uint64 `json:"unexplored_edges"`
}

// BFSDirectionReason says why a level got its direction.
type BFSDirectionReason uint8

// The reasons, with their stable names.
const (
	// ReasonLowAverageDegree: the degree gate keeps the level top-down.
	ReasonLowAverageDegree BFSDirectionReason = iota + 1
	// ReasonFrontierEdgesWithinThreshold: after a top-down level,
	// frontier_edges x alpha <= unexplored_edges: stay top-down.
	ReasonFrontierEdgesWithinThreshold
	// ReasonFrontierEdgesAboveThreshold: after a top-down level,
	// frontier_edges x alpha > unexplored_edges: go bottom-up.
	ReasonFrontierEdgesAboveThreshold
	// ReasonFrontierGrowing: after a bottom-up level the frontier did not
	// shrink: stay bottom-up.
	ReasonFrontierGrowing
	// ReasonFrontierAboveThreshold: the frontier shrank but
	// frontier_vertices x beta > vertices: stay bottom-up.
	ReasonFrontierAboveThreshold
	// ReasonFrontierBelowThreshold: the frontier shrank to
	// frontier_vertices x beta <= vertices: go back top-down.
	ReasonFrontierBelowThreshold
)

var directionReasonNames = [...]string{
	ReasonLowAverageDegree:             "low_average_degree",
	ReasonFrontierEdgesWithinThreshold: "frontier_edges_within_unexplored_over_alpha",
	ReasonFrontierEdgesAboveThreshold:  "frontier_edges_above_unexplored_over_alpha",
	ReasonFrontierGrowing:              "frontier_growing",
	ReasonFrontierAboveThreshold:       "frontier_above_vertices_over_beta",
	ReasonFrontierBelowThreshold:       "frontier_shrunk_below_vertices_over_beta",
}

// String returns the reason's stable snake_case name.
func (r BFSDirectionReason) String() string {
	if int(r) < len(directionReasonNames) && directionReasonNames[r] != "" {
		return directionReasonNames[r]
	}
	return fmt.Sprintf("BFSDirectionReason(%d)", uint8(r))
}

// MarshalText writes the reason's name.
func (r BFSDirectionReason) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// BFSDirectionDecision is the planner's decision for one level, with the
// numbers it was made from: what a session records in its evidence.
type BFSDirectionDecision struct {
	Level            uint64             `json:"level"`
	Direction        BFSDirection       `json:"direction"`
	Reason           BFSDirectionReason `json:"reason"`
	FrontierVertices uint64             `json:"frontier_vertices"`
	FrontierEdges    uint64             `json:"frontier_edges"`
	UnexploredEdges  uint64             `json:"unexplored_edges"`
}

// String returns the decision's stable one-line record, for example
// "bfs-direction-v1|level=2|direction=bottom-up|reason=frontier_edges_above_unexplored_over_alpha|frontier_vertices=1500|frontier_edges=90000|unexplored_edges=1000000".
func (d BFSDirectionDecision) String() string {
	return fmt.Sprintf("bfs-direction-v1|level=%d|direction=%s|reason=%s|frontier_vertices=%d|frontier_edges=%d|unexplored_edges=%d",
		d.Level, d.Direction, d.Reason, d.FrontierVertices, d.FrontierEdges, d.UnexploredEdges)
}

// PlanBFSDirection decides the direction of one BFS level, Beamer-style:
// after a top-down level (or at the first level) it goes bottom-up when
// the frontier's edges exceed the unexplored edges / alpha; after a
// bottom-up level it stays bottom-up while the frontier grows or holds more
// than vertices / beta vertices, and goes back top-down otherwise. Graphs
// under the degree gate stay top-down. The comparisons are exact integer
// products (128-bit), never divisions.
func PlanBFSDirection(graph BFSGraphProfile, state BFSLevelState, params DirectionParams) (BFSDirectionDecision, error) {
	if err := checkDirectionInput(graph, state, params); err != nil {
		return BFSDirectionDecision{}, err
	}
	d := BFSDirectionDecision{Level: state.Level, FrontierVertices: state.FrontierVertices,
		FrontierEdges: state.FrontierEdges, UnexploredEdges: state.UnexploredEdges}
	switch {
	case params.MinAverageDegree > 0 && productAbove(params.MinAverageDegree, graph.Vertices, graph.EdgeEntries):
		d.Direction, d.Reason = DirectionTopDown, ReasonLowAverageDegree
	case state.Previous != DirectionBottomUp:
		d.Direction, d.Reason = DirectionTopDown, ReasonFrontierEdgesWithinThreshold
		if productAbove(state.FrontierEdges, params.Alpha, state.UnexploredEdges) {
			d.Direction, d.Reason = DirectionBottomUp, ReasonFrontierEdgesAboveThreshold
		}
	case state.FrontierVertices >= state.PreviousFrontierVertices:
		d.Direction, d.Reason = DirectionBottomUp, ReasonFrontierGrowing
	case productAbove(state.FrontierVertices, params.Beta, graph.Vertices):
		d.Direction, d.Reason = DirectionBottomUp, ReasonFrontierAboveThreshold
	default:
		d.Direction, d.Reason = DirectionTopDown, ReasonFrontierBelowThreshold
	}
	return d, nil
}

// productAbove reports whether a x b > c, exactly.
func productAbove(a, b, c uint64) bool {
	hi, lo := bits.Mul64(a, b)
	return hi != 0 || lo > c
}

// BFSDirectionErrorKind names a direction planning failure.
type BFSDirectionErrorKind uint8

// The direction planning failures, in the order they are checked.
const (
	// DirectionZeroVertices: graph.vertices is 0.
	DirectionZeroVertices BFSDirectionErrorKind = iota + 1
	// DirectionZeroAlpha: params.alpha is 0.
	DirectionZeroAlpha
	// DirectionZeroBeta: params.beta is 0.
	DirectionZeroBeta
	// DirectionBadPrevious: state.previous is neither 0 nor a direction.
	DirectionBadPrevious
	// DirectionEmptyFrontier: state.frontier_vertices is 0.
	DirectionEmptyFrontier
	// DirectionFrontierAboveVertices: state.frontier_vertices exceeds
	// graph.vertices.
	DirectionFrontierAboveVertices
	// DirectionPreviousFrontierAboveVertices: state.previous_frontier_vertices
	// exceeds graph.vertices.
	DirectionPreviousFrontierAboveVertices
	// DirectionFrontierEdgesAboveGraph: state.frontier_edges exceeds
	// graph.edge_entries.
	DirectionFrontierEdgesAboveGraph
	// DirectionUnexploredEdgesAboveGraph: state.unexplored_edges exceeds
	// graph.edge_entries.
	DirectionUnexploredEdgesAboveGraph
)

// BFSDirectionError is a direction planning failure: Value is the
// offending input, Limit what it may not exceed (when there is a limit).
type BFSDirectionError struct {
	Kind         BFSDirectionErrorKind
	Value, Limit uint64
}

var directionErrorFields = [...]string{
	DirectionZeroVertices:                  "graph.vertices",
	DirectionZeroAlpha:                     "params.alpha",
	DirectionZeroBeta:                      "params.beta",
	DirectionBadPrevious:                   "state.previous",
	DirectionEmptyFrontier:                 "state.frontier_vertices",
	DirectionFrontierAboveVertices:         "state.frontier_vertices",
	DirectionPreviousFrontierAboveVertices: "state.previous_frontier_vertices",
	DirectionFrontierEdgesAboveGraph:       "state.frontier_edges",
	DirectionUnexploredEdgesAboveGraph:     "state.unexplored_edges",
}

// Field returns the input field the error is about.
func (e *BFSDirectionError) Field() string {
	if int(e.Kind) < len(directionErrorFields) {
		return directionErrorFields[e.Kind]
	}
	return ""
}

// Error describes the failure, names the input field and ends with a "Fix:" sentence.
func (e *BFSDirectionError) Error() string {
	f := e.Field()
	switch e.Kind {
	case DirectionZeroVertices:
		return fmt.Sprintf("BFS direction: %s is 0. Fix: pass the graph's vertex count", f)
	case DirectionZeroAlpha, DirectionZeroBeta:
		return fmt.Sprintf("BFS direction: %s is 0. Fix: use Beamer's alpha %d and beta %d, or another positive threshold", f, DefaultDirectionAlpha, DefaultDirectionBeta)
	case DirectionBadPrevious:
		return fmt.Sprintf("BFS direction: %s is %d, not 0 (first level), 1 (top-down) or 2 (bottom-up). Fix: pass the direction the previous level ran in", f, e.Value)
	case DirectionEmptyFrontier:
		return fmt.Sprintf("BFS direction: %s is 0, so there is no level to run. Fix: stop the traversal when the frontier is empty", f)
	case DirectionFrontierAboveVertices, DirectionPreviousFrontierAboveVertices:
		return fmt.Sprintf("BFS direction: %s is %d, above graph.vertices %d. Fix: count each frontier vertex once", f, e.Value, e.Limit)
	case DirectionFrontierEdgesAboveGraph, DirectionUnexploredEdgesAboveGraph:
		return fmt.Sprintf("BFS direction: %s is %d, above graph.edge_entries %d. Fix: sum the degrees of distinct vertices of this graph", f, e.Value, e.Limit)
	}
	return fmt.Sprintf("BFS direction error %d. Fix: check the inputs", uint8(e.Kind))
}

// checkDirectionInput returns the first failure in the order of the kinds.
func checkDirectionInput(g BFSGraphProfile, s BFSLevelState, p DirectionParams) error {
	switch {
	case g.Vertices == 0:
		return &BFSDirectionError{Kind: DirectionZeroVertices}
	case p.Alpha == 0:
		return &BFSDirectionError{Kind: DirectionZeroAlpha}
	case p.Beta == 0:
		return &BFSDirectionError{Kind: DirectionZeroBeta}
	case s.Previous > DirectionBottomUp:
		return &BFSDirectionError{Kind: DirectionBadPrevious, Value: uint64(s.Previous)}
	case s.FrontierVertices == 0:
		return &BFSDirectionError{Kind: DirectionEmptyFrontier}
	case s.FrontierVertices > g.Vertices:
		return &BFSDirectionError{Kind: DirectionFrontierAboveVertices, Value: s.FrontierVertices, Limit: g.Vertices}
	case s.PreviousFrontierVertices > g.Vertices:
		return &BFSDirectionError{Kind: DirectionPreviousFrontierAboveVertices, Value: s.PreviousFrontierVertices, Limit: g.Vertices}
	case s.FrontierEdges > g.EdgeEntries:
		return &BFSDirectionError{Kind: DirectionFrontierEdgesAboveGraph, Value: s.FrontierEdges, Limit: g.EdgeEntries}
	case s.UnexploredEdges > g.EdgeEntries:
		return &BFSDirectionError{Kind: DirectionUnexploredEdgesAboveGraph, Value: s.UnexploredEdges, Limit: g.EdgeEntries}
	}
	return nil
}
