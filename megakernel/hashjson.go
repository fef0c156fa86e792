package megakernel

import "github.com/gpuplan/gpuplan/internal/hashjson"

// The plans write their 64-bit hashes as hex strings ("0x0000000000000abc"):
// a JSON number above 2^53 loses digits in readers that hold numbers as
// doubles. internal/hashjson does the writing and reading.

// MarshalJSON writes the plan with its graph layout hash as a hex string.
func (p WorkloadPlan) MarshalJSON() ([]byte, error) {
	type plain WorkloadPlan
	return hashjson.Marshal(plain(p), hashjson.Hash{Key: "graph_layout_hash", Value: &p.GraphLayoutHash})
}

// MarshalJSON writes the identity with its graph layout hash as a hex
// string.
func (id PlanIdentity) MarshalJSON() ([]byte, error) {
	type plain PlanIdentity
	return hashjson.Marshal(plain(id), hashjson.Hash{Key: "graph_layout_hash", Value: &id.GraphLayoutHash})
}

// UnmarshalJSON reads what MarshalJSON writes; the hashes may also be JSON
// integers.
func (p *WorkloadPlan) UnmarshalJSON(b []byte) error {
	type plain WorkloadPlan
	return hashjson.Unmarshal(b, (*plain)(p), hashjson.Hash{Key: "graph_layout_hash", Value: &p.GraphLayoutHash})
}

// UnmarshalJSON reads what MarshalJSON writes; the hashes may also be JSON
// integers.
func (id *PlanIdentity) UnmarshalJSON(b []byte) error {
	type plain PlanIdentity
	return hashjson.Unmarshal(b, (*plain)(id), hashjson.Hash{Key: "graph_layout_hash", Value: &id.GraphLayoutHash})
}
