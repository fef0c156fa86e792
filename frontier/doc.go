// Package frontier provides graph and frontier state: compact CSR graphs,
// graph generators (grid, Kronecker, road-like) and loaders (Matrix
// Market, edge lists), the CPU reference BFS with Graph500 validation, and
// the frontier-typed IR and token/fact plans. It is pure: the BFS that runs
// on the GPU is the workload package workloads/bfs, which builds on it.
//
// A CSR's offsets are 64-bit, so a graph holds up to MaxGraphEdgeEntries
// (2^34) adjacency entries on the host; the GPU kernels take 32-bit
// offsets, which CSR.Offsets32 and NarrowOffsets produce, refusing a graph
// of more than MaxOffsets32Entries with an *Offsets32Error.
package frontier
