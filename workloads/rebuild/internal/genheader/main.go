// Command genheader writes the C header of the rebuild kernel ABI (go
// generate in workloads/rebuild).
package main

import (
	"github.com/gpuplan/gpuplan/internal/kernelabi"
	"github.com/gpuplan/gpuplan/workloads/rebuild"
)

func main() { kernelabi.Main(rebuild.ABI) }
