package wavedag

import (
	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/internal/kernelabi"
)

//go:generate go run ./internal/genheader kernels/wavedag_abi.h

// Ptr is the pointer type of a kernel parameter struct: executor.Buffer on
// the host, executor.DevPtr in the emulation.
type Ptr interface {
	executor.Buffer | executor.DevPtr
}

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

// CopyParams are the parameters of KernelCopy.
type CopyParams[P Ptr] struct {
	Src P      `c:"const uint4 *__restrict__ src"`
	Dst P      `c:"uint4 *__restrict__ dst"`
	N16 uint64 `c:"unsigned long long n16"`
}

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

// Wave table: WaveWords uint32 per wave.
const (
	WaveWords     = 8
	WaveFn        = 0 // dispatch id of the wave's function
	WaveTiles     = 1
	WaveThreads   = 2
	WaveFlagBits  = 3 // WaveProloguePending | WavePublishes
	WaveWaitFirst = 4 // first wait in the wait table
	WaveWaitCount = 5
	WaveArgFirst  = 6 // first argument slot
	WaveFlagFirst = 7 // first tile flag, for a wave that publishes flags
)

// Wave flag bits.
const (
	// WavePrologue: the function calls gp_wait itself.
	WavePrologue = 1
	// WavePublishes: the wave's tiles publish per-tile done flags.
	WavePublishes = 2
)

// Wait table: WaitWords uint32 per wait: producer, map kind, block size.
const (
	WaitWords    = 4
	WaitProducer = 0
	WaitKind     = 1
	WaitBlock    = 2
	// Map kinds, as megakernel.TileMapKind.
	MapAll   = 0
	MapSame  = 1
	MapBlock = 2
)

// Unit table: UnitWords uint32 per unit: first position in the order,
// wave count, tiles.
const (
	UnitWords = 4
	UnitFirst = 0
	UnitCount = 1
	UnitTiles = 2
)

// Task tables: TaskWords uint32 per task. The waits arm's queue holds
// (unit, tile) in plan order; the barriers arm's (wave, tile), group after
// group, with group g's tasks from groups[g] to groups[g+1].
const TaskWords = 2

// Control words (uint64), one 128-byte line apart where blocks contend.
const (
	CtlHead     = 0  // the queue's next task
	CtlDone     = 16 // blocks that finished, reset by the last
	CtlAbort    = 32 // set by the watchdog
	CtlBarCount = 48 // grid barrier arrivals
	CtlBarGen   = 64 // grid barrier generation
	// Statistics, added once per block at its end (cumulative over runs).
	CtlWaits    = 80 // counter and flag checks
	CtlTasks    = 81 // tasks run
	CtlBarriers = 82 // grid barriers crossed
	CtlUnwaited = 83 // tasks of prologue waves that returned without gp_wait
	CtlDiagN    = 84 // watchdog records written
	CtlWords    = 96
)

// Watchdog records: DiagWords uint64 each, at most DiagMax.
const (
	DiagWords    = 8
	DiagMax      = 64
	DiagWave     = 0
	DiagTile     = 1
	DiagProducer = 2 // the producer wave, or ~0 for a grid barrier
	DiagPTile    = 3 // the producer tile of a flag, or ~0 for a counter
	DiagObserved = 4
	DiagTarget   = 5
	DiagWaitedNs = 6
	DiagKind     = 7 // DiagCounter, DiagFlag or DiagBarrier
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
		{Name: "WAVE_WORDS", Value: WaveWords}, {Name: "WAVE_FN", Value: WaveFn}, {Name: "WAVE_TILES", Value: WaveTiles},
		{Name: "WAVE_THREADS", Value: WaveThreads}, {Name: "WAVE_FLAG_BITS", Value: WaveFlagBits},
		{Name: "WAVE_WAIT_FIRST", Value: WaveWaitFirst}, {Name: "WAVE_WAIT_COUNT", Value: WaveWaitCount},
		{Name: "WAVE_ARG_FIRST", Value: WaveArgFirst}, {Name: "WAVE_FLAG_FIRST", Value: WaveFlagFirst},
		{Name: "WAVE_PROLOGUE", Value: WavePrologue}, {Name: "WAVE_PUBLISHES", Value: WavePublishes},
		{Name: "WAIT_WORDS", Value: WaitWords}, {Name: "WAIT_PRODUCER", Value: WaitProducer},
		{Name: "WAIT_KIND", Value: WaitKind}, {Name: "WAIT_BLOCK", Value: WaitBlock},
		{Name: "MAP_ALL", Value: MapAll}, {Name: "MAP_SAME", Value: MapSame}, {Name: "MAP_BLOCK", Value: MapBlock},
		{Name: "UNIT_WORDS", Value: UnitWords}, {Name: "UNIT_FIRST", Value: UnitFirst}, {Name: "UNIT_COUNT", Value: UnitCount},
		{Name: "UNIT_TILES", Value: UnitTiles}, {Name: "TASK_WORDS", Value: TaskWords},
		{Name: "CTL_HEAD", Value: CtlHead}, {Name: "CTL_DONE", Value: CtlDone}, {Name: "CTL_ABORT", Value: CtlAbort},
		{Name: "CTL_BAR_COUNT", Value: CtlBarCount}, {Name: "CTL_BAR_GEN", Value: CtlBarGen},
		{Name: "CTL_WAITS", Value: CtlWaits}, {Name: "CTL_TASKS", Value: CtlTasks}, {Name: "CTL_BARRIERS", Value: CtlBarriers},
		{Name: "CTL_UNWAITED", Value: CtlUnwaited}, {Name: "CTL_DIAG_N", Value: CtlDiagN}, {Name: "CTL_WORDS", Value: CtlWords},
		{Name: "DIAG_WORDS", Value: DiagWords}, {Name: "DIAG_MAX", Value: DiagMax},
		{Name: "DIAG_WAVE", Value: DiagWave}, {Name: "DIAG_TILE", Value: DiagTile}, {Name: "DIAG_PRODUCER", Value: DiagProducer},
		{Name: "DIAG_PTILE", Value: DiagPTile}, {Name: "DIAG_OBSERVED", Value: DiagObserved}, {Name: "DIAG_TARGET", Value: DiagTarget},
		{Name: "DIAG_WAITED_NS", Value: DiagWaitedNs}, {Name: "DIAG_KIND", Value: DiagKind},
		{Name: "DIAG_COUNTER", Value: DiagCounter}, {Name: "DIAG_FLAG", Value: DiagFlag}, {Name: "DIAG_BARRIER", Value: DiagBarrier},
		{Name: "POLLS_PER_CHECK", Value: PollsPerCheck, Doc: "Polls of a counter between two reads of the abort flag and the clock.", Tunable: true},
	},
}

// PollsPerCheck is how many times a waiting block polls a counter between
// its checks of the abort flag and the watchdog's clock.
const PollsPerCheck = 256
