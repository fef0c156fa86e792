// Command gen writes the decode example's workload at the sizes its flags
// give (default: decode.DefaultLayers, DefaultHidden and
// DefaultIntermediate) to the file -o names, or to standard output. `go
// generate` in examples/decode runs it to regenerate decode.json.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/gpuplan/gpuplan/examples/decode"
)

func main() {
	out := flag.String("o", "", "write the workload to this file (default: standard output)")
	layers := flag.Int("layers", decode.DefaultLayers, "layers")
	hidden := flag.Int("hidden", decode.DefaultHidden, "hidden size H")
	inter := flag.Int("intermediate", decode.DefaultIntermediate, "intermediate size I")
	flag.Parse()
	b, err := decode.Workload(*layers, *hidden, *inter)
	if err == nil {
		if *out == "" {
			_, err = os.Stdout.Write(b)
		} else {
			err = os.WriteFile(*out, b, 0o644)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}
