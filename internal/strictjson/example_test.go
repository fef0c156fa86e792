package strictjson_test

import (
	"fmt"

	"github.com/gpuplan/gpuplan/internal/strictjson"
)

func ExampleDecode() {
	var in struct {
		BudgetBytes uint64 `json:"budget_bytes"`
	}
	fmt.Println(strictjson.Decode("in.json", []byte(`{"budget_bytes": 4096}`), &in), in.BudgetBytes)
	fmt.Println(strictjson.Decode("in.json", []byte(`{"budget_byte": 4096}`), &in))
	fmt.Println(strictjson.Decode("in.json", []byte(`{"budget_bytes": -1}`), &in))
	// Output:
	// <nil> 4096
	// in.json: field "budget_byte": unknown field. Fix: remove "budget_byte" or check its spelling against the documented fields
	// in.json: field "budget_bytes": cannot use JSON number -1 here: want an integer in 0..18446744073709551615. Fix: give budget_bytes an integer in 0..18446744073709551615
}

func ExampleDecodeWith() {
	var in struct {
		Claims []struct {
			Name string `json:"name"`
		} `json:"claims"`
	}
	opts := strictjson.Options{Required: true}
	fmt.Println(strictjson.DecodeWith("gates.json", []byte(`{"claims":[{"name":"a"}],"claims":[]}`), &in, opts))
	fmt.Println(strictjson.DecodeWith("gates.json", []byte(`{"claims":[{"name":"a"},{"nme":"b"}]}`), &in, opts))
	fmt.Println(strictjson.DecodeWith("gates.json", []byte(`{"claims":[{"name":"a"},{}]}`), &in, opts))
	// Output:
	// gates.json: field "claims": key "claims" appears twice in one object. Fix: keep one "claims": a repeated key would silently replace the first value
	// gates.json: field "claims[1].nme": unknown field. Fix: remove "nme" or check its spelling against the documented fields
	// gates.json: field "claims[1].name": required field is missing. Fix: add "claims[1].name" (spelled exactly so) with a non-null value
}
