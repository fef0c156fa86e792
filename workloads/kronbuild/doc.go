// Package kronbuild builds Graph500 Kronecker graphs on the GPU: Build
// returns the CSR frontier.Kronecker(scale, edgeFactor, seed) returns, the
// same offsets and targets byte for byte, with the edge list never in host
// memory.
//
// A build has four steps, all driven from the host over the executor's
// API (a stream of launches, a few small readbacks):
//
//   - The labels. frontier labels the generated vertices by a permutation,
//     math/rand/v2's Fisher-Yates shuffle over a PCG. Its swaps run one
//     after another, but its draws do not depend on them: the kernels draw
//     every step's index at once (the PCG jumps ahead to any draw) and
//     derive the shuffle's result from the draws sorted by (index, step),
//     through each position's chain of writers (kernels/kronbuild.cu says
//     how). A draw the PCG rejects (probability under 2^-34) shifts the
//     draws after it, which are drawn again. Config.HostPermutation runs
//     frontier.KroneckerPermutation on the host and uploads it instead.
//   - The count. One pass over the edges counts the adjacency entries
//     (two per edge that is not a self loop) of every bucket of
//     consecutive source vertices (at most MaxBuckets), so that the parts
//     and their buffers are sized exactly before they are allocated.
//   - The parts. The vertex range is built in as few parts, runs of
//     buckets, as the memory budget allows (one when the whole graph's
//     keys fit twice). Each part draws every edge again (drawing is cheap:
//     SplitMix64 is random access, so an edge's draws need no state) and
//     keeps the entries whose source lies in its rows, as 64-bit keys
//     (source - first row) << scale | target; sorts them with an LSD radix
//     sort on the bits they use, 8 a pass, built from CUB's block
//     primitives (a digit histogram per block, a scan of the digit-major
//     matrix, a stable scatter ranked by cub::BlockRadixRankMatch); and
//     compacts the distinct keys into its targets and its rows' offsets,
//     isolated vertices getting empty rows. Its targets are read back
//     before the next part reuses the memory.
//   - The offsets, resident for the whole build, are read back last.
//
// Every buffer's size is computed with checked arithmetic before it is
// allocated (Plan): the labels, offsets, bucket counts and control words
// held throughout, then the permutation's scratch, then each part's keys
// and digit matrix. A build that does not fit the budget (the executor's
// live budget, capped by Config.MaxDeviceBytes) is refused with a
// *BudgetError naming the scale, the bytes needed and the budget. The
// parameters frontier.Kronecker refuses are refused with its own errors
// (frontier.CheckKronecker, within Check), and a graph without an edge
// with its *frontier.EmptyGraphError.
//
// The offsets are 64-bit on the device (the compaction and the fill write
// them so) and are read straight into frontier.CSR's uint64 offsets, and
// the keys, the sort and the parts count in 64 bits, so a build is limited
// only by frontier.MaxGraphEdgeEntries and the memory budgets.
//
// Result.Times splits a build into the labels, the count, the generation,
// the sort and the CSR (device time between timing events on the build's
// stream), the readback and the total (host wall time).
//
// The kernels are CUDA C (kernels/kronbuild.cu) whose ABI is declared once
// in Go (ABI, abi.go) and whose PTX is committed; Emulation runs every
// kernel in Go on the executor's fake backend (NewFake), so a build is
// tested end to end without a GPU against frontier.Kronecker.
package kronbuild
