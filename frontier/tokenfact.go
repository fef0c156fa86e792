package frontier

import (
	"fmt"
	"math"
	"slices"

	"github.com/gpuplan/gpuplan/internal/checked"
)

// TokenFactNodeKind is the kind of a token/fact graph node.
type TokenFactNodeKind uint8

// Token/fact node kinds.
const (
	NodeToken TokenFactNodeKind = iota
	NodeMacroExpansion
	NodeSemantic
	NodeFact
	NodeDiagnostic
)

var nodeKindNames = [...]string{"token", "macro_expansion", "semantic", "fact", "diagnostic"}

// String returns the snake_case kind name.
func (k TokenFactNodeKind) String() string {
	return enumString(nodeKindNames[:], uint8(k), "node kind")
}

// MarshalText encodes the kind as its snake_case name.
func (k TokenFactNodeKind) MarshalText() ([]byte, error) {
	return enumMarshal(nodeKindNames[:], uint8(k), "node kind")
}

// UnmarshalText decodes a snake_case kind name.
func (k *TokenFactNodeKind) UnmarshalText(b []byte) error {
	v, err := enumUnmarshal(nodeKindNames[:], b, "node kind")
	*k = TokenFactNodeKind(v)
	return err
}

// TokenFactEdgeKind is the kind of a token/fact graph edge.
type TokenFactEdgeKind uint8

// Token/fact edge kinds.
const (
	EdgeTokenFlow TokenFactEdgeKind = iota
	EdgeMacroExpansion
	EdgeSemanticFact
	EdgeFactDependency
	EdgeDiagnosticProvenance
)

var edgeKindNames = [...]string{"token_flow", "macro_expansion", "semantic_fact", "fact_dependency", "diagnostic_provenance"}

// String returns the snake_case kind name.
func (k TokenFactEdgeKind) String() string {
	return enumString(edgeKindNames[:], uint8(k), "edge kind")
}

// MarshalText encodes the kind as its snake_case name.
func (k TokenFactEdgeKind) MarshalText() ([]byte, error) {
	return enumMarshal(edgeKindNames[:], uint8(k), "edge kind")
}

// UnmarshalText decodes a snake_case kind name.
func (k *TokenFactEdgeKind) UnmarshalText(b []byte) error {
	v, err := enumUnmarshal(edgeKindNames[:], b, "edge kind")
	*k = TokenFactEdgeKind(v)
	return err
}

func enumString(names []string, v uint8, what string) string {
	if int(v) < len(names) {
		return names[v]
	}
	return fmt.Sprintf("%s(%d)", what, v)
}

func enumMarshal(names []string, v uint8, what string) ([]byte, error) {
	if int(v) >= len(names) {
		return nil, fmt.Errorf("unknown %s %d. Fix: use one of %v", what, v, names)
	}
	return []byte(names[v]), nil
}

func enumUnmarshal(names []string, b []byte, what string) (uint8, error) {
	for i, n := range names {
		if string(b) == n {
			return uint8(i), nil
		}
	}
	return 0, fmt.Errorf("unknown %s %q (field kind). Fix: use one of %v", what, string(b), names)
}

// TokenFactNode is one node of the builder input. Its payload is the byte
// range [PayloadOffset, PayloadOffset+PayloadLen) of the graph's payload
// arena; ranges may be shared or empty.
type TokenFactNode struct {
	ID            uint32            `json:"id"`
	Kind          TokenFactNodeKind `json:"kind"`
	PayloadOffset uint32            `json:"payload_offset"`
	PayloadLen    uint32            `json:"payload_len"`
}

// TokenFactEdge is one directed edge of the builder input, between node ids.
type TokenFactEdge struct {
	From uint32            `json:"from"`
	To   uint32            `json:"to"`
	Kind TokenFactEdgeKind `json:"kind"`
}

// TokenFactGraph is a device-resident token/fact graph stored as compact
// CSR in flat arrays (vyre's DeviceResidentTokenFactGraph).
//
// Node i (in builder input order) has id NodeIDs[i], kind NodeKinds[i] and
// payload [PayloadOffsets[i], PayloadOffsets[i]+PayloadLens[i]). Its
// outgoing edges are ColumnIndices[RowOffsets[i]:RowOffsets[i+1]] (node
// indices, not ids) with kinds EdgeKinds[...], in edge input order.
// PayloadBytes is the length of the payload arena in bytes.
type TokenFactGraph struct {
	NodeIDs        []uint32            `json:"node_ids"`
	NodeKinds      []TokenFactNodeKind `json:"node_kinds"`
	PayloadOffsets []uint32            `json:"payload_offsets"`
	PayloadLens    []uint32            `json:"payload_lens"`
	RowOffsets     []uint32            `json:"row_offsets"`
	ColumnIndices  []uint32            `json:"column_indices"`
	EdgeKinds      []TokenFactEdgeKind `json:"edge_kinds"`
	PayloadBytes   uint32              `json:"payload_bytes"`
	TokenCount     uint32              `json:"token_count"`
	FactCount      uint32              `json:"fact_count"`
}

// NodeCount returns the number of nodes.
func (g *TokenFactGraph) NodeCount() int { return len(g.NodeIDs) }

// EdgeCount returns the number of edges.
func (g *TokenFactGraph) EdgeCount() int { return len(g.ColumnIndices) }

// OutDegree returns the out-degree of node index i.
func (g *TokenFactGraph) OutDegree(i int) uint32 { return g.RowOffsets[i+1] - g.RowOffsets[i] }

// DuplicateTokenFactNodeError is vyre's DuplicateNode for token/fact graphs.
type DuplicateTokenFactNodeError struct {
	NodeID uint32
	Index  int // position of the repeated id in the node list
}

// Field returns the input path of the repeated id, for example "nodes[3].id".
func (e *DuplicateTokenFactNodeError) Field() string { return fmt.Sprintf("nodes[%d].id", e.Index) }

// Error implements the error interface; it names the field and ends with a Fix.
func (e *DuplicateTokenFactNodeError) Error() string {
	return fmt.Sprintf("DuplicateNode: %s: token/fact node id %d appears more than once. Fix: give every node a unique id", e.Field(), e.NodeID)
}

// UnknownEdgeNodeError reports an edge endpoint that names no node.
type UnknownEdgeNodeError struct {
	Edge     int    // edge index in input order
	From, To uint32 // the edge's endpoints
	NodeID   uint32 // the missing endpoint
}

// Field returns the input path of the missing endpoint, for example
// "edges[2].to"; From is checked first, so an edge whose endpoints are both
// missing names from.
func (e *UnknownEdgeNodeError) Field() string {
	end := "to"
	if e.NodeID == e.From {
		end = "from"
	}
	return fmt.Sprintf("edges[%d].%s", e.Edge, end)
}

// Error implements the error interface; it names the field and ends with a Fix.
func (e *UnknownEdgeNodeError) Error() string {
	return fmt.Sprintf("UnknownEdgeNode: %s: edge %d -> %d names node id %d, which is not in the node list. Fix: add node %d or remove the edge",
		e.Field(), e.From, e.To, e.NodeID, e.NodeID)
}

// PayloadOverflowError reports a node whose payload_offset+payload_len does
// not fit in 32 bits.
type PayloadOverflowError struct {
	NodeID     uint32
	Offset     uint32
	Len        uint32
	PayloadEnd uint64
}

// Error implements the error interface; the message ends with a Fix.
func (e *PayloadOverflowError) Error() string {
	return fmt.Sprintf("PayloadOverflow: node %d payload_offset %d + payload_len %d = %d exceeds the 32-bit payload index. Fix: keep payload ranges below 4 GiB", e.NodeID, e.Offset, e.Len, e.PayloadEnd)
}

// PayloadOutOfBoundsError reports a node payload range that ends past the
// payload arena.
type PayloadOutOfBoundsError struct {
	NodeID       uint32
	PayloadEnd   uint64
	PayloadBytes uint32
}

// Error implements the error interface; the message ends with a Fix.
func (e *PayloadOutOfBoundsError) Error() string {
	return fmt.Sprintf("PayloadOutOfBounds: node %d payload ends at byte %d but payload_bytes is %d. Fix: raise payload_bytes or shorten the node's payload range", e.NodeID, e.PayloadEnd, e.PayloadBytes)
}

// CsrIndexOverflowError reports a node or edge count (or a kind count) that
// the 32-bit CSR arrays cannot index.
type CsrIndexOverflowError struct {
	Field string // "node count" or "edge count"
	Count int
	Limit int
}

// Error implements the error interface; the message ends with a Fix.
func (e *CsrIndexOverflowError) Error() string {
	return fmt.Sprintf("CsrIndexOverflow: %s %d exceeds the CSR index limit %d. Fix: split the token/fact graph", e.Field, e.Count, e.Limit)
}

// BuildTokenFactGraph validates nodes and edges and packs them into CSR.
// Nodes keep input order; edges are grouped by source node (a stable
// counting sort), keeping input order within a row.
//
// Errors, in this order: an unknown node kind (naming nodes[i].kind),
// *DuplicateTokenFactNodeError (the id whose second occurrence comes first
// in input order, at nodes[i].id), then for
// the first bad edge *UnknownEdgeNodeError (From before To) or an unknown
// edge kind, *PayloadOverflowError and *PayloadOutOfBoundsError (per node in
// input order), *CsrIndexOverflowError (node count, then edge count, above
// 2^32-1).
func BuildTokenFactGraph(nodes []TokenFactNode, edges []TokenFactEdge, payloadBytes uint32) (*TokenFactGraph, error) {
	return buildTokenFactGraph(nodes, edges, payloadBytes, math.MaxUint32)
}

func buildTokenFactGraph(nodes []TokenFactNode, edges []TokenFactEdge, payloadBytes uint32, limit int) (*TokenFactGraph, error) {
	index, err := indexTokenFactNodes(nodes, limit)
	if err != nil {
		return nil, err
	}
	src, dst, err := resolveTokenFactEdges(&index, edges)
	if err != nil {
		return nil, err
	}
	if err := checkTokenFactPayloads(nodes, payloadBytes); err != nil {
		return nil, err
	}
	if len(nodes) > limit {
		return nil, &CsrIndexOverflowError{Field: "node count", Count: len(nodes), Limit: limit}
	}
	if len(edges) > limit {
		return nil, &CsrIndexOverflowError{Field: "edge count", Count: len(edges), Limit: limit}
	}
	g := newTokenFactGraph(nodes, len(edges), payloadBytes)
	g.packEdges(edges, src, dst)
	return g, nil
}

// indexTokenFactNodes checks every node's kind and the ids for repeats, and
// indexes the ids by position.
func indexTokenFactNodes(nodes []TokenFactNode, limit int) (idIndex, error) {
	for i, n := range nodes {
		if int(n.Kind) >= len(nodeKindNames) {
			return idIndex{}, fmt.Errorf("nodes[%d].kind: node %d has unknown node kind %d. Fix: use one of %v", i, n.ID, uint8(n.Kind), nodeKindNames)
		}
	}
	if len(nodes) > math.MaxUint32 {
		// Positions are 32-bit; no real input gets here.
		return idIndex{}, &CsrIndexOverflowError{Field: "node count", Count: len(nodes), Limit: limit}
	}
	index, dupPos, dup := newIDIndex(len(nodes), func(i int) uint32 { return nodes[i].ID })
	if dup {
		return idIndex{}, &DuplicateTokenFactNodeError{NodeID: nodes[dupPos].ID, Index: dupPos}
	}
	return index, nil
}

// resolveTokenFactEdges returns every edge's source and destination node
// positions; the first bad edge is an *UnknownEdgeNodeError (From checked
// before To) or an unknown edge kind.
func resolveTokenFactEdges(index *idIndex, edges []TokenFactEdge) (src, dst []uint32, err error) {
	src = make([]uint32, len(edges))
	dst = make([]uint32, len(edges))
	for k, e := range edges {
		s, ok := index.lookup(e.From)
		if !ok {
			return nil, nil, &UnknownEdgeNodeError{Edge: k, From: e.From, To: e.To, NodeID: e.From}
		}
		d, ok := index.lookup(e.To)
		if !ok {
			return nil, nil, &UnknownEdgeNodeError{Edge: k, From: e.From, To: e.To, NodeID: e.To}
		}
		if int(e.Kind) >= len(edgeKindNames) {
			return nil, nil, fmt.Errorf("edges[%d].kind: edge %d -> %d has unknown edge kind %d. Fix: use one of %v", k, e.From, e.To, uint8(e.Kind), edgeKindNames)
		}
		src[k], dst[k] = s, d
	}
	return src, dst, nil
}

// checkTokenFactPayloads checks, per node in input order, that its payload
// range neither overflows 32 bits nor ends past payloadBytes.
func checkTokenFactPayloads(nodes []TokenFactNode, payloadBytes uint32) error {
	for _, n := range nodes {
		end := uint64(n.PayloadOffset) + uint64(n.PayloadLen)
		if end > math.MaxUint32 {
			return &PayloadOverflowError{NodeID: n.ID, Offset: n.PayloadOffset, Len: n.PayloadLen, PayloadEnd: end}
		}
		if end > uint64(payloadBytes) {
			return &PayloadOutOfBoundsError{NodeID: n.ID, PayloadEnd: end, PayloadBytes: payloadBytes}
		}
	}
	return nil
}

// newTokenFactGraph allocates a graph for nodes and edgeCount edges and
// fills in the node columns and the token and fact counts.
func newTokenFactGraph(nodes []TokenFactNode, edgeCount int, payloadBytes uint32) *TokenFactGraph {
	n := len(nodes)
	g := &TokenFactGraph{
		NodeIDs:        make([]uint32, n),
		NodeKinds:      make([]TokenFactNodeKind, n),
		PayloadOffsets: make([]uint32, n),
		PayloadLens:    make([]uint32, n),
		RowOffsets:     make([]uint32, n+1),
		ColumnIndices:  make([]uint32, edgeCount),
		EdgeKinds:      make([]TokenFactEdgeKind, edgeCount),
		PayloadBytes:   payloadBytes,
	}
	for i, nd := range nodes {
		g.NodeIDs[i], g.NodeKinds[i] = nd.ID, nd.Kind
		g.PayloadOffsets[i], g.PayloadLens[i] = nd.PayloadOffset, nd.PayloadLen
		switch nd.Kind {
		case NodeToken:
			g.TokenCount++
		case NodeFact:
			g.FactCount++
		}
	}
	return g
}

// packEdges fills g's CSR from the edges' resolved endpoint positions: a
// stable counting sort by source, keeping input order within a row.
func (g *TokenFactGraph) packEdges(edges []TokenFactEdge, src, dst []uint32) {
	n := g.NodeCount()
	for _, s := range src {
		g.RowOffsets[s+1]++
	}
	for i := 0; i < n; i++ {
		g.RowOffsets[i+1] += g.RowOffsets[i]
	}
	cursor := slices.Clone(g.RowOffsets[:n])
	for k, s := range src {
		c := cursor[s]
		g.ColumnIndices[c] = dst[k]
		g.EdgeKinds[c] = edges[k].Kind
		cursor[s] = c + 1
	}
}

// TokenFactDegreeProfileBuckets is the number of ranks of the out-degree
// profile (vyre's CUDA_TOKEN_FACT_DEGREE_PROFILE_BUCKETS).
const TokenFactDegreeProfileBuckets = 16

// TokenFactDegreeProfileRanks are the ranks 1, 2, 4, ..., 32768 of the
// out-degree profile (vyre's CUDA_TOKEN_FACT_DEGREE_PROFILE_RANKS).
var TokenFactDegreeProfileRanks = [TokenFactDegreeProfileBuckets]uint64{
	1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768,
}

// GraphShape is the node and edge count of a resident graph.
type GraphShape struct {
	NodeCount uint64 `json:"node_count"`
	EdgeCount uint64 `json:"edge_count"`
}

// TokenFactGraphLayout is the byte envelope of a token/fact graph on the
// GPU (vyre's CudaTokenFactGraphLayout). ResidentBytes = NodeBytes +
// EdgeBytes + PayloadBytes.
//
// The degree profile is the post-0.6.1 extension: MaxOutDegree and
// TopOutDegreePrefixSums[k], the sum of the TokenFactDegreeProfileRanks[k]
// largest out-degrees (all of them when there are fewer nodes). It is zero
// for layouts built from totals only.
type TokenFactGraphLayout struct {
	GraphShape             GraphShape                            `json:"graph_shape"`
	NodeRecordBytes        uint64                                `json:"node_record_bytes"`
	EdgeRecordBytes        uint64                                `json:"edge_record_bytes"`
	NodeBytes              uint64                                `json:"node_bytes"`
	EdgeBytes              uint64                                `json:"edge_bytes"`
	PayloadBytes           uint64                                `json:"payload_bytes"`
	ResidentBytes          uint64                                `json:"resident_bytes"`
	MaxOutDegree           uint64                                `json:"max_out_degree"`
	TopOutDegreePrefixSums [TokenFactDegreeProfileBuckets]uint64 `json:"top_out_degree_prefix_sums"`
}

// ZeroRecordWidthError reports a zero node or edge record width.
type ZeroRecordWidthError struct {
	Field string // "node_record_bytes" or "edge_record_bytes"
}

// Error implements the error interface; the message ends with a Fix.
func (e *ZeroRecordWidthError) Error() string {
	return fmt.Sprintf("ZeroRecordWidth: %s is 0. Fix: give %s the size of one device record in bytes", e.Field, e.Field)
}

// AdaptTokenFactGraphLayout computes the byte envelope of g with the given
// record widths, plus the out-degree profile.
//
// Errors: *ZeroRecordWidthError for node_record_bytes, then
// edge_record_bytes; *checked.OverflowError with field "token/fact node
// bytes", "token/fact edge bytes" or "token/fact resident bytes".
func AdaptTokenFactGraphLayout(g *TokenFactGraph, nodeRecordBytes, edgeRecordBytes uint64) (TokenFactGraphLayout, error) {
	l, err := TokenFactGraphLayoutFromTotals(uint64(g.NodeCount()), uint64(g.EdgeCount()), nodeRecordBytes, edgeRecordBytes, uint64(g.PayloadBytes))
	if err != nil {
		return l, err
	}
	l.MaxOutDegree, l.TopOutDegreePrefixSums = degreeProfile(g)
	return l, nil
}

// TokenFactGraphLayoutFromTotals builds a layout for callers that only have
// totals (vyre's from_aggregate_fields). The degree profile is left zero.
// Errors are those of AdaptTokenFactGraphLayout.
func TokenFactGraphLayoutFromTotals(nodeCount, edgeCount, nodeRecordBytes, edgeRecordBytes, payloadBytes uint64) (TokenFactGraphLayout, error) {
	if nodeRecordBytes == 0 {
		return TokenFactGraphLayout{}, &ZeroRecordWidthError{Field: "node_record_bytes"}
	}
	if edgeRecordBytes == 0 {
		return TokenFactGraphLayout{}, &ZeroRecordWidthError{Field: "edge_record_bytes"}
	}
	nb, err := checked.Mul(nodeCount, nodeRecordBytes, "token/fact node bytes")
	if err != nil {
		return TokenFactGraphLayout{}, err
	}
	eb, err := checked.Mul(edgeCount, edgeRecordBytes, "token/fact edge bytes")
	if err != nil {
		return TokenFactGraphLayout{}, err
	}
	rb, err := checked.Sum("token/fact resident bytes", nb, eb, payloadBytes)
	if err != nil {
		return TokenFactGraphLayout{}, err
	}
	return TokenFactGraphLayout{
		GraphShape:      GraphShape{NodeCount: nodeCount, EdgeCount: edgeCount},
		NodeRecordBytes: nodeRecordBytes, EdgeRecordBytes: edgeRecordBytes,
		NodeBytes: nb, EdgeBytes: eb, PayloadBytes: payloadBytes, ResidentBytes: rb,
	}, nil
}

// degreeProfile returns the maximum out-degree and the top-k prefix sums,
// keeping the 32768 largest degrees in a min-heap (O(n log 32768)).
func degreeProfile(g *TokenFactGraph) (uint64, [TokenFactDegreeProfileBuckets]uint64) {
	const keep = 32768
	heap := make([]uint32, 0, min(keep, g.NodeCount()))
	down := func(i int) {
		for {
			l := 2*i + 1
			if l >= len(heap) {
				return
			}
			s := l
			if r := l + 1; r < len(heap) && heap[r] < heap[l] {
				s = r
			}
			if heap[i] <= heap[s] {
				return
			}
			heap[i], heap[s] = heap[s], heap[i]
			i = s
		}
	}
	for i := range g.NodeCount() {
		d := g.OutDegree(i)
		if len(heap) < keep {
			heap = append(heap, d)
			for j := len(heap) - 1; j > 0; {
				p := (j - 1) / 2
				if heap[p] <= heap[j] {
					break
				}
				heap[p], heap[j] = heap[j], heap[p]
				j = p
			}
		} else if d > heap[0] {
			heap[0] = d
			down(0)
		}
	}
	slices.SortFunc(heap, func(a, b uint32) int { return int(int64(b) - int64(a)) })
	var sums [TokenFactDegreeProfileBuckets]uint64
	var maxDeg, acc uint64
	if len(heap) > 0 {
		maxDeg = uint64(heap[0])
	}
	k := 0
	for i, d := range heap {
		acc += uint64(d) // at most the edge count, which fits in 32 bits
		for k < TokenFactDegreeProfileBuckets && uint64(i+1) == TokenFactDegreeProfileRanks[k] {
			sums[k] = acc
			k++
		}
	}
	for ; k < TokenFactDegreeProfileBuckets; k++ {
		sums[k] = acc
	}
	return maxDeg, sums
}
