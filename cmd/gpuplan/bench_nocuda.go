//go:build !cuda

package main

import (
	"errors"

	"github.com/gpuplan/gpuplan/executor"
)

// openBenchExecutor reports that measuring needs the CUDA build.
func openBenchExecutor(int) (*executor.Executor, error) {
	return nil, errors.New("built without CUDA support, so no GPU can be measured. Fix: make build-cuda (go build -tags cuda) and run on a machine with an NVIDIA GPU")
}

// openFaultTolerantExecutor reports that measuring needs the CUDA build.
func openFaultTolerantExecutor(device int) (*executor.Executor, error) {
	return openBenchExecutor(device)
}
