package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/frontier"
)

// --build-on decides where kron graphs are built; every other kind is built
// on the CPU, and an unknown value is refused with a Fix.
func TestGraphBuildPlace(t *testing.T) {
	kron, err := frontier.ParseSpec("kron:8")
	require.NoError(t, err)
	wide, err := frontier.ParseSpec("kron:27")
	require.NoError(t, err)
	grid, err := frontier.ParseSpec("grid:8")
	require.NoError(t, err)
	cases := []struct {
		name string
		b    graphBuild
		spec frontier.Spec
		want bool
	}{
		{"gpu asked", graphBuild{on: buildOnGPU}, kron, true},
		{"gpu asked, cpu answers", graphBuild{on: buildOnGPU, cpu: true}, kron, true},
		{"cpu asked", graphBuild{on: buildOnCPU}, kron, false},
		{"auto follows the build", graphBuild{on: buildOnAuto}, kron, buildHasCUDA},
		{"auto with --cpu", graphBuild{on: buildOnAuto, cpu: true}, kron, false},
		{"auto past 32-bit offsets", graphBuild{on: buildOnAuto}, wide, false},
		{"gpu asked past 32-bit offsets", graphBuild{on: buildOnGPU}, wide, true},
		{"not a kron graph", graphBuild{on: buildOnGPU}, grid, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.NoError(t, c.b.check("bfs"))
			assert.Equal(t, c.want, c.b.onGPU(c.spec))
		})
	}
	err = graphBuild{on: "tpu"}.check("bfs")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--build-on")
	assert.Contains(t, err.Error(), "Fix:")
}

// On the CPU the build is frontier's; a GPU build in a build without CUDA
// is refused with a way out.
func TestGraphBuildOnCPU(t *testing.T) {
	spec, err := frontier.ParseSpec("kron:8")
	require.NoError(t, err)
	want, err := spec.Build(3, frontier.DefaultLimits())
	require.NoError(t, err)
	g, directed, err := graphBuild{on: buildOnCPU}.load("kron:8", 3, frontier.DefaultLimits(), t.Logf)
	require.NoError(t, err)
	assert.False(t, directed)
	assert.Equal(t, want.Offsets, g.Offsets)
	assert.Equal(t, want.Targets, g.Targets)
	if buildHasCUDA {
		t.Skip("a CUDA build opens the device for --build-on gpu")
	}
	_, _, err = graphBuild{on: buildOnGPU}.load("kron:8", 3, frontier.DefaultLimits(), t.Logf)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--build-on cpu")
}
