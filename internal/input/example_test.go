package input_test

import (
	"fmt"
	"strings"

	"github.com/gpuplan/gpuplan/internal/input"
)

// ExampleReadFile reads standard input ("-") under a limit of 16 bytes.
func ExampleReadFile() {
	data, err := input.ReadFile("-", strings.NewReader(`{"claims": []}`), 16)
	fmt.Println(string(data), err)
	_, err = input.ReadFile("-", strings.NewReader(`{"claims": [], "more": 1}`), 16)
	fmt.Println(err)
	// Output:
	// {"claims": []} <nil>
	// -: input is more than 16 bytes, above the limit of 16 bytes. Fix: check that this is the intended file, or raise the limit with the command's size-limit flag
}
