package frontier

import (
	"encoding/json"
	"fmt"
	"github.com/gpuplan/gpuplan/internal/memcheck"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gpuplan/gpuplan/internal/checked"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// specTokenFactGraph is vyre's token/fact test graph: 3 nodes with 8 payload bytes
// each and 2 edges.
func specTokenFactGraph(t testing.TB) *TokenFactGraph {
	g, err := BuildTokenFactGraph(
		[]TokenFactNode{
			{ID: 10, Kind: NodeToken, PayloadOffset: 0, PayloadLen: 8},
			{ID: 11, Kind: NodeSemantic, PayloadOffset: 8, PayloadLen: 8},
			{ID: 12, Kind: NodeFact, PayloadOffset: 16, PayloadLen: 8},
		},
		[]TokenFactEdge{{From: 10, To: 11, Kind: EdgeTokenFlow}, {From: 11, To: 12, Kind: EdgeSemanticFact}},
		24)
	require.NoError(t, err)
	return g
}

func TestTokenFactLayoutSpecVector(t *testing.T) {
	g := specTokenFactGraph(t)
	l, err := AdaptTokenFactGraphLayout(g, 32, 16)
	require.NoError(t, err)
	assert.Equal(t, GraphShape{NodeCount: 3, EdgeCount: 2}, l.GraphShape)
	assert.Equal(t, uint64(96), l.NodeBytes)
	assert.Equal(t, uint64(32), l.EdgeBytes)
	assert.Equal(t, uint64(24), l.PayloadBytes)
	assert.Equal(t, uint64(152), l.ResidentBytes)
	assert.Equal(t, uint64(128), l.NodeBytes+l.EdgeBytes, "graph bytes fed to the memory planner")
	assert.Equal(t, uint64(1), l.MaxOutDegree)
	assert.Equal(t, [16]uint64{1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2}, l.TopOutDegreePrefixSums)
}

func TestTokenFactLayoutErrors(t *testing.T) {
	g := specTokenFactGraph(t)
	_, err := AdaptTokenFactGraphLayout(g, 0, 0)
	assert.Equal(t, &ZeroRecordWidthError{Field: "node_record_bytes"}, err)
	_, err = AdaptTokenFactGraphLayout(g, 32, 0)
	assert.Equal(t, &ZeroRecordWidthError{Field: "edge_record_bytes"}, err)
	assert.Contains(t, err.Error(), "Fix:")
	for _, tc := range []struct {
		n, e, nr, er, p uint64
		field           string
	}{
		{math.MaxUint64, 0, 2, 1, 0, "token/fact node bytes"},
		{1, math.MaxUint64, 1, 2, 0, "token/fact edge bytes"},
		{1, 1, 1, 1, math.MaxUint64, "token/fact resident bytes"},
	} {
		_, err := TokenFactGraphLayoutFromTotals(tc.n, tc.e, tc.nr, tc.er, tc.p)
		var oe *checked.OverflowError
		require.ErrorAs(t, err, &oe)
		assert.Equal(t, tc.field, oe.Field)
	}
}

func TestBuildTokenFactGraphCSR(t *testing.T) {
	g, err := BuildTokenFactGraph(
		[]TokenFactNode{{ID: 5, Kind: NodeFact}, {ID: 1, Kind: NodeToken}, {ID: 9, Kind: NodeDiagnostic}, {ID: 2, Kind: NodeToken}},
		[]TokenFactEdge{
			{From: 9, To: 5, Kind: EdgeDiagnosticProvenance},
			{From: 1, To: 5, Kind: EdgeFactDependency},
			{From: 1, To: 2, Kind: EdgeTokenFlow},
			{From: 9, To: 1, Kind: EdgeMacroExpansion},
		}, 0)
	require.NoError(t, err)
	assert.Equal(t, []uint32{5, 1, 9, 2}, g.NodeIDs)
	assert.Equal(t, []uint32{0, 0, 2, 4, 4}, g.RowOffsets)
	assert.Equal(t, []uint32{0, 3, 0, 1}, g.ColumnIndices)
	assert.Equal(t, []TokenFactEdgeKind{EdgeFactDependency, EdgeTokenFlow, EdgeDiagnosticProvenance, EdgeMacroExpansion}, g.EdgeKinds)
	assert.Equal(t, uint32(2), g.TokenCount)
	assert.Equal(t, uint32(1), g.FactCount)
	assert.Equal(t, 4, g.NodeCount())
	assert.Equal(t, 4, g.EdgeCount())
	assert.Equal(t, uint32(2), g.OutDegree(2))
}

func TestBuildTokenFactGraphErrors(t *testing.T) {
	tok := func(id, off, n uint32) TokenFactNode {
		return TokenFactNode{ID: id, Kind: NodeToken, PayloadOffset: off, PayloadLen: n}
	}
	tests := []struct {
		name    string
		nodes   []TokenFactNode
		edges   []TokenFactEdge
		payload uint32
		want    error
	}{
		{"duplicate before unknown edge", []TokenFactNode{tok(1, 0, 0), tok(1, 0, 0)}, []TokenFactEdge{{From: 7, To: 1}}, 0,
			&DuplicateTokenFactNodeError{NodeID: 1, Index: 1}},
		{"earliest repetition", []TokenFactNode{tok(5, 0, 0), tok(1, 0, 0), tok(1, 0, 0), tok(5, 0, 0)}, nil, 0,
			&DuplicateTokenFactNodeError{NodeID: 1, Index: 2}},
		{"unknown from", []TokenFactNode{tok(1, 0, 0)}, []TokenFactEdge{{From: 1, To: 1}, {From: 7, To: 8}}, 0,
			&UnknownEdgeNodeError{Edge: 1, From: 7, To: 8, NodeID: 7}},
		{"unknown to", []TokenFactNode{tok(1, 0, 0)}, []TokenFactEdge{{From: 1, To: 8}}, 0,
			&UnknownEdgeNodeError{Edge: 0, From: 1, To: 8, NodeID: 8}},
		{"unknown edge before payload", []TokenFactNode{tok(1, math.MaxUint32, 1)}, []TokenFactEdge{{From: 1, To: 8}}, 0,
			&UnknownEdgeNodeError{Edge: 0, From: 1, To: 8, NodeID: 8}},
		{"payload overflow", []TokenFactNode{tok(1, math.MaxUint32, 1)}, nil, 0,
			&PayloadOverflowError{NodeID: 1, Offset: math.MaxUint32, Len: 1, PayloadEnd: 1 << 32}},
		{"payload out of bounds", []TokenFactNode{tok(1, 0, 8), tok(2, 4, 8)}, nil, 8,
			&PayloadOutOfBoundsError{NodeID: 2, PayloadEnd: 12, PayloadBytes: 8}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, err := BuildTokenFactGraph(tc.nodes, tc.edges, tc.payload)
			assert.Nil(t, g)
			assert.Equal(t, tc.want, err)
			assert.Contains(t, err.Error(), "Fix:")
		})
	}
	_, err := buildTokenFactGraph([]TokenFactNode{tok(1, 0, 0), tok(2, 0, 0), tok(3, 0, 0)}, nil, 0, 2)
	assert.Equal(t, &CsrIndexOverflowError{Field: "node count", Count: 3, Limit: 2}, err)
	_, err = buildTokenFactGraph([]TokenFactNode{tok(1, 0, 0)}, make([]TokenFactEdge, 3), 0, 2)
	assert.Equal(t, &UnknownEdgeNodeError{Edge: 0, From: 0, To: 0, NodeID: 0}, err)
	_, err = buildTokenFactGraph([]TokenFactNode{tok(0, 0, 0)}, make([]TokenFactEdge, 3), 0, 2)
	assert.Equal(t, &CsrIndexOverflowError{Field: "edge count", Count: 3, Limit: 2}, err)
	assert.Contains(t, err.Error(), "Fix:")
	_, err = BuildTokenFactGraph([]TokenFactNode{{ID: 1}, {ID: 2, Kind: 9}}, nil, 0)
	assert.EqualError(t, err, "nodes[1].kind: node 2 has unknown node kind 9. Fix: use one of [token macro_expansion semantic fact diagnostic]")
	_, err = BuildTokenFactGraph([]TokenFactNode{{ID: 1}}, []TokenFactEdge{{From: 1, To: 1}, {From: 1, To: 1, Kind: 9}}, 0)
	assert.EqualError(t, err, "edges[1].kind: edge 1 -> 1 has unknown edge kind 9. Fix: use one of [token_flow macro_expansion semantic_fact fact_dependency diagnostic_provenance]")
}

func TestTokenFactErrorPaths(t *testing.T) {
	checkFieldErrors(t, []fieldErrorCase{
		{"duplicate", &DuplicateTokenFactNodeError{NodeID: 1, Index: 3}, "nodes[3].id",
			"DuplicateNode: nodes[3].id: token/fact node id 1 appears more than once. Fix: give every node a unique id"},
		{"unknown from", &UnknownEdgeNodeError{Edge: 1, From: 7, To: 8, NodeID: 7}, "edges[1].from",
			"UnknownEdgeNode: edges[1].from: edge 7 -> 8 names node id 7, which is not in the node list. Fix: add node 7 or remove the edge"},
		{"unknown to", &UnknownEdgeNodeError{Edge: 0, From: 1, To: 8, NodeID: 8}, "edges[0].to",
			"UnknownEdgeNode: edges[0].to: edge 1 -> 8 names node id 8, which is not in the node list. Fix: add node 8 or remove the edge"},
	})
	// errors.As still finds the type through a wrapper.
	_, err := BuildTokenFactGraph([]TokenFactNode{{ID: 4}, {ID: 4}}, nil, 0)
	var de *DuplicateTokenFactNodeError
	require.ErrorAs(t, fmt.Errorf("graph: %w", err), &de)
	assert.Equal(t, "nodes[1].id", de.Field())
}

func TestTokenFactKindsJSON(t *testing.T) {
	var e TokenFactEdge
	require.NoError(t, json.Unmarshal([]byte(`{"from":1,"to":2,"kind":"diagnostic_provenance"}`), &e))
	assert.Equal(t, EdgeDiagnosticProvenance, e.Kind)
	var n TokenFactNode
	require.NoError(t, json.Unmarshal([]byte(`{"id":1,"kind":"macro_expansion"}`), &n))
	assert.Equal(t, NodeMacroExpansion, n.Kind)
	assert.ErrorContains(t, json.Unmarshal([]byte(`{"kind":"lexeme"}`), &n), "Fix:")
	_, err := json.Marshal(TokenFactEdge{Kind: 77})
	assert.Error(t, err)
	assert.Equal(t, "fact", NodeFact.String())
	assert.Equal(t, "edge kind(9)", TokenFactEdgeKind(9).String())
}

func randomTokenFactInput(r *rand.Rand, n, m int) ([]TokenFactNode, []TokenFactEdge, uint32) {
	payload := uint32(r.IntN(1000))
	ids := r.Perm(3*n + 1)[:n]
	nodes := make([]TokenFactNode, n)
	for i := range nodes {
		off := uint32(r.IntN(int(payload) + 1))
		nodes[i] = TokenFactNode{ID: uint32(ids[i]), Kind: TokenFactNodeKind(r.IntN(5)), PayloadOffset: off, PayloadLen: uint32(r.IntN(int(payload-off) + 1))}
	}
	edges := make([]TokenFactEdge, 0, m)
	for range m {
		if n == 0 {
			break
		}
		edges = append(edges, TokenFactEdge{From: nodes[r.IntN(n)].ID, To: nodes[r.IntN(n)].ID, Kind: TokenFactEdgeKind(r.IntN(5))})
	}
	return nodes, edges, payload
}

// checkTokenFactGraph verifies that g is exactly the CSR of nodes and edges.
func checkTokenFactGraph(t testing.TB, nodes []TokenFactNode, edges []TokenFactEdge, g *TokenFactGraph) {
	require.Len(t, g.NodeIDs, len(nodes))
	require.Len(t, g.RowOffsets, len(nodes)+1)
	require.Equal(t, uint32(0), g.RowOffsets[0])
	require.Equal(t, uint32(len(edges)), g.RowOffsets[len(nodes)])
	idx := map[uint32]int{}
	var tokens, facts uint32
	for i, n := range nodes {
		idx[n.ID] = i
		require.Equal(t, n.ID, g.NodeIDs[i])
		require.Equal(t, n.Kind, g.NodeKinds[i])
		require.LessOrEqual(t, uint64(g.PayloadOffsets[i])+uint64(g.PayloadLens[i]), uint64(g.PayloadBytes))
		tokens += b2u(n.Kind == NodeToken)
		facts += b2u(n.Kind == NodeFact)
	}
	require.Equal(t, tokens, g.TokenCount)
	require.Equal(t, facts, g.FactCount)
	// Rebuild the edge list from the CSR; rows keep input order.
	want := make([][]TokenFactEdge, len(nodes))
	for _, e := range edges {
		want[idx[e.From]] = append(want[idx[e.From]], e)
	}
	for i := range nodes {
		require.LessOrEqual(t, g.RowOffsets[i], g.RowOffsets[i+1])
		var got []TokenFactEdge
		for k := g.RowOffsets[i]; k < g.RowOffsets[i+1]; k++ {
			got = append(got, TokenFactEdge{From: g.NodeIDs[i], To: g.NodeIDs[g.ColumnIndices[k]], Kind: g.EdgeKinds[k]})
		}
		require.Equal(t, want[i], got)
	}
}

func b2u(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}

func TestTokenFactGraphProperties(t *testing.T) {
	for seed := uint64(0); seed < 200; seed++ {
		r := rand.New(rand.NewPCG(seed, 21))
		n := r.IntN(80)
		nodes, edges, payload := randomTokenFactInput(r, n, r.IntN(4*n+1))
		g, err := BuildTokenFactGraph(nodes, edges, payload)
		require.NoError(t, err, "seed %d", seed)
		checkTokenFactGraph(t, nodes, edges, g)
		l, err := AdaptTokenFactGraphLayout(g, 24, 12)
		require.NoError(t, err)
		require.Equal(t, l.NodeBytes+l.EdgeBytes+uint64(payload), l.ResidentBytes)
		// Reference degree profile: sort all degrees descending.
		degs := make([]uint64, n)
		for i := range degs {
			degs[i] = uint64(g.OutDegree(i))
		}
		slices.SortFunc(degs, func(a, b uint64) int { return int(int64(b) - int64(a)) })
		for k, rank := range TokenFactDegreeProfileRanks {
			var s uint64
			for i := 0; i < len(degs) && uint64(i) < rank; i++ {
				s += degs[i]
			}
			require.Equal(t, s, l.TopOutDegreePrefixSums[k], "seed %d rank %d", seed, rank)
		}
		if n > 0 {
			require.Equal(t, degs[0], l.MaxOutDegree)
		}
		require.LessOrEqual(t, l.TopOutDegreePrefixSums[15], uint64(len(edges)))
	}
}

func TestTokenFactDegreeProfileBeyondHeap(t *testing.T) {
	// 40000 nodes: node i has out-degree i%7, so the heap of 32768 drops
	// small degrees; compare with a full sort.
	const n = 40000
	nodes := make([]TokenFactNode, n)
	var edges []TokenFactEdge
	for i := range nodes {
		nodes[i] = TokenFactNode{ID: uint32(i)}
		for range i % 7 {
			edges = append(edges, TokenFactEdge{From: uint32(i), To: 0})
		}
	}
	g, err := BuildTokenFactGraph(nodes, edges, 0)
	require.NoError(t, err)
	l, err := AdaptTokenFactGraphLayout(g, 1, 1)
	require.NoError(t, err)
	degs := make([]int, n)
	for i := range degs {
		degs[i] = i % 7
	}
	slices.Sort(degs)
	slices.Reverse(degs)
	sum := 0
	for _, d := range degs[:32768] {
		sum += d
	}
	assert.Equal(t, uint64(sum), l.TopOutDegreePrefixSums[15])
	assert.Equal(t, uint64(6), l.MaxOutDegree)
	assert.Equal(t, uint64(6), l.TopOutDegreePrefixSums[0])
}

func FuzzBuildTokenFactGraph(f *testing.F) {
	f.Add([]byte{1, 0, 0, 8, 2, 3, 8, 8, 0xff, 1, 2, 0}, uint32(16))
	f.Add([]byte{1, 0, 0xff, 8, 1, 1, 0, 0, 0xff, 1, 9, 0}, uint32(0))
	f.Fuzz(func(t *testing.T, data []byte, payload uint32) {
		var nodes []TokenFactNode
		var edges []TokenFactEdge
		i := 0
		for ; i+4 <= len(data) && data[i] != 0xff; i += 4 {
			nodes = append(nodes, TokenFactNode{ID: uint32(data[i] % 16), Kind: TokenFactNodeKind(data[i+1] % 6),
				PayloadOffset: uint32(data[i+2]) << (data[i+1] % 32), PayloadLen: uint32(data[i+3])})
		}
		for i++; i+3 <= len(data); i += 3 {
			edges = append(edges, TokenFactEdge{From: uint32(data[i] % 16), To: uint32(data[i+1] % 16), Kind: TokenFactEdgeKind(data[i+2] % 6)})
		}
		memcheck.Check(t, memcheck.Bound{Base: 1 << 16, PerByte: 512}, len(data), func() { _, _ = BuildTokenFactGraph(nodes, edges, payload) })
		g, err := BuildTokenFactGraph(nodes, edges, payload)
		if err != nil {
			require.Contains(t, err.Error(), "Fix:")
			return
		}
		checkTokenFactGraph(t, nodes, edges, g)
		l, err := AdaptTokenFactGraphLayout(g, uint64(payload), uint64(len(data)))
		if err != nil {
			require.Contains(t, err.Error(), "Fix:")
			return
		}
		require.Equal(t, l.NodeBytes+l.EdgeBytes+l.PayloadBytes, l.ResidentBytes)
	})
}

func benchTokenFactInput(n int) ([]TokenFactNode, []TokenFactEdge) {
	nodes := make([]TokenFactNode, n)
	edges := make([]TokenFactEdge, 0, 2*n)
	for i := range nodes {
		nodes[i] = TokenFactNode{ID: uint32(i * 3), Kind: TokenFactNodeKind(i % 5), PayloadOffset: uint32(i % 1024), PayloadLen: 8}
		if i > 0 {
			edges = append(edges, TokenFactEdge{From: uint32((i - 1) * 3), To: uint32(i * 3), Kind: EdgeTokenFlow},
				TokenFactEdge{From: uint32((i * 7 % n) * 3), To: uint32(i * 3), Kind: EdgeFactDependency})
		}
	}
	return nodes, edges
}

func BenchmarkBuildTokenFactGraph(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		nodes, edges := benchTokenFactInput(n)
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := BuildTokenFactGraph(nodes, edges, 2048); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkAdaptTokenFactGraphLayout(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		nodes, edges := benchTokenFactInput(n)
		g, err := BuildTokenFactGraph(nodes, edges, 2048)
		require.NoError(b, err)
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := AdaptTokenFactGraphLayout(g, 32, 16); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func ExampleBuildTokenFactGraph() {
	g, err := BuildTokenFactGraph(
		[]TokenFactNode{
			{ID: 10, Kind: NodeToken, PayloadOffset: 0, PayloadLen: 8},
			{ID: 11, Kind: NodeSemantic, PayloadOffset: 8, PayloadLen: 8},
			{ID: 12, Kind: NodeFact, PayloadOffset: 16, PayloadLen: 8},
		},
		[]TokenFactEdge{{From: 10, To: 11, Kind: EdgeTokenFlow}, {From: 11, To: 12, Kind: EdgeSemanticFact}},
		24)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(g.RowOffsets, g.ColumnIndices, g.EdgeKinds, g.TokenCount, g.FactCount)
	// Output:
	// [0 1 2 2] [1 2] [token_flow semantic_fact] 1 1
}

func ExampleAdaptTokenFactGraphLayout() {
	g, _ := BuildTokenFactGraph(
		[]TokenFactNode{{ID: 0, PayloadLen: 8}, {ID: 1, PayloadOffset: 8, PayloadLen: 8}, {ID: 2, PayloadOffset: 16, PayloadLen: 8}},
		[]TokenFactEdge{{From: 0, To: 1}, {From: 1, To: 2}}, 24)
	l, err := AdaptTokenFactGraphLayout(g, 32, 16)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(l.NodeBytes, l.EdgeBytes, l.PayloadBytes, l.ResidentBytes, l.MaxOutDegree)
	// Output:
	// 96 32 24 152 1
}

func ExampleTokenFactGraphLayoutFromTotals() {
	l, err := TokenFactGraphLayoutFromTotals(1_000_000, 4_000_000, 32, 16, 8<<20)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(l.NodeBytes, l.EdgeBytes, l.ResidentBytes, l.MaxOutDegree)
	_, err = TokenFactGraphLayoutFromTotals(1, 1, 0, 16, 0)
	fmt.Println(err)
	// Output:
	// 32000000 64000000 104388608 0
	// ZeroRecordWidth: node_record_bytes is 0. Fix: give node_record_bytes the size of one device record in bytes
}
