// Package megakernel provides megakernel planning: barrier placement over a
// wave dependency DAG, the per-producer wait form used by persistent
// kernels, frontier memory splitting, execution topology selection with a
// stable explanation, memory budgets, the homotopy fusion-pressure
// scheduler, device-side convergence plans and a bounded plan cache.
//
// It is a Go port of vyre-driver-cuda 0.6.1's megakernel modules
// (megakernel_barrier_planner, megakernel_scheduler, megakernel_convergence
// and megakernel_plan_cache), with vyre's constants, reason codes, error
// order and overflow field labels. Every planner is a pure function of its
// inputs: no clock, environment or global state. Arithmetic on byte counts
// is checked; an overflow is a *checked.OverflowError (vyre's
// ByteCountOverflow) naming the quantity, and every error message ends with
// a "Fix:" sentence.
//
// # Waves and barriers
//
// A megakernel runs waves, numbered 0..n-1, ordered by Dependency values
// (Before must finish before After starts). PlanBarriers groups the waves
// into Kahn layers: layer 0 holds the waves without producers in ascending
// order, and each later layer holds the waves released by the previous one
// in discovery order (vyre's order, kept exactly for parity). One
// grid-wide barrier separates consecutive layers, the fewest a layered
// schedule can have. Errors come in vyre's order: *InvalidWaveError,
// *SelfDependencyError (checked per dependency, range first), then
// *CycleError, which carries vyre's unscheduled-wave count plus a witness
// cycle of wave ids.
//
// PlanProducerWaits gives the same DAG in the form a persistent kernel uses
// instead of grid-wide barriers: each wave waits only on the completion
// counters of its direct producers. Duplicate dependencies are waited on
// once, and a wait on p is dropped when another direct producer q of the
// same wave depends directly on p (the triangle rule, a partial transitive
// reduction). The reduction costs the sum of the producers' in-degrees over
// all dependencies and is capped at ReductionWorkPerItem x (waves +
// dependencies) steps, so the whole plan stays O(waves + dependencies); the
// kept waits always preserve the DAG's reachability. A grid barrier costs
// about as much as a CUDA-graph kernel node on Hopper, so the gain is in
// waiting for less, not in cheaper barriers.
//
// Both planners run on int32 CSR arrays built with a cache-friendly
// two-level counting sort, in O(waves + dependencies) time. On the shared
// 2-core development machine, barrier planning plus the frontier memory
// split of a random layered DAG with 1,000,000 waves and 4,000,000
// dependencies takes 0.13 to 0.26 s of CPU time and allocates 60 MB
// (BenchmarkBarriersAndMemorySplit); wall time depends on the machine's
// load.
//
// # Memory
//
// PlanFrontierMemory splits each barrier layer greedily, in layer order, so
// that the fused cost of each group (frontier + 4 x scratch + output per
// wave) fits the budget left after the resident graph, and reports the
// per-group peaks. PlanMemoryBudget sizes one topology: graph layout +
// frontier + topology-scaled scratch + output against the budget.
//
// # Topology
//
// SelectTopology picks one of six topologies from the memory, launch and
// readback pressures, the frontier density and the graph's average degree
// (vyre's first-match rules), and TopologyDecision.StableExplanation renders
// vyre's versioned explanation string byte for byte.
// SelectTopologyStable adds vyre's hysteresis against the previous
// topology, with one flagged vyre quirk fixed: a fresh FusedWave decision is
// never held back by the density-band hysteresis of a previous sparse or
// dense topology. PlanExecution joins the sparse memory plan, the selection
// and the chosen topology's memory plan, downgrading to SparseFrontier when
// the chosen topology does not fit. ScheduleFusionPressure is vyre's
// homotopy scheduler, which turns schedule samples into fusion pressures.
//
// # Plan cache and frontier execution
//
// PlanCache is vyre's bounded LRU cache of topology decisions, keyed by the
// graph layout hash, the AnalysisKind, the DeviceKey (DeviceKeyFor builds it
// from an occupancy.Device) and five pressure buckets. It applies hysteresis
// per identity, never chooses FusedWave on a device without grid sync,
// pins its counters at the maximum, re-bases its LRU serials instead of
// overflowing, and is safe for concurrent use. A hit costs a few hundred
// nanoseconds (BenchmarkPlanCacheLookup).
//
// PlanFrontierExecution (vyre's plan_cuda_frontier_megakernel_execution) is
// the entry point that joins everything: resident graph bytes, the memory
// split barrier plan, and the cached execution plan for the per-group
// peaks, with the readback amortised over the static outputs.
//
// # Convergence
//
// PlanDeviceConvergence is the contract for the GPU executor's fixed-point
// loop: the device iterates up to a bound and the host reads the 4-byte
// changed flag once at the end (FinalFlagOnly); the host never polls per
// iteration.
//
// # Workloads
//
// DecodeWorkload and PlanWorkload implement `gpuplan plan`: a strict JSON
// workload (waves, dependencies, resident graph, device, budget, schedule
// sample) planned into a WorkloadPlan that renders as text (WriteText),
// JSON, or Graphviz DOT with barrier groups as clusters (WriteDOT). Every
// workload error names the JSON field to change.
//
// # Differences from vyre
//
// The *_with_scratch variants are not ported: Go callers get the same
// results from the plain calls. Wave ids and dependency counts are limited
// to MaxWaves and MaxDependencies (int32 CSR arrays), so vyre's overflow
// labels for CSR counters ("outgoing dependency count" and the like) cannot
// occur; the remaining labels are kept. The per-identity hysteresis record
// of the plan cache lives as long as the identity has a cached entry, which
// keeps the cache bounded.
package megakernel
