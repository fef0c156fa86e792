// Command gpuplan plans GPU execution offline against device profiles,
// checks launch shapes, gates releases on measured evidence and, when built
// with -tags cuda, runs and measures the plans on a real NVIDIA GPU.
//
// Run "gpuplan help" for the list of subcommands; every subcommand accepts
// --help and --json.
package main

import (
	"os"
)

func main() {
	os.Exit(run(os.Stdout, os.Stderr, os.Args[1:]))
}
