package bfs

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/gpuplan/gpuplan/frontier"
)

// RootStat is what the CPU reference knows about one root.
type RootStat struct {
	Root     int32  `json:"root"`
	Levels   int    `json:"levels"`
	Reached  int    `json:"reached"`
	Edges    uint64 `json:"edges"`
	Checksum uint64 `json:"-"`
}

// Reference runs the CPU reference BFS from every root (in parallel,
// bounded by the CPUs), validates each result Graph500-style, and returns
// each root's statistics and levels.
func Reference(g *frontier.CSR, roots []int32) ([]RootStat, [][]int32, error) {
	stats := make([]RootStat, len(roots))
	levels := make([][]int32, len(roots))
	errs := make([]error, len(roots))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i, r := range roots {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			lv, err := frontier.BFS(g, r)
			if err == nil {
				err = frontier.Validate(g, r, lv)
			}
			if err != nil {
				errs[i] = fmt.Errorf("CPU reference from root %d: %w", r, err)
				return
			}
			st := frontier.Stats(g, lv)
			levels[i] = lv
			stats[i] = RootStat{Root: r, Levels: st.Levels, Reached: st.Reached, Edges: st.Edges, Checksum: frontier.Checksum(lv)}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, nil, err
		}
	}
	return stats, levels, nil
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
