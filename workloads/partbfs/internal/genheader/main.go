// Command genheader writes the C header of the partitioned BFS kernel ABI
// (go generate in workloads/partbfs).
package main

import (
	"github.com/gpuplan/gpuplan/internal/kernelabi"
	"github.com/gpuplan/gpuplan/workloads/partbfs"
)

func main() { kernelabi.Main(partbfs.ABI) }
