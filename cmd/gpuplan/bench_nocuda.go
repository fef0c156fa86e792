//go:build !cuda

package main

import "errors"

// runBench parses the flags (so --help works in every build) and reports
// that measuring needs the CUDA build.
func runBench(e *env, args []string) error {
	if _, err := parseBenchArgs(e, args); err != nil {
		return err
	}
	return errors.New("built without CUDA support, so no GPU can be measured. Fix: make build-cuda (go build -tags cuda) and run on a machine with an NVIDIA GPU")
}
