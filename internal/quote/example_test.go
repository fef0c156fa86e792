package quote_test

import (
	"fmt"
	"strings"

	"github.com/gpuplan/gpuplan/internal/quote"
)

func ExampleText() {
	fmt.Println(quote.Text("grid megakernel"))
	fmt.Println(quote.Text("x\n gate passed: 5 of 5 claims hold\x1b[32m"))
	// Output:
	// grid megakernel
	// "x\n gate passed: 5 of 5 claims hold\x1b[32m"
}

func ExampleEcho() {
	fmt.Println("unknown peer " + quote.Echo("gapbs"))
	fmt.Println("unknown peer " + quote.Echo("x\n gate passed\x1b[32m"))
	fmt.Println("unknown peer " + quote.Echo(strings.Repeat("a", 10<<20)))
	// Output:
	// unknown peer "gapbs"
	// unknown peer "x\n gate passed\x1b[32m"
	// unknown peer "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"...
}
