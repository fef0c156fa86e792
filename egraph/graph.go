package egraph

import (
	"fmt"
	"math"
)

// VariadicArity in OpDecl.Arity accepts any number of children (a snapshot
// op declared with AnyArity).
const VariadicArity int32 = -1

// MaxGraphLen bounds every count of a Graph (e-nodes, class ids, children,
// union pairs): indices are int32 so that the arrays travel to the GPU as
// they are.
const MaxGraphLen = math.MaxInt32

// OpDecl declares one op of an e-graph's language: its arity (or
// VariadicArity) and a display name (egg's Display of the e-node, such as
// "+" or "x"; it may be empty).
type OpDecl struct {
	Arity int32  `json:"arity"`
	Name  string `json:"name"`
}

// Graph is an e-graph waiting for congruence repair, held in flat int32
// arrays so that 10^7 e-nodes cost a few arrays rather than 10^7 objects.
//
// Class ids are dense, 0..ClassCount-1, and every class id owns at least
// one e-node. E-node i has class NodeClass[i] and op NodeOp[i]; its
// children are the class ids Children[ChildStart[i]:ChildStart[i+1]], as
// many as the op's arity. E-nodes with the same class id are equal. Unions
// holds the pending union pairs flat: pair k is (Unions[2k], Unions[2k+1]).
// The e-graph the pairs and class ids describe is only known once
// congruence is restored: Rebuild computes that closure.
type Graph struct {
	Ops        []OpDecl `json:"ops"`
	ClassCount int32    `json:"class_count"`
	NodeClass  []int32  `json:"node_class"`
	NodeOp     []int32  `json:"node_op"`
	ChildStart []int32  `json:"child_start"`
	Children   []int32  `json:"children"`
	Unions     []int32  `json:"unions"`
	// ClassIDs maps a dense class id back to the id its source used (a
	// snapshot's eclass_id); nil means the ids are the source's own.
	ClassIDs []uint32 `json:"class_ids,omitempty"`
}

// NodeCount returns the number of e-nodes.
func (g *Graph) NodeCount() int { return len(g.NodeClass) }

// UnionCount returns the number of pending union pairs.
func (g *Graph) UnionCount() int { return len(g.Unions) / 2 }

// NodeChildren returns the children of e-node i (a view, not a copy).
func (g *Graph) NodeChildren(i int) []int32 {
	return g.Children[g.ChildStart[i]:g.ChildStart[i+1]]
}

// SourceClassID returns the id the input used for dense class id c.
func (g *Graph) SourceClassID(c int32) uint32 {
	if g.ClassIDs != nil {
		return g.ClassIDs[c]
	}
	return uint32(c)
}

// GraphError reports a Graph that breaks one of its rules. Field is the
// path of the offending value, such as "nodes[12].children[1]" or
// "unions[3].b".
type GraphError struct {
	Field string
	Msg   string
	Fix   string
}

// Error names the field, says what is wrong and ends with a Fix.
func (e *GraphError) Error() string {
	return fmt.Sprintf("e-graph %s: %s. Fix: %s", e.Field, e.Msg, e.Fix)
}

// Validate checks every rule of the Graph type: consistent array lengths,
// at least one e-node, counts within MaxGraphLen, known ops with the
// declared number of children, class ids and children within
// 0..ClassCount-1, every class id owning an e-node, and union ends in
// range. The first violation is returned as a *GraphError.
func (g *Graph) Validate() error {
	if err := g.validateShape(); err != nil {
		return err
	}
	owned := make([]bool, g.ClassCount)
	for i := range g.NodeClass {
		if err := g.validateNode(i); err != nil {
			return err
		}
		owned[g.NodeClass[i]] = true
	}
	for c, ok := range owned {
		if !ok {
			return &GraphError{Field: "class_count", Msg: fmt.Sprintf("class id %d has no e-node", c),
				Fix: "number the class ids densely from 0, or give every class id at least one e-node"}
		}
	}
	for k, u := range g.Unions {
		if u < 0 || u >= g.ClassCount {
			return &GraphError{Field: fmt.Sprintf("unions[%d].%s", k/2, "ab"[k%2:k%2+1]),
				Msg: fmt.Sprintf("class id %d is outside 0..%d", u, g.ClassCount-1), Fix: "union only class ids that own e-nodes"}
		}
	}
	return nil
}

func (g *Graph) validateShape() error {
	n := len(g.NodeClass)
	switch {
	case n == 0:
		return &GraphError{Field: "nodes", Msg: "the e-graph is empty", Fix: "give the e-graph at least one e-node"}
	case n >= MaxGraphLen, len(g.Children) > MaxGraphLen, len(g.Unions) > MaxGraphLen:
		return &GraphError{Field: "nodes", Msg: fmt.Sprintf("%d e-nodes, %d children or %d union ends exceed %d", n, len(g.Children), len(g.Unions), MaxGraphLen),
			Fix: "split the e-graph"}
	case len(g.NodeOp) != n || len(g.ChildStart) != n+1:
		return &GraphError{Field: "nodes", Msg: fmt.Sprintf("node_op has %d entries and child_start %d for %d e-nodes", len(g.NodeOp), len(g.ChildStart), n),
			Fix: "give node_op one entry per e-node and child_start one more"}
	case g.ChildStart[0] != 0 || int(g.ChildStart[n]) != len(g.Children):
		return &GraphError{Field: "child_start", Msg: fmt.Sprintf("runs from %d to %d over %d children", g.ChildStart[0], g.ChildStart[n], len(g.Children)),
			Fix: "start child_start at 0 and end it at the number of children"}
	case len(g.Unions)%2 != 0:
		return &GraphError{Field: "unions", Msg: fmt.Sprintf("%d union ends is odd", len(g.Unions)), Fix: "list unions as pairs"}
	case g.ClassCount <= 0:
		return &GraphError{Field: "class_count", Msg: fmt.Sprintf("%d class ids", g.ClassCount), Fix: "count the class ids of the e-nodes"}
	case g.ClassIDs != nil && len(g.ClassIDs) != int(g.ClassCount):
		return &GraphError{Field: "class_ids", Msg: fmt.Sprintf("%d entries for %d class ids", len(g.ClassIDs), g.ClassCount), Fix: "map every class id once, or leave class_ids out"}
	}
	return nil
}

func (g *Graph) validateNode(i int) error {
	field := func(s string) string { return fmt.Sprintf("nodes[%d].%s", i, s) }
	if c := g.NodeClass[i]; c < 0 || c >= g.ClassCount {
		return &GraphError{Field: field("class"), Msg: fmt.Sprintf("class id %d is outside 0..%d", c, g.ClassCount-1), Fix: "raise class_count or correct the class id"}
	}
	op := g.NodeOp[i]
	if op < 0 || int(op) >= len(g.Ops) {
		return &GraphError{Field: field("op"), Msg: fmt.Sprintf("op %d is not declared (%d ops)", op, len(g.Ops)), Fix: "declare the op or correct the e-node's op"}
	}
	lo, hi := g.ChildStart[i], g.ChildStart[i+1]
	if hi < lo || int(hi) > len(g.Children) {
		return &GraphError{Field: field("children"), Msg: fmt.Sprintf("child range [%d, %d) is not within the %d children", lo, hi, len(g.Children)), Fix: "keep child_start non-decreasing"}
	}
	if a := g.Ops[op].Arity; a != VariadicArity && a != hi-lo {
		return &GraphError{Field: field("children"), Msg: fmt.Sprintf("op %d (%s) has arity %d but the e-node has %d children", op, g.Ops[op].Name, a, hi-lo),
			Fix: fmt.Sprintf("give the e-node exactly %d children", a)}
	}
	for k, c := range g.Children[lo:hi] {
		if c < 0 || c >= g.ClassCount {
			return &GraphError{Field: field(fmt.Sprintf("children[%d]", k)), Msg: fmt.Sprintf("class id %d is outside 0..%d", c, g.ClassCount-1), Fix: "name a class id that owns an e-node"}
		}
	}
	return nil
}
