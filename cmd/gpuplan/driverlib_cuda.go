//go:build cuda

package main

import (
	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/internal/cudalib"
)

// driverLibraryError returns nil when the NVIDIA driver library was
// loaded, and otherwise an *executor.UnavailableError with cudalib's
// one-sentence reason. Every command that opens a GPU checks it first, so
// that a machine without the driver gets that sentence rather than the
// executor's view of a missing cuInit.
func driverLibraryError() error {
	if err := cudalib.LoadError(); err != nil {
		return &executor.UnavailableError{Reason: err.Error()}
	}
	return nil
}
