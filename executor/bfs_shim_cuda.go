//go:build cuda

package executor

// #include "shim_cuda.h"
import "C"

import "unsafe"

// launchLevel is one plain cuLaunchKernel with 8-byte arguments vals, on the
// calling (driver) thread: no allocation, the parameters built on the C
// stack (gp_launch). The driver copies the parameters before it returns.
func launchLevel(fn, stream unsafe.Pointer, blocks, threads uint32, vals []uint64) error {
	r := int(C.gp_launch(fn, C.uint(blocks), 1, 1, C.uint(threads), 1, 1, 0,
		stream, (*C.ulonglong)(unsafe.Pointer(&vals[0])), C.int(len(vals)), 0))
	if r == 0 {
		return nil
	}
	return newDriverError("cuLaunchKernel", r, "")
}
