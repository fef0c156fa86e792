package quote_test

import (
	"fmt"

	"github.com/gpuplan/gpuplan/internal/quote"
)

func ExampleText() {
	fmt.Println(quote.Text("grid megakernel"))
	fmt.Println(quote.Text("x\n gate passed: 5 of 5 claims hold\x1b[32m"))
	// Output:
	// grid megakernel
	// "x\n gate passed: 5 of 5 claims hold\x1b[32m"
}
