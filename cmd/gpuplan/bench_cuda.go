//go:build cuda

package main

import "github.com/gpuplan/gpuplan/executor"

// openBenchExecutor opens CUDA device ordinal in its primary context,
// after checking that the NVIDIA driver library was loaded.
func openBenchExecutor(device int) (*executor.Executor, error) {
	return openExecutor(device, executor.Options{})
}

// openFaultTolerantExecutor opens CUDA device ordinal in a context of its
// own (executor.Options.PrivateContext), for the server and gpuplan run,
// whose kernels may fault: a fault then loses that context, not the
// device's primary one. It does not keep the process usable: after a
// sticky fault (an illegal address) no new context can be created in it
// (measured on an H200 with driver 580, cuCtxCreate fails with CUresult 700
// or 715), so gpuplan run looks for the faulting wave in a child process.
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
