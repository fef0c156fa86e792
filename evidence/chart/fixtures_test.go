package chart

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/evidence"
)

// The evidence the chart tests draw. They are built as package evidence's
// tests build theirs (reportSummaries, externalSummaries, testSample,
// loadRow and the hostile samples there), so that the charts are tested
// on the evidence the tables are; the hostile names themselves are one
// list, internal/hostile. Package evidence's own tests cannot import a
// package that imports evidence, so these builders stay copies.

// reportSummaries summarises evidence/testdata/report, the fixture of the
// Markdown report's golden file.
func reportSummaries(t testing.TB, metric string) []evidence.WorkloadSummary {
	files, err := evidence.LoadResults(filepath.Join("..", "testdata", "report"))
	require.NoError(t, err)
	s, err := evidence.Summarize(files, metric, "host-loop")
	require.NoError(t, err)
	return s
}

// externalSummaries are a run with a peer tool, a one-sample arm and a
// copy ceiling beside gpuplan's arms.
func externalSummaries(t testing.TB) []evidence.WorkloadSummary {
	f := evidence.ResultFile{Path: "runs/peer.csv"}
	for i := range uint64(12) {
		for arm, ns := range map[string]float64{"host-loop": 4e7, "megakernel": 5e6, "gunrock": 8e6} {
			f.Samples = append(f.Samples, testSample(arm, i, ns+float64(i)*1e4))
		}
		c := testSample("copy-ceiling", i, 1e6+float64(i))
		c.BytesMoved = 2 << 30
		f.Samples = append(f.Samples, c)
	}
	f.Samples = append(f.Samples, testSample("egg", 0, 9e7))
	s, err := evidence.Summarize([]evidence.ResultFile{f}, evidence.MetricWallNS, "host-loop")
	require.NoError(t, err)
	return s
}

func testSample(arm string, index uint64, wallNS float64) evidence.Sample {
	return evidence.Sample{
		Provenance: evidence.Provenance{Version: "devel", Commit: "0123abc",
			SourceFingerprint: "sha256:0000000000000000000000000000000000000000000000000000000000000001",
			DeviceName:        "Test GPU X", ComputeMajor: 9, ComputeMinor: 0, DriverVersion: "580.159.04",
			Date: time.Date(2026, 11, 22, 2, 0, 0, 0, time.UTC)},
		Workload: evidence.Workload{Name: "grid-64", Nodes: 4096, Edges: 16128, Iterations: 126},
		Arm:      arm, Index: index, WallNS: wallNS, DeviceNS: wallNS * 0.9, Checksum: "9f3c2a71d0e4b5c6"}
}

// loadRow is a valid row of the given setting.
func loadRow(mode string, clients uint64, qps float64) evidence.LoadRow {
	maxBatch := uint64(64)
	if mode == evidence.LoadSerial {
		maxBatch = 1
	}
	return evidence.LoadRow{
		Provenance: evidence.Provenance{Version: "devel", Commit: "abc123", SourceFingerprint: "sha256:" + strings.Repeat("0f", 32),
			DeviceName: "NVIDIA H200", ComputeMajor: 9, DriverVersion: "580.159.04", Date: time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)},
		Graph: "kron-22", Nodes: 4194304, Edges: 64155243, Backend: "gpu", Mode: mode, WindowNS: 200000, MaxBatch: maxBatch,
		Clients: clients, DurationNS: 10e9, Answered: 40 + uint64(qps*10), QPS: qps, P50NS: 1e6, P99NS: 3e6, P999NS: 5e6, MaxNS: 9e6,
		MeanBatch: float64(min(clients, maxBatch)), Checked: 40, Mismatches: 0,
	}
}

// hostileSamples is a valid run of two arms, three samples each.
func hostileSamples() []evidence.Sample {
	var out []evidence.Sample
	for i := range uint64(3) {
		out = append(out, testSample("host-loop", i, 2e6+float64(i)*1e4), testSample("megakernel", i, 2e5+float64(i)*1e3))
	}
	return out
}

// renamed returns samples with every name (device, driver, commit,
// workload, arm) set to s; the arm keeps its own name as a suffix so the
// two arms stay apart.
func renamed(samples []evidence.Sample, s string) []evidence.Sample {
	out := append([]evidence.Sample(nil), samples...)
	for i := range out {
		p := &out[i].Provenance
		p.DeviceName, p.DriverVersion, p.Commit = s, s, s
		out[i].Workload.Name = s
		out[i].Arm = s + out[i].Arm
	}
	return out
}

// hostileFileOnDisk writes valid evidence under a file named name+".csv"
// in a fresh directory and loads it as the report does.
func hostileFileOnDisk(t *testing.T, name string) []evidence.ResultFile {
	t.Helper()
	dir := t.TempDir()
	var buf bytes.Buffer
	require.NoError(t, evidence.WriteSamples(&buf, hostileSamples()))
	require.NoError(t, os.WriteFile(filepath.Join(dir, name+".csv"), buf.Bytes(), 0o600))
	files, err := evidence.LoadResults(dir)
	require.NoError(t, err)
	require.Len(t, files, 1)
	require.Equal(t, name, evidence.RunLabels(files)[0])
	return files
}

// hostileCases are, for one hostile name, the evidence that carries it:
// a file of that name on disk (where a file name can hold it) and a run
// whose every name is hostile, built in memory.
func hostileCases(t *testing.T, s string, onDisk bool) map[string][]evidence.ResultFile {
	cases := map[string][]evidence.ResultFile{
		"all names": {{Path: "dir/" + s + ".csv", Samples: renamed(hostileSamples(), s)}},
	}
	if onDisk {
		cases["file name"] = hostileFileOnDisk(t, s)
	}
	return cases
}

// hostileSummaries summarises the evidence of one hostile case.
func hostileSummaries(t *testing.T, files []evidence.ResultFile) []evidence.WorkloadSummary {
	t.Helper()
	s, err := evidence.Summarize(files, evidence.MetricWallNS, "host-loop")
	require.NoError(t, err)
	require.NotEmpty(t, s)
	return s
}
