package bfs

import "fmt"

// CheckMode is how the benchmark establishes each root's reference, the
// levels (level count and direction decisions) every GPU traversal from
// that root must equal.
type CheckMode string

// The check modes.
const (
	// CheckAuto (and the zero value "") is CheckReference on a graph of at
	// most ReferenceMaxEntries adjacency entries, CheckGraph500 on a
	// larger one.
	CheckAuto CheckMode = "auto"
	// CheckReference runs the CPU direction-optimizing reference BFS from
	// every root (Directions) before anything runs on the GPU; its levels,
	// statistics and decisions are the reference.
	CheckReference CheckMode = "reference"
	// CheckGraph500 runs no CPU BFS: the first GPU traversal from each
	// root is validated Graph500-style (frontier.Validate, on every CPU),
	// and its levels (with their frontier.Stats) and its direction
	// decisions become that root's reference.
	CheckGraph500 CheckMode = "graph500"
)

// ReferenceMaxEntries is the most adjacency entries (twice the undirected
// edges) of a graph on which CheckAuto runs the CPU reference BFS: 2^31,
// more than a Kronecker graph of scale 26 at edge factor 16 holds and
// fewer than one of scale 27. On larger graphs the CPU reference from
// every root takes too long, and Graph500 validation of the GPU's own
// first traversal stands in for it.
const ReferenceMaxEntries = 1 << 31

// ParseCheckMode returns the check mode named s: auto, reference or
// graph500.
func ParseCheckMode(s string) (CheckMode, error) {
	switch m := CheckMode(s); m {
	case CheckAuto, CheckReference, CheckGraph500:
		return m, nil
	}
	return "", fmt.Errorf("unknown BFS check mode %q. Fix: use auto (reference up to %d adjacency entries, graph500 above), reference (the CPU reference BFS from every root) or graph500 (each root's first GPU traversal validated the Graph500 way)", s, uint64(ReferenceMaxEntries))
}

// Resolve returns the check mode that runs on a graph of entries adjacency
// entries: CheckAuto and "" resolve by ReferenceMaxEntries, CheckReference
// and CheckGraph500 are themselves, and any other mode is an error.
func (m CheckMode) Resolve(entries uint64) (CheckMode, error) {
	if m == "" {
		m = CheckAuto
	}
	if _, err := ParseCheckMode(string(m)); err != nil {
		return "", err
	}
	switch {
	case m != CheckAuto:
		return m, nil
	case entries <= ReferenceMaxEntries:
		return CheckReference, nil
	}
	return CheckGraph500, nil
}

// RootCheck is the check one root's traversals were held to: Check is
// CheckReference or CheckGraph500 (never CheckAuto), and Arm, with
// CheckGraph500, the arm whose validated first traversal is the root's
// reference.
type RootCheck struct {
	Root  int32     `json:"root"`
	Check CheckMode `json:"check"`
	Arm   Arm       `json:"arm,omitempty"`
}
