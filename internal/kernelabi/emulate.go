package kernelabi

import (
	"unsafe"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/occupancy"
)

// This file holds what the Go emulations of the kernel modules share: they
// run in place of the CUDA kernels on the executor's fake backend, decode
// their launch arguments with the module's ABI and see the fake device
// memory as Go slices.

// LaunchSeeds gives each launch of an emulation its own seed, drawn from
// the emulation's: the order in which the launch takes the warps, blocks or
// items the GPU runs concurrently.
type LaunchSeeds struct {
	seed, launches uint64
}

// NewLaunchSeeds returns the launch seeds of an emulation seeded with seed.
func NewLaunchSeeds(seed uint64) LaunchSeeds { return LaunchSeeds{seed: seed} }

// Next returns the next launch's seed.
func (s *LaunchSeeds) Next() uint64 {
	s.launches++
	return s.seed*0x9e3779b97f4a7c15 + s.launches
}

// View returns the n values of T at ptr in a fake launch's device memory,
// nil when n is 0.
func View[T any](l *executor.FakeLaunch, ptr executor.DevPtr, n uint64) ([]T, error) {
	var z T
	b, err := l.Bytes(ptr, n*uint64(unsafe.Sizeof(z)))
	if err != nil || n == 0 {
		return nil, err
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), n), nil
}

// CopyBytes copies n bytes from src to dst in a fake launch's device
// memory: the emulation of a copy kernel.
func CopyBytes(l *executor.FakeLaunch, src, dst executor.DevPtr, n uint64) error {
	s, err := l.Bytes(src, n)
	if err != nil {
		return err
	}
	d, err := l.Bytes(dst, n)
	if err != nil {
		return err
	}
	copy(d, s)
	return nil
}

// EmulateCopy emulates a module's copy kernel of 16-byte words
// (CopyParams): p.N16 words from p.Src to p.Dst.
func EmulateCopy(l *executor.FakeLaunch, p CopyParams[executor.DevPtr]) error {
	return CopyBytes(l, p.Src, p.Dst, 16*p.N16)
}

// Emulate returns the run of an entry point whose emulation takes the
// launch's arguments decoded into its parameter struct T (the
// executor.DevPtr instantiation).
func Emulate[T any](run func(l *executor.FakeLaunch, p T) error) func(*executor.FakeLaunch) error {
	return func(l *executor.FakeLaunch) error {
		var p T
		if err := Decode(l.Args, &p); err != nil {
			return err
		}
		return run(l, p)
	}
}

// Fake is one emulated entry point: the Go function that runs in its place
// and the attributes the occupancy model reads, those ptxas reports for the
// real kernel or close to them.
type Fake struct {
	// Run emulates a launch; nil stands for a kernel that changes nothing
	// the host reads (a barrier-only kernel).
	Run func(*executor.FakeLaunch) error
	// Regs is the registers a thread, Smem the static shared memory of a
	// block in bytes.
	Regs, Smem int
	// MaxThreads is the largest block, 0 for 1024.
	MaxThreads int
}

// FakeKernels returns the executor's fake kernels of a module's emulated
// entry points, by entry name.
func FakeKernels(fakes map[string]Fake) map[string]executor.FakeKernel {
	out := make(map[string]executor.FakeKernel, len(fakes))
	for name, f := range fakes {
		run, threads := f.Run, f.MaxThreads
		if run == nil {
			run = func(*executor.FakeLaunch) error { return nil }
		}
		if threads == 0 {
			threads = 1024
		}
		out[name] = executor.FakeKernel{Run: run, Attrs: executor.FuncAttributes{NumRegs: f.Regs, StaticSharedBytes: f.Smem, MaxThreadsPerBlock: threads}}
	}
	return out
}

// Emulation runs a module's kernels in Go on the executor's CPU fake
// backend, step for step as the CUDA kernels do: the same memory layout,
// control words and results, with what the GPU runs concurrently (warps,
// blocks, the items of a pass) taken in a random order, seeded, to stand
// in for its concurrency. A workload's session over a fake backend with
// these kernels runs every arm without a GPU.
type Emulation struct {
	seeds LaunchSeeds
	fakes map[string]Fake
}

// NewEmulation returns the emulation of a module's entry points with a
// seed for their orders: fakes returns them by entry name, each drawing
// its launches' seeds from seeds.
func NewEmulation(seed uint64, fakes func(seeds *LaunchSeeds) map[string]Fake) *Emulation {
	e := &Emulation{seeds: NewLaunchSeeds(seed)}
	e.fakes = fakes(&e.seeds)
	return e
}

// Kernels returns the executor's fake kernels of the emulated entry
// points (FakeKernels), with the register and shared-memory use the
// occupancy model sees.
func (e *Emulation) Kernels() map[string]executor.FakeKernel { return FakeKernels(e.fakes) }

// NewFake returns a fake backend for dev with the emulated kernels.
func (e *Emulation) NewFake(dev occupancy.Device) *executor.Fake {
	return executor.NewFake(executor.FakeConfig{Device: dev, Kernels: e.Kernels()})
}
