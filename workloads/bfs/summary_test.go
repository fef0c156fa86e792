package bfs

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestRootRates checks the median root time and the harmonic-mean GTEPS
// over roots, which a root without edges or time leaves at 0.
func TestRootRates(t *testing.T) {
	for _, c := range []struct {
		name          string
		perRoot       [][]float64
		edges         []uint64
		median, gteps float64
	}{
		{"two roots", [][]float64{{10, 30, 20}, {40}}, []uint64{20, 40}, 30, 1},
		{"a root without edges", [][]float64{{10}, {20}}, []uint64{20, 0}, 15, 0},
		{"a root without time", [][]float64{{0}, {20}}, []uint64{20, 40}, 10, 0},
		{"no roots", nil, nil, 0, 0},
	} {
		roots := make([]RootStat, len(c.edges))
		for i, e := range c.edges {
			roots[i].Edges = e
		}
		median, gteps := RootRates(c.perRoot, roots)
		assert.InDelta(t, c.median, median, 1e-12, c.name)
		assert.InDelta(t, c.gteps, gteps, 1e-12, c.name)
	}
}
