package hexhash_test

import (
	"encoding/json"
	"fmt"

	"github.com/gpuplan/gpuplan/internal/hexhash"
)

func ExampleHex() {
	b, _ := json.Marshal(map[string]hexhash.Hex{"graph_layout_hash": 18446744073709377289})
	fmt.Println(string(b))
	// Output:
	// {"graph_layout_hash":"0xfffffffffffd5709"}
}
