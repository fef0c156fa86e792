//go:build cuda && !cudalib_direct

package cudalib

/*
#cgo LDFLAGS: -ldl
#include "loader.h"
*/
import "C"

// Lazy reports whether this build opens the driver library at run time
// (true) or links it as a dependency (false).
const Lazy = true

// LoadError returns nil when the driver library was opened at start-up,
// and otherwise a *LoadFailure naming the library, the dynamic loader's
// message and the fix.
func LoadError() error {
	if C.gp_cudalib_loaded() != 0 {
		return nil
	}
	return &LoadFailure{Library: Library(), FromEnv: C.gp_cudalib_from_env() != 0, Reason: C.GoString(C.gp_cudalib_error())}
}

// Library returns the name or path of the driver library the program
// opened, or tried to open.
func Library() string { return C.GoString(C.gp_cudalib_library()) }

// Functions returns the driver functions behind the trampolines, in slot
// order.
func Functions() []string {
	n := int(C.gp_cudalib_nsyms())
	out := make([]string, n)
	for i := range n {
		out[i] = C.GoString(C.gp_cudalib_name(C.int(i)))
	}
	return out
}

// MissingFunctions returns the driver functions that the opened library
// does not define (an older driver); calling one returns
// CUDA_ERROR_NOT_FOUND. It is empty when the library was not opened.
func MissingFunctions() []string {
	if C.gp_cudalib_loaded() == 0 {
		return nil
	}
	var out []string
	for i := range int(C.gp_cudalib_nsyms()) {
		if C.gp_cudalib_resolved(C.int(i)) == 0 {
			out = append(out, C.GoString(C.gp_cudalib_name(C.int(i))))
		}
	}
	return out
}
