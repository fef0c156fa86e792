//go:build cuda

package executor

import (
	"fmt"
	"unsafe"

	"gorgonia.org/cu"
)

// bindLaunch binds a plain launch of f on stream s: the shim's launch with
// the handles resolved once.
func (b *cudaBackend) bindLaunch(f FuncRef, s StreamRef) (func(LaunchConfig, []uint64) error, error) {
	fn, err := b.fn("cuLaunchKernel", f)
	if err != nil {
		return nil, err
	}
	st, err := b.stream("cuLaunchKernel", s)
	if err != nil {
		return nil, err
	}
	fp, sp := funcPtr(fn), unsafe.Pointer(st.C())
	return func(cfg LaunchConfig, args []uint64) error { return shimLaunch(fp, sp, cfg, args, false) }, nil
}

// bindRead binds cuMemcpyDtoHAsync into pinned memory on stream s.
func (b *cudaBackend) bindRead(s StreamRef) (func(PinnedMem, DevPtr, uint64) error, error) {
	st, err := b.stream("cuMemcpyDtoHAsync", s)
	if err != nil {
		return nil, err
	}
	return func(dst PinnedMem, src DevPtr, n uint64) error {
		if _, ok := b.host[dst.ref]; !ok || n == 0 || n > uint64(len(dst.Data)) {
			return newDriverError("cuMemcpyDtoHAsync", cuErrInvalidValue, "the destination must be pinned staging memory of that size")
		}
		if err := cu.MemcpyDtoHAsync(unsafe.Pointer(&dst.Data[0]), cu.DevicePtr(src), int64(n), st); err != nil {
			return cuErr("cuMemcpyDtoHAsync", err, fmt.Sprintf("%d bytes", n))
		}
		return nil
	}, nil
}

// bindSync binds cuStreamSynchronize of stream s.
func (b *cudaBackend) bindSync(s StreamRef) (func() error, error) {
	st, err := b.stream("cuStreamSynchronize", s)
	if err != nil {
		return nil, err
	}
	return func() error {
		if err := st.Synchronize(); err != nil {
			return cuErr("cuStreamSynchronize", err, "")
		}
		return nil
	}, nil
}
