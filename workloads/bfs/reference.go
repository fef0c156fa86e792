package bfs

import (
	"fmt"

	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/planners"
)

// RootStat is what a root's reference levels (the CPU reference's, or the
// validated first traversal's under CheckGraph500) say of it.
type RootStat struct {
	Root     int32  `json:"root"`
	Levels   int    `json:"levels"`
	Reached  int    `json:"reached"`
	Edges    uint64 `json:"edges"`
	Checksum uint64 `json:"-"`
}

// Reference runs the CPU reference BFS from every root, validates each
// result Graph500-style, and returns each root's statistics and levels. It
// is Directions without the decisions.
func Reference(g *frontier.CSR, roots []int32) ([]RootStat, [][]int32, error) {
	stats, levels, _, err := Directions(g, roots)
	return stats, levels, err
}

// Directions runs the CPU direction-optimizing BFS (on every CPU, one root
// after another) from every root, validates each result Graph500-style,
// and returns each root's statistics, levels and per-level direction
// decisions (those every direction-optimizing arm must make).
func Directions(g *frontier.CSR, roots []int32) ([]RootStat, [][]int32, [][]planners.BFSDirectionDecision, error) {
	stats := make([]RootStat, len(roots))
	levels := make([][]int32, len(roots))
	decisions := make([][]planners.BFSDirectionDecision, len(roots))
	for i, r := range roots {
		res, err := frontier.BFSDirectionOptimizing(g, r, planners.DefaultDirectionParams())
		if err == nil {
			err = frontier.Validate(g, r, res.Levels)
		}
		if err != nil {
			return nil, nil, nil, fmt.Errorf("CPU reference from root %d: %w", r, err)
		}
		levels[i], decisions[i], stats[i] = res.Levels, res.Decisions, rootStat(g, r, res.Levels)
	}
	return stats, levels, decisions, nil
}

// rootStat is what validated levels from root tell of it: their
// statistics (frontier.Stats, on every CPU) and checksum.
func rootStat(g *frontier.CSR, root int32, levels []int32) RootStat {
	st := frontier.Stats(g, levels)
	return RootStat{Root: root, Levels: st.Levels, Reached: st.Reached, Edges: st.Edges, Checksum: frontier.Checksum(levels)}
}

// CombinedChecksum hashes per-root level checksums in root order (FNV-1a
// over their little-endian bytes): one sample's checksum.
func CombinedChecksum(sums []uint64) string {
	h := uint64(14695981039346656037)
	for _, s := range sums {
		for i := range 8 {
			h ^= uint64(byte(s >> (8 * i)))
			h *= 1099511628211
		}
	}
	return fmt.Sprintf("fnv64-%016x", h)
}
