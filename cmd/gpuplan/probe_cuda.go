//go:build cuda

package main

import (
	"fmt"
	"os"

	"github.com/gpuplan/gpuplan/executor"
	"github.com/gpuplan/gpuplan/internal/cudalib"
)

// probeMachine reads every GPU the driver lists: the driver version once,
// then for each ordinal its capabilities through the executor (which opens
// a context on it) and its UUID and PCI bus id. Without the driver library
// or a GPU it returns one sentence saying so.
func probeMachine() (probeResult, error) {
	if err := driverLibraryError(); err != nil {
		return probeResult{}, err
	}
	n, err := executor.DeviceCount()
	if err != nil {
		return probeResult{}, err
	}
	version, err := cudalib.DriverVersion()
	if err != nil {
		return probeResult{}, err
	}
	r := probeResult{DriverVersion: version, GPUs: make([]probedGPU, 0, n)}
	if b, err := os.ReadFile("/proc/driver/nvidia/version"); err == nil {
		r.KernelModule = driverVersionFromProc(string(b))
	}
	for i := range n {
		g, err := probeGPUAt(i)
		if err != nil {
			return probeResult{}, fmt.Errorf("GPU %d: %w", i, err)
		}
		r.GPUs = append(r.GPUs, g)
	}
	return r, nil
}

// probeGPUAt opens device ordinal, reads its capabilities, free memory and
// PTX target, closes it, and adds the driver's UUID and PCI bus id.
func probeGPUAt(ordinal int) (probedGPU, error) {
	x, err := executor.Open(ordinal, executor.Options{})
	if err != nil {
		return probedGPU{}, err
	}
	g := probedGPU{Ordinal: ordinal, Device: x.Device(), PTXTarget: x.PTXTarget()}
	free, _, merr := x.MemInfo()
	if err := x.Close(); err != nil {
		return probedGPU{}, err
	}
	if merr != nil {
		return probedGPU{}, merr
	}
	g.FreeMemoryBytes = free
	if g.UUID, err = cudalib.DeviceUUID(ordinal); err != nil {
		return probedGPU{}, err
	}
	if g.PCIBusID, err = cudalib.DevicePCIBusID(ordinal); err != nil {
		return probedGPU{}, err
	}
	return g, nil
}
