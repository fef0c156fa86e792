// Package bfsquery keeps graphs resident for breadth-first-search queries
// and answers them: a documented, stable library over the GPU BFS of
// workloads/bfs, and the parallel CPU reference where no GPU is.
//
// Open keeps a graph on an executor: one bfs.Session holds it uploaded
// once, with every buffer planned and allocated once, and every query
// reuses it; OpenCPU answers with the parallel CPU reference instead
// (frontier.BFSParallel for one root, frontier.MultiSourceBFS for several).
// A Query asks for the levels from a root of a set of targets (every
// vertex by default), within a depth limit, and for each target's parent in
// a BFS tree; Batch answers many queries at once, an undirected graph's
// roots in multi-source passes of 64 roots (iBFS's idea: one scan of an
// edge serves every root of the pass), on the GPU or the CPU. On the GPU a
// chunk of a few roots runs one root at a time instead where that costs
// less: the graph measures both (a running mean of each kind's wall time)
// and picks the cheaper, reporting in Phases what it ran; a single root
// runs with the arm that measures fastest on the graph's own queries, the
// others measured again once in every few dozen runs (Options.Arm fixes
// one). A directed graph (Options.
// Directed, "directed:PATH" specs, ReadDirected) follows out-edges, runs
// every level top-down on the GPU and takes its parents among the
// in-neighbours (Transpose). Parents are derived from the levels: the
// smallest in-neighbour one level closer to the root, so they form a valid
// BFS tree whichever arm ran.
//
// Answers writes answers as CSV (small) or in a binary format with a
// header (large); ReadBinary reads the binary format back, every count
// checked against the file's size before anything is allocated.
package bfsquery
