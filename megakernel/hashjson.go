package megakernel

import (
	"encoding/json"

	"github.com/gpuplan/gpuplan/internal/hexhash"
)

// The plans write their 64-bit hashes as hex strings ("0x0000000000000abc"):
// a JSON number above 2^53 loses digits in readers that hold numbers as
// doubles.

// MarshalJSON writes the plan with its graph layout hash as a hex string.
func (p WorkloadPlan) MarshalJSON() ([]byte, error) {
	type plain WorkloadPlan
	return json.Marshal(struct {
		plain
		GraphLayoutHash hexhash.Hex `json:"graph_layout_hash"`
	}{plain(p), hexhash.Hex(p.GraphLayoutHash)})
}

// MarshalJSON writes the identity with its graph layout hash as a hex
// string.
func (id PlanIdentity) MarshalJSON() ([]byte, error) {
	type plain PlanIdentity
	return json.Marshal(struct {
		plain
		GraphLayoutHash hexhash.Hex `json:"graph_layout_hash"`
	}{plain(id), hexhash.Hex(id.GraphLayoutHash)})
}

// UnmarshalJSON reads what MarshalJSON writes; the hashes may also be JSON
// integers.
func (p *WorkloadPlan) UnmarshalJSON(b []byte) error {
	type plain WorkloadPlan
	var v struct {
		plain
		GraphLayoutHash hexhash.Hex `json:"graph_layout_hash"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*p = WorkloadPlan(v.plain)
	p.GraphLayoutHash = uint64(v.GraphLayoutHash)
	return nil
}

// UnmarshalJSON reads what MarshalJSON writes; the hashes may also be JSON
// integers.
func (id *PlanIdentity) UnmarshalJSON(b []byte) error {
	type plain PlanIdentity
	var v struct {
		plain
		GraphLayoutHash hexhash.Hex `json:"graph_layout_hash"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*id = PlanIdentity(v.plain)
	id.GraphLayoutHash = uint64(v.GraphLayoutHash)
	return nil
}
