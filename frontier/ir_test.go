package frontier

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"github.com/gpuplan/gpuplan/internal/memcheck"
	"github.com/gpuplan/gpuplan/megakernel"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gpuplan/gpuplan/internal/checked"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPlanFrontierTypedIRSpecVector(t *testing.T) {
	// vyre's vector: nodes (0, Parser, 4) and (1, Semantic, 6) with 0 -> 1, at 8/16/32.
	plan, err := PlanFrontierTypedIR(
		[]IRNode{{ID: 0, Domain: DomainParser, ActiveItems: 4}, {ID: 1, Domain: DomainSemantic, ActiveItems: 6}},
		[]IRDependency{{Before: 0, After: 1}})
	require.NoError(t, err)
	require.Len(t, plan.Waves, 2)
	in, err := AdaptFrontierTypedIRToCUDA(plan, 8, 16, 32)
	require.NoError(t, err)
	assert.Equal(t, []uint64{4, 6}, in.ActiveItems)
	assert.Equal(t, []megakernel.FrontierWave{{FrontierBytes: 32, ScratchBytes: 64, OutputBytes: 32}, {FrontierBytes: 48, ScratchBytes: 96, OutputBytes: 32}}, in.Waves)
	assert.Equal(t, []megakernel.Dependency{{Before: 0, After: 1}}, in.Dependencies)
}

func TestAdaptFrontierTypedIROverflow(t *testing.T) {
	// vyre's vector: u64::MAX items overflow; every wave is checked before output.
	plan := IRPlan{Waves: []FrontierWave{{Index: 0, ActiveItems: 1}, {Index: 1, ActiveItems: math.MaxUint64}}}
	tests := []struct {
		name   string
		fb, sb uint64
		field  string
	}{
		{"frontier", 8, 0, "frontier bytes"},
		{"scratch", 1, 16, "scratch bytes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in, err := AdaptFrontierTypedIRToCUDA(plan, tc.fb, tc.sb, 32)
			var oe *checked.OverflowError
			require.ErrorAs(t, err, &oe)
			assert.Equal(t, tc.field, oe.Field)
			assert.Contains(t, err.Error(), "Fix:")
			assert.Empty(t, in.Waves, "no output is produced before every wave is checked")
		})
	}
}

func TestPlanFrontierTypedIRLayersSortedByDomainThenID(t *testing.T) {
	nodes := []IRNode{
		{ID: 9, Domain: DomainDiagnostic, ActiveItems: 1},
		{ID: 5, Domain: DomainDataflow, ActiveItems: 2},
		{ID: 7, Domain: DomainParser, ActiveItems: 3},
		{ID: 3, Domain: DomainParser, ActiveItems: 4},
		{ID: 4, Domain: DomainSemantic, ActiveItems: 5},
		{ID: 1, Domain: DomainDiagnostic, ActiveItems: 6},
	}
	deps := []IRDependency{{Before: 7, After: 1}, {Before: 3, After: 1}, {Before: 4, After: 1}}
	plan, err := PlanFrontierTypedIR(nodes, deps)
	require.NoError(t, err)
	require.Len(t, plan.Waves, 2)
	assert.Equal(t, FrontierWave{Index: 0, Domains: []Domain{DomainParser, DomainSemantic, DomainDataflow, DomainDiagnostic},
		NodeIDs: []uint32{3, 7, 4, 5, 9}, ActiveItems: 15}, plan.Waves[0])
	assert.Equal(t, FrontierWave{Index: 1, Domains: []Domain{DomainDiagnostic}, NodeIDs: []uint32{1}, ActiveItems: 6}, plan.Waves[1])
}

func TestPlanFrontierTypedIRErrors(t *testing.T) {
	p := func(id uint32) IRNode { return IRNode{ID: id, Domain: DomainParser, ActiveItems: 1} }
	tests := []struct {
		name  string
		nodes []IRNode
		deps  []IRDependency
		want  error
	}{
		{"duplicate node before unknown dependency", []IRNode{p(1), p(2), p(1)}, []IRDependency{{Before: 8, After: 1}},
			&DuplicateNodeError{NodeID: 1, Index: 2}},
		{"earliest repetition", []IRNode{p(5), p(1), p(1), p(5)}, nil,
			&DuplicateNodeError{NodeID: 1, Index: 2}},
		{"unknown before", []IRNode{p(1)}, []IRDependency{{Before: 8, After: 9}},
			&UnknownDependencyNodeError{Dependency: 0, Before: 8, After: 9, NodeID: 8}},
		{"unknown after", []IRNode{p(1)}, []IRDependency{{Before: 1, After: 1}, {Before: 1, After: 9}},
			&UnknownDependencyNodeError{Dependency: 1, Before: 1, After: 9, NodeID: 9}},
		{"two cycle", []IRNode{p(0), p(1), p(2)}, []IRDependency{{Before: 0, After: 1}, {Before: 1, After: 0}},
			&CycleError{UnscheduledNodes: 2}},
		{"self dependency is a cycle", []IRNode{p(0), p(1)}, []IRDependency{{Before: 1, After: 1}},
			&CycleError{UnscheduledNodes: 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := PlanFrontierTypedIR(tc.nodes, tc.deps)
			require.Error(t, err)
			assert.Equal(t, tc.want, err)
			assert.Contains(t, err.Error(), "Fix:")
		})
	}
	_, err := PlanFrontierTypedIR([]IRNode{{ID: 1}, {ID: 2, Domain: Domain(7)}}, nil)
	require.EqualError(t, err, "nodes[1].domain: node 2 has unknown domain 7. Fix: use parser, semantic, dataflow or diagnostic")
}

func TestFrontierIRErrorPaths(t *testing.T) {
	checkFieldErrors(t, []fieldErrorCase{
		{"duplicate", &DuplicateNodeError{NodeID: 4, Index: 3}, "nodes[3].id",
			"DuplicateNode: nodes[3].id: node id 4 appears more than once. Fix: give every frontier IR node a unique id"},
		{"unknown before", &UnknownDependencyNodeError{Dependency: 2, Before: 8, After: 9, NodeID: 8}, "dependencies[2].before",
			"UnknownDependencyNode: dependencies[2].before: dependency 8 -> 9 names node id 8, which is not in the node list. Fix: add node 8 or remove the dependency"},
		{"unknown after", &UnknownDependencyNodeError{Dependency: 0, Before: 1, After: 9, NodeID: 9}, "dependencies[0].after",
			"UnknownDependencyNode: dependencies[0].after: dependency 1 -> 9 names node id 9, which is not in the node list. Fix: add node 9 or remove the dependency"},
		{"self dependency on a missing node", &UnknownDependencyNodeError{Dependency: 1, Before: 7, After: 7, NodeID: 7}, "dependencies[1].before",
			"UnknownDependencyNode: dependencies[1].before: dependency 7 -> 7 names node id 7, which is not in the node list. Fix: add node 7 or remove the dependency"},
	})
	// errors.As still finds the types through a wrapper.
	_, err := PlanFrontierTypedIR([]IRNode{{ID: 1}}, []IRDependency{{Before: 1, After: 1}, {Before: 3, After: 1}})
	var ue *UnknownDependencyNodeError
	require.ErrorAs(t, fmt.Errorf("frontier: %w", err), &ue)
	assert.Equal(t, "dependencies[1].before", ue.Field())
}

func TestPlanFrontierTypedIRTooLarge(t *testing.T) {
	p := func(id uint32) IRNode { return IRNode{ID: id} }
	_, err := planFrontierTypedIR([]IRNode{p(0), p(1), p(2)}, nil, 2)
	assert.Equal(t, &PlanTooLargeError{Field: "frontier IR nodes", Count: 3, Limit: 2}, err)
	_, err = planFrontierTypedIR([]IRNode{p(0), p(1)}, []IRDependency{{0, 1}, {0, 1}, {0, 1}}, 2)
	assert.Equal(t, &PlanTooLargeError{Field: "frontier IR dependencies", Count: 3, Limit: 2}, err)
	assert.Contains(t, err.Error(), "Fix:")
}

func TestPlanFrontierTypedIREmptyAndDuplicateDeps(t *testing.T) {
	plan, err := PlanFrontierTypedIR(nil, nil)
	require.NoError(t, err)
	assert.Empty(t, plan.Waves)
	in, err := AdaptFrontierTypedIRToCUDA(plan, 1, 1, 1)
	require.NoError(t, err)
	assert.Empty(t, in.Waves)
	assert.Empty(t, in.Dependencies)

	plan, err = PlanFrontierTypedIR([]IRNode{{ID: 0}, {ID: 1}}, []IRDependency{{0, 1}, {0, 1}})
	require.NoError(t, err)
	assert.Len(t, plan.Waves, 2)
}

func TestDomainJSON(t *testing.T) {
	var n IRNode
	require.NoError(t, json.Unmarshal([]byte(`{"id":3,"domain":"dataflow","active_items":2}`), &n))
	assert.Equal(t, IRNode{ID: 3, Domain: DomainDataflow, ActiveItems: 2}, n)
	b, err := json.Marshal(n)
	require.NoError(t, err)
	assert.JSONEq(t, `{"id":3,"domain":"dataflow","active_items":2}`, string(b))
	assert.ErrorContains(t, json.Unmarshal([]byte(`{"domain":"lexer"}`), &n), "Fix:")
	assert.Equal(t, "domain(9)", Domain(9).String())
}

// randomIRDAG returns n nodes with shuffled ids and forward edges over a
// random topological order.
func randomIRDAG(r *rand.Rand, n, edges int) ([]IRNode, []IRDependency) {
	ids := r.Perm(n * 3)[:n]
	nodes := make([]IRNode, n)
	for i := range nodes {
		nodes[i] = IRNode{ID: uint32(ids[i]), Domain: Domain(r.IntN(4)), ActiveItems: uint32(r.IntN(1000))}
	}
	var deps []IRDependency
	for k := 0; k < edges && n > 1; k++ {
		a, b := r.IntN(n), r.IntN(n)
		if a == b {
			continue
		}
		if a > b {
			a, b = b, a
		}
		deps = append(deps, IRDependency{Before: nodes[a].ID, After: nodes[b].ID})
	}
	return nodes, deps
}

// checkIRPlan verifies the invariants of a successful plan.
func checkIRPlan(t testing.TB, nodes []IRNode, deps []IRDependency, plan IRPlan) {
	byID := map[uint32]IRNode{}
	for _, n := range nodes {
		byID[n.ID] = n
	}
	wave := map[uint32]int{}
	for i, w := range plan.Waves {
		require.Equal(t, i, w.Index)
		require.NotEmpty(t, w.NodeIDs)
		var sum uint64
		var doms []Domain
		for k, id := range w.NodeIDs {
			_, seen := wave[id]
			require.False(t, seen, "node %d scheduled twice", id)
			wave[id] = i
			n := byID[id]
			sum += uint64(n.ActiveItems)
			if !slices.Contains(doms, n.Domain) {
				doms = append(doms, n.Domain)
			}
			if k > 0 {
				prev := byID[w.NodeIDs[k-1]]
				require.True(t, prev.Domain < n.Domain || (prev.Domain == n.Domain && prev.ID < n.ID), "layer not sorted by (domain, id)")
			}
		}
		require.Equal(t, sum, w.ActiveItems)
		require.Equal(t, doms, w.Domains)
	}
	require.Len(t, wave, len(nodes))
	hasPredInPrev := map[uint32]bool{}
	for _, d := range deps {
		require.Less(t, wave[d.Before], wave[d.After])
		if wave[d.Before] == wave[d.After]-1 {
			hasPredInPrev[d.After] = true
		}
	}
	// Kahn layers are as early as possible.
	for id, w := range wave {
		if w > 0 {
			require.True(t, hasPredInPrev[id], "node %d in wave %d has no predecessor in wave %d", id, w, w-1)
		}
	}
}

func TestPlanFrontierTypedIRProperties(t *testing.T) {
	for seed := uint64(0); seed < 200; seed++ {
		r := rand.New(rand.NewPCG(seed, 20))
		n := r.IntN(60)
		nodes, deps := randomIRDAG(r, n, r.IntN(3*n+1))
		plan, err := PlanFrontierTypedIR(nodes, deps)
		require.NoError(t, err, "seed %d", seed)
		checkIRPlan(t, nodes, deps, plan)
		in, err := AdaptFrontierTypedIRToCUDA(plan, 3, 5, 7)
		require.NoError(t, err)
		require.Len(t, in.Waves, len(plan.Waves))
		for i, w := range in.Waves {
			require.Equal(t, plan.Waves[i].ActiveItems*3, w.FrontierBytes)
			require.Equal(t, plan.Waves[i].ActiveItems*5, w.ScratchBytes)
			require.Equal(t, uint64(7), w.OutputBytes)
		}
		require.Len(t, in.Dependencies, max(len(plan.Waves)-1, 0))
		// Adding a back edge from the last node to a first-wave node that
		// reaches it makes a cycle.
		if len(plan.Waves) > 1 {
			last := plan.Waves[len(plan.Waves)-1].NodeIDs[0]
			var first uint32
			for _, d := range deps {
				if d.After == last {
					first = d.Before
				}
			}
			_, err := PlanFrontierTypedIR(nodes, append(slices.Clone(deps), IRDependency{Before: last, After: first}))
			var ce *CycleError
			require.ErrorAs(t, err, &ce, "seed %d", seed)
		}
	}
}

func FuzzPlanFrontierTypedIR(f *testing.F) {
	f.Add([]byte{0, 0, 4, 1, 1, 6, 0xff, 0, 1})
	f.Add([]byte{1, 2, 3, 1, 2, 3, 0xff, 1, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		var nodes []IRNode
		var deps []IRDependency
		i := 0
		for ; i+3 <= len(data) && data[i] != 0xff; i += 3 {
			nodes = append(nodes, IRNode{ID: uint32(data[i] % 32), Domain: Domain(data[i+1] % 5), ActiveItems: uint32(data[i+2])})
		}
		for i++; i+2 <= len(data); i += 2 {
			deps = append(deps, IRDependency{Before: uint32(data[i] % 32), After: uint32(data[i+1] % 32)})
		}
		memcheck.Check(t, memcheck.Bound{Base: 1 << 16, PerByte: 512}, len(data), func() { _, _ = PlanFrontierTypedIR(nodes, deps) })
		plan, err := PlanFrontierTypedIR(nodes, deps)
		if err != nil {
			require.Contains(t, err.Error(), "Fix:")
			return
		}
		checkIRPlan(t, nodes, deps, plan)
		scale := binary.LittleEndian.Uint64(append(slices.Clone(data), make([]byte, 8)...))
		if _, err := AdaptFrontierTypedIRToCUDA(plan, scale, scale>>3, 1); err != nil {
			require.Contains(t, err.Error(), "Fix:")
		}
	})
}

func benchIRInput(n int) ([]IRNode, []IRDependency) {
	// Layered DAG: 64 nodes per layer, each node depends on two nodes of
	// the previous layer.
	const width = 64
	nodes := make([]IRNode, n)
	deps := make([]IRDependency, 0, 2*n)
	for i := range nodes {
		nodes[i] = IRNode{ID: uint32(n - i), Domain: Domain(i % 4), ActiveItems: uint32(i % 97)}
		if i >= width {
			deps = append(deps, IRDependency{Before: uint32(n - (i - width)), After: uint32(n - i)},
				IRDependency{Before: uint32(n - (i - width + 1)), After: uint32(n - i)})
		}
	}
	return nodes, deps
}

func BenchmarkPlanFrontierTypedIR(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		nodes, deps := benchIRInput(n)
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := PlanFrontierTypedIR(nodes, deps); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func ExamplePlanFrontierTypedIR() {
	plan, err := PlanFrontierTypedIR(
		[]IRNode{
			{ID: 0, Domain: DomainParser, ActiveItems: 4},
			{ID: 2, Domain: DomainDataflow, ActiveItems: 5},
			{ID: 1, Domain: DomainSemantic, ActiveItems: 6},
		},
		[]IRDependency{{Before: 0, After: 1}})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, w := range plan.Waves {
		fmt.Println(w.Index, w.Domains, w.NodeIDs, w.ActiveItems)
	}
	// Output:
	// 0 [parser dataflow] [0 2] 9
	// 1 [semantic] [1] 6
}

func ExampleAdaptFrontierTypedIRToCUDA() {
	plan, _ := PlanFrontierTypedIR(
		[]IRNode{{ID: 0, Domain: DomainParser, ActiveItems: 4}, {ID: 1, Domain: DomainSemantic, ActiveItems: 6}},
		[]IRDependency{{Before: 0, After: 1}})
	in, err := AdaptFrontierTypedIRToCUDA(plan, 8, 16, 32)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(in.Waves, in.ActiveItems, in.Dependencies)
	// Output:
	// [{32 64 32} {48 96 32}] [4 6] [{0 1}]
}

func TestIDIndexDenseAndSparse(t *testing.T) {
	for seed := uint64(0); seed < 100; seed++ {
		r := rand.New(rand.NewPCG(seed, 99))
		n := r.IntN(3000)
		spread := []int{n + 1, 4*n + 5000, math.MaxUint32}[r.IntN(3)]
		ids := make([]uint32, n)
		for i := range ids {
			ids[i] = uint32(r.Int64N(int64(spread)))
		}
		// Reference with a map: the position of the first repetition.
		seen := map[uint32]int{}
		wantPos, haveDup := 0, false
		for i, v := range ids {
			if _, ok := seen[v]; ok {
				wantPos, haveDup = i, true
				break
			}
			seen[v] = len(seen)
		}
		x, dupPos, dup := newIDIndex(n, func(i int) uint32 { return ids[i] })
		require.Equal(t, haveDup, dup, "seed %d", seed)
		if dup {
			require.Equal(t, wantPos, dupPos, "seed %d", seed)
			continue
		}
		for i, v := range ids {
			p, ok := x.lookup(v)
			require.True(t, ok)
			require.Equal(t, uint32(i), p)
		}
		for range 50 {
			v := uint32(r.Int64N(math.MaxUint32 + 1))
			_, want := seen[v]
			_, got := x.lookup(v)
			require.Equal(t, want, got)
		}
	}
	x, _, _ := newIDIndex(0, nil)
	_, ok := x.lookup(0)
	assert.False(t, ok)
}

func TestAdaptFrontierTypedIRToCUDAIntoReusesCapacity(t *testing.T) {
	nodes, deps := benchIRInput(64 * 10)
	plan, err := PlanFrontierTypedIR(nodes, deps)
	require.NoError(t, err)
	var dst CudaFrontierInput
	require.NoError(t, AdaptFrontierTypedIRToCUDAInto(&dst, plan, 8, 16, 32))
	want, err := AdaptFrontierTypedIRToCUDA(plan, 8, 16, 32)
	require.NoError(t, err)
	assert.Equal(t, want, dst)
	wavesPtr, itemsPtr := &dst.Waves[0], &dst.ActiveItems[0]
	small := IRPlan{Waves: plan.Waves[:3]}
	require.NoError(t, AdaptFrontierTypedIRToCUDAInto(&dst, small, 1, 2, 3))
	assert.Len(t, dst.Waves, 3)
	assert.Len(t, dst.Dependencies, 2)
	assert.Same(t, wavesPtr, &dst.Waves[0], "the wave slice is reused")
	assert.Same(t, itemsPtr, &dst.ActiveItems[0], "the active item slice is reused")
	before := dst
	err = AdaptFrontierTypedIRToCUDAInto(&dst, IRPlan{Waves: []FrontierWave{{ActiveItems: math.MaxUint64}}}, 2, 0, 0)
	require.Error(t, err)
	assert.Equal(t, before, dst, "dst is unchanged on error")
}

// fieldErrorCase is an error value with the input field it must name and
// the message it must print.
type fieldErrorCase struct {
	name  string
	err   interface{ Field() string }
	field string
	msg   string
}

// checkFieldErrors checks each case's field and message.
func checkFieldErrors(t *testing.T, cases []fieldErrorCase) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.field, tc.err.Field())
			assert.EqualError(t, tc.err.(error), tc.msg)
		})
	}
}
