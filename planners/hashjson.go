package planners

import "github.com/gpuplan/gpuplan/internal/hashjson"

// The plans write their 64-bit hashes and keys as hex strings
// ("0x0000000000000abc"): a JSON number above 2^53 loses digits in readers
// that hold numbers as doubles. internal/hashjson does the writing and
// reading.

// MarshalJSON writes the group with its layout hash as a hex string.
func (g LaunchFusionGroup) MarshalJSON() ([]byte, error) {
	type plain LaunchFusionGroup
	return hashjson.Marshal(plain(g), hashjson.Hash{Key: "layout_hash", Value: &g.LayoutHash})
}

// MarshalJSON writes the plan with its graph layout hash as a hex string.
func (p ResidentGraphSessionPlan) MarshalJSON() ([]byte, error) {
	type plain ResidentGraphSessionPlan
	return hashjson.Marshal(plain(p), hashjson.Hash{Key: "graph_layout_hash", Value: &p.GraphLayoutHash})
}

// MarshalJSON writes the group with its graph layout hash and traversal
// key as hex strings.
func (g MultiQueryGroup) MarshalJSON() ([]byte, error) {
	type plain MultiQueryGroup
	return hashjson.Marshal(plain(g), multiQueryHashes(&g)...)
}

// UnmarshalJSON reads what MarshalJSON writes; the hashes may also be JSON
// integers.
func (g *LaunchFusionGroup) UnmarshalJSON(b []byte) error {
	type plain LaunchFusionGroup
	return hashjson.Unmarshal(b, (*plain)(g), hashjson.Hash{Key: "layout_hash", Value: &g.LayoutHash})
}

// UnmarshalJSON reads what MarshalJSON writes; the hashes may also be JSON
// integers.
func (p *ResidentGraphSessionPlan) UnmarshalJSON(b []byte) error {
	type plain ResidentGraphSessionPlan
	return hashjson.Unmarshal(b, (*plain)(p), hashjson.Hash{Key: "graph_layout_hash", Value: &p.GraphLayoutHash})
}

// UnmarshalJSON reads what MarshalJSON writes; the hashes may also be JSON
// integers.
func (g *MultiQueryGroup) UnmarshalJSON(b []byte) error {
	type plain MultiQueryGroup
	return hashjson.Unmarshal(b, (*plain)(g), multiQueryHashes(g)...)
}

// multiQueryHashes are a group's hash fields, in the order they are
// written.
func multiQueryHashes(g *MultiQueryGroup) []hashjson.Hash {
	return []hashjson.Hash{{Key: "graph_layout_hash", Value: &g.GraphLayoutHash}, {Key: "traversal_key", Value: &g.TraversalKey}}
}
