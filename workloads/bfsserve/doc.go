// Package bfsserve serves BFS queries over graphs kept resident on a GPU
// (or answered by the parallel CPU reference) on HTTP/JSON, batching
// concurrent queries on one graph into multi-source passes.
//
// A Server answers over a Residency, the graphs one Opener call keeps
// resident (each once, on one executor). Each graph has a batcher: a
// bounded queue, and a loop that takes the first queued query, waits up to
// the batching window (Config.Window, 200 µs by default) for others, up to
// Config.MaxBatch distinct roots (64, one multi-source pass), and runs
// them as one bfsquery.Graph.Batch. The multi-query plan
// (planners.PlanMultiQueryExecution) groups a batch within the memory
// budget; a query the budget cannot hold alone is refused with 503 and the
// plan's numbers, and a full queue refuses with 429: nothing queues without
// bound. A client that disconnects, or a request past its deadline,
// cancels its queries, and a batch whose clients all left stops between
// traversals.
//
// A GPU fault (a launch error, a lost context) fails the batch's queries
// with 500 and the reason; the server then closes the residency and calls
// the Opener again (a new context, every graph uploaded again), refusing
// queries with 503 and reporting "recovering" on /healthz until it is
// back. On a real GPU a sticky fault (an illegal address) ends the
// process's use of CUDA: every new context fails the same way. So after
// Config.RecoverAttempts failed attempts, or at once when the reopening
// finds the context lost, the server gives up: /healthz says "failed",
// every query gets 503, and Server.Failed is closed, for the owner to shut
// the server down and exit, to be restarted. An answer is never partial:
// it is the batch's answer or an error.
//
// The API:
//
//	GET  /v1/graphs                  {"graphs": [{"name", "vertices", "edges", "directed", "backend", "resident_bytes"}],
//	                                  "batching": {"window_ns", "max_batch", "queue_depth"}}
//	GET  /v1/graphs/NAME             one graph's entry
//	POST /v1/graphs/NAME/bfs         {"root": R, "targets": [T, ...], "max_depth": D, "parents": false}
//	                                 → {"root": R, "levels": [L, ...], "reached": N, "depth": D}
//	                                   one level per target, -1 where it is unreached or beyond
//	                                   max_depth; with "parents": true also "parents": [P, ...]
//	POST /v1/graphs/NAME/batch       {"queries": [QUERY, ...]} → {"answers": [ANSWER, ...]}
//	POST /v1/graphs/NAME/reach       {"root": R, "targets": [...], "max_depth": D}
//	                                 → {"root": R, "reachable": [true, ...], "reached": N}
//	GET  /v1/graphs/NAME/levels?root=R[&max_depth=D][&parents=true]
//	                                 every vertex's level (and parent) in bfsquery's binary format
//	GET  /healthz                    {"status": "ok" | "recovering" | "failed" | "shutting_down", ...}
//	GET  /metrics                    Prometheus metrics: request latency histograms, query
//	                                 outcomes, batch sizes, queue waits, and the executor's telemetry
//
// A graph's series carry the labels graph (its configured name), backend
// ("gpu" or "cpu") and device (the GPU's name, or "cpu"); the request and
// query series add route (bfs, batch, reach, levels, ...), and code or
// outcome. A request naming a graph that is not loaded is counted with an
// empty graph label: request input never makes a label value. The
// executor's telemetry carries backend and device, less the CUDA-graph
// counters, which the query path never moves.
//
// A query without "targets" asks for every vertex, in JSON up to
// Config.MaxJSONLevels vertices; larger graphs answer every vertex through
// /levels. Every error is a JSON Error: the status, a code, the request
// field at fault and a message ending in a "Fix:" sentence. Every
// answered response carries the Gpuplan-Batch-Roots header: the distinct
// roots of the batch that answered it.
//
// RunLoad drives a server with concurrent clients and reports throughput,
// latency percentiles and the batch sizes formed, checking a sample of the
// answers against the CPU reference.
package bfsserve
