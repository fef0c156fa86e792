//go:build cuda

package main

import (
	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/workloads/wavedag"
)

// openRunExecutor opens the GPU a run measures.
func openRunExecutor(device int, _ *wavedag.Program) (*executor.Executor, string, error) {
	x, err := openFaultTolerantExecutor(device)
	if err != nil {
		return nil, "", err
	}
	return x, x.Device().Name, nil
}
