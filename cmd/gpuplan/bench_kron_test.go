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
// frontier.Kronecker's, the summary names the arms and the phases, and
// the CSV records which reference the builds were compared with: the CPU
// build, or without the CPU arm the GPU warm-up build (no CPU build).
func TestBenchKronOnFake(t *testing.T) {
	cases := []struct {
		name      string
		cpus      string
		arms      map[string]int
		summary   []string
		absent    string
		reference string
	}{
		{"both arms", "2", map[string]int{"gpu": 3, "cpu": 2}, []string{"| gpu | 3 |", "| cpu | 2 |", "reference cpu,"}, "gpu-warm-up",
			`^# reference {"reference":"cpu","reference_build_s":[0-9.e-]+}$`},
		{"no CPU build", "-1", map[string]int{"gpu": 3}, []string{"| gpu | 3 |", "reference gpu-warm-up,"}, "| cpu |",
			`^# reference {"reference":"gpu-warm-up"}$`},
	}
	g, err := frontier.Kronecker(8, frontier.DefaultEdgeFactor, 3)
	require.NoError(t, err)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, data := runBenchKronOnFake(t, c.cpus)
			for _, want := range append([]string{"kron-build-8", "| sort |", "| readback |"}, c.summary...) {
				assert.Contains(t, out, want)
			}
			assert.NotContains(t, out, c.absent)
			rows, err := evidence.ReadSamples("kron.csv", bytes.NewReader(data))
			require.NoError(t, err)
			arms := map[string]int{}
			for _, r := range rows {
				arms[r.Arm]++
				assert.Equal(t, kronbuild.CSRChecksum(g), r.Checksum, r.Arm)
				assert.Equal(t, "kron-build-8", r.Workload.Name)
				assert.EqualValues(t, 1, r.Workload.Iterations)
				assert.EqualValues(t, g.NumEdgeEntries()/2, r.Workload.Edges)
			}
			assert.Equal(t, c.arms, arms)
			assert.Contains(t, string(data), "# plan {")
			assert.Regexp(t, `(?m)^# gpu-times \[{"permutation_ns":\d+,"count_ns":\d+,"generate_ns":\d+,"sort_ns":\d+,"csr_ns":\d+,"readback_ns":\d+,"total_ns":\d+}`, string(data))
			assert.Regexp(t, "(?m)"+c.reference, string(data))
		})
	}
}

// runBenchKronOnFake runs bench kron at scale 8 with 3 GPU samples and
// --cpu-samples cpus over the emulated kernels, and returns what it
// printed and the evidence CSV it wrote.
func runBenchKronOnFake(t *testing.T, cpus string) (string, []byte) {
	t.Helper()
	var out, errb bytes.Buffer
	e := &env{stdout: &out, stderr: &errb}
	csv := filepath.Join(t.TempDir(), "kron.csv")
	o, err := parseBenchKronArgs(e, []string{"--scale", "8", "--seed", "3", "--samples", "3", "--cpu-samples", cpus, "-o", csv})
	require.NoError(t, err)
	o.open = openFake(t, kronbuild.NewFake)
	require.NoError(t, benchKron(e, o), errb.String())
	data, err := os.ReadFile(csv)
	require.NoError(t, err)
	return out.String(), data
}

// Bad flags of bench kron are refused with the flag named and a Fix.
func TestBenchKronRefuses(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no scale", nil, "--scale is required"},
		{"scale too large", []string{"--scale", "31"}, "scale=31 is outside 1..30. Fix: pass a scale between 1 and 29, the largest at edge factor 16"},
		{"scale too large at a small edge factor", []string{"--scale", "31", "--edge-factor", "8"}, "Fix: pass a scale between 1 and 30, the largest at edge factor 8"},
		{"scale past the entries limit", []string{"--scale", "30"},
			"--scale 30 at --edge-factor 16: graph \"kron-30\": edge entries 34359738368 exceeds the limit 17179869184. Fix: pass a scale of at most 29 at edge factor 16, or an edge factor of at most 8 at scale 30"},
		// Scale 27: 2^27 labels of 4 bytes, 2^27+1 offsets of 8, 1024
		// bucket counts and 4 control words of 8, refused before the
		// device is opened.
		{"over the device budget", []string{"--scale", "27", "--max-device-mib", "64"},
			"--scale 27: the labels, offsets and counters needs 1610620968 bytes of device memory but --max-device-mib 64 allows 67108864 bytes. Fix: raise --max-device-mib"},
		{"the labels' scratch over the budget", []string{"--scale", "20", "--max-device-mib", "24"}, "Fix: add --host-labels"},
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
