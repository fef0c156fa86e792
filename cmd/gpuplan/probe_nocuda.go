//go:build !cuda

package main

import "errors"

// probeMachine reads the live GPUs. This build has no CUDA support, so it
// always fails with instructions.
func probeMachine() (probeResult, error) {
	return probeResult{}, errors.New("gpuplan was built without CUDA support. Fix: build with `make build-cuda` and run on a machine with an NVIDIA GPU")
}
