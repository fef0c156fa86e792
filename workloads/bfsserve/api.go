package bfsserve

import (
	"fmt"
	"math"

	"github.com/gpuplan/gpuplan/workloads/bfsquery"
)

// QueryRequest is the body of POST /v1/graphs/NAME/bfs, and one query of a
// batch: the levels from Root of Targets (every vertex when absent) within
// MaxDepth (absent or -1: no limit), and each target's parent in a BFS
// tree when Parents is set.
type QueryRequest struct {
	Root     *int64  `json:"root"`
	Targets  []int64 `json:"targets"`
	MaxDepth *int64  `json:"max_depth"`
	Parents  bool    `json:"parents"`
}

// QueryResponse answers a QueryRequest: the query's bfsquery.Answer, one
// level per target, -1 where the target is unreached (or beyond the depth
// limit); with parents, each target's parent, -1 for the root and
// unreached targets; "reached" counts the vertices within the depth limit
// and "depth" is the largest level among them.
type QueryResponse = bfsquery.Answer

// BatchRequest is the body of POST /v1/graphs/NAME/batch: many queries
// answered together.
type BatchRequest struct {
	Queries []QueryRequest `json:"queries"`
}

// BatchResponse answers a BatchRequest, one answer per query in order.
type BatchResponse struct {
	Answers []QueryResponse `json:"answers"`
}

// ReachRequest is the body of POST /v1/graphs/NAME/reach: whether each
// target is reachable from Root within MaxDepth levels (absent or -1: at
// any depth).
type ReachRequest struct {
	Root     *int64  `json:"root"`
	Targets  []int64 `json:"targets"`
	MaxDepth *int64  `json:"max_depth"`
}

// ReachResponse answers a ReachRequest: one flag per target, and how many
// vertices are reachable within the depth limit.
type ReachResponse struct {
	Root      int32  `json:"root"`
	Reachable []bool `json:"reachable"`
	Reached   int    `json:"reached"`
}

// GraphsResponse is the body of GET /v1/graphs: the loaded graphs and
// how the server batches their queries.
type GraphsResponse struct {
	Graphs   []GraphInfo `json:"graphs"`
	Batching Batching    `json:"batching"`
}

// Batching is how the server batches a graph's queries: the batching
// window, the most distinct roots of a batch and the queue's depth.
type Batching struct {
	WindowNS   int64 `json:"window_ns"`
	MaxBatch   int   `json:"max_batch"`
	QueueDepth int   `json:"queue_depth"`
}

// GraphInfo describes a loaded graph: its vertex count, its edges (each
// undirected edge once, or the directed edges), whether they have a
// direction, where it answers ("gpu" or "cpu") and its adjacency's bytes.
type GraphInfo = graphInfo

// toQuery checks a request against a graph of n vertices and returns its
// query; prefix names the request within a batch ("queries[3].").
func toQuery(root *int64, targets []int64, maxDepth *int64, parents bool, n, maxJSON int, prefix, name string) (bfsquery.Query, error) {
	q := bfsquery.Query{MaxDepth: bfsquery.NoDepthLimit, Parents: parents}
	if root == nil {
		return q, badField(prefix+"root", "is required", `give the root vertex, for example {"root": 0}`)
	}
	if *root < 0 || *root >= int64(n) {
		return q, badField(prefix+"root", fmt.Sprintf("vertex %d is not in the graph of %d vertices", *root, n), fmt.Sprintf("give a root from 0 to %d", n-1))
	}
	q.Root = int32(*root)
	if maxDepth != nil {
		if *maxDepth < -1 || *maxDepth > math.MaxInt32 {
			return q, badField(prefix+"max_depth", fmt.Sprintf("depth %d is outside -1..%d", *maxDepth, math.MaxInt32), "give a depth of 0 or more, or -1 for no limit")
		}
		q.MaxDepth = int32(*maxDepth)
	}
	if targets == nil {
		if n > maxJSON {
			return q, badField(prefix+"targets", fmt.Sprintf("absent, which asks for all %d vertices' levels, more than the %d one JSON answer carries", n, maxJSON),
				fmt.Sprintf("name the targets, or download every level in the binary format with GET /v1/graphs/%s/levels?root=%d", name, q.Root))
		}
		return q, nil
	}
	if len(targets) > bfsquery.MaxTargets {
		return q, badField(prefix+"targets", fmt.Sprintf("%d targets", len(targets)), fmt.Sprintf("ask for at most %d targets", bfsquery.MaxTargets))
	}
	q.Targets = make([]int32, len(targets))
	for i, t := range targets {
		if t < 0 || t >= int64(n) {
			return q, badField(fmt.Sprintf("%stargets[%d]", prefix, i), fmt.Sprintf("vertex %d is not in the graph of %d vertices", t, n), fmt.Sprintf("give targets from 0 to %d", n-1))
		}
		q.Targets[i] = int32(t)
	}
	return q, nil
}

// reach is an answer as reachability flags.
func reach(a bfsquery.Answer) ReachResponse {
	out := ReachResponse{Root: a.Root, Reachable: make([]bool, len(a.Levels)), Reached: a.Reached}
	for i, l := range a.Levels {
		out.Reachable[i] = l != bfsquery.Unreached
	}
	return out
}
