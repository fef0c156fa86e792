// Package cudart gives GPU tests the CUDA runtime library, opened at run
// time, to check that the executor shares the device's primary context
// with a library written against the runtime API: the runtime copies to
// and from the executor's buffers and reports the context it uses.
//
// Without -tags cuda the package holds only its error.
package cudart

import "errors"

// ErrMissing is returned by Open when the runtime or driver library cannot
// be opened.
var ErrMissing = errors.New("the CUDA runtime library (libcudart.so) or the driver library (libcuda.so.1) cannot be opened. Fix: install the CUDA toolkit's runtime, or put its lib64 folder on LD_LIBRARY_PATH")
