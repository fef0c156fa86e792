//go:build cuda

package main

import "github.com/gpuplan/gpuplan/executor"

// openBenchExecutor opens CUDA device ordinal in its primary context,
// after checking that the NVIDIA driver library was loaded.
func openBenchExecutor(device int) (*executor.Executor, error) {
	return openExecutor(device, executor.Options{})
}

// openFaultTolerantExecutor opens CUDA device ordinal in a context of its
// own (executor.Options.PrivateContext), for a process that must outlive a
// fault in the kernels it runs: the server, which reopens its graphs, and
// gpuplan run, which looks for the faulting wave on a fresh context.
func openFaultTolerantExecutor(device int) (*executor.Executor, error) {
	return openExecutor(device, executor.Options{PrivateContext: true})
}

// openExecutor opens CUDA device ordinal with opts, after checking that the
// NVIDIA driver library was loaded.
func openExecutor(device int, opts executor.Options) (*executor.Executor, error) {
	if err := driverLibraryError(); err != nil {
		return nil, err
	}
	return executor.Open(device, opts)
}
