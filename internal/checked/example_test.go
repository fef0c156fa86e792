package checked_test

import (
	"fmt"
	"math"

	"github.com/gpuplan/gpuplan/internal/checked"
)

func ExampleAdd() {
	n, err := checked.Add(1<<20, 4096, "graph bytes")
	fmt.Println(n, err)
	_, err = checked.Add(math.MaxUint64, 1, "graph bytes")
	fmt.Println(err != nil)
	// Output:
	// 1052672 <nil>
	// true
}

func ExampleRatioBPS() {
	// 476 of 512 bytes avoided is 9296 basis points (92.96%); an empty whole
	// reports the given zero value.
	fmt.Println(checked.RatioBPS(476, 512, 0), checked.RatioBPS(0, 0, checked.BasisPoints))
	// Output:
	// 9296 10000
}
