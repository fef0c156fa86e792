package mix

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// MurmurHash3's finaliser mixes every bit: known values, and 0 stays 0.
func TestFmix32(t *testing.T) {
	require.Equal(t, uint32(0), Fmix32(0))
	require.Equal(t, uint32(0x514e28b7), Fmix32(1))
	require.NotEqual(t, Fmix32(2), Fmix32(3))
}
