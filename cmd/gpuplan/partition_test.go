package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/partition"
	"github.com/gpuplan/gpuplan/workloads/partbfs"
)

func TestPartitionCommand(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout []string
		stderr string
	}{
		{"two h200", []string{"--graph", "kron:12", "--device", "h200"}, exitOK,
			[]string{"graph      kron-12: 4096 vertices, 96910 edge entries", "partition  edges over 2 devices", "traversal from root", "bottom-up  all-gather"}, ""},
		{"list of devices", []string{"--graph", "grid:40", "--device", "h100, h200,a100-80gb", "--strategy", "blocked"}, exitOK,
			[]string{"partition  blocked over 3 devices", "h100-sxm", "a100-80gb", "low_average_degree"}, ""},
		{"memory", []string{"--graph", "rgg:3000:8", "--device-memory", "1GiB", "--devices", "4", "--root", "5"}, exitOK,
			[]string{"custom 1GiB", "traversal from root 5:"}, ""},
		{"over budget", []string{"--graph", "kron:12", "--device-memory", "100kB", "--devices", "3"}, exitFailure, nil,
			"gpuplan partition: kron-12: partition: device 0 (custom 100kB): its part, vertices [0, "},
		{"no device", []string{"--graph", "kron:12"}, exitUsage, nil, "missing --device NAME or --device-memory BYTES"},
		{"both", []string{"--graph", "kron:12", "--device", "h200", "--device-memory", "1GB"}, exitUsage, nil, "not both"},
		{"bad memory", []string{"--graph", "kron:12", "--device-memory", "lots"}, exitUsage, nil, `byte count "lots"`},
		{"unknown device", []string{"--graph", "kron:12", "--device", "h900"}, exitUsage, nil, "h900"},
		{"count mismatch", []string{"--graph", "kron:12", "--device", "h200,h100", "--devices", "3"}, exitUsage, nil, "--device names 2 devices but --devices is 3"},
		{"zero devices", []string{"--graph", "kron:12", "--device", "h200", "--devices", "0"}, exitUsage, nil, "--devices 0 is outside 1..64"},
		{"strategy", []string{"--graph", "kron:12", "--device", "h200", "--strategy", "hash"}, exitUsage, nil, `partition strategy "hash" is unknown`},
		{"no graph", []string{"--device", "h200"}, exitUsage, nil, "--graph is required"},
		{"bad graph", []string{"--graph", "cube:3", "--device", "h200"}, exitUsage, nil, "unknown kind"},
		{"bad root", []string{"--graph", "grid:10", "--device", "h200", "--root", "100"}, exitFailure, nil, "100"},
		{"missing file", []string{"--graph", "file:/nonexistent/g.mtx", "--device", "h200"}, exitFailure, nil, "reading graph"},
		{"extra", []string{"--graph", "grid:10", "--device", "h200", "x"}, exitUsage, nil, "unexpected argument"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, errs, code := runCLI(t, "", append([]string{"partition"}, tc.args...)...)
			require.Equal(t, tc.code, code, "stderr: %s", errs)
			for _, s := range tc.stdout {
				assert.Contains(t, out, s)
			}
			assert.Contains(t, errs, tc.stderr)
			if code != exitOK {
				assert.Contains(t, errs, "Fix:")
			}
		})
	}
}

// TestPartitionJSON decodes the JSON output and checks it against the
// planners it reports.
func TestPartitionJSON(t *testing.T) {
	out, errs, code := runCLI(t, "", "partition", "--graph", "kron:11", "--device", "h100", "--devices", "3", "--json")
	require.Equal(t, exitOK, code, errs)
	var rep struct {
		Graph      partitionGraph `json:"graph"`
		Plan       partition.Plan `json:"plan"`
		Prediction *struct {
			Levels []struct {
				Decision struct {
					Direction string `json:"direction"`
				} `json:"decision"`
				Bytes uint64 `json:"bytes"`
			} `json:"levels"`
			TotalBytes uint64 `json:"total_bytes"`
		} `json:"prediction"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Len(t, rep.Plan.Parts, 3)
	assert.EqualValues(t, partbfs.ControlBytes, rep.Plan.Parts[0].Memory.Scratch, "the plan is the partitioned BFS's layout")
	var covered uint64
	for _, p := range rep.Plan.Parts {
		covered += p.Vertices
		assert.LessOrEqual(t, p.ResidentBytes, p.BudgetBytes)
	}
	assert.EqualValues(t, rep.Graph.Vertices, covered)
	require.NotNil(t, rep.Prediction)
	var total uint64
	for _, l := range rep.Prediction.Levels {
		total += l.Bytes
		if l.Decision.Direction == "bottom-up" {
			assert.Equal(t, rep.Plan.Exchange.AllGatherBytes, l.Bytes)
		}
	}
	assert.Equal(t, total, rep.Prediction.TotalBytes)
}
