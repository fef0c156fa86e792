//go:build !cuda

package main

import (
	"fmt"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/workloads/wavedag"
)

// openRunExecutor opens the CPU emulation: a build without CUDA runs a
// workload whose every wave function has a Go reference (the examples'),
// on the fake backend with the plan's device profile.
func openRunExecutor(_ int, p *wavedag.Program) (*executor.Executor, string, error) {
	refs, ok := referencesFor(p)
	if !ok {
		return nil, "", fmt.Errorf("%s: this build has no CUDA, and its CPU emulation runs only wave functions with Go references (the examples'), which %s lacks. Fix: make build-cuda and run on a machine with an NVIDIA GPU",
			p.Source, missingReference(p))
	}
	x, err := executor.New(wavedag.NewFake(p.Device, refs, 1), executor.Options{})
	if err != nil {
		return nil, "", err
	}
	return x, "the CPU emulation of an " + p.Device.Name + " (a build without CUDA: the times are the emulation's, not a GPU's)", nil
}
