// Package executor turns gpuplan's plans into GPU work. It is the only
// package with side effects on a device. The driver implementation talks to
// the CUDA driver through gorgonia.org/cu and a small cgo shim and is built
// only with -tags cuda; a CPU fake of the same interface lets everything
// above the driver be tested without a GPU.
package executor
