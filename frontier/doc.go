// Package frontier provides graph and frontier state: compact CSR graphs,
// graph generators (grid, Kronecker, road-like) and loaders (Matrix
// Market, edge lists), the CPU reference BFS with Graph500 validation, and
// the frontier-typed IR and token/fact plans. It is pure: the BFS that runs
// on the GPU is the workload package workloads/bfs, which builds on it.
package frontier
