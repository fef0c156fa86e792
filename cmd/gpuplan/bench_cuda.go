//go:build cuda

package main

import "github.com/gpuplan/gpuplan/executor"

// openBenchExecutor opens CUDA device ordinal, after checking that the
// NVIDIA driver library was loaded.
func openBenchExecutor(device int) (*executor.Executor, error) {
	if err := driverLibraryError(); err != nil {
		return nil, err
	}
	return executor.Open(device, executor.Options{})
}
