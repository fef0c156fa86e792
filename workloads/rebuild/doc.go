// Package rebuild restores congruence in an e-graph on the GPU: egg's
// rebuild() as data-parallel rounds, the second GPU workload above the
// executor (after BFS in workloads/bfs).
//
// An egraph.Graph (an egg dump, a JSON snapshot or a generated e-graph) is
// packed into egraph's nine-section device image (PackDeviceImage) and
// uploaded once, with its pending union pairs, into a resident Session.
// A rebuild then runs rounds of five stages until a round unites nothing:
//
//   - unite: apply the round's pending pairs to a lock-free union-find
//     (the larger root linked under the smaller with a compare-and-swap,
//     paths halved as they are walked), so that every class is named by
//     its smallest id;
//   - clear: empty the hash table;
//   - canon-classes and canon-children: rewrite every e-node's class and
//     children to their roots;
//   - group: insert every e-node into a hash table under egraph's
//     NodeSignature of its op and canonical children, compare equal
//     signatures word by word, and emit the pair of classes to unite
//     when an equal e-node of another class owns the key.
//
// A final compaction writes, in vyre's readback format (an 8-byte count
// then (u32, u32) pairs), the canonical rewrites of every class whose
// representative differs (PlanUnionCompaction's semantics) and the
// deduplicated e-node table. Session.Output reads them back and checks
// them; Session.Partition is the quick check of every benchmark sample.
//
// The plans drive it: the wave plan (PlanKernelWork) gives the host loop's
// launches, the megakernel memory plan refuses an e-graph that does not fit
// before anything is allocated, the launch fusion plan (PlanLaunchFusion)
// groups each round's stages into the device loop's launches and the
// persistent kernel's phases, the convergence plan bounds the rounds and
// reads the changed flag once, and the megakernel topology selection, fed
// with a measured profile, picks the arm (ProfileArm). Three arms run it:
// ArmHostLoop (a launch per stage, the changed flag read every round),
// ArmDeviceLoop (the fusion plan's groups, no host sync per round) and
// ArmPersistent (one cooperative launch with grid barriers). The kernels
// are CUDA C (kernels/rebuild.cu) whose ABI is declared once in Go (ABI)
// and whose PTX is committed; Emulation runs every kernel in Go on the
// executor's fake backend, so every arm is tested without a GPU.
//
// Config.Incremental runs egraph.RebuildIncremental's rounds instead, in
// four phases a round: ArmPersistent as one cooperative launch of
// KernelIncremental (a grid barrier after each phase), the host and device
// loops as a launch of KernelIncrementalStep per phase. The unite
// phase records each loser in a link tree, a mark phase walks the losers'
// subtrees and lists their uses (egraph.UsesIndex, uploaded once) as the
// round's dirty rows, and only those are canonicalised and, when a child
// changed, re-inserted into a table kept across rounds (a slot whose
// owner's form changed becomes a tombstone). A round runs as a full pass
// when more than half the rows are dirty or the tombstones plus the dirty
// rows pass a quarter of the table. The partition, rounds, merges and
// NodeTouches are those of the Go specification. The incremental arms
// (IncrementalArms: ArmHostLoopIncremental, ArmDeviceLoopIncremental,
// ArmPersistentIncremental) name these rounds, driven as their full-round
// arms drive theirs.
//
// Bench is the benchmark protocol: the arms interleaved (the incremental
// arms on a second session beside the full rounds'), every sample
// checked against the Go reference (egraph.Rebuild), the Go reference
// timed, the persistent kernel's round floor, vyre's pairwise structural-
// equivalence check inside signature buckets as the reference path
// (Session.StructuralEquivalences, against egraph's CPU version), and egg
// itself as a peer (RunEggPeer: the egg-bench baseline on the same dump,
// its SHA-256 and partition checked).
package rebuild
