// Package wavedag runs a wave DAG of the user's own kernels by its plans,
// in five execution arms side by side, and checks every result.
//
// # The workload and the wave ABI
//
// A workload (megakernel.DecodeWorkload's format with a module) names the
// user's relocatable PTX module, buffers with their initial contents, the
// outputs to read back, and per wave one device function of the module,
// its tile count, block size, dynamic shared memory, prologue flag and
// argument block; dependencies may say which producer tiles each tile
// reads (all, the same index, or a block). A wave function is written once
// against gpuplan_wave.h (Header): GP_WAVE name(tile, tiles, args), with
// gp_wait, gp_sync, gp_shared and gp_threads. Load or Parse decodes,
// plans and checks a workload against its module (every function defined,
// with the wave signature) into a Program.
//
// # Two images, linked at run time
//
// Open generates PTX for the program and links it with the user's module
// through the driver's JIT linker (executor.LinkModule): the launch image,
// one __global__ wrapper per function (GenerateLaunch), and the scheduler
// image, the committed runtime (kernels/runtime.cu) with gp_dispatch, a
// jump table over the function ids (GenerateDispatch). No compiler runs
// at run time; a link failure carries the driver's link log.
//
// # The arms and the plans they consume
//
//   - ArmStreams launches each wave on a small pool of streams in Kahn
//     order, a producer on another stream waited on through its event: the
//     producer wait plan's waits.
//   - ArmGraph replays one CUDA graph: a kernel node per wave, an edge per
//     producer wait. ArmGraphPDL makes every edge programmatic (Hopper):
//     each wrapper lets its dependents launch early, and a wave's prologue
//     runs before its producers finish.
//   - ArmBarriers is one cooperative launch that runs the barrier plan's
//     groups (Kahn layers split to fit the memory budget), each group's
//     tiles spread over the grid, one grid barrier between groups.
//   - ArmWaits is one launch that runs the tile plan (megakernel.PlanTiles):
//     blocks claim tasks, a fused unit's tile, from a queue in plan order,
//     sized by planners.PlanDeviceWorkQueueBackpressure; a task's first
//     wave starts once its producers' completion counters (for a wait on
//     every tile) or per-tile done flags (for "same" and "block:K") allow;
//     a wave with a prologue runs it first and waits in gp_wait. The grid
//     is the occupancy model's co-resident grid for the linked scheduler
//     (its registers are the heaviest wave function's) at the largest
//     wave's block and shared memory. Claims run in plan order, so the
//     queue cannot deadlock at any grid size.
//
// Every run is held against its plan (CheckPlan): the launches, graph
// replays, grid barriers, counter waits and tasks it executed. A
// persistent run that stops making progress is ended by a watchdog on the
// device, which reports every waiting block's wave, tile, producer and
// counter (*WatchdogError); a kernel fault loses the context
// (*FaultError), and with it the process's use of CUDA, so IsolateFault
// finds the wave in a new process.
//
// # Without a GPU
//
// NewFake returns a fake backend that runs the generated wrappers with the
// wave functions' Go references (HostFunc, on a Tile) and emulates both
// schedulers from the plan image the session uploads, with random
// interleavings of virtual blocks (a prologue really runs before its
// producers finish), deferred and interleaved streams, and graph replays in
// random topological orders: a missing dependency in any arm changes the
// result. Reference runs the references on the CPU, and Compare holds an
// output against it within the output's tolerance.
//
// # The benchmark protocol
//
// Bench runs every arm once checked, picks an arm with the megakernel
// topology selection fed by that profile, then times interleaved samples,
// each from the initial buffers and checked outside the timed region, and
// reports medians with 95% intervals, the cost per wave and per
// dependency, the speedups over the streams and graph arms, the bytes per
// second of a workload that states them, and the copy ceiling.
package wavedag
