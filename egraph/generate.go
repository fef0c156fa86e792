package egraph

import (
	"fmt"
	"strconv"
	"strings"
)

// GenShape selects the shape of a generated e-graph.
type GenShape int

// The generated shapes.
const (
	// ShapeRandom: random terms over ops of arity 0 to 3 with planted
	// congruences. Pending unions join pairs of leaves; many e-nodes are
	// variants of earlier ones with one child swapped for a class that is
	// (or will be) equal to it, so each leaf union cascades up through the
	// parents; some e-nodes join an existing class, which makes cycles.
	ShapeRandom GenShape = iota
	// ShapeUnionChain is ShapeRandom whose leaf unions form one long chain
	// (k, k+1) over half the leaves, listed from the highest pair down, the
	// order that builds the deepest union-find paths.
	ShapeUnionChain
	// ShapeGiantClass: every leaf is united with leaf 0 and one e-node of
	// each op, over leaves only, with leaf 0 too: the closure is one class.
	ShapeGiantClass
	// ShapeDeepCycle: pairs of cycles a_i = op_i(a_{i+1 mod D}) and
	// b_i = op_i(b_{i+1 mod D}) of length D = CycleLength, with one union
	// (a_0, b_0) per pair: congruence walks around the cycles, one step per
	// round, until every a_i equals b_i.
	ShapeDeepCycle
	// ShapeAllDistinct: no unions and no two equal e-nodes; the closure
	// changes nothing.
	ShapeAllDistinct
	shapeCount
)

var shapeNames = [...]string{"random", "chain", "giant", "cycle", "distinct"}

// String returns the shape's name as ParseGenSpec accepts it.
func (s GenShape) String() string {
	if s >= 0 && s < shapeCount {
		return shapeNames[s]
	}
	return fmt.Sprintf("shape(%d)", int(s))
}

// GenShapeNames lists the shape names in order.
func GenShapeNames() []string { return append([]string(nil), shapeNames[:]...) }

// Generator limits and defaults.
const (
	// MaxGenNodes bounds GenConfig.Nodes.
	MaxGenNodes = 100_000_000
	// DefaultCycleLength is the cycle length of ShapeDeepCycle when
	// GenConfig.CycleLength is 0.
	DefaultCycleLength = 64
	// internalOps is the number of non-leaf ops: u0..u2 (arity 1),
	// b0..b2 (arity 2), t0, t1 (arity 3). Leaf ops a0, a1, ... follow.
	internalOps = 8
	// maxLeaves bounds the number of leaf ops.
	maxLeaves = 1 << 16
)

// GenConfig configures Generate.
type GenConfig struct {
	// Nodes is the exact number of e-nodes, 1..MaxGenNodes.
	Nodes int `json:"nodes"`
	// Seed makes the graph: the same config gives the same graph.
	Seed  uint64   `json:"seed"`
	Shape GenShape `json:"shape"`
	// CycleLength is the e-nodes per cycle of ShapeDeepCycle (0: the
	// default, 64); it is shortened when Nodes is too small.
	CycleLength int `json:"cycle_length,omitempty"`
}

// GenError reports a bad generator configuration or spec.
type GenError struct {
	Field string
	Msg   string
	Fix   string
}

// Error names the field and ends with a Fix.
func (e *GenError) Error() string {
	return fmt.Sprintf("generator %s: %s. Fix: %s", e.Field, e.Msg, e.Fix)
}

// ParseGenSpec parses "gen:N[:SEED[:SHAPE]]": N e-nodes (digits, with
// optional '_' separators or an exponent form such as 1e6), SEED an
// unsigned integer (default 1), SHAPE one of GenShapeNames (default
// random).
func ParseGenSpec(spec string) (GenConfig, error) {
	fix := "write gen:N[:SEED[:SHAPE]], for example gen:1e6 or gen:100000:7:cycle (shapes: " + strings.Join(shapeNames[:], ", ") + ")"
	rest, ok := strings.CutPrefix(spec, "gen:")
	parts := strings.Split(rest, ":")
	if !ok || len(parts) > 3 {
		return GenConfig{}, &GenError{Field: "spec", Msg: fmt.Sprintf("%q is not gen:N[:SEED[:SHAPE]]", spec), Fix: fix}
	}
	cfg := GenConfig{Seed: 1}
	n, err := parseCount(parts[0])
	if err != nil {
		return GenConfig{}, &GenError{Field: "N", Msg: fmt.Sprintf("%q is not a count", parts[0]), Fix: fix}
	}
	cfg.Nodes = n
	if len(parts) > 1 {
		if cfg.Seed, err = strconv.ParseUint(parts[1], 10, 64); err != nil {
			return GenConfig{}, &GenError{Field: "SEED", Msg: fmt.Sprintf("%q is not an unsigned integer", parts[1]), Fix: fix}
		}
	}
	if len(parts) > 2 {
		if cfg.Shape, err = parseShape(parts[2]); err != nil {
			return GenConfig{}, &GenError{Field: "SHAPE", Msg: err.Error(), Fix: fix}
		}
	}
	return cfg, cfg.Validate()
}

// parseCount parses "123", "1_000_000" or "1e6" (a mantissa of digits
// times a power of ten up to 10^9).
func parseCount(s string) (int, error) {
	s = strings.ReplaceAll(s, "_", "")
	mant, exp, hasExp := strings.Cut(strings.ToLower(s), "e")
	m, err := strconv.ParseUint(mant, 10, 32)
	if err != nil {
		return 0, err
	}
	e := uint64(0)
	if hasExp {
		if e, err = strconv.ParseUint(exp, 10, 8); err != nil || e > 9 {
			return 0, fmt.Errorf("bad exponent %q", exp)
		}
	}
	for ; e > 0; e-- {
		m *= 10
	}
	if m > MaxGenNodes*10 {
		return MaxGenNodes + 1, nil
	}
	return int(m), nil
}

func parseShape(name string) (GenShape, error) {
	for i, n := range shapeNames {
		if n == name {
			return GenShape(i), nil
		}
	}
	return 0, fmt.Errorf("unknown shape %q", name)
}

// Validate checks the configuration's ranges.
func (c GenConfig) Validate() error {
	switch {
	case c.Nodes < 1 || c.Nodes > MaxGenNodes:
		return &GenError{Field: "nodes", Msg: fmt.Sprintf("%d e-nodes is outside 1..%d", c.Nodes, MaxGenNodes), Fix: "ask for between 1 and 100,000,000 e-nodes"}
	case c.Shape < 0 || c.Shape >= shapeCount:
		return &GenError{Field: "shape", Msg: fmt.Sprintf("shape %d is unknown", int(c.Shape)), Fix: "use one of " + strings.Join(shapeNames[:], ", ")}
	case c.CycleLength < 0 || c.CycleLength == 1 || c.CycleLength > MaxGenNodes/2:
		return &GenError{Field: "cycle_length", Msg: fmt.Sprintf("%d is not 0 or within 2..%d", c.CycleLength, MaxGenNodes/2), Fix: "use 0 for the default or a length of at least 2"}
	}
	return nil
}

// Generate builds a random e-graph of exactly cfg.Nodes e-nodes in the
// shape cfg.Shape, deterministically from cfg.Seed. Class ids are dense
// and every e-node's children are existing class ids; only the e-nodes
// that join an existing class can close a cycle (and ShapeDeepCycle is
// made of cycles). Errors are *GenError values for a bad configuration.
func Generate(cfg GenConfig) (*Graph, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	b := newGenBuilder(cfg)
	switch cfg.Shape {
	case ShapeRandom, ShapeUnionChain:
		b.random(cfg.Shape == ShapeUnionChain)
	case ShapeGiantClass:
		b.giant()
	case ShapeDeepCycle:
		b.cycles(cfg.CycleLength)
	case ShapeAllDistinct:
		b.distinct()
	}
	return b.g, nil
}
