// Command genheader writes the C header of the wavedag scheduler ABI (go
// generate in workloads/wavedag).
package main

import (
	"fmt"
	"os"

	"github.com/gpuplan/gpuplan/workloads/wavedag"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: genheader OUT.h")
		os.Exit(2)
	}
	h, err := wavedag.ABI.Header()
	if err == nil {
		err = os.WriteFile(os.Args[1], h, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "genheader:", err)
		os.Exit(1)
	}
}
