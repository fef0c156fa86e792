package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/evidence"
	"github.com/gpuplan/gpuplan/frontier"
	"github.com/gpuplan/gpuplan/workloads/kronbuild"
)

// TestBenchKronOnFake runs the whole build benchmark over the emulated
// kernels: the evidence CSV it writes is valid, every sample's checksum is
// the CPU reference's, and the summary names both arms and the phases.
func TestBenchKronOnFake(t *testing.T) {
	var out, errb bytes.Buffer
	e := &env{stdout: &out, stderr: &errb}
	csv := filepath.Join(t.TempDir(), "kron.csv")
	o, err := parseBenchKronArgs(e, []string{"--scale", "8", "--seed", "3", "--samples", "3", "--cpu-samples", "2", "-o", csv})
	require.NoError(t, err)
	o.open = openFake(t, kronbuild.NewFake)
	require.NoError(t, benchKron(e, o), errb.String())
	for _, want := range []string{"kron-build-8", "| gpu | 3 |", "| cpu | 2 |", "| sort |", "| readback |"} {
		assert.Contains(t, out.String(), want)
	}
	data, err := os.ReadFile(csv)
	require.NoError(t, err)
	rows, err := evidence.ReadSamples(csv, bytes.NewReader(data))
	require.NoError(t, err)
	g, err := frontier.Kronecker(8, frontier.DefaultEdgeFactor, 3)
	require.NoError(t, err)
	arms := map[string]int{}
	for _, r := range rows {
		arms[r.Arm]++
		assert.Equal(t, kronbuild.CSRChecksum(g), r.Checksum, r.Arm)
		assert.Equal(t, "kron-build-8", r.Workload.Name)
		assert.EqualValues(t, 1, r.Workload.Iterations)
		assert.EqualValues(t, g.NumEdgeEntries()/2, r.Workload.Edges)
	}
	assert.Equal(t, map[string]int{"gpu": 3, "cpu": 2}, arms)
	assert.Contains(t, string(data), "# plan {")
}

// Bad flags of bench kron are refused with the flag named and a Fix.
func TestBenchKronRefuses(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no scale", nil, "--scale is required"},
		{"scale too large", []string{"--scale", "31"}, "scale"},
		{"past 32-bit offsets", []string{"--scale", "27"}, "32-bit offsets"},
		{"no samples", []string{"--scale", "8", "--samples", "0"}, "--samples 0"},
		{"cpu samples", []string{"--scale", "8", "--cpu-samples", "-2"}, "--cpu-samples -2"},
		{"device", []string{"--scale", "8", "--device", "-1"}, "--device -1"},
		{"budget", []string{"--scale", "8", "--max-device-mib", "9999999999999"}, "--max-device-mib"},
		{"stray argument", []string{"--scale", "8", "extra"}, "extra"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			_, err := parseBenchKronArgs(&env{stdout: &out, stderr: &errb}, c.args)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			assert.Contains(t, err.Error(), "Fix:")
		})
	}
}
