// Package cudalib gives gpuplan's CUDA build the NVIDIA driver library
// (libcuda.so.1) at run time instead of as a link-time dependency, so that
// the binary starts, and every planning command runs, on a machine without
// the NVIDIA driver; and it wraps the few driver queries that
// gorgonia.org/cu, which stays the driver binding, does not.
//
// On linux/amd64 the CUDA build defines every driver function the binary
// calls (except cuInit, which the executor's cgo shim interposes) as an
// assembly trampoline that jumps through a table. A C constructor, which
// runs before the Go runtime starts, opens the library with dlopen (the
// name in GPUPLAN_LIBCUDA, or libcuda.so.1) and fills the table with dlsym;
// until then, or when the library is missing, each trampoline returns
// CUDA_ERROR_NOT_INITIALIZED. Linked with --as-needed, the binary then
// records no dependency on libcuda. LoadError says why the library could not
// be opened; a command that needs a GPU checks it first.
//
// The trampolines are generated from the symbols the build references
// (scripts/gen-cudalib.sh, run by go generate); a test in cmd/gpuplan fails
// when the list is incomplete (the binary then needs libcuda again). Other
// platforms, and builds with the cudalib_direct tag, link libcuda as a plain
// dependency and LoadError is always nil.
//
// Without -tags cuda the package holds only the error types.
package cudalib

//go:generate bash ../../scripts/gen-cudalib.sh
