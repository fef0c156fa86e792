package occupancy

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPTXVersionForTarget(t *testing.T) {
	for sm, want := range map[int]string{120: "8.7", 121: "8.7", 100: "8.6", 119: "8.6", 90: "8.0", 99: "8.0", 89: "8.5", 80: "8.5", 70: "8.5", 1: "8.5"} {
		got, err := PTXVersionForTarget(sm)
		require.NoError(t, err)
		assert.Equal(t, want, got, "sm %d", sm)
	}
	for _, sm := range []int{0, -90} {
		_, err := PTXVersionForTarget(sm)
		var ie *InvalidPTXTargetError
		require.ErrorAs(t, err, &ie)
		assert.Equal(t, sm, ie.TargetSM)
		assert.Contains(t, err.Error(), "Fix:")
	}
}

func ExamplePTXVersionForTarget() {
	for _, sm := range []int{80, 90, 100, 120} {
		v, _ := PTXVersionForTarget(sm)
		fmt.Println(sm, v)
	}
	// Output:
	// 80 8.5
	// 90 8.0
	// 100 8.6
	// 120 8.7
}
