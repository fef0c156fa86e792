// Command genheader writes the C header of the kronbuild kernel ABI (go
// generate in workloads/kronbuild).
package main

import (
	"github.com/gpuplan/gpuplan/internal/kernelabi"
	"github.com/gpuplan/gpuplan/workloads/kronbuild"
)

func main() { kernelabi.Main(kronbuild.ABI) }
