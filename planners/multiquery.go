package planners

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/gpuplan/gpuplan/internal/checked"
)

// MultiQuery is one query over a resident graph (vyre's MultiQuery).
type MultiQuery struct {
	// Query is the query id; ids are unique within one call.
	Query uint32 `json:"query"`
	// GraphLayoutHash identifies the resident graph; 0 is invalid.
	GraphLayoutHash uint64 `json:"graph_layout_hash"`
	// TraversalKey groups queries that share traversal work; 0 is invalid.
	TraversalKey uint64 `json:"traversal_key"`
	// GraphUploadBytes is the size of the graph; every query on one graph
	// must give the same value, and it must not be 0.
	GraphUploadBytes uint64 `json:"graph_upload_bytes"`
	// FrontierBytes is the query's own frontier.
	FrontierBytes uint64 `json:"frontier_bytes"`
	// ScratchBytes is the query's scratch; one launch reuses the largest.
	ScratchBytes uint64 `json:"scratch_bytes"`
	// OutputBytes is the query's own output.
	OutputBytes uint64 `json:"output_bytes"`
}

// GraphReuseTelemetry counts cold graph uploads and warm reuses of a
// resident graph. Both the multi-query plan (per group and in total) and the
// resident graph session plan report it.
type GraphReuseTelemetry struct {
	// ColdUploads counts launches that upload the graph.
	ColdUploads uint64 `json:"cold_uploads"`
	// WarmReuses counts queries served by an already resident graph.
	WarmReuses uint64 `json:"warm_reuses"`
	// UploadBytes is the graph bytes uploaded.
	UploadBytes uint64 `json:"upload_bytes"`
	// AvoidedUploadBytes is the graph bytes not uploaded thanks to reuse.
	AvoidedUploadBytes uint64 `json:"avoided_upload_bytes"`
}

// MultiQueryGroup is one launch: queries sharing a graph and a traversal key
// that fit the budget together.
type MultiQueryGroup struct {
	// GraphLayoutHash and TraversalKey are the shared group key.
	GraphLayoutHash uint64 `json:"graph_layout_hash"`
	TraversalKey    uint64 `json:"traversal_key"`
	// Queries are the query ids, ascending.
	Queries []uint32 `json:"queries"`
	// GraphUploadBytes is the graph size for the first launch on a graph,
	// 0 for every later launch on it.
	GraphUploadBytes uint64 `json:"graph_upload_bytes"`
	// FrontierBytes sums the queries' frontiers.
	FrontierBytes uint64 `json:"frontier_bytes"`
	// PeakScratchBytes is the largest scratch: one buffer is reused.
	PeakScratchBytes uint64 `json:"peak_scratch_bytes"`
	// OutputBytes sums the queries' outputs.
	OutputBytes uint64 `json:"output_bytes"`
	// ResidentBytes = graph + frontier + peak scratch + output. The graph
	// counts even when it is already resident.
	ResidentBytes uint64 `json:"resident_bytes"`
	// AvoidedLaunches and AvoidedHostFences are len(Queries) − 1.
	AvoidedLaunches   uint64 `json:"avoided_launches"`
	AvoidedHostFences uint64 `json:"avoided_host_fences"`
	// AvoidedGraphUploadBytes counts one graph per query served warm.
	AvoidedGraphUploadBytes uint64 `json:"avoided_graph_upload_bytes"`
	// GraphReuse is this launch's reuse telemetry.
	GraphReuse GraphReuseTelemetry `json:"graph_reuse"`
}

// MultiQueryExecutionPlan batches queries into launches over resident graphs.
type MultiQueryExecutionPlan struct {
	// Groups are ordered by (graph layout hash, traversal key).
	Groups []MultiQueryGroup `json:"groups"`
	// LaunchCount is the number of groups.
	LaunchCount uint64 `json:"launch_count"`
	// The avoided counts and bytes and the reuse telemetry sum the groups'.
	AvoidedLaunches         uint64              `json:"avoided_launches"`
	AvoidedHostFences       uint64              `json:"avoided_host_fences"`
	AvoidedGraphUploadBytes uint64              `json:"avoided_graph_upload_bytes"`
	GraphReuse              GraphReuseTelemetry `json:"graph_reuse"`
	// PeakResidentBytes is the largest group's resident bytes.
	PeakResidentBytes uint64 `json:"peak_resident_bytes"`
	// FinalOnlyHostFencePerGroup is always true: one host fence per launch.
	FinalOnlyHostFencePerGroup bool `json:"final_only_host_fence_per_group"`
}

// MultiQueryErrorKind names a multi-query planning failure (vyre's
// MultiQueryExecutionError).
type MultiQueryErrorKind uint8

const (
	// MultiQueryZeroBudget: budget_bytes is 0.
	MultiQueryZeroBudget MultiQueryErrorKind = iota + 1
	// MultiQueryDuplicateQuery: a query id repeats.
	MultiQueryDuplicateQuery
	// MultiQueryZeroGraphHash: graph_layout_hash is 0.
	MultiQueryZeroGraphHash
	// MultiQueryZeroTraversalKey: traversal_key is 0.
	MultiQueryZeroTraversalKey
	// MultiQueryZeroGraphUploadBytes: graph_upload_bytes is 0.
	MultiQueryZeroGraphUploadBytes
	// MultiQueryGraphUploadBytesMismatch: one graph with two sizes.
	MultiQueryGraphUploadBytesMismatch
	// MultiQueryOverBudget: one query alone does not fit the budget.
	MultiQueryOverBudget
)

var multiQueryKindNames = [...]string{
	MultiQueryZeroBudget:               "ZeroBudget",
	MultiQueryDuplicateQuery:           "DuplicateQuery",
	MultiQueryZeroGraphHash:            "ZeroGraphHash",
	MultiQueryZeroTraversalKey:         "ZeroTraversalKey",
	MultiQueryZeroGraphUploadBytes:     "ZeroGraphUploadBytes",
	MultiQueryGraphUploadBytesMismatch: "GraphUploadBytesMismatch",
	MultiQueryOverBudget:               "OverBudget",
}

// String returns the vyre variant name.
func (k MultiQueryErrorKind) String() string {
	if int(k) < len(multiQueryKindNames) && multiQueryKindNames[k] != "" {
		return multiQueryKindNames[k]
	}
	return fmt.Sprintf("MultiQueryErrorKind(%d)", uint8(k))
}

// MultiQueryError is a multi-query planning failure. Arithmetic overflow is
// reported as *checked.OverflowError naming the quantity.
type MultiQueryError struct {
	Kind MultiQueryErrorKind
	// Index is the query's position in the input (every kind but ZeroBudget).
	Index int
	// Query is the query id (every kind but ZeroBudget).
	Query uint32
	// GraphLayoutHash is set for GraphUploadBytesMismatch and OverBudget;
	// TraversalKey for OverBudget.
	GraphLayoutHash uint64
	TraversalKey    uint64
	// ExpectedBytes (the first size given for the graph) and ActualBytes are
	// set for GraphUploadBytesMismatch.
	ExpectedBytes uint64
	ActualBytes   uint64
	// RequiredBytes and BudgetBytes are set for OverBudget.
	RequiredBytes uint64
	BudgetBytes   uint64
}

// Field returns the input field the error is about.
func (e *MultiQueryError) Field() string {
	switch e.Kind {
	case MultiQueryZeroBudget:
		return "budget_bytes"
	case MultiQueryDuplicateQuery:
		return fmt.Sprintf("queries[%d].query", e.Index)
	case MultiQueryZeroGraphHash:
		return fmt.Sprintf("queries[%d].graph_layout_hash", e.Index)
	case MultiQueryZeroTraversalKey:
		return fmt.Sprintf("queries[%d].traversal_key", e.Index)
	case MultiQueryZeroGraphUploadBytes, MultiQueryGraphUploadBytesMismatch:
		return fmt.Sprintf("queries[%d].graph_upload_bytes", e.Index)
	case MultiQueryOverBudget:
		return fmt.Sprintf("queries[%d]", e.Index)
	}
	return ""
}

// Error describes the failure, names the input field and ends with a "Fix:" sentence.
func (e *MultiQueryError) Error() string {
	f := e.Field()
	switch e.Kind {
	case MultiQueryZeroBudget:
		return "budget_bytes is 0: no query can be resident. Fix: set budget_bytes to the device bytes the batch may keep resident"
	case MultiQueryDuplicateQuery:
		return fmt.Sprintf("%s: query id %d appears twice. Fix: give every query a unique id", f, e.Query)
	case MultiQueryZeroGraphHash:
		return fmt.Sprintf("%s: query %d has graph_layout_hash 0. Fix: set graph_layout_hash to the resident graph's non-zero layout hash", f, e.Query)
	case MultiQueryZeroTraversalKey:
		return fmt.Sprintf("%s: query %d has traversal_key 0. Fix: set traversal_key to a non-zero key shared by queries that traverse alike", f, e.Query)
	case MultiQueryZeroGraphUploadBytes:
		return fmt.Sprintf("%s: query %d has graph_upload_bytes 0. Fix: set graph_upload_bytes to the size of the graph upload", f, e.Query)
	case MultiQueryGraphUploadBytesMismatch:
		return fmt.Sprintf("%s: query %d gives graph %#x as %d bytes but an earlier query gave %d. Fix: use one graph_upload_bytes (%d) for every query on graph %#x",
			f, e.Query, e.GraphLayoutHash, e.ActualBytes, e.ExpectedBytes, e.ExpectedBytes, e.GraphLayoutHash)
	case MultiQueryOverBudget:
		return fmt.Sprintf("%s: query %d on graph %#x, traversal key %#x alone needs %d resident bytes but budget_bytes is %d. Fix: raise budget_bytes to at least %d or shrink the query's frontier, scratch or output",
			f, e.Query, e.GraphLayoutHash, e.TraversalKey, e.RequiredBytes, e.BudgetBytes, e.RequiredBytes)
	}
	return fmt.Sprintf("multi-query error %d. Fix: check the queries", uint8(e.Kind))
}

// validateMultiQueries checks every query in input order: duplicate id, zero
// hash, zero traversal key, zero graph bytes, then a graph size that
// differs from the first one given for that graph.
func validateMultiQueries(queries []MultiQuery) error {
	_, firstDup := positionsByID(len(queries), func(i int) uint32 { return queries[i].Query })
	graphBytes := make(map[uint64]uint64)
	for i, q := range queries {
		if i == firstDup {
			return &MultiQueryError{Kind: MultiQueryDuplicateQuery, Index: i, Query: q.Query}
		}
		switch {
		case q.GraphLayoutHash == 0:
			return &MultiQueryError{Kind: MultiQueryZeroGraphHash, Index: i, Query: q.Query}
		case q.TraversalKey == 0:
			return &MultiQueryError{Kind: MultiQueryZeroTraversalKey, Index: i, Query: q.Query}
		case q.GraphUploadBytes == 0:
			return &MultiQueryError{Kind: MultiQueryZeroGraphUploadBytes, Index: i, Query: q.Query}
		}
		if want, ok := graphBytes[q.GraphLayoutHash]; !ok {
			graphBytes[q.GraphLayoutHash] = q.GraphUploadBytes
		} else if want != q.GraphUploadBytes {
			return &MultiQueryError{Kind: MultiQueryGraphUploadBytesMismatch, Index: i, Query: q.Query,
				GraphLayoutHash: q.GraphLayoutHash, ExpectedBytes: want, ActualBytes: q.GraphUploadBytes}
		}
	}
	return nil
}

// multiQueryKey orders queries by (graph layout hash, traversal key, id).
type multiQueryKey struct {
	hash, traversal uint64
	id              uint32
	pos             int
}

// groupInputs names the query fields a launch's resident bytes come from:
// the first query's graph_upload_bytes and the frontier, scratch and
// output bytes of the queries from queries[first] to queries[last] (in the
// plan's order).
func groupInputs(first, last int) string {
	if first == last {
		return fmt.Sprintf("queries[%d].graph_upload_bytes + frontier_bytes + scratch_bytes + output_bytes", first)
	}
	return fmt.Sprintf("queries[%d].graph_upload_bytes + frontier_bytes + scratch_bytes + output_bytes of the queries grouped with it, up to queries[%d]", first, last)
}

// chunkResident is a launch under construction.
type chunkResident struct {
	frontier, scratch, output, resident uint64
}

// withQuery returns the chunk with q added, checking every sum.
func (c chunkResident) withQuery(graph uint64, q MultiQuery) (chunkResident, error) {
	var err error
	if c.frontier, err = checked.Add(c.frontier, q.FrontierBytes, "group frontier bytes"); err != nil {
		return c, err
	}
	c.scratch = max(c.scratch, q.ScratchBytes)
	if c.output, err = checked.Add(c.output, q.OutputBytes, "group output bytes"); err != nil {
		return c, err
	}
	c.resident, err = checked.Sum("group resident bytes", graph, c.frontier, c.scratch, c.output)
	return c, err
}

// PlanMultiQueryExecution batches queries over resident graphs into as few
// launches as the budget allows.
//
// Queries are grouped by (graph layout hash, traversal key); groups run in
// ascending key order and their queries in ascending id order. Each group is
// split greedily into launches whose resident bytes (graph + Σ frontier +
// max scratch + Σ output) fit budgetBytes. The first launch on a graph
// uploads it; every later launch on that graph, and every extra query in a
// launch, reuses it warm.
//
// Errors, in order: MultiQueryZeroBudget; per query in input order
// MultiQueryDuplicateQuery, MultiQueryZeroGraphHash,
// MultiQueryZeroTraversalKey, MultiQueryZeroGraphUploadBytes,
// MultiQueryGraphUploadBytesMismatch; then MultiQueryOverBudget for a query
// that does not fit on its own; overflow labels "group frontier bytes",
// "group output bytes", "group resident bytes", "avoided graph upload
// bytes" and "graph upload bytes".
func PlanMultiQueryExecution(queries []MultiQuery, budgetBytes uint64) (MultiQueryExecutionPlan, error) {
	if budgetBytes == 0 {
		return MultiQueryExecutionPlan{}, &MultiQueryError{Kind: MultiQueryZeroBudget}
	}
	plan := MultiQueryExecutionPlan{Groups: []MultiQueryGroup{}, FinalOnlyHostFencePerGroup: true}
	if len(queries) == 0 {
		return plan, nil
	}
	if err := validateMultiQueries(queries); err != nil {
		return MultiQueryExecutionPlan{}, err
	}
	order, ids := sortMultiQueries(queries)
	for k := 0; k < len(order); {
		chunk, j, err := growMultiQueryLaunch(queries, order, k, budgetBytes)
		if err != nil {
			return MultiQueryExecutionPlan{}, err
		}
		first := queries[order[k]]
		cold := k == 0 || queries[order[k-1]].GraphLayoutHash != first.GraphLayoutHash
		if err := plan.addLaunch(first, order[k], ids[k:j:j], chunk, cold); err != nil {
			return MultiQueryExecutionPlan{}, err
		}
		k = j
	}
	plan.GraphReuse.AvoidedUploadBytes = plan.AvoidedGraphUploadBytes
	plan.LaunchCount = uint64(len(plan.Groups))
	return plan, nil
}

// sortMultiQueries returns the query positions in (graph layout hash,
// traversal key, id) order and the query ids in that order.
func sortMultiQueries(queries []MultiQuery) (order []int, ids []uint32) {
	// Sort flat (hash, key, id, position) records rather than positions
	// through a closure: the records are contiguous, so the sort stays in
	// cache at 10^6 queries.
	keys := make([]multiQueryKey, len(queries))
	for i, q := range queries {
		keys[i] = multiQueryKey{hash: q.GraphLayoutHash, traversal: q.TraversalKey, id: q.Query, pos: i}
	}
	slices.SortFunc(keys, func(a, b multiQueryKey) int {
		if c := cmp.Compare(a.hash, b.hash); c != 0 {
			return c
		}
		if c := cmp.Compare(a.traversal, b.traversal); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	})
	order = make([]int, len(keys))
	ids = make([]uint32, len(keys)) // backing array for every group's Queries
	for k, key := range keys {
		order[k], ids[k] = key.pos, key.id
	}
	return order, ids
}

// growMultiQueryLaunch starts a launch at order[k] and greedily adds the
// following queries of the same graph and traversal key while the launch
// fits budgetBytes. It returns the launch and the end j of its queries
// order[k:j]; a first query that does not fit alone is MultiQueryOverBudget.
func growMultiQueryLaunch(queries []MultiQuery, order []int, k int, budgetBytes uint64) (chunkResident, int, error) {
	first := queries[order[k]]
	graph := first.GraphUploadBytes
	chunk, err := chunkResident{}.withQuery(graph, first)
	if err != nil {
		return chunkResident{}, 0, checked.Inputs(err, groupInputs(order[k], order[k]))
	}
	if chunk.resident > budgetBytes {
		return chunkResident{}, 0, &MultiQueryError{Kind: MultiQueryOverBudget, Index: order[k], Query: first.Query,
			GraphLayoutHash: first.GraphLayoutHash, TraversalKey: first.TraversalKey,
			RequiredBytes: chunk.resident, BudgetBytes: budgetBytes}
	}
	j := k + 1
	for ; j < len(order); j++ {
		next := queries[order[j]]
		if next.GraphLayoutHash != first.GraphLayoutHash || next.TraversalKey != first.TraversalKey {
			break
		}
		grown, err := chunk.withQuery(graph, next)
		if err != nil {
			return chunkResident{}, 0, checked.Inputs(err, groupInputs(order[k], order[j]))
		}
		if grown.resident > budgetBytes {
			break
		}
		chunk = grown
	}
	return chunk, j, nil
}

// addLaunch appends the launch of the queries ids, led by first (at input
// position pos), to the plan and adds its counts and bytes to the plan's
// totals. cold says the launch is the first on its graph and uploads it.
func (plan *MultiQueryExecutionPlan) addLaunch(first MultiQuery, pos int, ids []uint32, chunk chunkResident, cold bool) error {
	graph := first.GraphUploadBytes
	n := uint64(len(ids))
	reuse := GraphReuseTelemetry{WarmReuses: n - 1}
	if cold {
		reuse.ColdUploads, reuse.UploadBytes = 1, graph
	} else {
		reuse.WarmReuses = n
	}
	var err error
	if reuse.AvoidedUploadBytes, err = checked.Mul(reuse.WarmReuses, graph, "avoided graph upload bytes"); err != nil {
		return checked.Inputs(err, fmt.Sprintf("queries[%d].graph_upload_bytes x the launches that reuse it", pos))
	}
	plan.Groups = append(plan.Groups, MultiQueryGroup{
		GraphLayoutHash:         first.GraphLayoutHash,
		TraversalKey:            first.TraversalKey,
		Queries:                 ids,
		GraphUploadBytes:        reuse.UploadBytes,
		FrontierBytes:           chunk.frontier,
		PeakScratchBytes:        chunk.scratch,
		OutputBytes:             chunk.output,
		ResidentBytes:           chunk.resident,
		AvoidedLaunches:         n - 1,
		AvoidedHostFences:       n - 1,
		AvoidedGraphUploadBytes: reuse.AvoidedUploadBytes,
		GraphReuse:              reuse,
	})
	// Counts are bounded by len(queries); only the byte totals can overflow.
	plan.AvoidedLaunches += n - 1
	plan.AvoidedHostFences += n - 1
	plan.GraphReuse.ColdUploads += reuse.ColdUploads
	plan.GraphReuse.WarmReuses += reuse.WarmReuses
	if plan.GraphReuse.UploadBytes, err = checked.Add(plan.GraphReuse.UploadBytes, reuse.UploadBytes, "graph upload bytes"); err != nil {
		return checked.Inputs(err, "graph_upload_bytes of every graph")
	}
	if plan.AvoidedGraphUploadBytes, err = checked.Add(plan.AvoidedGraphUploadBytes, reuse.AvoidedUploadBytes, "avoided graph upload bytes"); err != nil {
		return checked.Inputs(err, "graph_upload_bytes x the launches that reuse each graph")
	}
	plan.PeakResidentBytes = max(plan.PeakResidentBytes, chunk.resident)
	return nil
}
