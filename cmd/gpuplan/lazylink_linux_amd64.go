//go:build cuda && !cudalib_direct

package main

// The CUDA build loads the NVIDIA driver library at run time
// (internal/cudalib), so the binary must not name libcuda as a dependency.
// Every driver function it calls is defined by cudalib's trampolines, and
// --as-needed lets the linker drop the -lcuda that gorgonia.org/cu and the
// executor still pass. The flag is positional: it only covers the libraries
// after it, and the linker writes the main package's cgo flags first, so it
// sits here rather than in cudalib (which would follow the executor's
// -lcuda).

// #cgo LDFLAGS: -Wl,--as-needed
import "C"
