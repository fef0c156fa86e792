package graphbudget

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/frontier"
)

// TestBoundarySizesNeverWrap checks every generated kind at the sizes
// where 32- and 64-bit products wrap: each is refused with an error, never
// estimated as small.
func TestBoundarySizesNeverWrap(t *testing.T) {
	const gib = 1 << 30
	for _, kind := range []string{"grid", "grid3d", "road", "kron", "rgg"} {
		for _, size := range []int{1 << 31, 1 << 32, 1<<32 + 1, 1 << 62, 1<<63 - 1} {
			t.Run(fmt.Sprintf("%s:%d", kind, size), func(t *testing.T) {
				spec := frontier.Spec{Kind: kind, Size: size, Degree: 8}
				need, err := Bytes(spec)
				if err == nil {
					assert.Greater(t, need, uint64(64*gib), "a wrapped product would look small")
				}
				assert.Error(t, Check(spec, fmt.Sprintf("%s:%d", kind, size), 64*gib, 0))
			})
		}
	}
}

func TestEstimatesGrowWithSize(t *testing.T) {
	for _, kind := range []string{"grid", "grid3d", "road", "kron", "rgg"} {
		prev := uint64(0)
		for size := 2; size <= 24; size++ {
			need, err := Bytes(frontier.Spec{Kind: kind, Size: size, Degree: 1})
			require.NoError(t, err)
			assert.Greater(t, need, prev, "%s:%d", kind, size)
			prev = need
		}
	}
}

// TestEstimatesCoverTheGraph checks each estimate against the graph the
// generator builds: never below its offsets and targets.
func TestEstimatesCoverTheGraph(t *testing.T) {
	for _, text := range []string{"grid:300", "grid3d:40", "road:300", "kron:14", "rgg:100000:8"} {
		spec, err := frontier.ParseSpec(text)
		require.NoError(t, err)
		g, err := spec.Build(1, frontier.DefaultLimits())
		require.NoError(t, err)
		need, err := Bytes(spec)
		require.NoError(t, err)
		graph, err := GraphBytes(spec)
		require.NoError(t, err)
		built := 4 * uint64(len(g.Offsets)+len(g.Targets))
		assert.GreaterOrEqual(t, need, built, text)
		assert.GreaterOrEqual(t, graph, built, text)
	}
}

func TestCheck(t *testing.T) {
	spec := frontier.Spec{Kind: "kron", Size: 26}
	need, err := Bytes(spec)
	require.NoError(t, err)
	graph, err := GraphBytes(spec)
	require.NoError(t, err)
	require.NoError(t, Check(spec, "kron:26", 0, 0), "unknown memory refuses nothing")
	require.NoError(t, Check(spec, "kron:26", 2*need, 0))
	assert.Error(t, Check(spec, "kron:26", 2*need, 2*int(need/graph)), "the caller's copies count")
	err = Check(spec, "kron:26", need, 0)
	var be *Error
	require.ErrorAs(t, err, &be)
	assert.Contains(t, err.Error(), "kron:26 needs about")
	assert.Contains(t, err.Error(), "Fix:")
	require.NoError(t, Check(frontier.Spec{Kind: "file", Path: "x"}, "file:x", 1, 1), "a file's loader checks itself")
	err = Check(frontier.Spec{Kind: "grid", Size: 1 << 33}, "grid:8589934592", 1<<40, 1)
	assert.EqualError(t, err, "graph spec grid:8589934592: its grid vertices do not fit 64-bit arithmetic. Fix: ask for a smaller graph")
}

// TestCheckBuilt checks that a graph built on the GPU is held to its CSR
// and copies, not to the CPU build's peak: Kronecker scale 28 fits a
// 128 GiB host read back, not built there.
func TestCheckBuilt(t *testing.T) {
	spec := frontier.Spec{Kind: "kron", Size: 28}
	graph, err := GraphBytes(spec)
	require.NoError(t, err)
	const host = 128 << 30
	assert.Error(t, Check(spec, "kron:28", host, 1), "the CPU build's edge list does not fit")
	require.NoError(t, CheckBuilt(spec, "kron:28", host, 1))
	require.NoError(t, CheckBuilt(spec, "kron:28", 0, 5), "unknown memory refuses nothing")
	err = CheckBuilt(spec, "kron:28", 2*graph, 1)
	var be *Error
	require.ErrorAs(t, err, &be, "two copies need more than nine tenths of two graphs")
	assert.Equal(t, 2*graph, be.Bytes)
	assert.Contains(t, err.Error(), "Fix:")
	for _, scale := range []int{30, 31, 60} {
		spec := frontier.Spec{Kind: "kron", Size: scale}
		want := frontier.CheckKronecker(scale, frontier.DefaultEdgeFactor)
		require.Error(t, want, "scale %d", scale)
		assert.Equal(t, want, CheckBuilt(spec, "kron", host, 0), "the generator's refusal, not an estimate")
		assert.Equal(t, want, Check(spec, "kron", host, 0), "the generator's refusal, not an estimate")
	}
}

func TestParseMemAvailable(t *testing.T) {
	for _, c := range []struct {
		text string
		want uint64
	}{
		{"MemTotal:       24000000 kB\nMemAvailable:   2048 kB\n", 2048 << 10},
		{"MemTotal: 5 kB\n", 0},
		{"MemAvailable: lots kB\n", 0},
		{"MemAvailable: 99999999999999999 kB\n", 0},
		{"", 0},
	} {
		assert.Equal(t, c.want, parseMemAvailable([]byte(c.text)), c.text)
	}
	assert.Positive(t, Available()+1)
}

func TestEGraphBytes(t *testing.T) {
	need, err := EGraphBytes(100_000_000)
	require.NoError(t, err)
	assert.Equal(t, uint64(12_800_000_000), need)
	assert.NoError(t, CheckBytes("gen:100000000", need, 0))
	assert.ErrorContains(t, CheckBytes("gen:100000000", need, need), "gen:100000000 needs about 12800000000 bytes")
	zero, err := EGraphBytes(-5)
	require.NoError(t, err)
	assert.Zero(t, zero)
}
