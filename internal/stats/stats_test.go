package stats

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestMedian(t *testing.T) {
	for _, tt := range []struct {
		in   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{3, 1, 2}, 2}, {[]float64{4, 1, 3, 2}, 2.5}} {
		in := append([]float64(nil), tt.in...)
		assert.Equal(t, tt.want, Median(tt.in))
		assert.Equal(t, in, tt.in, "the input is not modified")
	}
}

func TestFormatNs(t *testing.T) {
	for _, tt := range []struct {
		ns   float64
		want string
	}{{math.NaN(), "-"}, {0, "-"}, {-1, "-"}, {850, "850.0 ns"}, {1810, "1.81 µs"}, {2.84e6, "2.840 ms"}, {1.2e9, "1.200 s"}} {
		assert.Equal(t, tt.want, FormatNs(tt.ns))
	}
}
