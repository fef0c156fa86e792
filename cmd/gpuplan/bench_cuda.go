//go:build cuda

package main

import "github.com/gpuplan/gpuplan/executor"

// openBenchExecutor opens CUDA device ordinal.
func openBenchExecutor(device int) (*executor.Executor, error) {
	return executor.Open(device, executor.Options{})
}
