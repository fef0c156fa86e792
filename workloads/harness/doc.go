// Package harness is what every GPU workload of gpuplan shares around its
// kernels: the scaffolding of a resident session, of its arms and of its
// benchmark protocol, written once.
//
//   - The session: its Config's defaults and checks (Fill, ConfigError,
//     ValidBlockSize), the memory budget its plans use (Budget), its memory
//     plan (PlanMemory), its kernels (LoadKernels), its persistent grid
//     capped for its barrier (PersistentGrid), exactly the planned buffers
//     (Buffers, Allocate, Free, BytesOf) and the order of its setup (Open).
//   - The arms: their names (ParseArm), the accounting of one arm run from
//     the executor's telemetry (Meter), a run checked against its
//     reference outside its timed region (Checked), repeated launches
//     after a warm-up (Repeat) and the launch overhead of the arm plan's
//     profile (LaunchOverhead).
//   - The benchmark protocol: its defaults (DefaultSamples, LogOr), its
//     progress and log (Reporting), its samples (Sample, which gpuplan's
//     command line turns into evidence rows), the interleaved timed
//     samples (Interleave) and a persistent kernel's floor (Floor).
//   - The arm plan: the topology selection from a measured profile
//     (SelectTopology, PlanArm, ArmPlan, TopologyArm), for a profile of
//     one host-loop step (StepCost, PlanStep), and its rendering
//     (ArmPlan.Describe).
//   - The peers: external tools checked (CheckExecutable) and run as
//     processes (Command, Exec), their bounded output (LimitedBuffer, Tail,
//     LastLines) and their input folders (TempDir).
//
// The workloads (workloads/bfs, workloads/rebuild, workloads/partbfs,
// workloads/wavedag) import the harness; the harness imports none of them.
// What differs between workloads (their buffers, kernels, arms, result
// words and checks) stays in each workload and reaches the harness as
// values and functions.
package harness
