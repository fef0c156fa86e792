//go:build !cuda

package main

// driverLibraryError is always nil: a build without CUDA loads no driver
// library (its GPU commands say that they need the CUDA build).
func driverLibraryError() error { return nil }
