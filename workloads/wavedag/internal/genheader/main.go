// Command genheader writes the C header of the wavedag scheduler ABI (go
// generate in workloads/wavedag).
package main

import (
	"github.com/gpuplan/gpuplan/internal/kernelabi"
	"github.com/gpuplan/gpuplan/workloads/wavedag"
)

func main() { kernelabi.Main(wavedag.ABI) }
