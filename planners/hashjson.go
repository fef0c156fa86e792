package planners

import (
	"encoding/json"

	"github.com/gpuplan/gpuplan/internal/hexhash"
)

// The plans write their 64-bit hashes and keys as hex strings
// ("0x0000000000000abc"): a JSON number above 2^53 loses digits in readers
// that hold numbers as doubles.

// MarshalJSON writes the group with its layout hash as a hex string.
func (g LaunchFusionGroup) MarshalJSON() ([]byte, error) {
	type plain LaunchFusionGroup
	return json.Marshal(struct {
		plain
		LayoutHash hexhash.Hex `json:"layout_hash"`
	}{plain(g), hexhash.Hex(g.LayoutHash)})
}

// MarshalJSON writes the plan with its graph layout hash as a hex string.
func (p ResidentGraphSessionPlan) MarshalJSON() ([]byte, error) {
	type plain ResidentGraphSessionPlan
	return json.Marshal(struct {
		plain
		GraphLayoutHash hexhash.Hex `json:"graph_layout_hash"`
	}{plain(p), hexhash.Hex(p.GraphLayoutHash)})
}

// MarshalJSON writes the group with its graph layout hash and traversal
// key as hex strings.
func (g MultiQueryGroup) MarshalJSON() ([]byte, error) {
	type plain MultiQueryGroup
	return json.Marshal(struct {
		plain
		GraphLayoutHash hexhash.Hex `json:"graph_layout_hash"`
		TraversalKey    hexhash.Hex `json:"traversal_key"`
	}{plain(g), hexhash.Hex(g.GraphLayoutHash), hexhash.Hex(g.TraversalKey)})
}

// UnmarshalJSON reads what MarshalJSON writes; the hashes may also be JSON
// integers.
func (g *LaunchFusionGroup) UnmarshalJSON(b []byte) error {
	type plain LaunchFusionGroup
	var v struct {
		plain
		LayoutHash hexhash.Hex `json:"layout_hash"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*g = LaunchFusionGroup(v.plain)
	g.LayoutHash = uint64(v.LayoutHash)
	return nil
}

// UnmarshalJSON reads what MarshalJSON writes; the hashes may also be JSON
// integers.
func (p *ResidentGraphSessionPlan) UnmarshalJSON(b []byte) error {
	type plain ResidentGraphSessionPlan
	var v struct {
		plain
		GraphLayoutHash hexhash.Hex `json:"graph_layout_hash"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*p = ResidentGraphSessionPlan(v.plain)
	p.GraphLayoutHash = uint64(v.GraphLayoutHash)
	return nil
}

// UnmarshalJSON reads what MarshalJSON writes; the hashes may also be JSON
// integers.
func (g *MultiQueryGroup) UnmarshalJSON(b []byte) error {
	type plain MultiQueryGroup
	var v struct {
		plain
		GraphLayoutHash hexhash.Hex `json:"graph_layout_hash"`
		TraversalKey    hexhash.Hex `json:"traversal_key"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*g = MultiQueryGroup(v.plain)
	g.GraphLayoutHash = uint64(v.GraphLayoutHash)
	g.TraversalKey = uint64(v.TraversalKey)
	return nil
}
