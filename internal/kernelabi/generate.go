package kernelabi

import (
	"fmt"
	"io"
	"os"
)

// Main is the whole of a module's genheader command, which go generate
// runs as `go run ./internal/genheader kernels/NAME_abi.h`: it writes the
// module's C header to the one path its arguments name and exits 2 on a
// usage error, 1 when the ABI is invalid or the file cannot be written.
func Main(m Module) { os.Exit(generate(m, os.Args[1:], os.Stderr)) }

// generate writes m's header to the path in args and returns the exit
// status, reporting a failure on stderr.
func generate(m Module, args []string, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintln(stderr, "usage: genheader OUT.h")
		return 2
	}
	h, err := m.Header()
	if err == nil {
		err = os.WriteFile(args[0], h, 0o644)
	}
	if err != nil {
		fmt.Fprintln(stderr, "genheader:", err)
		return 1
	}
	return 0
}
