package frontier

import (
	"fmt"
	"math"
	"slices"

	"github.com/gpuplan/gpuplan/internal/checked"
	"github.com/gpuplan/gpuplan/megakernel"
)

// Domain is the analysis domain of a frontier-typed IR node. Layers of the
// plan are ordered Parser < Semantic < Dataflow < Diagnostic.
type Domain uint8

// The four frontier-typed IR domains, in plan order.
const (
	DomainParser Domain = iota
	DomainSemantic
	DomainDataflow
	DomainDiagnostic
)

var domainNames = [...]string{"parser", "semantic", "dataflow", "diagnostic"}

// String returns the lower-case domain name ("parser", "semantic", ...).
func (d Domain) String() string {
	if int(d) < len(domainNames) {
		return domainNames[d]
	}
	return fmt.Sprintf("domain(%d)", uint8(d))
}

// Valid reports whether d is one of the four defined domains.
func (d Domain) Valid() bool { return int(d) < len(domainNames) }

// MarshalText encodes the domain as its lower-case name.
func (d Domain) MarshalText() ([]byte, error) {
	if !d.Valid() {
		return nil, fmt.Errorf("unknown domain %d. Fix: use parser, semantic, dataflow or diagnostic", uint8(d))
	}
	return []byte(domainNames[d]), nil
}

// UnmarshalText decodes a lower-case domain name.
func (d *Domain) UnmarshalText(b []byte) error {
	for i, n := range domainNames {
		if string(b) == n {
			*d = Domain(i)
			return nil
		}
	}
	return fmt.Errorf("unknown domain %q (field domain). Fix: use parser, semantic, dataflow or diagnostic", string(b))
}

// IRNode is one node of a frontier-typed IR: a unit of frontier work in a
// domain with a number of active frontier items.
type IRNode struct {
	ID          uint32 `json:"id"`
	Domain      Domain `json:"domain"`
	ActiveItems uint32 `json:"active_items"`
}

// IRDependency says that node Before must finish before node After starts.
// Both are node ids, not indices.
type IRDependency struct {
	Before uint32 `json:"before"`
	After  uint32 `json:"after"`
}

// FrontierWave is one Kahn layer of the frontier-typed IR plan. NodeIDs are
// sorted by (domain, id); Domains lists the distinct domains of the wave in
// first-seen order of that sorted list; ActiveItems is the sum of the nodes'
// active items.
type FrontierWave struct {
	Index       int      `json:"index"`
	Domains     []Domain `json:"domains"`
	NodeIDs     []uint32 `json:"node_ids"`
	ActiveItems uint64   `json:"active_items"`
}

// IRPlan is the frontier-typed IR plan: waves in dependency order. Waves in
// one layer are independent; a barrier separates consecutive waves.
type IRPlan struct {
	Waves []FrontierWave `json:"waves"`
}

// DuplicateNodeError reports a node id that appears twice in the node list.
type DuplicateNodeError struct {
	NodeID uint32
	Index  int // position of the repeated id in the node list
}

// Field returns the input path of the repeated id, for example "nodes[3].id".
func (e *DuplicateNodeError) Field() string { return fmt.Sprintf("nodes[%d].id", e.Index) }

// Error implements the error interface; it names the field and ends with a Fix.
func (e *DuplicateNodeError) Error() string {
	return fmt.Sprintf("DuplicateNode: %s: node id %d appears more than once. Fix: give every frontier IR node a unique id", e.Field(), e.NodeID)
}

// UnknownDependencyNodeError reports a dependency endpoint that names no node.
type UnknownDependencyNodeError struct {
	Dependency    int // dependency index in input order
	Before, After uint32
	NodeID        uint32 // the endpoint that is missing
}

// Field returns the input path of the missing endpoint, for example
// "dependencies[2].after"; Before is checked first, so a dependency whose
// endpoints are both missing names before.
func (e *UnknownDependencyNodeError) Field() string {
	end := "after"
	if e.NodeID == e.Before {
		end = "before"
	}
	return fmt.Sprintf("dependencies[%d].%s", e.Dependency, end)
}

// Error implements the error interface; it names the field and ends with a Fix.
func (e *UnknownDependencyNodeError) Error() string {
	return fmt.Sprintf("UnknownDependencyNode: %s: dependency %d -> %d names node id %d, which is not in the node list. Fix: add node %d or remove the dependency",
		e.Field(), e.Before, e.After, e.NodeID, e.NodeID)
}

// CycleError reports that the dependencies form a cycle; UnscheduledNodes
// nodes could not be placed in any wave.
type CycleError struct {
	UnscheduledNodes int
}

// Error implements the error interface; the message ends with a Fix.
func (e *CycleError) Error() string {
	return fmt.Sprintf("Cycle: %d frontier IR nodes lie on or behind a dependency cycle. Fix: remove a dependency so the graph is acyclic", e.UnscheduledNodes)
}

// PlanTooLargeError reports a node or dependency count beyond what the
// compact int32 CSR used by the planner can index.
type PlanTooLargeError struct {
	Field string // "frontier IR nodes" or "frontier IR dependencies"
	Count int
	Limit int
}

// Error implements the error interface; the message ends with a Fix.
func (e *PlanTooLargeError) Error() string {
	return fmt.Sprintf("PlanTooLarge: %s count %d exceeds the limit %d. Fix: split the frontier IR into smaller plans", e.Field, e.Count, e.Limit)
}

// maxIRIndex is the largest node or dependency count the int32 CSR indexes.
const maxIRIndex = math.MaxInt32

// PlanFrontierTypedIR builds Kahn layers over nodes and deps. Each layer is
// sorted by (domain, id) and becomes one FrontierWave.
//
// Errors, checked in this order: an unknown domain value (naming
// nodes[i].domain), *DuplicateNodeError (the id whose second occurrence
// comes first in input order, at nodes[i].id), *PlanTooLargeError,
// *UnknownDependencyNodeError (first bad dependency in input order, Before
// checked before After, at dependencies[k].before or .after), *CycleError, and
// *checked.OverflowError for a wave's active-item sum. A self dependency is a
// cycle. Duplicate dependencies are harmless.
//
// It runs in O(n log n + d) for n nodes and d dependencies, without hash
// maps (see idIndex).
func PlanFrontierTypedIR(nodes []IRNode, deps []IRDependency) (IRPlan, error) {
	return planFrontierTypedIR(nodes, deps, maxIRIndex)
}

func planFrontierTypedIR(nodes []IRNode, deps []IRDependency, limit int) (IRPlan, error) {
	index, err := indexIRNodes(nodes, len(deps), limit)
	if err != nil {
		return IRPlan{}, err
	}
	g, err := newIRAdjacency(&index, len(nodes), deps)
	if err != nil {
		return IRPlan{}, err
	}
	return g.layers(nodes)
}

// indexIRNodes checks the nodes' domains, their count and depCount against
// limit and the ids for repeats, and indexes the ids by position. Its
// errors come in planFrontierTypedIR's order.
func indexIRNodes(nodes []IRNode, depCount, limit int) (idIndex, error) {
	n := len(nodes)
	for i, nd := range nodes {
		if !nd.Domain.Valid() {
			return idIndex{}, fmt.Errorf("nodes[%d].domain: node %d has unknown domain %d. Fix: use parser, semantic, dataflow or diagnostic", i, nd.ID, uint8(nd.Domain))
		}
	}
	if n > math.MaxUint32 {
		// Positions are 32-bit; no real input gets here.
		return idIndex{}, &PlanTooLargeError{Field: "frontier IR nodes", Count: n, Limit: limit}
	}
	index, dupPos, dup := newIDIndex(n, func(i int) uint32 { return nodes[i].ID })
	if dup {
		return idIndex{}, &DuplicateNodeError{NodeID: nodes[dupPos].ID, Index: dupPos}
	}
	if n > limit {
		return idIndex{}, &PlanTooLargeError{Field: "frontier IR nodes", Count: n, Limit: limit}
	}
	if depCount > limit {
		return idIndex{}, &PlanTooLargeError{Field: "frontier IR dependencies", Count: depCount, Limit: limit}
	}
	return index, nil
}

// irAdjacency is the dependency graph over node positions as a CSR in flat
// int32 arrays: node v's successors are targets[offsets[v]:offsets[v+1]],
// and indeg counts each node's predecessors.
type irAdjacency struct {
	offsets, targets, indeg []int32
}

// newIRAdjacency resolves every dependency's endpoints through index (an
// *UnknownDependencyNodeError for the first that names no node, Before
// checked before After) and builds the CSR over n nodes.
func newIRAdjacency(index *idIndex, n int, deps []IRDependency) (irAdjacency, error) {
	offsets := make([]int32, n+1)
	indeg := make([]int32, n)
	src := make([]int32, len(deps))
	dst := make([]int32, len(deps))
	for k, d := range deps {
		b32, ok := index.lookup(d.Before)
		if !ok {
			return irAdjacency{}, &UnknownDependencyNodeError{Dependency: k, Before: d.Before, After: d.After, NodeID: d.Before}
		}
		a32, ok := index.lookup(d.After)
		if !ok {
			return irAdjacency{}, &UnknownDependencyNodeError{Dependency: k, Before: d.Before, After: d.After, NodeID: d.After}
		}
		b, a := int32(b32), int32(a32) // positions < n <= limit <= MaxInt32
		src[k], dst[k] = b, a
		offsets[b+1]++
		indeg[a]++
	}
	for i := 0; i < n; i++ {
		offsets[i+1] += offsets[i]
	}
	targets := make([]int32, len(deps))
	cursor := slices.Clone(offsets[:n])
	for k := range deps {
		targets[cursor[src[k]]] = dst[k]
		cursor[src[k]]++
	}
	return irAdjacency{offsets: offsets, targets: targets, indeg: indeg}, nil
}

// layers runs Kahn's algorithm over g (consuming its in-degrees) and turns
// each layer, sorted by (domain, id), into a FrontierWave. A wave's
// active-item overflow is returned before a *CycleError.
func (g *irAdjacency) layers(nodes []IRNode) (IRPlan, error) {
	n := len(nodes)
	less := func(a, b int32) int {
		na, nb := nodes[a], nodes[b]
		if na.Domain != nb.Domain {
			return int(na.Domain) - int(nb.Domain)
		}
		switch {
		case na.ID < nb.ID:
			return -1
		case na.ID > nb.ID:
			return 1
		}
		return 0
	}
	// order holds every scheduled node index, layer after layer.
	order := make([]int32, 0, n)
	for i := 0; i < n; i++ {
		if g.indeg[i] == 0 {
			order = append(order, int32(i))
		}
	}
	var plan IRPlan
	start := 0
	for start < len(order) {
		end := len(order)
		layer := order[start:end]
		slices.SortFunc(layer, less)
		for _, v := range layer {
			for _, t := range g.targets[g.offsets[v]:g.offsets[v+1]] {
				g.indeg[t]--
				if g.indeg[t] == 0 {
					order = append(order, t)
				}
			}
		}
		w, err := irWave(len(plan.Waves), nodes, order[start:end])
		if err != nil {
			return IRPlan{}, err
		}
		plan.Waves = append(plan.Waves, w)
		start = end
	}
	if len(order) < n {
		return IRPlan{}, &CycleError{UnscheduledNodes: n - len(order)}
	}
	return plan, nil
}

// irWave builds the wave numbered index from layer (node positions sorted
// by (domain, id)): the node ids, the distinct domains in first-seen order
// and the checked sum of the active items.
func irWave(index int, nodes []IRNode, layer []int32) (FrontierWave, error) {
	w := FrontierWave{Index: index, NodeIDs: make([]uint32, len(layer))}
	for i, v := range layer {
		nd := nodes[v]
		w.NodeIDs[i] = nd.ID
		if len(w.Domains) == 0 || w.Domains[len(w.Domains)-1] != nd.Domain {
			// layer is sorted by domain, so first-seen order is the
			// order of the last appended domain.
			w.Domains = append(w.Domains, nd.Domain)
		}
		var err error
		if w.ActiveItems, err = checked.Add(w.ActiveItems, uint64(nd.ActiveItems), "frontier wave active items"); err != nil {
			return FrontierWave{}, err
		}
	}
	return w, nil
}

// CudaFrontierInput is a frontier-typed IR plan adapted to CUDA waves: the
// per-wave memory demand, the per-wave active items and a linear dependency
// chain (wave i-1 before wave i).
type CudaFrontierInput struct {
	Waves        []megakernel.FrontierWave `json:"waves"`
	ActiveItems  []uint64                  `json:"active_items"`
	Dependencies []megakernel.Dependency   `json:"dependencies"`
}

// AdaptFrontierTypedIRToCUDA turns plan's waves into CUDA frontier waves.
// Wave i gets frontier = items*frontierBytesPerItem, scratch =
// items*scratchBytesPerItem and output = outputBytesPerWave. Dependencies are
// a linear chain because the waves are already topological layers.
//
// Every wave is checked before any output is produced; an overflow is a
// *checked.OverflowError with field "frontier bytes" or "scratch bytes".
func AdaptFrontierTypedIRToCUDA(plan IRPlan, frontierBytesPerItem, scratchBytesPerItem, outputBytesPerWave uint64) (CudaFrontierInput, error) {
	n := len(plan.Waves)
	in := CudaFrontierInput{Waves: make([]megakernel.FrontierWave, 0, n), ActiveItems: make([]uint64, 0, n),
		Dependencies: make([]megakernel.Dependency, 0, max(n-1, 0))}
	if err := AdaptFrontierTypedIRToCUDAInto(&in, plan, frontierBytesPerItem, scratchBytesPerItem, outputBytesPerWave); err != nil {
		return CudaFrontierInput{}, err
	}
	return in, nil
}

// AdaptFrontierTypedIRToCUDAInto is AdaptFrontierTypedIRToCUDA writing into
// dst and reusing its slices' capacity (vyre's _into variant). On error dst
// is left unchanged.
func AdaptFrontierTypedIRToCUDAInto(dst *CudaFrontierInput, plan IRPlan, frontierBytesPerItem, scratchBytesPerItem, outputBytesPerWave uint64) error {
	for _, w := range plan.Waves {
		if _, err := checked.Mul(w.ActiveItems, frontierBytesPerItem, "frontier bytes"); err != nil {
			return err
		}
		if _, err := checked.Mul(w.ActiveItems, scratchBytesPerItem, "scratch bytes"); err != nil {
			return err
		}
	}
	dst.Waves = dst.Waves[:0]
	dst.ActiveItems = dst.ActiveItems[:0]
	dst.Dependencies = dst.Dependencies[:0]
	for i, w := range plan.Waves {
		dst.Waves = append(dst.Waves, megakernel.FrontierWave{
			FrontierBytes: w.ActiveItems * frontierBytesPerItem, // checked above
			ScratchBytes:  w.ActiveItems * scratchBytesPerItem,  // checked above
			OutputBytes:   outputBytesPerWave,
		})
		dst.ActiveItems = append(dst.ActiveItems, w.ActiveItems)
		if i > 0 {
			dst.Dependencies = append(dst.Dependencies, megakernel.Dependency{Before: i - 1, After: i})
		}
	}
	return nil
}

// idIndex maps node ids to their input positions without a hash map: a
// dense table when the ids are small (max id below 4n+4096), otherwise a
// sorted array of packed (id, position) words searched by bisection. Both
// are built in one pass (plus one sort) and are cache-friendly at 10^6 ids.
type idIndex struct {
	dense  []uint32 // position by id, absent = math.MaxUint32
	sorted []uint64 // id<<32 | position, ascending
}

const absentPos = math.MaxUint32

// newIDIndex indexes n ids (n < 2^32). When an id repeats it returns the
// position of the first repetition in input order (the id's second
// occurrence that comes first), and dup = true.
func newIDIndex(n int, id func(int) uint32) (x idIndex, dupPos int, dup bool) {
	var maxID uint32
	for i := 0; i < n; i++ {
		maxID = max(maxID, id(i))
	}
	if n > 0 && uint64(maxID) < 4*uint64(n)+4096 {
		x.dense = make([]uint32, uint64(maxID)+1)
		for i := range x.dense {
			x.dense[i] = absentPos
		}
		for i := 0; i < n; i++ {
			v := id(i)
			if x.dense[v] != absentPos {
				return idIndex{}, i, true
			}
			x.dense[v] = uint32(i)
		}
		return x, 0, false
	}
	x.sorted = make([]uint64, n)
	for i := range x.sorted {
		x.sorted[i] = uint64(id(i))<<32 | uint64(i)
	}
	slices.Sort(x.sorted)
	first := uint64(math.MaxUint64) // smallest position of a second occurrence
	for k := 1; k < n; k++ {
		if x.sorted[k]>>32 == x.sorted[k-1]>>32 {
			first = min(first, x.sorted[k]&math.MaxUint32)
		}
	}
	if first != math.MaxUint64 {
		return idIndex{}, int(first), true
	}
	return x, 0, false
}

// lookup returns the position of id.
func (x *idIndex) lookup(id uint32) (uint32, bool) {
	if x.dense != nil {
		if uint64(id) >= uint64(len(x.dense)) || x.dense[id] == absentPos {
			return 0, false
		}
		return x.dense[id], true
	}
	key := uint64(id) << 32
	k, _ := slices.BinarySearch(x.sorted, key)
	if k < len(x.sorted) && x.sorted[k]>>32 == uint64(id) {
		return uint32(x.sorted[k]), true
	}
	return 0, false
}
