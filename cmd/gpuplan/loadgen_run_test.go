package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A setting's single-root runs are listed by arm, most first, leaving out
// the arms that ran none; the counts are those since the setting began.
func TestArmCounts(t *testing.T) {
	cases := []struct {
		name        string
		now, before map[string]float64
		want        string
	}{
		{"none", nil, nil, ""},
		{"one arm", map[string]float64{"megakernel": 12}, nil, " (megakernel 12)"},
		{"most first, ties by name", map[string]float64{"host-loop": 4, "device-loop": 4, "megakernel": 430}, nil,
			" (megakernel 430, device-loop 4, host-loop 4)"},
		{"since the setting began", map[string]float64{"host-loop": 4, "megakernel": 30}, map[string]float64{"host-loop": 4, "megakernel": 10},
			" (megakernel 20)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, armCounts(since(c.now, c.before)))
		})
	}
}
