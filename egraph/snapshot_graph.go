package egraph

import (
	"fmt"
	"math"
	"slices"
)

// FromSnapshot converts a snapshot (the JSON input of `gpuplan egraph`)
// into a Graph with no pending unions: rows become e-nodes in row order,
// rows with the same eclass_id are one class, and the e-class ids are
// renumbered densely in increasing order (so the smallest id of a class
// stays the smallest), with ClassIDs mapping them back. Ops get the names
// op0, op1, ...; AnyArity becomes VariadicArity. Errors: the snapshot's
// Validate errors (*ImageError, naming the row), and a *GraphError for an
// empty snapshot or counts beyond MaxGraphLen.
func FromSnapshot(s *Snapshot) (*Graph, error) {
	if len(s.Rows) == 0 {
		return nil, &GraphError{Field: "rows", Msg: "the e-graph is empty", Fix: "give the snapshot at least one row"}
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if len(s.Rows) >= MaxGraphLen || len(s.OpArities) > MaxGraphLen {
		return nil, &GraphError{Field: "rows", Msg: fmt.Sprintf("%d rows or %d ops exceed %d", len(s.Rows), len(s.OpArities), MaxGraphLen-1), Fix: "split the e-graph"}
	}
	g := &Graph{Ops: make([]OpDecl, len(s.OpArities))}
	for i, a := range s.OpArities {
		switch {
		case a == AnyArity:
			g.Ops[i] = OpDecl{Arity: VariadicArity, Name: fmt.Sprintf("op%d", i)}
		case a > math.MaxInt32:
			return nil, &GraphError{Field: fmt.Sprintf("op_arities[%d]", i), Msg: fmt.Sprintf("arity %d exceeds %d", a, math.MaxInt32), Fix: "declare a smaller arity, or 4294967295 for any arity"}
		default:
			g.Ops[i] = OpDecl{Arity: int32(a), Name: fmt.Sprintf("op%d", i)}
		}
	}
	dense := newDenseIDs(s.Rows)
	g.ClassIDs, g.ClassCount = dense.ids, int32(len(dense.ids))
	g.NodeClass, g.NodeOp = make([]int32, len(s.Rows)), make([]int32, len(s.Rows))
	g.ChildStart = make([]int32, 1, len(s.Rows)+1)
	for i, r := range s.Rows {
		g.NodeClass[i], g.NodeOp[i] = dense.of(r.EclassID), int32(r.LanguageOpID)
		if len(g.Children)+int(r.ChildrenLen) >= MaxGraphLen {
			return nil, &GraphError{Field: fmt.Sprintf("rows[%d].children_len", i), Msg: fmt.Sprintf("more than %d children in all", MaxGraphLen-1), Fix: "split the e-graph"}
		}
		for _, c := range s.Children[r.ChildrenOffset : r.ChildrenOffset+r.ChildrenLen] {
			g.Children = append(g.Children, dense.of(c))
		}
		g.ChildStart = append(g.ChildStart, int32(len(g.Children)))
	}
	return g, nil
}

// denseIDs renumbers the e-class ids of rows 0, 1, 2, ... in increasing
// order.
type denseIDs struct {
	ids   []uint32 // dense id -> e-class id, ascending
	index []int32  // e-class id -> dense id, when the ids are small
}

func newDenseIDs(rows []Row) denseIDs {
	ids := make([]uint32, len(rows))
	for i, r := range rows {
		ids[i] = r.EclassID
	}
	slices.Sort(ids)
	d := denseIDs{ids: slices.Clip(slices.Compact(ids))}
	if top := d.ids[len(d.ids)-1]; uint64(top) < 8*uint64(len(rows))+4096 {
		d.index = make([]int32, uint64(top)+1)
		for i, id := range d.ids {
			d.index[id] = int32(i)
		}
	}
	return d
}

// of returns the dense id of an e-class id that owns a row.
func (d denseIDs) of(id uint32) int32 {
	if d.index != nil {
		return d.index[id]
	}
	i, _ := slices.BinarySearch(d.ids, id)
	return int32(i)
}

// ToSnapshot converts g into a snapshot whose rows are g's e-nodes in
// order, with g's source class ids (SourceClassID) as eclass_id: the input
// of PackDeviceImage. Pending unions are not part of a snapshot. Errors
// are those of g.Validate.
func (g *Graph) ToSnapshot() (*Snapshot, error) {
	if err := g.Validate(); err != nil {
		return nil, err
	}
	s := &Snapshot{Rows: make([]Row, g.NodeCount()), Children: make([]uint32, len(g.Children)), OpArities: make([]uint32, len(g.Ops))}
	for i, op := range g.Ops {
		s.OpArities[i] = uint32(op.Arity)
		if op.Arity == VariadicArity {
			s.OpArities[i] = AnyArity
		}
	}
	for k, c := range g.Children {
		s.Children[k] = g.SourceClassID(c)
	}
	for i := range s.Rows {
		lo, hi := g.ChildStart[i], g.ChildStart[i+1]
		s.Rows[i] = Row{EclassID: g.SourceClassID(g.NodeClass[i]), LanguageOpID: uint32(g.NodeOp[i]), ChildrenOffset: uint32(lo), ChildrenLen: uint32(hi - lo)}
	}
	return s, nil
}
