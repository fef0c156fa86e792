package wavedag

import (
	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/internal/kernelabi"
)

//go:generate go run ./internal/genheader kernels/wavedag_abi.h

// Ptr is the pointer type of a kernel parameter struct (kernelabi.Ptr):
// executor.Buffer on the host, executor.DevPtr in the emulation.
type Ptr = kernelabi.Ptr

// SchedParams are the parameters of both persistent schedulers: the plan
// image's tables (see the table layouts below), the run state, the
// argument slots, the number of tasks and barrier groups, the run's epoch
// (1 for the first run, one more each run) and the watchdog's budget.
type SchedParams[P Ptr] struct {
	Ctl        P      `c:"unsigned long long *ctl"`
	Waves      P      `c:"const unsigned int *__restrict__ waves"`
	Waits      P      `c:"const unsigned int *__restrict__ waits"`
	Units      P      `c:"const unsigned int *__restrict__ units"`
	Order      P      `c:"const unsigned int *__restrict__ order"`
	Tasks      P      `c:"const unsigned int *__restrict__ tasks"`
	Groups     P      `c:"const unsigned int *__restrict__ groups"`
	Counters   P      `c:"unsigned long long *counters"`
	Flags      P      `c:"unsigned int *flags"`
	Args       P      `c:"const unsigned long long *args"`
	Diag       P      `c:"unsigned long long *diag"`
	NWaves     uint64 `c:"unsigned long long nwaves"`
	NTasks     uint64 `c:"unsigned long long ntasks"`
	NGroups    uint64 `c:"unsigned long long ngroups"`
	Epoch      uint64 `c:"unsigned long long epoch"`
	WatchdogNs uint64 `c:"unsigned long long watchdog_ns"`
}

// LaunchParams are the parameters of a generated launch wrapper: the
// wave's argument slots and its tile count (the grid).
type LaunchParams[P Ptr] struct {
	Args  P      `c:"const unsigned long long *args"`
	Tiles uint64 `c:"unsigned long long tiles"`
}

// CopyParams are the parameters of KernelCopy (kernelabi.CopyParams).
type CopyParams[P Ptr] = kernelabi.CopyParams[P]

// Entry points of the scheduler runtime (kernels/runtime.cu).
const (
	// KernelWaits is the persistent waits arm: each block claims tasks
	// (a unit's tile) from the queue in plan order and starts each as soon
	// as the counters and flags of the producer tiles it reads allow.
	KernelWaits = "gp_sched_waits"
	// KernelBarriers is the persistent barriers arm: one cooperative
	// launch runs the barrier plan's groups, a grid barrier between them.
	KernelBarriers = "gp_sched_barriers"
	// KernelCopy copies 16-byte words: the copy-bandwidth ceiling.
	KernelCopy = "gp_copy_u4"
)

// Dispatch is the function the generated PTX defines for the schedulers:
// a switch over function ids that calls the wave functions.
const Dispatch = "gp_dispatch"

// Wave table: waveWords uint32 per wave.
const (
	waveWords     = 8
	waveFn        = 0 // dispatch id of the wave's function
	waveTiles     = 1
	waveThreads   = 2
	waveFlagBits  = 3 // WaveProloguePending | wavePublishes
	waveWaitFirst = 4 // first wait in the wait table
	waveWaitCount = 5
	waveArgFirst  = 6 // first argument slot
	waveFlagFirst = 7 // first tile flag, for a wave that publishes flags
)

// Wave flag bits.
const (
	// wavePrologue: the function calls gp_wait itself.
	wavePrologue = 1
	// wavePublishes: the wave's tiles publish per-tile done flags.
	wavePublishes = 2
)

// Wait table: waitWords uint32 per wait: producer, map kind, block size.
const (
	waitWords    = 4
	waitProducer = 0
	waitKind     = 1
	waitBlock    = 2
	// Map kinds, as megakernel.TileMapKind.
	mapAll   = 0
	mapSame  = 1
	mapBlock = 2
)

// Unit table: unitWords uint32 per unit: first position in the order,
// wave count, tiles.
const (
	unitWords = 4
	unitFirst = 0
	unitCount = 1
	unitTiles = 2
)

// Task tables: taskWords uint32 per task. The waits arm's queue holds
// (unit, tile) in plan order; the barriers arm's (wave, tile), group after
// group, with group g's tasks from groups[g] to groups[g+1].
const taskWords = 2

// Control words (uint64), one 128-byte line apart where blocks contend.
const (
	ctlHead     = 0  // the queue's next task
	ctlDone     = 16 // blocks that finished, reset by the last
	ctlAbort    = 32 // set by the watchdog
	ctlBarCount = 48 // grid barrier arrivals
	ctlBarGen   = 64 // grid barrier generation
	// Statistics, added once per block at its end (cumulative over runs).
	ctlWaits    = 80 // counter and flag checks
	ctlTasks    = 81 // tasks run
	ctlBarriers = 82 // grid barriers crossed
	ctlUnwaited = 83 // tasks of prologue waves that returned without gp_wait
	ctlDiagN    = 84 // watchdog records written
	ctlWords    = 96
)

// Watchdog records: diagWords uint64 each, at most diagMax.
const (
	diagWords    = 8
	diagMax      = 64
	diagWave     = 0
	diagTile     = 1
	diagProducer = 2 // the producer wave, or ~0 for a grid barrier
	diagPTile    = 3 // the producer tile of a flag, or ~0 for a counter
	diagObserved = 4
	diagTarget   = 5
	diagWaitedNs = 6
	diagKind     = 7 // DiagCounter, DiagFlag or DiagBarrier
	DiagCounter  = 0
	DiagFlag     = 1
	DiagBarrier  = 2
)

// ABI is the scheduler runtime's kernel ABI.
var ABI = kernelabi.Module{
	Name: "wavedag",
	Doc: `The persistent schedulers of gpuplan run: the plan image's table layouts
and the control words the schedulers share with the host. Each scheduler
calls the wave functions through gp_dispatch, which gpuplan generates as
PTX for every workload and links with the user's module and this one.`,
	Kernels: []kernelabi.Kernel{
		{Name: KernelWaits, Doc: "The persistent waits arm.", Params: SchedParams[executor.DevPtr]{}},
		{Name: KernelBarriers, Doc: "The persistent barriers arm.", Params: SchedParams[executor.DevPtr]{}},
		{Name: KernelCopy, Doc: "The copy-bandwidth ceiling.", Params: CopyParams[executor.DevPtr]{}},
	},
	Consts: []kernelabi.Const{
		{Name: "WAVE_WORDS", Value: waveWords}, {Name: "WAVE_FN", Value: waveFn}, {Name: "WAVE_TILES", Value: waveTiles},
		{Name: "WAVE_THREADS", Value: waveThreads}, {Name: "WAVE_FLAG_BITS", Value: waveFlagBits},
		{Name: "WAVE_WAIT_FIRST", Value: waveWaitFirst}, {Name: "WAVE_WAIT_COUNT", Value: waveWaitCount},
		{Name: "WAVE_ARG_FIRST", Value: waveArgFirst}, {Name: "WAVE_FLAG_FIRST", Value: waveFlagFirst},
		{Name: "WAVE_PROLOGUE", Value: wavePrologue}, {Name: "WAVE_PUBLISHES", Value: wavePublishes},
		{Name: "WAIT_WORDS", Value: waitWords}, {Name: "WAIT_PRODUCER", Value: waitProducer},
		{Name: "WAIT_KIND", Value: waitKind}, {Name: "WAIT_BLOCK", Value: waitBlock},
		{Name: "MAP_ALL", Value: mapAll}, {Name: "MAP_SAME", Value: mapSame}, {Name: "MAP_BLOCK", Value: mapBlock},
		{Name: "UNIT_WORDS", Value: unitWords}, {Name: "UNIT_FIRST", Value: unitFirst}, {Name: "UNIT_COUNT", Value: unitCount},
		{Name: "UNIT_TILES", Value: unitTiles}, {Name: "TASK_WORDS", Value: taskWords},
		{Name: "CTL_HEAD", Value: ctlHead}, {Name: "CTL_DONE", Value: ctlDone}, {Name: "CTL_ABORT", Value: ctlAbort},
		{Name: "CTL_BAR_COUNT", Value: ctlBarCount}, {Name: "CTL_BAR_GEN", Value: ctlBarGen},
		{Name: "CTL_WAITS", Value: ctlWaits}, {Name: "CTL_TASKS", Value: ctlTasks}, {Name: "CTL_BARRIERS", Value: ctlBarriers},
		{Name: "CTL_UNWAITED", Value: ctlUnwaited}, {Name: "CTL_DIAG_N", Value: ctlDiagN}, {Name: "CTL_WORDS", Value: ctlWords},
		{Name: "DIAG_WORDS", Value: diagWords}, {Name: "DIAG_MAX", Value: diagMax},
		{Name: "DIAG_WAVE", Value: diagWave}, {Name: "DIAG_TILE", Value: diagTile}, {Name: "DIAG_PRODUCER", Value: diagProducer},
		{Name: "DIAG_PTILE", Value: diagPTile}, {Name: "DIAG_OBSERVED", Value: diagObserved}, {Name: "DIAG_TARGET", Value: diagTarget},
		{Name: "DIAG_WAITED_NS", Value: diagWaitedNs}, {Name: "DIAG_KIND", Value: diagKind},
		{Name: "DIAG_COUNTER", Value: DiagCounter}, {Name: "DIAG_FLAG", Value: DiagFlag}, {Name: "DIAG_BARRIER", Value: DiagBarrier},
		{Name: "POLLS_PER_CHECK", Value: pollsPerCheck, Doc: "Polls of a counter between two reads of the abort flag and the clock.", Tunable: true},
	},
}

// pollsPerCheck is how many times a waiting block polls a counter between
// its checks of the abort flag and the watchdog's clock.
const pollsPerCheck = 256
