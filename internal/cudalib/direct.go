//go:build cuda && (!linux || !amd64 || cudalib_direct)

package cudalib

// #cgo LDFLAGS: -lcuda
import "C"

// Lazy reports whether this build opens the driver library at run time
// (true) or links it as a dependency (false): on this platform, or with
// the cudalib_direct tag, the dynamic loader opens libcuda before the
// program starts.
const Lazy = false

// LoadError is always nil: the library was linked, so the program could
// not have started without it.
func LoadError() error { return nil }

// Library returns the driver library the binary was linked with.
func Library() string { return DefaultLibrary }

// Functions is empty: this build has no trampolines.
func Functions() []string { return nil }

// MissingFunctions is empty: the dynamic loader resolves every function.
func MissingFunctions() []string { return nil }
