// Command genheader writes the C header of the BFS kernel ABI (go generate
// in workloads/bfs).
package main

import (
	"github.com/gpuplan/gpuplan/internal/kernelabi"
	"github.com/gpuplan/gpuplan/workloads/bfs"
)

func main() { kernelabi.Main(bfs.ABI) }
