package partbfs

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/partition"
)

// TestCheckPartsRefusesWideParts checks the refusal of a part past the
// kernels' 32-bit offsets, from a plan of a graph of 3 x 2^32 adjacency
// entries (its offsets only): over two devices each part is too large,
// over four each fits, though the whole graph does not.
func TestCheckPartsRefusesWideParts(t *testing.T) {
	off := make([]uint64, 257)
	for v := 1; v < len(off); v++ {
		off[v] = off[v-1] + 3<<24
	}
	devices := func(p int) []partition.Device {
		out := make([]partition.Device, p)
		for i := range out {
			out[i] = partition.Device{Name: "h200", BudgetBytes: 1 << 50}
		}
		return out
	}
	cases := []struct {
		name  string
		parts int
		want  error
	}{
		{"two parts of 1.5 x 2^32", 2, &frontier.Offsets32Error{Source: "wide", Part: "device 0's part, vertices [0, 128),",
			Entries: 3 << 31, Limit: frontier.MaxOffsets32Entries}},
		{"four parts of 0.75 x 2^32", 4, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			plan, err := partition.New(partition.Request{Offsets: off, Devices: devices(c.parts), Strategy: partition.EdgeBalanced})
			require.NoError(t, err)
			err = checkParts("wide", plan)
			assert.Equal(t, c.want, err)
			if c.want != nil {
				assert.Contains(t, err.Error(), "Fix: spread the graph over more devices")
			}
		})
	}
}
