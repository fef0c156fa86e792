package memcheck_test

import (
	"fmt"

	"github.com/gpuplan/gpuplan/internal/memcheck"
)

func ExampleBound() {
	// 1 MiB plus 64 bytes per input byte: 1 MiB + 64 KiB for a 1 KiB input.
	b := memcheck.Bound{Base: 1 << 20, PerByte: 64}
	fmt.Println(b.Limit(1024))
	// Output:
	// 1114112
}
