//go:build !cuda

package main

import "errors"

// probeLiveDevice reads the live GPU. This build has no CUDA support, so it
// always fails with instructions.
func probeLiveDevice(e *env, jsonOut bool) error {
	return errors.New("gpuplan was built without CUDA support. Fix: build with `make build-cuda` and run on a machine with an NVIDIA GPU")
}
