// Package bfs is gpuplan's breadth-first search workload on the GPU: a graph
// kept resident in device memory (uploaded once) and traversed from many
// roots by four execution arms that give identical levels, checked against
// the CPU reference of package frontier.
//
//   - host-loop: one launch per level, a 4-byte readback of the next
//     frontier's size and a sync (executor.RunHostLoop);
//   - device-loop: Config.CheckEvery levels enqueued back to back, the size
//     read once per batch;
//   - megakernel: one cooperative launch for every level, in steps between
//     grid barriers, blocks running ahead on their own kept frontiers, the
//     changed flag read once at the end (KernelMegakernelNarrow for blocks
//     of up to MegakernelNarrowThreads threads, KernelMegakernel above), or
//     with Config.MegakernelAsync every level top-down and no grid barrier
//     between levels (KernelMegakernelAsync: blocks take work as it appears
//     within a window over the lowest pending label);
//   - host-loop-scan: the plain scan wave, one thread per vertex.
//
// # Directions, run-ahead, multi-source passes
//
// On graphs past the planner's degree gate every arm but the scan wave is
// direction-optimizing: each level runs top-down from the frontier queue
// (marking a visited bitmap) or bottom-up over the bitmap, as
// planners.PlanBFSDirection decides from the frontier's counts, which the
// kernels produce. The host loop asks the planner; the device loop and the
// megakernel evaluate the same rule on the device (its constants from the
// ABI) and log their decisions, which the host checks against the planner
// (Run.Decisions). The megakernel is then level-synchronous, unless it is
// set to run top-down (Config.MegakernelTopDown) while the other arms stay
// direction-optimizing; on other graphs its blocks run ahead by a depth
// that adapts from each step's lowered labels, or a fixed one. Which depth
// and which keep budget (the frontier a block keeps in shared memory) pay,
// whether a direction-optimizing session's megakernel should run top-down,
// and whether it should run without grid barriers, depends on the graph's
// shape, so Session.TuneMegakernel
// measures candidate settings on the resident graph from one root and
// keeps the fastest that bounds the lowered labels.
// Session.NewMultiSource runs many roots per pass (one bit per root in
// each vertex's words, and the levels as bit planes: bit i of a vertex's
// plane b is bit b of its level from root i), planned by
// planners.PlanMultiSourceBFS within the session's budget.
//
// # Answering queries on the device
//
// A query of a traversal wants a few vertices' levels and how many vertices
// each level holds, not the whole level array. Session.LevelsOf and
// Session.LevelCounts read both from the last traversal on the device
// (KernelGather, KernelLevelCounts); Session.RunAnswer runs a traversal and
// reads both with its result words in one dispatch, and
// MultiSource.RunAnswers after each
// pass from its bit planes (KernelMSGather, KernelMSLevelCounts), so that
// 4 bytes per target and 8 per level (per root and level) cross the bus
// instead of 4 bytes per vertex (per root and vertex).
//
// # Plans drive the launches
//
// NewSession takes every decision from a plan value (Session.Plans): the
// megakernel memory plan sizes the resident state and refuses a graph that
// does not fit before anything is allocated; the device work queue plan
// sizes the two frontier queues and caps a level launch's grid with its
// drain chunk; the occupancy model (executor.CooperativeGrid) gives the
// launch shapes; the convergence plan gives the megakernel's final-flag-only
// readback and every arm's level budget. Session.ProfileArm feeds a measured
// profile to the megakernel topology selection, which picks the arm
// (ArmForTopology). Session.Batch runs many roots as the resident graph
// session plan says, and holds its predicted uploads, allocations and
// readbacks against the executor's telemetry (SessionCheck).
//
// # Kernels, ABI and emulation
//
// The CUDA C kernels are in kernels/bfs.cu, compiled to the committed
// kernels/bfs.ptx (make ptx). Their parameter lists and shared constants are
// declared once in Go (ABI, abi.go); go generate writes kernels/bfs_abi.h
// from it, and a test checks every PTX entry against it. Emulation runs the
// same kernels in Go, step for step, on the executor's fake backend
// (NewFake), so every arm, the overflow and rerun paths and the session
// plans run in the tests without a GPU.
//
// # Benchmark protocol
//
// Bench is the protocol of `gpuplan bench frontier`: the CPU reference of
// every root, a session, the arm plan, the megakernel's tuning
// (BenchConfig.Tune), an untimed correctness pass, timed
// samples with the arms interleaved and every traversal checked (its
// levels and its directions), the copy-bandwidth ceiling, the megakernel's
// barrier floor, one session batch per arm and, when configured,
// multi-source passes as one more arm and peer BFS codes (Gunrock, GAP,
// GSWITCH, BLEST: PeerConfig, PeerKinds) as external ones.
package bfs
