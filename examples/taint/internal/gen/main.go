// Command gen writes the taint example's workload (taint.Workload) to the
// file -o names, or to standard output. `go generate` in examples/taint
// runs it to regenerate taint.json.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/gpuplan/gpuplan/examples/taint"
)

func main() {
	out := flag.String("o", "", "write the workload to this file (default: standard output)")
	flag.Parse()
	b := taint.Workload()
	if *out == "" {
		_, err := os.Stdout.Write(b)
		exit(err)
		return
	}
	exit(os.WriteFile(*out, b, 0o644))
}

func exit(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}
