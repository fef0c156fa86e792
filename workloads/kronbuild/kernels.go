package kronbuild

import (
	_ "embed"
)

//go:embed kernels/kronbuild.ptx
var kronbuildPTX []byte

// KernelPTX returns a copy of the PTX of the kronbuild kernels, generated
// by nvcc 11.8 for compute_80 (it loads on Ampere and Hopper).
func KernelPTX() []byte { return append([]byte(nil), kronbuildPTX...) }

// KernelNames lists the entry points in KernelPTX, in ABI order.
func KernelNames() []string { return ABI.Names() }
