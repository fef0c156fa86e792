// Package partbfs is the GPU workload of a breadth-first search over a
// graph partitioned across several devices: each device (one executor,
// one context) holds the adjacency lists and levels of one vertex range of
// a partition.New plan and expands its own vertices, level by
// level, and the frontier is exchanged between the devices after every
// level, as the plan picks: a bottom-up level all-gathers every device's
// frontier bitmap slice; a top-down level all-gathers each device's
// discovery counts, then sends every other device its discoveries as a
// queue of indices or as a bitmap slice, whichever is smaller
// (partition.PairExchange), with grouped sends and receives. Each level's
// direction comes from planners.PlanBFSDirection on the global frontier,
// as in frontier.BFSDirectionOptimizing, and the levels equal the CPU
// reference's.
//
// The exchange goes through nccl.Collectives: NCCL (nccl.Open) across
// devices, a host-staged fake (nccl.NewFake) in tests, or, where only one
// GPU is present, device copies: the P parts run as P sessions on the one
// device (their kernels on separate streams) and exchange with a copy
// kernel, so the partition logic and the exchange protocol run on every
// GPU test. The kernels (kernels/partbfs.cu, ABI in abi.go) have a Go
// emulation on the executor's fake backend (NewFake), so the whole
// protocol also runs in `make test`.
//
// With one process per GPU (on one machine or several), each process
// opens a RankSession: it holds one part of the same plan on its one
// executor and runs the same level protocol, the same kernels and the
// same exchange choices through an nccl.RankCollectives (nccl.OpenRank;
// nccl.OpenFakeRank in tests), so the processes together produce the
// Session's levels, decisions and exchange bytes. The ranks all-gather
// their found counts after every level (each level's direction comes from
// the global frontier), agree on the plan from every rank's budget,
// refuse a rank whose graph, configuration or root differs, and
// GatherLevels assembles every vertex's level on rank 0. BenchRank is one
// rank's share of the benchmark protocol.
//
// The benchmark protocol (Bench) measures GTEPS, each level's exchange
// bytes and time, and holds the measured exchange against the partition
// planner's prediction (partition.PredictExchange).
package partbfs
